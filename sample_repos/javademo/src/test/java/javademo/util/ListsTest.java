package javademo.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ListsTest {
    @Test
    void chunks() {
        assertEquals(List.of(List.of(1, 2), List.of(3, 4), List.of(5)), Lists.chunk(List.of(1, 2, 3, 4, 5), 2));
        assertEquals(List.of(), Lists.chunk(List.of(), 3));
        assertThrows(IllegalArgumentException.class, () -> Lists.chunk(List.of(1), 0));
    }

    @Test
    void zipsToShorter() {
        assertEquals(List.of(Pair.of("a", 1), Pair.of("b", 2)), Lists.zip(List.of("a", "b", "c"), List.of(1, 2)));
    }

    @Test
    void groupsInFirstSeenOrder() {
        Map<Integer, List<String>> g = Lists.groupBy(List.of("bb", "a", "cc", "d", "eee"), String::length);
        assertEquals(List.of(2, 1, 3), List.copyOf(g.keySet()));
        assertEquals(List.of("bb", "cc"), g.get(2));
        assertEquals(List.of("a", "d"), g.get(1));
    }

    @Test
    void maxOfComparables() {
        assertEquals(Optional.of(9), Lists.max(List.of(3, 9, -1, 9)));
        assertEquals(Optional.of("pear"), Lists.max(Set.of("apple", "pear", "fig")));
        assertEquals(Optional.empty(), Lists.max(List.<Integer>of()));
    }

    @Test
    void flattensOneLevel() {
        assertEquals(List.of(1, 2, 3), Lists.flatten(List.of(List.of(1), List.of(), List.of(2, 3))));
    }

    @Test
    void partitions() {
        Pair<List<Integer>, List<Integer>> p = Lists.partition(List.of(1, 2, 3, 4, 5), n -> n % 2 == 0);
        assertEquals(List.of(2, 4), p.first());
        assertEquals(List.of(1, 3, 5), p.second());
        assertThrows(UnsupportedOperationException.class, () -> p.first().add(6));
    }
}
