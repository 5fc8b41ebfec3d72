package javademo.expr;

import java.util.ArrayList;
import java.util.List;

/**
 * Recursive-descent parser for arithmetic expressions.
 *
 * <pre>
 * expr    := term (('+' | '-') term)*
 * term    := unary (('*' | '/' | '%') unary)*
 * unary   := '-' unary | power
 * power   := primary ('^' unary)?
 * primary := NUMBER | IDENT | IDENT '(' args ')' | '(' expr ')'
 * </pre>
 */
public final class Parser {
    private final List<Token> tokens;
    private int index;

    /** @param tokens tokens from {@link Lexer#tokenize()} */
    public Parser(List<Token> tokens) {
        this.tokens = tokens;
    }

    /**
     * Parses a whole expression string.
     *
     * @param source the expression
     * @return the tree
     */
    public static Expr parse(String source) {
        Parser p = new Parser(new Lexer(source).tokenize());
        Expr e = p.parseExpression();
        p.expect(TokenType.EOF);
        return e;
    }

    /**
     * Parses one expression from the current position.
     *
     * @return the tree
     */
    public Expr parseExpression() {
        Expr left = parseTerm();
        while (peek().type() == TokenType.PLUS || peek().type() == TokenType.MINUS) {
            char op = next().text().charAt(0);
            left = new Ast.Binary(op, left, parseTerm());
        }
        return left;
    }

    private Expr parseTerm() {
        Expr left = parseUnary();
        while (peek().type() == TokenType.STAR || peek().type() == TokenType.SLASH
                || peek().type() == TokenType.PERCENT) {
            char op = next().text().charAt(0);
            left = new Ast.Binary(op, left, parseUnary());
        }
        return left;
    }

    private Expr parseUnary() {
        if (peek().type() == TokenType.MINUS) {
            next();
            return new Ast.Neg(parseUnary());
        }
        return parsePower();
    }

    private Expr parsePower() {
        Expr base = parsePrimary();
        if (peek().type() == TokenType.CARET) {
            next();
            return new Ast.Binary('^', base, parseUnary());
        }
        return base;
    }

    private Expr parsePrimary() {
        Token t = next();
        switch (t.type()) {
            case NUMBER:
                return new Ast.Num(Double.parseDouble(t.text()));
            case IDENT:
                if (peek().type() == TokenType.LPAREN) {
                    next();
                    return new Ast.Call(t.text(), parseArguments());
                }
                return new Ast.Var(t.text());
            case LPAREN:
                Expr inner = parseExpression();
                expect(TokenType.RPAREN);
                return inner;
            default:
                throw new ParseException("unexpected " + describe(t), t.position());
        }
    }

    private List<Expr> parseArguments() {
        List<Expr> args = new ArrayList<>();
        if (peek().type() != TokenType.RPAREN) {
            args.add(parseExpression());
            while (peek().type() == TokenType.COMMA) {
                next();
                args.add(parseExpression());
            }
        }
        expect(TokenType.RPAREN);
        return args;
    }

    private Token peek() {
        return tokens.get(index);
    }

    private Token next() {
        Token t = tokens.get(index);
        if (t.type() != TokenType.EOF) {
            index++;
        }
        return t;
    }

    private void expect(TokenType type) {
        Token t = next();
        if (t.type() != type) {
            throw new ParseException("expected " + type + " but found " + describe(t), t.position());
        }
    }

    private static String describe(Token t) {
        return t.type() == TokenType.EOF ? "end of input" : "'" + t.text() + "'";
    }
}
