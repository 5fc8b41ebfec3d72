package javademo.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Tests every {@link KeyValueStore} implementation must pass. */
interface KeyValueStoreContract {
    KeyValueStore<String, Integer> newStore();

    @Test
    default void putThenGet() {
        KeyValueStore<String, Integer> s = newStore();
        assertEquals(Optional.empty(), s.put("a", 1));
        assertEquals(Optional.of(1), s.get("a"));
        assertEquals(1, s.size());
    }

    @Test
    default void putReplacesAndReturnsOld() {
        KeyValueStore<String, Integer> s = newStore();
        s.put("a", 1);
        assertEquals(Optional.of(1), s.put("a", 2));
        assertEquals(Optional.of(2), s.get("a"));
        assertEquals(1, s.size());
    }

    @Test
    default void removeReturnsValue() {
        KeyValueStore<String, Integer> s = newStore();
        s.put("a", 1);
        assertEquals(Optional.of(1), s.remove("a"));
        assertEquals(Optional.empty(), s.remove("a"));
        assertEquals(0, s.size());
        assertEquals(Optional.empty(), s.get("a"));
    }

    @Test
    default void defaultMethods() {
        KeyValueStore<String, Integer> s = newStore();
        s.put("a", 1);
        assertTrue(s.containsKey("a"));
        assertFalse(s.containsKey("b"));
        assertEquals(1, s.getOrDefault("a", 9));
        assertEquals(9, s.getOrDefault("b", 9));
    }

    @Test
    default void rejectsNullValues() {
        assertThrows(NullPointerException.class, () -> newStore().put("a", null));
    }
}
