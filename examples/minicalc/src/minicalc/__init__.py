"""A tiny calculator with an attrs-based expression type."""

import attr


@attr.s(frozen=True)
class Expr:
    op = attr.ib()
    left = attr.ib()
    right = attr.ib()

    def evaluate(self):
        a = self.left.evaluate() if isinstance(self.left, Expr) else self.left
        b = self.right.evaluate() if isinstance(self.right, Expr) else self.right
        return OPS[self.op](a, b)


OPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
}
