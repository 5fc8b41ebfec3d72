package javademo.text;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** Word statistics over one text. */
public final class TextStats {
    private final List<String> words;

    /** @param text the text to analyse */
    public TextStats(String text) {
        this.words = tokenize(text);
    }

    /**
     * Splits a text into lower-case words of letters, digits and apostrophes.
     *
     * @param text the text
     * @return the words in order
     */
    public static List<String> tokenize(String text) {
        List<String> out = new ArrayList<>();
        for (String w : text.toLowerCase(Locale.ROOT).split("[^\\p{L}\\p{N}']+")) {
            String t = w.replaceAll("^'+|'+$", "");
            if (!t.isEmpty()) {
                out.add(t);
            }
        }
        return out;
    }

    /** @return the number of words */
    public int wordCount() {
        return words.size();
    }

    /**
     * Word frequencies in first-seen order.
     *
     * @return count by word
     */
    public Map<String, Integer> frequencies() {
        Map<String, Integer> f = new LinkedHashMap<>();
        for (String w : words) {
            f.merge(w, 1, Integer::sum);
        }
        return f;
    }

    /**
     * The most frequent word; ties go to the word seen first.
     *
     * @return the word, or empty for a text without words
     */
    public Optional<String> mostFrequent() {
        String best = null;
        int bestCount = 0;
        for (Map.Entry<String, Integer> e : frequencies().entrySet()) {
            if (e.getValue() > bestCount) {
                best = e.getKey();
                bestCount = e.getValue();
            }
        }
        return Optional.ofNullable(best);
    }

    /**
     * Mean word length in characters.
     *
     * @return the mean, 0 for no words
     */
    public double averageWordLength() {
        if (words.isEmpty()) {
            return 0;
        }
        long total = 0;
        for (String w : words) {
            total += w.length();
        }
        return (double) total / words.size();
    }
}
