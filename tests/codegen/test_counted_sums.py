"""Whole-array and axis sums that count (codegen.reductions): np.count_nonzero, np.any, np.all,
np.sum and np.mean of bool arrays, np.sum of int8, uint8, int16 and uint16 arrays (int64 sums,
read as they are) and of int64 arrays (one flat loop, exact: a sum past int64 fails over to
NumPy's wrapped one), against NumPy itself: values and dtypes exactly.

Arrays of one block of memory (C- and Fortran-ordered) take the flat loops; views with steps,
transposes, reversed and broadcast views, 0-d and empty arrays the element-by-element path. The
IR interpreter runs on the optimized function too (of arrays of at least one axis): it fails
where the compiled call would fall back to Python, so a result that came from Python fails the
test.
"""
from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pytest

from tracer import trace
from tracer.errors import OpFailure
from tracer.ir.ops import run

RNG = np.random.default_rng(7)
SHAPES = [(), (0,), (1,), (63,), (64,), (65,), (1000,), (64 * 255 + 3,), (64 * 255 * 2 + 130,),
          (0, 3), (400, 2), (333, 3), (5, 7, 9)]
NARROW = [np.int8, np.uint8, np.int16, np.uint16]


def check(fn, x, fails: bool = False):
    """fn compiled (fullgraph) against fn in Python, value and dtype; the IR interpreter on its
    optimized function gives the same value, or fails where `fails` (a result from Python)."""
    compiled = trace(fn, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = fn(x.copy())
        got = compiled(x)
    assert type(got) is type(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    assert np.array_equal(got, expected, equal_nan=True), (got, expected)
    (spec,) = compiled.specializations
    assert [p.name for p in spec.optimized.params] == list(inspect.signature(fn).parameters)
    if x.ndim == 0:                  # (the interpreter takes arrays of at least one axis)
        return
    if fails:
        with pytest.raises(OpFailure):
            run(spec.optimized, [x])
        return
    try:
        interpreted = run(spec.optimized, [x])
    except OpFailure as e:
        raise AssertionError(f"the compiled call fails ({e}): its result came from Python") from None
    assert np.array_equal(interpreted, got, equal_nan=True)


def bools(shape, p):
    return RNG.random(shape) < p


def views(x):
    """x and views of it of other layouts: Fortran-ordered, stepped, reversed, transposed, broadcast."""
    out = [x, np.asfortranarray(x)]
    if x.ndim:
        out += [x[::2], x[::-1]]
    if x.ndim >= 2:
        out += [x.T, x[:, ::2], x[:, :1]]
        out.append(np.broadcast_to(x[:1], x.shape))
    return out


def count(m):
    return np.count_nonzero(m)


def count_last(m):
    return np.count_nonzero(m, axis=-1)


def any_(m):
    return m.any()


def all_(m):
    return np.all(m)


def any_rows(m):
    return np.any(m, axis=-1)


def all_rows(m):
    return np.all(m, axis=-1, keepdims=True)


def total(x):
    return np.sum(x)


def rows(x):
    return x.sum(axis=-1)


def columns(x):
    return x.sum(axis=0)


def mean(m):
    return np.mean(m)


def row_means(m):
    return m.mean(axis=-1, keepdims=True)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("fn", [count, any_, all_, total, mean])
def test_whole_bool_arrays_are_counted_as_numpy_counts(fn, shape, p):
    if fn is any_ and not shape:
        pytest.skip("a 0-d array argument is traced as a number: no .any() method")
    for m in views(bools(shape, p)):
        check(fn, m, fails=fn is mean and m.size == 0)      # (NumPy warns: the Python function runs)


@pytest.mark.parametrize("shape", [s for s in SHAPES if len(s) >= 1], ids=str)
@pytest.mark.parametrize("fn", [count_last, any_rows, all_rows, rows, row_means])
def test_bool_counts_along_an_axis(fn, shape):
    for p in (0.0, 0.5, 1.0):
        for m in views(bools(shape, p)):
            empty_rows = m.shape[-1] == 0 and math.prod(m.shape[:-1]) > 0
            check(fn, m, fails=fn is row_means and empty_rows)


def test_bytes_other_than_zero_and_one_count_as_true():
    raw = RNG.integers(0, 4, 64 * 3 + 5).astype(np.uint8)
    m = raw.view(np.bool_)
    for fn in (count, any_, all_, total):
        check(fn, m)
    assert trace(count)(m) == np.count_nonzero(raw)


@pytest.mark.parametrize("dtype", NARROW, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_narrow_int_sums_are_numpys(dtype, shape):
    info = np.iinfo(dtype)
    for x in (RNG.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype),
              np.full(shape, info.max, dtype), np.full(shape, info.min, dtype)):
        for v in views(x):
            check(total, v)
            if v.ndim:
                check(rows, v)
                check(columns, v)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_int64_sums_are_numpys(shape):
    x = RNG.integers(-(1 << 40), 1 << 40, size=shape)
    for v in views(x):
        check(total, v)
    big = np.full(shape, (1 << 62) + 12345, np.int64)
    for v in views(big):
        check(total, v, fails=big.size > 1 and v.size > 1)


def test_int64_sums_near_the_limits():
    top, bottom = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    # a partial sum past int64 that comes back: the exact total fits, NumPy's wrapped sum is it
    check(total, np.array([top, 1, -1, -top, top], np.int64))
    check(total, np.array([bottom, -1, 1, top, bottom, 1], np.int64))
    check(total, np.array([bottom, -1, 1] * 30, np.int64)[:-1], fails=True)
    check(total, np.array([top] * 100 + [bottom] * 100 + [top], np.int64))
    check(total, np.array([top, 1] * 50, np.int64), fails=True)
    check(total, np.array([-1] * 70 + [bottom + 70], np.int64))
    check(total, np.array([-1] * 71 + [bottom + 70], np.int64), fails=True)


def whole_product(m):
    return m.prod()


def column_products(m):
    return np.prod(m, axis=0)


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0])
def test_bool_products_multiply(p):
    # (bools widened to int64 as sums are, then multiplied: not counted)
    for m in views(bools((6, 5), p)):
        check(whole_product, m)
        check(column_products, m)
