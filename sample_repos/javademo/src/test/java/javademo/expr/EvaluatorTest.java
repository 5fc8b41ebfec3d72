package javademo.expr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class EvaluatorTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "1 + 2 * 3          | 7",
        "(1 + 2) * 3        | 9",
        "2 ^ 3 ^ 2          | 512",
        "-2 ^ 2             | -4",
        "10 - 4 - 3         | 3",
        "7 % 4              | 3",
        "9 / 4              | 2.25",
        "--3                | 3",
        "abs(-2.5) + sqrt(16) | 6.5",
        "max(1, 7, 3) - min(4, -1) | 8",
    })
    void evaluatesArithmetic(String source, double expected) {
        assertEquals(expected, Evaluator.evaluate(source), 1e-12);
    }

    @Test
    void usesConstants() {
        assertEquals(Math.PI * 2, Evaluator.evaluate("2 * pi"), 1e-12);
        assertEquals(Math.E, Evaluator.evaluate("e"), 1e-12);
    }

    @Test
    void usesVariables() {
        assertEquals(23.0, Evaluator.evaluate("x * y + 3", Map.of("x", 4.0, "y", 5.0)), 1e-12);
    }

    @Test
    void variablesShadowConstants() {
        assertEquals(6.0, Evaluator.evaluate("pi * 2", Map.of("pi", 3.0)), 1e-12);
    }

    @Test
    void undefinedVariableFails() {
        ParseException e = assertThrows(ParseException.class, () -> Evaluator.evaluate("x + 1"));
        assertEquals("undefined variable 'x'", e.getMessage());
        assertEquals(-1, e.getPosition());
    }

    @Test
    void undefinedFunctionFails() {
        ParseException e = assertThrows(ParseException.class, () -> Evaluator.evaluate("nope(1)"));
        assertEquals("undefined function 'nope'", e.getMessage());
    }

    @Test
    void divisionByZeroFails() {
        assertThrows(ParseException.class, () -> Evaluator.evaluate("1 / (2 - 2)"));
    }

    @Test
    void builtinArityIsChecked() {
        assertThrows(ParseException.class, () -> Evaluator.evaluate("abs(1, 2)"));
        assertThrows(ParseException.class, () -> Evaluator.evaluate("sqrt()"));
        assertThrows(ParseException.class, () -> Evaluator.evaluate("max()"));
    }

    @Test
    void customFunctionsAndVariables() {
        Environment env = new Environment()
                .define("k", 10)
                .define("sum", args -> {
                    double s = 0;
                    for (double a : args) {
                        s += a;
                    }
                    return s;
                });
        assertEquals(16.0, Parser.parse("sum(1, 2, 3) + k").evaluate(env), 1e-12);
        assertEquals(10.0, env.lookup("k"), 0);
        assertEquals(5.0, env.call("sum", new double[] {2, 3}), 0);
    }

    @Test
    void listsVariablesSorted() {
        assertEquals(Set.of("a", "b", "z"), Evaluator.variables("z * max(a, -b) + 2"));
        assertEquals("[a, b, z]", Evaluator.variables("z * max(a, -b) + b").toString());
        assertTrue(Evaluator.variables("1 + 2").isEmpty());
    }

    @Test
    void validity() {
        assertTrue(Evaluator.isValid("max(1, 2) * (3 + x)"));
        assertFalse(Evaluator.isValid("max(1, 2"));
        assertFalse(Evaluator.isValid("1 $ 2"));
    }
}
