package javademo.expr;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.StringJoiner;

/** The node types of the expression tree, as nested classes. */
public final class Ast {
    private Ast() {
    }

    /** A numeric literal. */
    public static final class Num implements Expr {
        private final double value;

        /** @param value the literal value */
        public Num(double value) {
            this.value = value;
        }

        @Override
        public double evaluate(Environment env) {
            return value;
        }

        @Override
        public String render() {
            if (value == Math.rint(value) && !Double.isInfinite(value)) {
                return Long.toString((long) value);
            }
            return Double.toString(value);
        }

        @Override
        public void collectVariables(Set<String> into) {
        }
    }

    /** A variable reference. */
    public static final class Var implements Expr {
        private final String name;

        /** @param name the variable name */
        public Var(String name) {
            this.name = name;
        }

        @Override
        public double evaluate(Environment env) {
            return env.lookup(name);
        }

        @Override
        public String render() {
            return name;
        }

        @Override
        public void collectVariables(Set<String> into) {
            into.add(name);
        }
    }

    /** Unary minus. */
    public static final class Neg implements Expr {
        private final Expr operand;

        /** @param operand the negated expression */
        public Neg(Expr operand) {
            this.operand = operand;
        }

        @Override
        public double evaluate(Environment env) {
            return -operand.evaluate(env);
        }

        @Override
        public String render() {
            return "(-" + operand.render() + ")";
        }

        @Override
        public void collectVariables(Set<String> into) {
            operand.collectVariables(into);
        }
    }

    /** A binary operation. */
    public static final class Binary implements Expr {
        private final char op;
        private final Expr left;
        private final Expr right;

        /**
         * @param op one of {@code + - * / % ^}
         * @param left the left operand
         * @param right the right operand
         */
        public Binary(char op, Expr left, Expr right) {
            this.op = op;
            this.left = left;
            this.right = right;
        }

        @Override
        public double evaluate(Environment env) {
            double a = left.evaluate(env);
            double b = right.evaluate(env);
            switch (op) {
                case '+': return a + b;
                case '-': return a - b;
                case '*': return a * b;
                case '/':
                    if (b == 0) {
                        throw new ParseException("division by zero", -1);
                    }
                    return a / b;
                case '%': return a % b;
                case '^': return Math.pow(a, b);
                default: throw new IllegalStateException("operator " + op);
            }
        }

        @Override
        public String render() {
            return "(" + left.render() + " " + op + " " + right.render() + ")";
        }

        @Override
        public void collectVariables(Set<String> into) {
            left.collectVariables(into);
            right.collectVariables(into);
        }
    }

    /** A function call such as {@code max(a, b)}. */
    public static final class Call implements Expr {
        private final String function;
        private final List<Expr> args;

        /**
         * @param function the function name
         * @param args the argument expressions
         */
        public Call(String function, List<Expr> args) {
            this.function = function;
            this.args = Collections.unmodifiableList(new ArrayList<>(args));
        }

        @Override
        public double evaluate(Environment env) {
            double[] values = new double[args.size()];
            for (int i = 0; i < values.length; i++) {
                values[i] = args.get(i).evaluate(env);
            }
            return env.call(function, values);
        }

        @Override
        public String render() {
            StringJoiner j = new StringJoiner(", ", function + "(", ")");
            for (Expr a : args) {
                j.add(a.render());
            }
            return j.toString();
        }

        @Override
        public void collectVariables(Set<String> into) {
            for (Expr a : args) {
                a.collectVariables(into);
            }
        }
    }
}
