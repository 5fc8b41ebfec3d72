package javademo.expr;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** Convenience entry points for evaluating expression strings. */
public final class Evaluator {
    private Evaluator() {
    }

    /**
     * Evaluates an expression with no variables but the constants.
     *
     * @param source the expression
     * @return its value
     */
    public static double evaluate(String source) {
        return Parser.parse(source).evaluate(new Environment());
    }

    /**
     * Evaluates an expression with the given variables.
     *
     * @param source the expression
     * @param variables values by variable name
     * @return its value
     */
    public static double evaluate(String source, Map<String, Double> variables) {
        Environment env = new Environment();
        for (Map.Entry<String, Double> e : variables.entrySet()) {
            env.define(e.getKey(), e.getValue());
        }
        return Parser.parse(source).evaluate(env);
    }

    /**
     * Lists the variables an expression reads, in sorted order.
     *
     * @param source the expression
     * @return the variable names
     */
    public static Set<String> variables(String source) {
        Set<String> names = new TreeSet<>();
        Parser.parse(source).collectVariables(names);
        return names;
    }

    /**
     * Checks whether a string is a well-formed expression.
     *
     * @param source the candidate
     * @return true when it parses
     */
    public static boolean isValid(String source) {
        try {
            Parser.parse(source);
            return true;
        } catch (ParseException e) {
            return false;
        }
    }
}
