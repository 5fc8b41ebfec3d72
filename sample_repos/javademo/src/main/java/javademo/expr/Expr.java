package javademo.expr;

import java.util.Set;

/** A node of a parsed expression. */
public interface Expr {
    /**
     * Evaluates this expression.
     *
     * @param env variables and functions
     * @return the value
     */
    double evaluate(Environment env);

    /** @return the expression in fully parenthesized infix form */
    String render();

    /**
     * Adds the names of the variables this expression reads to {@code into}.
     *
     * @param into the set to fill
     */
    void collectVariables(Set<String> into);
}
