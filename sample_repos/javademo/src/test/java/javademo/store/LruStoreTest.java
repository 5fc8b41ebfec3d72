package javademo.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class LruStoreTest implements KeyValueStoreContract {
    @Override
    public KeyValueStore<String, Integer> newStore() {
        return new LruStore<>(4);
    }

    @Test
    void evictsLeastRecentlyUsed() {
        LruStore<String, Integer> s = new LruStore<>(2);
        s.put("a", 1);
        s.put("b", 2);
        s.get("a");
        s.put("c", 3);
        assertFalse(s.containsKey("b"));
        assertEquals(List.of("c", "a"), s.keysByRecency());
        assertEquals(1, s.evictions());
        assertEquals(2, s.size());
    }

    @Test
    void updateRefreshesRecency() {
        LruStore<String, Integer> s = new LruStore<>(3);
        s.put("a", 1);
        s.put("b", 2);
        s.put("c", 3);
        s.put("a", 10);
        assertEquals(List.of("a", "c", "b"), s.keysByRecency());
        s.put("d", 4);
        assertEquals(List.of("d", "a", "c"), s.keysByRecency());
    }

    @Test
    void removeUnlinksHeadMiddleAndTail() {
        LruStore<String, Integer> s = new LruStore<>(5);
        for (String k : List.of("a", "b", "c", "d", "e")) {
            s.put(k, 0);
        }
        s.remove("c");
        assertEquals(List.of("e", "d", "b", "a"), s.keysByRecency());
        s.remove("e");
        s.remove("a");
        assertEquals(List.of("d", "b"), s.keysByRecency());
        s.put("f", 0);
        s.put("g", 0);
        s.put("h", 0);
        s.put("i", 0);
        assertEquals(List.of("i", "h", "g", "f", "d"), s.keysByRecency());
    }

    @Test
    void getOfTailMovesItToFront() {
        LruStore<String, Integer> s = new LruStore<>(3);
        s.put("a", 1);
        s.put("b", 2);
        s.put("c", 3);
        s.get("a");
        assertEquals(List.of("a", "c", "b"), s.keysByRecency());
        s.put("d", 4);
        assertEquals(List.of("d", "a", "c"), s.keysByRecency());
    }

    @Test
    void capacityMustBePositive() {
        assertThrows(IllegalArgumentException.class, () -> new LruStore<String, String>(0));
    }
}
