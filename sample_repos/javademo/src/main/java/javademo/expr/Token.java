package javademo.expr;

import java.util.Objects;

/** One lexical token: its type, its text and where it starts in the input. */
public final class Token {
    private final TokenType type;
    private final String text;
    private final int position;

    /**
     * Creates a token.
     *
     * @param type the token type
     * @param text the source text of the token
     * @param position the offset of its first character
     */
    public Token(TokenType type, String text, int position) {
        this.type = Objects.requireNonNull(type);
        this.text = Objects.requireNonNull(text);
        this.position = position;
    }

    /** @return the token type */
    public TokenType type() {
        return type;
    }

    /** @return the source text */
    public String text() {
        return text;
    }

    /** @return the offset of the first character */
    public int position() {
        return position;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Token)) {
            return false;
        }
        Token t = (Token) o;
        return type == t.type && text.equals(t.text) && position == t.position;
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, text, position);
    }

    @Override
    public String toString() {
        return type + "(" + text + ")@" + position;
    }
}
