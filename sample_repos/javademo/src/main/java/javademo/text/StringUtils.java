package javademo.text;

import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Static string helpers. */
public final class StringUtils {
    private StringUtils() {
    }

    /**
     * Upper-cases the first character.
     *
     * @param s the text, may be empty
     * @return the text with its first character upper-cased
     */
    public static String capitalize(String s) {
        if (s.isEmpty()) {
            return s;
        }
        return Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }

    /**
     * Reverses a string by code points, so surrogate pairs stay intact.
     *
     * @param s the text
     * @return the reversed text
     */
    public static String reverse(String s) {
        int[] cps = s.codePoints().toArray();
        StringBuilder b = new StringBuilder(s.length());
        for (int i = cps.length - 1; i >= 0; i--) {
            b.appendCodePoint(cps[i]);
        }
        return b.toString();
    }

    /**
     * Tells whether a text reads the same backwards, ignoring case and anything not a letter or digit.
     *
     * @param s the text
     * @return true for a palindrome
     */
    public static boolean isPalindrome(String s) {
        String t = s.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}]", "");
        int i = 0;
        int j = t.length() - 1;
        while (i < j) {
            if (t.charAt(i++) != t.charAt(j--)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Counts a character.
     *
     * @param s the text
     * @param c the character
     * @return how often {@code c} occurs
     */
    public static int countOccurrences(String s, char c) {
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == c) {
                n++;
            }
        }
        return n;
    }

    /**
     * Counts non-overlapping occurrences of a substring.
     *
     * @param s the text
     * @param sub the substring, not empty
     * @return the count
     */
    public static int countOccurrences(String s, String sub) {
        if (sub.isEmpty()) {
            throw new IllegalArgumentException("empty substring");
        }
        int n = 0;
        int from = s.indexOf(sub);
        while (from >= 0) {
            n++;
            from = s.indexOf(sub, from + sub.length());
        }
        return n;
    }

    /**
     * Left-pads with spaces.
     *
     * @param s the text
     * @param width the minimum width
     * @return the padded text
     */
    public static String padLeft(String s, int width) {
        return padLeft(s, width, ' ');
    }

    /**
     * Left-pads with a given character.
     *
     * @param s the text
     * @param width the minimum width
     * @param pad the padding character
     * @return the padded text
     */
    public static String padLeft(String s, int width, char pad) {
        StringBuilder b = new StringBuilder();
        for (int i = s.length(); i < width; i++) {
            b.append(pad);
        }
        return b.append(s).toString();
    }

    /**
     * Shortens a text to at most {@code max} characters, ending with "..." when cut.
     *
     * @param s the text
     * @param max the maximum length, at least 3
     * @return the text or its shortened form
     */
    public static String truncate(String s, int max) {
        if (max < 3) {
            throw new IllegalArgumentException("max must be at least 3");
        }
        if (s.length() <= max) {
            return s;
        }
        return s.substring(0, max - 3) + "...";
    }

    /**
     * Makes a URL slug: accents stripped, lower case, runs of other characters turned into one dash.
     *
     * @param s the text
     * @return the slug
     */
    public static String slugify(String s) {
        String ascii = Normalizer.normalize(s, Normalizer.Form.NFD).replaceAll("\\p{M}", "");
        String dashed = ascii.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-");
        int start = dashed.startsWith("-") ? 1 : 0;
        int end = dashed.endsWith("-") && dashed.length() > start ? dashed.length() - 1 : dashed.length();
        return dashed.substring(start, Math.max(start, end));
    }

    /**
     * Converts camelCase or PascalCase to snake_case; runs of capitals stay one word.
     *
     * @param s such as {@code parseHTTPResponse}
     * @return such as {@code parse_http_response}
     */
    public static String camelToSnake(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean upper = Character.isUpperCase(c);
            boolean prevLower = i > 0 && !Character.isUpperCase(s.charAt(i - 1));
            boolean nextLower = i + 1 < s.length() && Character.isLowerCase(s.charAt(i + 1));
            if (upper && i > 0 && (prevLower || nextLower)) {
                b.append('_');
            }
            b.append(Character.toLowerCase(c));
        }
        return b.toString();
    }

    /**
     * Converts snake_case to camelCase.
     *
     * @param s such as {@code max_line_width}
     * @return such as {@code maxLineWidth}
     */
    public static String snakeToCamel(String s) {
        StringBuilder b = new StringBuilder();
        boolean upNext = false;
        for (char c : s.toCharArray()) {
            if (c == '_') {
                upNext = b.length() > 0;
            } else {
                b.append(upNext ? Character.toUpperCase(c) : c);
                upNext = false;
            }
        }
        return b.toString();
    }

    /**
     * Greedy word wrap.
     *
     * @param text the text
     * @param width the line width, positive
     * @return the lines; a word longer than the width gets a line of its own
     */
    public static List<String> wrap(String text, int width) {
        if (width <= 0) {
            throw new IllegalArgumentException("width must be positive");
        }
        List<String> lines = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        for (String word : text.trim().split("\\s+")) {
            if (word.isEmpty()) {
                continue;
            }
            if (line.length() > 0 && line.length() + 1 + word.length() > width) {
                lines.add(line.toString());
                line.setLength(0);
            }
            if (line.length() > 0) {
                line.append(' ');
            }
            line.append(word);
        }
        if (line.length() > 0) {
            lines.add(line.toString());
        }
        return lines;
    }
}
