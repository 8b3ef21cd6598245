import pytest

from minicalc import Expr


@pytest.mark.parametrize("op, expected", [("+", 5), ("-", 1), ("*", 6), ("/", 1.5)])
def test_binary(op, expected):
    assert Expr(op, 3, 2).evaluate() == expected


def test_nested():
    assert Expr("*", Expr("+", 1, 2), 4).evaluate() == 12


def test_division_by_zero():
    with pytest.raises(ZeroDivisionError):
        Expr("/", 1, 0).evaluate()
