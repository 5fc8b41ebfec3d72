package javademo.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class StringUtilsTest {
    @Test
    void capitalize() {
        assertEquals("Hello world", StringUtils.capitalize("hello world"));
        assertEquals("", StringUtils.capitalize(""));
        assertEquals("X", StringUtils.capitalize("x"));
    }

    @Test
    void reverseKeepsSurrogatePairs() {
        assertEquals("cba", StringUtils.reverse("abc"));
        assertEquals("b\uD83D\uDE00a", StringUtils.reverse("a\uD83D\uDE00b"));
        assertEquals("", StringUtils.reverse(""));
    }

    @ParameterizedTest
    @ValueSource(strings = {"racecar", "A man, a plan, a canal: Panama!", "", "No 'x' in Nixon"})
    void palindromes(String s) {
        assertTrue(StringUtils.isPalindrome(s));
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc", "ab", "palindrome"})
    void notPalindromes(String s) {
        assertFalse(StringUtils.isPalindrome(s));
    }

    @Test
    void countCharacters() {
        assertEquals(3, StringUtils.countOccurrences("banana", 'a'));
        assertEquals(0, StringUtils.countOccurrences("banana", 'z'));
    }

    @Test
    void countSubstringsWithoutOverlap() {
        assertEquals(2, StringUtils.countOccurrences("banana", "an"));
        assertEquals(2, StringUtils.countOccurrences("aaaa", "aa"));
        assertEquals(0, StringUtils.countOccurrences("banana", "x"));
        assertThrows(IllegalArgumentException.class, () -> StringUtils.countOccurrences("a", ""));
    }

    @Test
    void padLeftOverloads() {
        assertEquals("   42", StringUtils.padLeft("42", 5));
        assertEquals("00042", StringUtils.padLeft("42", 5, '0'));
        assertEquals("123456", StringUtils.padLeft("123456", 3, '0'));
    }

    @Test
    void truncate() {
        assertEquals("Hello, w...", StringUtils.truncate("Hello, world!", 11));
        assertEquals("short", StringUtils.truncate("short", 5));
        assertEquals("...", StringUtils.truncate("abcdef", 3));
        assertThrows(IllegalArgumentException.class, () -> StringUtils.truncate("abc", 2));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "Hello, World!           | hello-world",
        "Cr\u00e8me Br\u00fbl\u00e9e: a recipe | creme-brulee-a-recipe",
        "  --Already-slugged--   | already-slugged",
        "!!!                     | ''",
        "v2.0 release            | v2-0-release",
    })
    void slugify(String input, String slug) {
        assertEquals(slug, StringUtils.slugify(input));
    }

    @ParameterizedTest
    @CsvSource({
        "parseHTTPResponse, parse_http_response",
        "CamelCase, camel_case",
        "simple, simple",
        "userID, user_id",
        "XMLHttpRequest, xml_http_request",
    })
    void camelToSnake(String camel, String snake) {
        assertEquals(snake, StringUtils.camelToSnake(camel));
    }

    @ParameterizedTest
    @CsvSource({
        "max_line_width, maxLineWidth",
        "_private_name, privateName",
        "already, already",
        "double__under, doubleUnder",
    })
    void snakeToCamel(String snake, String camel) {
        assertEquals(camel, StringUtils.snakeToCamel(snake));
    }

    @Test
    void wrapGreedily() {
        assertEquals(List.of("the quick", "brown fox", "jumps"), StringUtils.wrap("the quick brown fox jumps", 10));
        assertEquals(List.of("a", "verylongword", "b"), StringUtils.wrap("a verylongword b", 5));
        assertEquals(List.of(), StringUtils.wrap("   ", 5));
        assertThrows(IllegalArgumentException.class, () -> StringUtils.wrap("x", 0));
    }
}
