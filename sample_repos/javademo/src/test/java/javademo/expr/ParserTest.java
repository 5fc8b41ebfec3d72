package javademo.expr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class ParserTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "1 + 2 * 3        | (1 + (2 * 3))",
        "(1 + 2) * 3      | ((1 + 2) * 3)",
        "2 ^ 3 ^ 2        | (2 ^ (3 ^ 2))",
        "-2 ^ 2           | (-(2 ^ 2))",
        "2 ^ -1           | (2 ^ (-1))",
        "10 - 4 - 3       | ((10 - 4) - 3)",
        "7 % 4 / 2        | ((7 % 4) / 2)",
        "max(1, x + 1)    | max(1, (x + 1))",
        "f()              | f()",
        "1.5              | 1.5",
    })
    void rendersWithPrecedence(String source, String rendered) {
        assertEquals(rendered, Parser.parse(source).render());
    }

    @Test
    void reportsMissingParenthesis() {
        ParseException e = assertThrows(ParseException.class, () -> Parser.parse("(1 + 2"));
        assertTrue(e.getMessage().contains("expected RPAREN but found end of input"), e.getMessage());
        assertEquals(6, e.getPosition());
    }

    @Test
    void reportsTrailingTokens() {
        ParseException e = assertThrows(ParseException.class, () -> Parser.parse("1 2"));
        assertTrue(e.getMessage().contains("expected EOF but found '2'"), e.getMessage());
    }

    @Test
    void reportsUnexpectedOperator() {
        ParseException e = assertThrows(ParseException.class, () -> Parser.parse("1 + * 2"));
        assertTrue(e.getMessage().startsWith("unexpected '*'"), e.getMessage());
        assertEquals(4, e.getPosition());
    }

    @Test
    void reportsMissingArgumentClose() {
        assertThrows(ParseException.class, () -> Parser.parse("max(1, 2"));
    }

    @Test
    void parseExpressionStopsAtUnknownToken() {
        Parser p = new Parser(new Lexer("1 + 2 ) 3").tokenize());
        assertEquals("(1 + 2)", p.parseExpression().render());
    }
}
