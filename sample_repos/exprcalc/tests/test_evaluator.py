import math

import pytest

from exprcalc import EvalError, Evaluator, evaluate, parse
from exprcalc.evaluator import FunctionSpec, apply_binary, apply_unary, infer_arity, type_name


@pytest.mark.parametrize(
    "source, expected",
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("10 - 4 - 3", 3),
        ("2 ** 3 ** 2", 512),
        ("(2 ** 3) ** 2", 64),
        ("-2 ** 2", -4),
        ("(-2) ** 2", 4),
        ("2 ** -1", 0.5),
        ("7 / 2", 3.5),
        ("7 // 2", 3),
        ("-7 // 2", -4),
        ("7 % 3", 1),
        ("-7 % 3", 2),
        ("1.5e2 + .5", 150.5),
        ("--3", 3),
        ("+4", 4),
        ("1 < 2", True),
        ("2 <= 2", True),
        ("3 > 4", False),
        ("3 >= 4", False),
        ("1 == 1.0", True),
        ("1 != 2", True),
        ("true == 1", False),
        ('"a" == "a"', True),
        ('"abc" < "abd"', True),
        ('"ab" + "cd"', "abcd"),
        ("true and false", False),
        ("true or false", True),
        ("not true", False),
        ("not 1 > 2", True),
        ("1 < 2 and 2 < 3", True),
        ("false or 1 + 1 == 2", True),
        ("abs(-5)", 5),
        ("min(3, 1, 2)", 1),
        ("max(3, 1, 2)", 3),
        ("avg(1, 2, 3, 4)", 2.5),
        ("round(2.5)", 2),
        ("round(3.14159, 2)", 3.14),
        ("sqrt(16)", 4.0),
        ("floor(2.7) + ceil(2.1)", 5),
        ("log(100, 10)", 2.0),
        ("log(e)", 1.0),
        ("hypot(3, 4)", 5.0),
        ("clamp(15, 0, 10)", 10),
        ("clamp(-1, 0, 10)", 0),
        ('len("hello")', 5),
        ("if(1 > 2, 10, 20)", 20),
        ("if(true, 'yes', 'no')", "yes"),
        ("round(cos(pi), 6)", -1.0),
    ],
)
def test_evaluate_table(source, expected):
    result = evaluate(source)
    assert result == expected
    assert type(result) is type(expected)


def test_float_results_are_approximate():
    assert evaluate("0.1 + 0.2") == pytest.approx(0.3)
    assert evaluate("exp(1)") == pytest.approx(math.e)
    assert evaluate("tau / 2") == pytest.approx(math.pi)


def test_variables(calc):
    assert calc.evaluate("x * y + 1") == 13
    assert calc.evaluate('"hello, " + name') == "hello, world"
    assert calc.evaluate("flag and x < y") is True


def test_call_time_variables_override(calc):
    assert calc.evaluate("x + 1", {"x": 10}) == 11
    assert calc.evaluate("x + 1") == 4


def test_variables_shadow_constants():
    assert Evaluator(variables={"pi": 3}).evaluate("pi") == 3


def test_keyword_variables_in_module_evaluate():
    assert evaluate("a * b", a=6, b=7) == 42


def test_evaluate_accepts_ast(calc):
    assert calc.evaluate(parse("x + y")) == 7


def test_user_functions(calc):
    assert calc.evaluate("double(x) + 1") == 7
    assert calc.evaluate("greet(name)") == "hello, world!"
    assert calc.evaluate('greet("you", "hi")') == "hi, you!"


def test_functions_passed_to_constructor():
    evaluator = Evaluator(functions={"inc": lambda n: n + 1})
    assert evaluator.evaluate("inc(inc(1))") == 3
    assert evaluator.functions["inc"].max_args == 1


def test_register_replaces_existing_function():
    evaluator = Evaluator()
    evaluator.register("abs", lambda n: "custom")
    assert evaluator.evaluate("abs(1)") == "custom"


def test_register_with_explicit_arity():
    evaluator = Evaluator()
    evaluator.register("total", lambda *xs: sum(xs), min_args=2)
    assert evaluator.functions["total"].min_args == 2
    assert evaluator.functions["total"].max_args is None
    assert evaluator.evaluate("total(1, 2, 3)") == 6


@pytest.mark.parametrize("name", ["1abc", "and", "if", "has space", ""])
def test_register_rejects_bad_names(name):
    with pytest.raises(ValueError, match="invalid function name"):
        Evaluator().register(name, abs)


def test_unregister():
    evaluator = Evaluator()
    evaluator.unregister("sqrt")
    assert "sqrt" not in evaluator.functions
    with pytest.raises(EvalError, match="unknown function 'sqrt'"):
        evaluator.evaluate("sqrt(4)")
    with pytest.raises(KeyError):
        evaluator.unregister("sqrt")


def test_without_builtins():
    evaluator = Evaluator(include_builtins=False)
    assert evaluator.functions == {}
    with pytest.raises(EvalError, match="unknown function 'abs'"):
        evaluator.evaluate("abs(1)")


def test_compile(calc):
    area = calc.compile("width * height")
    assert area(width=2, height=3) == 6
    assert area(width=5, height=5) == 25
    assert calc.compile("x + bonus")(bonus=1) == 4


def test_and_or_short_circuit(calc, call_log):
    calls, record = call_log
    calc.register("record", record)
    assert calc.evaluate("false and record(true)") is False
    assert calc.evaluate("true or record(false)") is True
    assert calls == []
    assert calc.evaluate("true and record(false)") is False
    assert calls == [False]


def test_if_is_lazy(calc, call_log):
    calls, record = call_log
    calc.register("record", record)
    assert calc.evaluate("if(x > 0, record(1), record(2))") == 1
    assert calls == [1]
    assert calc.evaluate("if(x < 0, 1 / 0, 5)") == 5


class TestHelpers:
    @pytest.mark.parametrize(
        "value, name", [(True, "boolean"), (1, "number"), (2.5, "number"), ("s", "string"), (None, "NoneType")]
    )
    def test_type_name(self, value, name):
        assert type_name(value) == name

    def test_apply_binary(self):
        assert apply_binary("*", 6, 7) == 42
        assert apply_binary("!=", "a", "b") is True
        with pytest.raises(EvalError, match="unknown operator '@'"):
            apply_binary("@", 1, 2)

    def test_apply_unary(self):
        assert apply_unary("-", 5) == -5
        assert apply_unary("not", False) is True
        with pytest.raises(EvalError, match="bad operand type for unary -: string"):
            apply_unary("-", "x", 3)

    @pytest.mark.parametrize(
        "func, arity",
        [
            (lambda: 0, (0, 0)),
            (lambda a, b=1: 0, (1, 2)),
            (lambda a, *rest: 0, (1, None)),
            (lambda a, *, key=None: 0, (1, 1)),
            (math.sqrt, (1, 1)),
        ],
    )
    def test_infer_arity(self, func, arity):
        assert infer_arity(func) == arity

    def test_infer_arity_without_signature(self):
        class Opaque:
            @property
            def __signature__(self):
                raise ValueError("no signature")

            def __call__(self, *args):
                return len(args)

        assert infer_arity(Opaque()) == (0, None)

    @pytest.mark.parametrize(
        "spec, text",
        [
            (FunctionSpec("f", abs, 1, 1), "1 argument"),
            (FunctionSpec("f", abs, 2, 2), "2 arguments"),
            (FunctionSpec("f", abs, 1, 3), "1 to 3 arguments"),
            (FunctionSpec("f", abs, 1, None), "at least 1 argument"),
            (FunctionSpec("f", abs, 2, None), "at least 2 arguments"),
        ],
    )
    def test_describe_arity(self, spec, text):
        assert spec.describe_arity() == text

    def test_check_arity(self):
        spec = FunctionSpec("f", abs, 1, 2)
        spec.check_arity(1)
        spec.check_arity(2)
        with pytest.raises(EvalError, match=r"f\(\) takes 1 to 2 arguments but 3 were given"):
            spec.check_arity(3, pos=0)
        with pytest.raises(EvalError, match=r"but 0 were given"):
            spec.check_arity(0)
