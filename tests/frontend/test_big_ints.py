"""Ints past 64 bits in traced code (tracer.frontend.builder): an int result that overflows 64 bits,
or an argument past them, gives Python's exact result; int/float comparisons are exact.

The oracle is CPython: a compiled function returns what the Python function returns, bit for bit.
"""
from __future__ import annotations

import math

import pytest
from like_python import assert_like_python

from tracer import trace

I64_MIN, I64_MAX = -2 ** 63, 2 ** 63 - 1


# ============================================================================ big ints
def mul(x, y):
    return x * y


def int_ops(a, b):
    return a + b, a - b, a * b, -a, abs(a), a // b, a % b, a ** 2


def back_in_range(x, y):
    return (x * y) // y - x + 1


@pytest.mark.parametrize("fn, small, big", [
    (mul, (3, 4), (2 ** 40, 2 ** 40)),
    (mul, (3, 4), (I64_MIN, -1)),
    (mul, (3, 4), (I64_MAX, I64_MAX)),
    (int_ops, (5, 3), (I64_MAX, 1)),
    (int_ops, (5, 3), (I64_MIN, -1)),
    (int_ops, (5, 3), (I64_MIN, I64_MIN)),
    (back_in_range, (5, 3), (2 ** 40, 2 ** 40)),
    (mul, (3, 4), (2 ** 70, 3)),            # an argument past 64 bits
    (int_ops, (5, 3), (-2 ** 64, 2 ** 65)),
], ids=["2**40*2**40", "min*-1", "max*max", "max+1", "min-neg", "min-min", "back-in-range", "big-arg", "big-args"])
def test_int_overflow_gives_the_exact_python_result(fn, small, big):
    compiled = trace(fn)
    assert_like_python(compiled, *small)
    got = assert_like_python(compiled, *big)
    assert got[0] == "return"
    assert_like_python(compiled, *small)    # the compiled path still works afterwards


def test_int_past_64_bits_inside_a_list_argument_gives_the_python_result():
    def total(ns):
        return sum(ns)
    compiled = trace(total)
    assert compiled([1, 2, 3]) == 6
    assert_like_python(compiled, [1, 2, 2 ** 64])


def test_int_times_int_past_64_bits():
    compiled = trace(mul)
    assert compiled(3, 4) == 12
    result = compiled(2 ** 40, 2 ** 40)
    assert result == 2 ** 80 and type(result) is int


def test_int_float_comparison_is_exact():
    """Python compares ints and floats exactly, not by converting the int to a float."""
    def compare(n, x):
        return n < x, n <= x, n == x, n != x, n > x, n >= x, x < n, x == n
    compiled = trace(compare)
    for n, x in [(2 ** 53 + 1, 2.0 ** 53), (I64_MAX, 2.0 ** 63), (I64_MIN, -2.0 ** 63), (I64_MIN + 1, -2.0 ** 63),
                 (-2 ** 53 - 1, -2.0 ** 53), (3, 3.0), (3, 2.5), (3, math.nan), (1, math.inf), (0, -0.0),
                 (2 ** 60 + 1, float(2 ** 60)), (-(2 ** 62) - 1, -float(2 ** 62))]:
        assert_like_python(compiled, n, x)
