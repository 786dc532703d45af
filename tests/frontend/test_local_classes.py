"""A class statement inside the traced function: the class is made at trace time (its body runs
on constants) and its instances are traced like those of any user class. Checked against
CPython."""
import pytest

from tests.support.oracle import outcome, same_outcome
from tracer import trace
from tracer.errors import UnsupportedError


def accumulate_points(xs):
    class Point:
        __slots__ = ("x", "y")

        def __init__(self, x, y):
            self.x, self.y = x, y

        def __add__(self, other):
            return Point(self.x + other.x, self.y + other.y)

        def norm2(self):
            return self.x * self.x + self.y * self.y

    total = Point(0.0, 0.0)
    for x in xs:
        total = total + Point(x, 2.0 * x)
    return total.norm2(), total.x


def closes_over(xs, k):
    class Scaled:
        factor = k           # the body reads the function's variable

        def __init__(self, v):
            self.v = v * self.factor
    return sum(Scaled(x).v for x in xs)


@pytest.mark.parametrize("fn, args", [(accumulate_points, ([1.0, 2.5, -0.5],)), (accumulate_points, ([],))],
                         ids=lambda x: getattr(x, "__name__", ""))
def test_like_cpython(fn, args):
    expected = outcome(fn, args)
    got = outcome(trace(fullgraph=True)(fn), args)
    assert same_outcome(got, expected), (got, expected)


def test_a_class_body_reading_the_function_is_reported():
    with pytest.raises(UnsupportedError, match="class statement"):
        trace(fullgraph=True)(closes_over)([1.0, 2.0], 3.0)
    assert trace(closes_over)([1.0, 2.0], 3.0) == closes_over([1.0, 2.0], 3.0)
