package javademo.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

class PairTest {
    @Test
    void accessorsAndSwap() {
        Pair<String, Integer> p = Pair.of("a", 1);
        assertEquals("a", p.first());
        assertEquals(1, p.second());
        assertEquals(Pair.of(1, "a"), p.swap());
    }

    @Test
    void mapsBothSides() {
        assertEquals(Pair.of(3, "2!"), Pair.of("abc", 2).map(String::length, n -> n + "!"));
    }

    @Test
    void valueSemantics() {
        assertEquals(Pair.of("a", null), Pair.of("a", null));
        assertEquals(Pair.of("a", 1).hashCode(), Pair.of("a", 1).hashCode());
        assertNotEquals(Pair.of("a", 1), Pair.of("a", 2));
        assertNotEquals(Pair.of("a", 1), "(a, 1)");
        assertEquals("(a, 1)", Pair.of("a", 1).toString());
    }
}
