"""A vector times a vector (codegen.matmul._dot): 16 partial sums halved pairwise, then the terms
left over; the IR evaluator's order bit for bit (unfused and with FMA fusion), within rounding
of NumPy's (BLAS splits its sums in an order of its own), for contiguous and strided vectors;
and, each sum in order, a matrix whose columns are contiguous times a vector
(codegen.matmul._matvec_columns) and a matrix times one whose rows are strided (tiles over a
contiguous copy of it)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from numpy_kernels_b import autocorrelation  # (the corpus's: dots of slices)

import tracer
from tracer.ir.array_ops import DOT_LANES, _matmul

RNG = np.random.default_rng(16)


def in_lanes(x, y):
    """The documented order, written out: sums l of terms p = l mod 16 (from +0.0), halved, tail."""
    whole = len(x) - len(x) % DOT_LANES
    sums = [0.0] * DOT_LANES
    for p in range(whole):
        sums[p % DOT_LANES] += float(x[p]) * float(y[p])
    while len(sums) > 1:
        half = len(sums) // 2
        sums = [sums[i] + sums[i + half] for i in range(half)]
    total = sums[0]
    for p in range(whole, len(x)):
        total += float(x[p]) * float(y[p])
    return total


def views(n):
    x, y = RNG.standard_normal(n), RNG.standard_normal(2 * n)
    return [(x, y[:n]), (x, y[::2]), (x[::-1], y[1::2])]


@pytest.mark.parametrize("n", [0, 1, 5, 15, 16, 17, 32, 47, 100, 1001])
def test_dot_is_the_documented_order(n):
    plain = tracer.trace(fuse_fma=False)(lambda a, b: a @ b)
    fused = tracer.trace(lambda a, b: np.dot(a, b))
    for x, y in views(n):
        got = plain(x, y)
        assert got == in_lanes(x, y) == _matmul(x, y)
        assert fused(x, y) == _matmul(x, y, fused=True)
        assert math.isclose(got, float(np.dot(x, y)), rel_tol=1e-12, abs_tol=1e-12 * np.abs(x * y).sum())


def test_dot_of_special_values_is_numpys():
    dot = tracer.trace(fuse_fma=False)(lambda a, b: np.dot(a, b))
    for x in ([-0.0] * 20, [np.inf] + [1.0] * 20, [np.nan] * 3 + [1.0] * 30, [1e308] * 17):
        x = np.array(x)
        np.testing.assert_array_equal(dot(x, np.ones_like(x)), np.dot(x, np.ones_like(x)))


def test_dots_of_slices_are_numpys_within_rounding():
    x = RNG.standard_normal(5000)
    np.testing.assert_allclose(tracer.trace(autocorrelation)(x, 20), autocorrelation(x, 20), rtol=1e-12, atol=1e-14)


def in_order_sum(terms) -> float:
    """The terms added one after another (not `sum()`, which compensates its rounding from 3.12 on)."""
    total = 0.0
    for t in terms:
        total += t
    return total


@pytest.mark.parametrize("m, k", [(1, 1), (3, 0), (3, 100), (4, 7), (5, 33), (9, 64)])
def test_a_matrix_of_contiguous_columns_times_a_vector_is_the_plain_loop(m, k):
    """x.T @ v (a's columns contiguous) goes four rows at a time, each row's sum still in order:
    unfused the plain loop's bits, fused the evaluator's fmas."""
    x, v = RNG.standard_normal((k, m)), RNG.standard_normal(2 * k)
    plain, fused = tracer.trace(fuse_fma=False)(lambda a, b: a @ b), tracer.trace(lambda a, b: a @ b)
    for a, w in ((x.T, v[:k]), (x.T, v[::2]), (x[::2].T, v[:len(x[::2])])):
        in_order = np.array([in_order_sum(float(a[i, p]) * float(w[p]) for p in range(a.shape[1])) for i in range(m)])
        np.testing.assert_array_equal(plain(a, w), in_order)
        np.testing.assert_array_equal(fused(a, w), _matmul(a, w, fused=True))


@pytest.mark.parametrize("m, k, n", [(5, 8, 9), (6, 8, 9), (13, 33, 20), (40, 1, 3), (7, 0, 4)])
def test_a_matrix_times_a_transposed_matrix_is_the_plain_loop(m, k, n):
    """x @ w.T (y's rows strided): from TILE_ROWS rows of x on, tiles over a contiguous copy of
    y; every element still its sum in order (unfused the plain loop's bits, fused the evaluator's)."""
    x, w = RNG.standard_normal((m, k)), RNG.standard_normal((n, 2 * k))
    plain, fused = tracer.trace(fuse_fma=False)(lambda a, b: a @ b), tracer.trace(lambda a, b: a @ b)
    for y in (w[:, :k].T, w[:, ::2].T, w[::-1, :k].T):
        in_order = np.array([[in_order_sum(float(x[i, p]) * float(y[p, j]) for p in range(k)) for j in range(n)]
                             for i in range(m)])
        np.testing.assert_array_equal(plain(x, y), in_order)
        np.testing.assert_array_equal(fused(x, y), _matmul(x, y, fused=True))
