package javademo.expr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class LexerTest {
    private static List<TokenType> types(String s) {
        return new Lexer(s).tokenize().stream().map(Token::type).collect(Collectors.toList());
    }

    @Test
    void tokenizesOperatorsAndNumbers() {
        assertEquals(List.of(TokenType.NUMBER, TokenType.PLUS, TokenType.NUMBER, TokenType.STAR,
                TokenType.LPAREN, TokenType.NUMBER, TokenType.CARET, TokenType.NUMBER, TokenType.RPAREN,
                TokenType.PERCENT, TokenType.NUMBER, TokenType.SLASH, TokenType.NUMBER, TokenType.MINUS,
                TokenType.NUMBER, TokenType.EOF),
                types("1 + 2*(3^4) % 5 / 6 - 7"));
    }

    @Test
    void readsDecimalNumbersAndPositions() {
        List<Token> tokens = new Lexer("  3.25+x_1").tokenize();
        assertEquals(new Token(TokenType.NUMBER, "3.25", 2), tokens.get(0));
        assertEquals(new Token(TokenType.PLUS, "+", 6), tokens.get(1));
        assertEquals(new Token(TokenType.IDENT, "x_1", 7), tokens.get(2));
        assertEquals(new Token(TokenType.EOF, "", 10), tokens.get(3));
    }

    @Test
    void identifiersAndCommas() {
        assertEquals(List.of(TokenType.IDENT, TokenType.LPAREN, TokenType.IDENT, TokenType.COMMA,
                TokenType.NUMBER, TokenType.RPAREN, TokenType.EOF), types("max(a, 2)"));
    }

    @Test
    void rejectsUnknownCharacter() {
        ParseException e = assertThrows(ParseException.class, () -> new Lexer("1 # 2").tokenize());
        assertEquals(2, e.getPosition());
    }

    @Test
    void rejectsSecondDecimalPoint() {
        ParseException e = assertThrows(ParseException.class, () -> new Lexer("1.2.3").tokenize());
        assertEquals(3, e.getPosition());
    }

    @Test
    void rejectsLoneDecimalPoint() {
        assertThrows(ParseException.class, () -> new Lexer(". + 1").tokenize());
    }

    @Test
    void tokenValueSemantics() {
        Token a = new Token(TokenType.IDENT, "x", 4);
        assertEquals(a, new Token(TokenType.IDENT, "x", 4));
        assertEquals(a.hashCode(), new Token(TokenType.IDENT, "x", 4).hashCode());
        assertNotEquals(a, new Token(TokenType.IDENT, "x", 5));
        assertNotEquals(a, "x");
        assertEquals("IDENT(x)@4", a.toString());
        assertEquals("x", a.text());
        assertEquals(4, a.position());
    }
}
