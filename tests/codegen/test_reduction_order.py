"""Float reductions give NumPy's bits: sums add in NumPy's pairs along the axis its iterator runs
innermost (codegen.reductions), float32 adds and multiplies in float32, and a sum of -0.0s is 0.0.

Every case runs against NumPy on the same array (views of several layouts: strided, reversed,
transposed, Fortran-ordered, broadcast), comparing values, signs of zero and dtypes exactly.
"""
from __future__ import annotations

import numpy as np
import pytest

from tracer import trace
from tracer.ir.reductions import pairwise_sum

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")      # (NumPy's, for empty means)

SIZES = [0, 1, 2, 7, 8, 9, 16, 17, 100, 127, 128, 129, 257, 1000, 4099]


def total(x):
    return x.sum()


def by_rows(x):
    return x.sum(axis=-1)


def by_columns(x):
    return x.sum(axis=0)


def average(x):
    return np.mean(x)


def row_means(x):
    return x.mean(axis=-1)


def product(x):
    return np.prod(x)


def same(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    return (got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want, equal_nan=True)
            and np.array_equal(np.signbit(got), np.signbit(want)))


def layouts(base):
    yield base
    yield base[::2]
    yield base[::-1]
    n = base.size
    if n >= 8 and n % 4 == 0:
        m = base.reshape(4, -1)
        yield from (m, m.T, m[:, ::2], m[::2], np.asfortranarray(m), m[::-1, ::-1])
        yield np.broadcast_to(base[: n // 4], (3, n // 4))
        yield np.broadcast_to(base[: n // 4, None], (n // 4, 3))
        yield base.reshape(2, 2, -1)[:, :, ::2]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fn", [total, by_rows, by_columns, average, row_means])
def test_sums_and_means_are_numpys_bit_for_bit(fn, dtype):
    compiled = trace(fn, fullgraph=True)
    rng = np.random.default_rng(7)
    for n in SIZES:
        base = (rng.standard_normal(n) * 10.0 ** rng.integers(-4, 4, n)).astype(dtype)
        for x in layouts(base):
            if fn in (by_columns,) and x.ndim == 0:
                continue
            assert same(compiled(x), fn(x)), (n, x.shape, x.strides)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_products_multiply_in_numpys_order_and_type(dtype):
    compiled = trace(product, fullgraph=True)
    rng = np.random.default_rng(8)
    for n in SIZES:
        base = rng.uniform(0.9, 1.1, n).astype(dtype)
        for x in layouts(base):
            assert same(compiled(x), np.prod(x)), (n, x.shape, x.strides)


def test_a_sum_of_negative_zeros_is_positive_zero():
    compiled = trace(total, fullgraph=True)
    for n in (1, 2, 9, 200):
        x = np.full(n, -0.0)
        assert same(compiled(x), np.sum(x))


def test_the_python_pairwise_sum_is_numpys():
    """The IR's evaluator (and so the compiled code's oracle) is NumPy's algorithm."""
    rng = np.random.default_rng(9)
    for n in SIZES + [20_000]:
        x = rng.standard_normal(n) * 10.0 ** rng.integers(-4, 4, n)
        assert same(np.float64(0.0) + pairwise_sum(x), np.add.reduce(x))


def sum_of_squares(x):
    return np.sum(x * x)


def shifted_mean(x, y):
    return (np.sqrt(x) * y - 0.5).mean()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", SIZES + [100_003])
def test_a_sum_of_a_map_adds_as_it_goes_in_numpys_pairs(n, dtype):
    """The map's elements are made as the pairwise sum reaches them (codegen.reductions.fused_sum):
    NumPy's bits, with no array allocated."""
    rng = np.random.default_rng(n)
    x, y = rng.random(2 * n).astype(dtype), rng.standard_normal(2 * n).astype(dtype)
    squares, means = trace(sum_of_squares, fuse_fma=False), trace(shifted_mean, fuse_fma=False)
    for a, b in ((x[:n], y[:n]), (x[::2], y[::2]), (x[n:][::-1], y[:n])):
        for got, want in ((squares(a), sum_of_squares(a)), (means(a, b), shifted_mean(a, b))):
            assert np.asarray(got).tobytes() == np.asarray(want).tobytes() and type(got) is type(want)
    assert ".sum" in squares.specializations[0].compiled.llvm_ir    # (an array only where an element fails)


def sum_after_a_write(a):
    m = a * 2.0
    a[0] = 100.0
    return m.sum()


def sums_in_a_loop_that_writes(a, n):
    m = a * 2.0
    s = 0.0
    for i in range(n):
        a[i] = 1.0
        s += m.sum()
    return s


def test_a_map_is_not_summed_as_it_goes_past_a_write_of_what_it_reads():
    for fn, extra in ((sum_after_a_write, ()), (sums_in_a_loop_that_writes, (3,))):
        a, b = np.arange(10.0), np.arange(10.0)
        assert trace(fn)(a, *extra) == fn(b, *extra) and np.array_equal(a, b)
