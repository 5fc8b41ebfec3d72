from exprcalc import free_variables, parse, walk
from exprcalc.nodes import BinaryOp, Call, Name, Number, children, is_constant


def test_children():
    tree = parse("f(a, 1) + -b")
    assert children(tree) == (tree.left, tree.right)
    assert children(tree.left) == (Name("a"), Number(1))
    assert children(tree.right) == (Name("b"),)
    assert children(Number(1)) == ()


def test_walk_is_preorder():
    tree = parse("a * (b + c)")
    names = [node.name if isinstance(node, Name) else node.op for node in walk(tree)]
    assert names == ["*", "a", "+", "b", "c"]


def test_walk_visits_call_arguments_in_order():
    kinds = [type(node).__name__ for node in walk(parse("f(1, x, g())"))]
    assert kinds == ["Call", "Number", "Name", "Call"]


def test_free_variables():
    assert free_variables(parse("x + max(y, x) * f(z) - 1")) == {"x", "y", "z"}
    assert free_variables(parse("1 + 2")) == set()


def test_is_constant():
    assert is_constant(parse("1"))
    assert is_constant(parse('"s"'))
    assert is_constant(parse("true"))
    assert not is_constant(parse("x"))
    assert not is_constant(parse("-1"))


def test_nodes_are_hashable_and_ignore_positions():
    a = BinaryOp("+", Number(1, pos=0), Number(2, pos=2), pos=1)
    b = BinaryOp("+", Number(1), Number(2))
    assert a == b
    assert hash(a) == hash(b)
    assert repr(b) == "BinaryOp(op='+', left=Number(value=1), right=Number(value=2))"


def test_call_default_args():
    assert Call("f") == parse("f()")
