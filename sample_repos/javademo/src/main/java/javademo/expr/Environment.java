package javademo.expr;

import java.util.HashMap;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/** Variables and functions an expression is evaluated against. */
public final class Environment {
    private final Map<String, Double> variables = new HashMap<>();
    private final Map<String, ToDoubleFunction<double[]>> functions = new HashMap<>();

    /** Creates an environment with the constants {@code pi} and {@code e} and the built-in functions. */
    public Environment() {
        variables.put("pi", Math.PI);
        variables.put("e", Math.E);
        functions.put("abs", args -> Math.abs(single("abs", args)));
        functions.put("sqrt", args -> Math.sqrt(single("sqrt", args)));
        functions.put("min", args -> fold("min", args, Math::min));
        functions.put("max", args -> fold("max", args, Math::max));
    }

    /**
     * Sets a variable.
     *
     * @param name the variable name
     * @param value its value
     * @return this environment
     */
    public Environment define(String name, double value) {
        variables.put(name, value);
        return this;
    }

    /**
     * Registers a function.
     *
     * @param name the function name
     * @param body the function, given its evaluated arguments
     * @return this environment
     */
    public Environment define(String name, ToDoubleFunction<double[]> body) {
        functions.put(name, body);
        return this;
    }

    /**
     * Looks a variable up.
     *
     * @param name the variable name
     * @return its value
     * @throws ParseException when it is not defined
     */
    public double lookup(String name) {
        Double v = variables.get(name);
        if (v == null) {
            throw new ParseException("undefined variable '" + name + "'", -1);
        }
        return v;
    }

    /**
     * Calls a function.
     *
     * @param name the function name
     * @param args the evaluated arguments
     * @return the result
     * @throws ParseException when the function is not defined
     */
    public double call(String name, double[] args) {
        ToDoubleFunction<double[]> f = functions.get(name);
        if (f == null) {
            throw new ParseException("undefined function '" + name + "'", -1);
        }
        return f.applyAsDouble(args);
    }

    private static double single(String name, double[] args) {
        if (args.length != 1) {
            throw new ParseException(name + " takes 1 argument, got " + args.length, -1);
        }
        return args[0];
    }

    private static double fold(String name, double[] args, java.util.function.DoubleBinaryOperator op) {
        if (args.length == 0) {
            throw new ParseException(name + " needs at least 1 argument", -1);
        }
        double acc = args[0];
        for (int i = 1; i < args.length; i++) {
            acc = op.applyAsDouble(acc, args[i]);
        }
        return acc;
    }
}
