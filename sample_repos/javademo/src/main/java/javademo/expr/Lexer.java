package javademo.expr;

import java.util.ArrayList;
import java.util.List;

/** Splits an arithmetic expression into tokens. */
public final class Lexer {
    private final String input;
    private int pos;

    /** @param input the expression text */
    public Lexer(String input) {
        this.input = input;
    }

    /**
     * Tokenizes the whole input.
     *
     * @return the tokens, always ending with an {@link TokenType#EOF} token
     * @throws ParseException on a character that starts no token
     */
    public List<Token> tokenize() {
        List<Token> tokens = new ArrayList<>();
        while (pos < input.length()) {
            char c = input.charAt(pos);
            if (Character.isWhitespace(c)) {
                pos++;
            } else if (Character.isDigit(c) || c == '.') {
                tokens.add(readNumber());
            } else if (Character.isLetter(c) || c == '_') {
                tokens.add(readIdentifier());
            } else {
                tokens.add(new Token(symbol(c), String.valueOf(c), pos));
                pos++;
            }
        }
        tokens.add(new Token(TokenType.EOF, "", pos));
        return tokens;
    }

    private Token readNumber() {
        int start = pos;
        boolean seenDot = false;
        while (pos < input.length()) {
            char c = input.charAt(pos);
            if (c == '.') {
                if (seenDot) {
                    throw new ParseException("second decimal point", pos);
                }
                seenDot = true;
            } else if (!Character.isDigit(c)) {
                break;
            }
            pos++;
        }
        String text = input.substring(start, pos);
        if (text.equals(".")) {
            throw new ParseException("lone decimal point", start);
        }
        return new Token(TokenType.NUMBER, text, start);
    }

    private Token readIdentifier() {
        int start = pos;
        while (pos < input.length()
                && (Character.isLetterOrDigit(input.charAt(pos)) || input.charAt(pos) == '_')) {
            pos++;
        }
        return new Token(TokenType.IDENT, input.substring(start, pos), start);
    }

    private TokenType symbol(char c) {
        switch (c) {
            case '+': return TokenType.PLUS;
            case '-': return TokenType.MINUS;
            case '*': return TokenType.STAR;
            case '/': return TokenType.SLASH;
            case '%': return TokenType.PERCENT;
            case '^': return TokenType.CARET;
            case '(': return TokenType.LPAREN;
            case ')': return TokenType.RPAREN;
            case ',': return TokenType.COMMA;
            default: throw new ParseException("unexpected character '" + c + "'", pos);
        }
    }
}
