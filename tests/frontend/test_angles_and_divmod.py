"""math.radians, math.degrees and divmod of ints in traced code, against CPython (fullgraph=True:
compiled, not run as Python)."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from like_python import same

from tracer import trace

ANGLES = [0.0, -0.0, 1.0, -123.456, 1e308, -1e308, 5e-324, math.inf, -math.inf, math.nan, 90, -7, True]


def radians(x):
    return math.radians(x)


def degrees(x):
    return math.degrees(x)


def both(x):
    return math.degrees(math.radians(x)) - x


@pytest.mark.parametrize("fn", [radians, degrees, both])
@pytest.mark.parametrize("x", ANGLES, ids=repr)
def test_angles_like_python(fn, x):
    same(fn, x)


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_radians_bit_for_bit(x):
    same(radians, x)
    same(degrees, x)


def quotient_and_remainder(a, b):
    q, r = divmod(a, b)
    return q, r, q * b + r == a


def divmod_with_a_constant(a):
    return divmod(a, -7)


INTS = [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 5), (5, 0), (2**62, 3), (-2**63, -1), (True, 1)]


@pytest.mark.parametrize("a, b", INTS, ids=repr)
def test_divmod_of_ints_like_python(a, b):
    same(quotient_and_remainder, a, b)
    same(divmod_with_a_constant, a)


def test_divmod_of_floats_is_a_graph_break_by_default():
    def f(x, y):
        q, r = divmod(x, y)
        return q + r
    for args in [(7.5, 2.0), (-7.5, 2.0), (1.0, 0.0)]:
        try:
            want = ("returned", f(*args))
        except ZeroDivisionError as e:
            want = ("raised", str(e))
        compiled = trace(f)
        try:
            got = ("returned", compiled(*args))
        except ZeroDivisionError as e:
            got = ("raised", str(e))
        assert got == want
