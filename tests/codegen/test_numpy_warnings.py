"""NumPy's floating-point warnings from compiled code (codegen.fpflags): array ops and NumPy
scalar arithmetic that overflow, make a NaN or divide by zero give NumPy's RuntimeWarnings (and,
under np.errstate, its FloatingPointError), with NumPy's results; Python's float arithmetic
beside them stays silent, as in CPython."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from tracer import trace


def outcome(fn, *args):
    """(result or exception type, the warnings' messages) of fn(*args)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(*args)
        except FloatingPointError as e:
            result = (FloatingPointError, str(e))
    return result, [str(w.message) for w in caught]


def same(fn, *args):
    expected, expected_warnings = outcome(fn, *args)
    got, got_warnings = outcome(trace(fn), *args)
    assert got_warnings == expected_warnings
    assert type(got) is type(expected) or isinstance(expected, float)
    if isinstance(expected, tuple):
        assert got == expected
    else:
        assert np.array_equal(np.asarray(got), np.asarray(expected), equal_nan=True), (got, expected)
    return got_warnings


def product_of_elements(x):
    return x[0] * x[1]


def remainder_of_elements(x):
    return x[0] % x[1]


def scaled_sum(x, n):
    s = 0.0
    for i in range(n):
        s += x[i] * 1e300
    return s


def difference_of_sums(x):
    return np.sum(x) - np.sum(x[::-1]) * 2.0


def chain(x):
    return x[0] * x[1] + x[2] - x[3]


def float32_product(x):
    return x[0] * np.float32(1e30)


def python_overflow_then_array(x, big):
    y = big * 10.0                  # Python's float: inf, silently
    return np.sum(x * 2.0) + y


def scalar_overflow_then_update(x, w):
    s = x[0] * 1e300
    w -= 0.5
    return s


@pytest.mark.parametrize("fn, args, messages", [
    (product_of_elements, (np.array([1e200, 1e200]),), ["overflow encountered in scalar multiply"]),
    (product_of_elements, (np.array([2.0, 3.0]),), []),
    (remainder_of_elements, (np.array([np.inf, 2.0]),), ["invalid value encountered in scalar remainder"]),
    (scaled_sum, (np.array([1e10, 1e10, 1.0]), 3), ["overflow encountered in scalar multiply"] * 2),
    (scaled_sum, (np.array([1e-10, 2.0]), 2), []),
    (difference_of_sums, (np.array([1e308, 1e308]),), ["overflow encountered in reduce"] * 2
     + ["invalid value encountered in scalar subtract"]),
    (difference_of_sums, (np.array([1e308, -1e308, 1e308]),), ["overflow encountered in scalar multiply"]),
    (float32_product, (np.array([1e10], dtype=np.float32),), ["overflow encountered in scalar multiply"]),
    (python_overflow_then_array, (np.ones(3), 1e308), []),
    (chain, (np.array([1e200, 1e200, 1.0, 1.0]),), ["overflow encountered in scalar multiply"]),
    (chain, (np.array([1e200, 1e200, 1.0, np.inf]),),
     ["overflow encountered in scalar multiply", "invalid value encountered in scalar subtract"]),
    (chain, (np.array([np.inf, 2.0, 1.0, 1.0]),), []),
    (chain, (np.array([np.nan, 1e300, 1e300, 1.0]),), []),
    (chain, (np.array([1e8, 1e300, 1.7e308, -np.inf]),), ["overflow encountered in scalar add"]),
])
def test_warnings_are_numpys(fn, args, messages):
    assert same(fn, *args) == messages


def test_an_update_after_scalar_overflow_is_written_once():
    x, w = np.array([1e10]), np.ones(3)
    got, messages = outcome(trace(scalar_overflow_then_update), x, w)
    assert got == math.inf and messages == ["overflow encountered in scalar multiply"]
    assert np.array_equal(w, [0.5, 0.5, 0.5])


def test_errstate_raise_is_numpys():
    compiled = trace(product_of_elements)
    assert compiled(np.array([1.0, 2.0])) == 2.0
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError, match="overflow encountered in scalar multiply"):
            compiled(np.array([1e200, 1e200]))
    with np.errstate(all="ignore"):
        assert outcome(compiled, np.array([1e200, 1e200])) == (math.inf, [])


def test_a_chain_of_adds_and_muls_is_checked_once():
    compiled = trace(chain)
    x = np.array([1.0, 2.0, 3.0, 4.0])
    assert compiled(x) == chain(x)
    checks = [v for v in compiled.specializations[0].optimized.walk() if v.op == "numpy_scalar_check"]
    assert len(checks) == 1


def long_chain(x):
    s = x[0] * x[1]
    for i in range(2, 14):          # (unrolled: a chain of 25 links)
        s = s + x[i] * 0.5
    return s


def test_an_overflow_at_the_start_of_a_long_chain_warns():
    x = np.ones(14)
    x[:2] = 1e200
    assert same(long_chain, x) == ["overflow encountered in scalar multiply"]
    compiled = trace(long_chain)
    compiled(np.ones(14))
    checks = [v for v in compiled.specializations[0].optimized.walk() if v.op == "numpy_scalar_check"]
    assert 2 <= len(checks) <= 6


def unused_product(x):
    np.zeros_like(x) * x            # never used, but NumPy computes it (and warns: 0 * inf)
    return 1.0


def test_an_unused_array_result_still_warns():
    assert same(unused_product, np.array([np.inf, 1.0])) == ["invalid value encountered in multiply"]
    assert same(unused_product, np.array([2.0, 1.0])) == []


def carried_numpy_sum(x):
    total = np.zeros_like(x).sum()       # an np.float64 ...
    for i in range(len(x)):
        total += float(x[i])             # ... plus a float: NumPy's scalar add, in a loop
    return total


@pytest.mark.parametrize("x", [np.array([-np.inf, np.inf]), np.array([1e308, 1e308, 1.0]), np.array([1.0, 2.0])])
def test_a_numpy_scalar_carried_by_a_loop_warns_as_numpy(x):
    same(carried_numpy_sum, x)
