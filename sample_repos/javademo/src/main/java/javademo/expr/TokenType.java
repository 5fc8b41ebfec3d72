package javademo.expr;

/** The kinds of token the {@link Lexer} produces. */
public enum TokenType {
    NUMBER, IDENT, PLUS, MINUS, STAR, SLASH, PERCENT, CARET, LPAREN, RPAREN, COMMA, EOF
}
