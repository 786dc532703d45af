"""User functions whose compiled code raises, for tests/api/test_tracebacks.py (in a module of
their own: pytest rewrites the `assert` statements of test modules)."""
import math


def raises_value_error(x, y):
    z = x * y
    if z > 100.0:
        raise ValueError("too big")
    return z


def divides(x, y):
    z = x * y
    w = 1.0 / (z - 6.0)
    return w + 1.0


def square_root(x):
    y = x + 1.0
    return math.sqrt(y)


def asserts(x):
    assert x > 0.0, "x must be positive"
    return x


def inner(x):
    t = x - 10.0
    return math.sqrt(t)


def outer(x):
    y = x * 2.0
    return inner(y) + 1.0


def two_divisions(a, b):
    first = 1.0 / a
    second = 1.0 / b
    return first + second


def in_a_loop(n, x):
    total = 0.0
    i = 0
    while i < n:
        total += 1.0 / (x - i)
        i += 1
    return total


class Weights:
    def __init__(self, w):
        self.w = w


def reads_an_attribute(p, x):
    return x / p.w


def raises_with_two_args(x):
    if x < 0.0:
        raise ValueError("negative", 3)      # not one string: Python raises it again, exactly
    return x
