import pytest

from exprcalc import EvalError, Evaluator, ExprError, ParseError, evaluate, parse


class TestErrorClasses:
    def test_hierarchy(self):
        assert issubclass(ParseError, ExprError)
        assert issubclass(EvalError, ExprError)
        assert not issubclass(ParseError, EvalError)

    def test_str_includes_position(self):
        assert str(ParseError("unexpected ')'", 5)) == "unexpected ')' at position 5"

    def test_str_without_position(self):
        error = EvalError("something broke")
        assert str(error) == "something broke"
        assert error.position is None
        assert error.message == "something broke"

    def test_pointer(self):
        assert ParseError("x", 4).pointer("1 + * 2") == "1 + * 2\n    ^"

    def test_pointer_at_end_of_input(self):
        assert ParseError("x", 3).pointer("1 +") == "1 +\n   ^"

    def test_pointer_on_second_line(self):
        source = "1 +\n  2 $ 3\n+ 4"
        assert ParseError("x", 8).pointer(source) == "  2 $ 3\n    ^"

    def test_pointer_without_position_returns_source(self):
        assert EvalError("x").pointer("a + b") == "a + b"

    def test_pointer_from_real_error(self):
        source = "max(1, 2))"
        with pytest.raises(ParseError) as info:
            parse(source)
        assert info.value.pointer(source) == "max(1, 2))\n         ^"


@pytest.mark.parametrize(
    "source, message, position",
    [
        ("1 + unknown", "unknown variable 'unknown'", 4),
        ("nope(1)", "unknown function 'nope'", 0),
        ("10 / (5 - 5)", "division by zero", 3),
        ("1 // 0", "division by zero", 2),
        ("1 % 0", "division by zero", 2),
        ('1 + "a"', "unsupported operand types for +: number and string", 2),
        ('"a" * 3', "unsupported operand types for *: string and number", 4),
        ('"a" - "b"', "unsupported operand types for -: string and string", 4),
        ("true + 1", "unsupported operand types for +: boolean and number", 5),
        ('1 < "2"', "unsupported operand types for <: number and string", 2),
        ('-"a"', "bad operand type for unary -: string", 0),
        ("not 1", "bad operand type for unary not: number", 0),
        ("1 and true", "operands of 'and' must be booleans, got number", 2),
        ("false or 0", "operands of 'or' must be booleans, got number", 6),
        ("2 ** 100000", "numeric overflow: exponent too large", 2),
        ("(-8) ** 0.5", "negative number cannot be raised to a fractional power", 5),
        ("sqrt(-1)", "sqrt(): cannot take the square root of a negative number", 0),
        ("log(0)", "log(): logarithm is only defined for positive numbers", 0),
        ("log(8, 1)", "log(): logarithm base must be positive and not 1", 0),
        ("clamp(1, 5, 0)", "clamp(): clamp() lower bound is greater than upper bound", 0),
        ('max(1, "a")', "max(): max() expects numbers, got string", 0),
        ('min(true)', "min(): min() expects numbers, got boolean", 0),
        ('avg("x")', "avg(): avg() expects numbers, got string", 0),
        ("len(5)", "len(): len() expects a string, got number", 0),
        ("round(1.5, 0.5)", "round(): ndigits must be a whole number", 0),
        ('round("a")', "round(): round() expects numbers, got string", 0),
        ("abs(1, 2)", "abs() takes 1 argument but 2 were given", 0),
        ("max()", "max() takes at least 1 argument but 0 were given", 0),
        ("clamp(1)", "clamp() takes 3 arguments but 1 was given", 0),
        ("if(true, 1)", "if() takes 3 arguments but 2 were given", 0),
        ("if(1, 2, 3)", "if() condition must be a boolean, got number", 0),
        ("  foo", "unknown variable 'foo'", 2),
    ],
)
def test_eval_errors(source, message, position):
    with pytest.raises(EvalError) as info:
        evaluate(source)
    assert info.value.message == message
    assert info.value.position == position


def test_float_overflow():
    with pytest.raises(EvalError) as info:
        evaluate("10.0 ** 400")
    assert info.value.message.startswith("numeric overflow")
    assert info.value.position == 5


def test_user_function_errors_are_wrapped():
    evaluator = Evaluator()
    evaluator.register("fail", lambda: int("x"))
    with pytest.raises(EvalError) as info:
        evaluator.evaluate("1 + fail()")
    assert info.value.message.startswith("fail(): invalid literal for int()")
    assert info.value.position == 4
    assert isinstance(info.value.__cause__, ValueError)


def test_user_eval_errors_pass_through():
    evaluator = Evaluator()

    def strict(value):
        raise EvalError("strict says no", 99)

    evaluator.register("strict", strict)
    with pytest.raises(EvalError) as info:
        evaluator.evaluate("strict(1)")
    assert (info.value.message, info.value.position) == ("strict says no", 99)


def test_user_arity_is_checked_before_calling(calc):
    with pytest.raises(EvalError, match=r"double\(\) takes 1 argument but 2 were given"):
        calc.evaluate("double(1, 2)")
    with pytest.raises(EvalError, match=r"greet\(\) takes 1 to 2 arguments but 0 were given"):
        calc.evaluate("greet()")


def test_evaluating_unknown_node_type():
    with pytest.raises(TypeError, match="cannot evaluate"):
        Evaluator().evaluate(object())
