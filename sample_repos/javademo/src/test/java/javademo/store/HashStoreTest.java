package javademo.store;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class HashStoreTest implements KeyValueStoreContract {
    @Override
    public KeyValueStore<String, Integer> newStore() {
        return new HashStore<>();
    }

    @Test
    void countsHitsAndMisses() {
        HashStore<String, Integer> s = new HashStore<>();
        assertEquals(0.0, s.hitRatio(), 0);
        s.put("a", 1);
        s.get("a");
        s.get("a");
        s.get("a");
        s.get("b");
        assertEquals(3, s.hits());
        assertEquals(1, s.misses());
        assertEquals(0.75, s.hitRatio(), 1e-12);
    }

    @Test
    void holdsManyEntries() {
        HashStore<Integer, String> s = new HashStore<>();
        for (int i = 0; i < 1000; i++) {
            s.put(i, "v" + i);
        }
        assertEquals(1000, s.size());
        assertEquals("v999", s.get(999).orElseThrow());
    }
}
