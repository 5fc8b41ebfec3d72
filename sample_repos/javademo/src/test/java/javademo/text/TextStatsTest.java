package javademo.text;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class TextStatsTest {
    private static final String TEXT = "The cat and the hat. THE END, isn't it? 'quoted'";

    @Test
    void tokenizesLowerCaseWords() {
        assertEquals(List.of("the", "cat", "and", "the", "hat", "the", "end", "isn't", "it", "quoted"),
                TextStats.tokenize(TEXT));
        assertEquals(List.of(), TextStats.tokenize(" ... "));
    }

    @Test
    void countsWords() {
        assertEquals(10, new TextStats(TEXT).wordCount());
        assertEquals(0, new TextStats("").wordCount());
    }

    @Test
    void frequenciesInFirstSeenOrder() {
        Map<String, Integer> f = new TextStats("b a b c a b").frequencies();
        assertEquals(List.of("b", "a", "c"), List.copyOf(f.keySet()));
        assertEquals(3, f.get("b"));
        assertEquals(2, f.get("a"));
    }

    @Test
    void mostFrequent() {
        assertEquals(Optional.of("the"), new TextStats(TEXT).mostFrequent());
        assertEquals(Optional.of("x"), new TextStats("x y y x").mostFrequent());
        assertEquals(Optional.empty(), new TextStats("?!").mostFrequent());
    }

    @Test
    void averageWordLength() {
        assertEquals(2.5, new TextStats("ab abc a abcd").averageWordLength(), 1e-12);
        assertEquals(0.0, new TextStats("").averageWordLength(), 0);
    }
}
