"""Still more NumPy functions in traced code (tracer.frontend.numpy_extra) against NumPy itself:
any/all/count_nonzero, the angle conversions, isclose/allclose, meshgrid, sinc, nansum/nanmean
and fill_diagonal, on float64, float32, int64 and bool arrays (bools made inside the function),
empty arrays and axes, edge values (-0.0, inf, nan), and NumPy's errors.

Every function is traced with fullgraph=True and checked by `check` from test_numpy_more: NumPy's
result type, dtype and shape, values bit for bit (unless a tolerance is given), and the IR
interpreter on the optimized function agrees (so a result that only came from the Python
function, after the compiled call failed, is noticed). Fewer, richer functions: compiling
dominates the time.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_numpy_more import arrays_of, check, check_as

from tracer import trace

RNG = np.random.default_rng(11)
DTYPES = [np.float64, np.float32, np.int64, np.bool_]
EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e308, -1e-310, 5e-324, 1.0, -2.5, 90.0, 180.0, 3.141592653589793]


def with_edges(dtype, shape):
    """A random array of `dtype` with zeros (and for floats NaN) in it."""
    x = arrays_of(dtype, shape)
    flat = x.reshape(-1)
    flat[::3] = 0
    if dtype in (np.float64, np.float32) and flat.size > 1:
        flat[1] = np.nan
    return x


def edge_values(dtype, n=20000):
    x = np.concatenate([EDGES, RNG.normal(size=n) * 10.0 ** RNG.integers(-30, 30, size=n)])
    with np.errstate(over="ignore"):
        return x.astype(dtype) if dtype != np.int64 else RNG.integers(-2**53, 2**53, size=n)


# ------------------------------------------------------------------------------- truth tests
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5,), (0,), (3, 4), (4, 0), (2, 3, 2)], ids=str)
def test_any_all_count_nonzero(dtype, shape):
    def f(x):
        return (np.any(x), np.all(x), x.any(), x.all(), np.count_nonzero(x), np.count_nonzero(x, axis=0),
                x.any(axis=0), np.all(x, axis=-1, keepdims=True), np.any(x, keepdims=True),
                np.count_nonzero(x, axis=-1, keepdims=True), np.all(x, axis=tuple(range(x.ndim))))
    check_as(dtype, f, with_edges(dtype, shape))
    if dtype != np.bool_:
        check(f, np.ones(shape, dtype=dtype))
    else:
        check(lambda x: f(x == x), np.ones(shape))     # all true (NaN-free)


def test_truth_tests_of_nan_and_scalars():
    check(lambda x: (np.any(x), np.all(x), np.count_nonzero(x), x.all(axis=0)), np.array([np.nan, -0.0, 0.0]))
    check(lambda x: (np.all(x), x.any()), np.array([np.nan, 1.0]))
    check(lambda x: (np.any(x[0]), np.all(x[1]), np.count_nonzero(x[2])), np.array([0.0, np.nan, -0.0]))
    check(lambda x: (np.any(x > 0, axis=1), np.all(x < 5.0, axis=0), np.count_nonzero(x >= 0, axis=1)),
          RNG.normal(size=(4, 6)))


def test_truth_test_errors_are_numpys():
    for fn in [lambda x: np.any(x, axis=2), lambda x: x.all(axis=-3), lambda x: np.count_nonzero(x, axis=(0, 0))]:
        with pytest.raises(Exception) as expected:
            fn(np.ones((2, 3)))
        with pytest.raises(type(expected.value)):
            trace(fn, fullgraph=True)(np.ones((2, 3)))


# ------------------------------------------------------------------------------- angles
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_angle_conversions_bit_for_bit(dtype):
    check(lambda x: (np.radians(x), np.degrees(x), np.deg2rad(x), np.rad2deg(x), np.degrees(x[3:5]),
                     np.radians(x[0])), edge_values(dtype))


def test_angles_of_numbers():
    check(lambda a: (np.radians(a), np.degrees(a), np.deg2rad(2.5), np.rad2deg(7)), 123.456)
    check(lambda x: np.degrees(np.radians(x)), np.array(-0.0))


# ------------------------------------------------------------------------------- closeness
def near_pairs(dtype, n=20000):
    """y, and x at NumPy's tolerance from y (give or take a few ulps): where rounding decides."""
    y = (RNG.normal(size=n) * 10.0 ** RNG.uniform(-12, 12, size=n)).astype(dtype)
    tol = 1e-8 + 1e-5 * np.abs(y.astype(np.float64))
    x = (y + tol * (1 + RNG.normal(size=n) * 1e-9) * np.sign(RNG.normal(size=n))).astype(dtype)
    with np.errstate(over="ignore"):
        x[:len(EDGES)], y[:len(EDGES)] = np.array(EDGES, dtype=dtype), np.array(EDGES[::-1], dtype=dtype)
        x[-5:], y[-5:] = [np.inf, -np.inf, np.nan, np.inf, 1e300], [np.inf, np.inf, np.nan, 1.0, 1e300]
    return x, y


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_isclose_at_the_tolerance(dtype):
    def f(x, y):
        return (np.isclose(x, y), np.isclose(x, y, equal_nan=True), np.isclose(y, x, rtol=1e-3, atol=0.0),
                np.allclose(x, y), np.allclose(x[:8], x[:8], equal_nan=True), np.isclose(x, 2.5),
                np.allclose(y[9:], y[9:]))
    got = check(f, *near_pairs(dtype))
    assert 0.2 < np.mean(got[0]) < 0.8          # the pairs do sit at the tolerance


def test_isclose_mixed_types_and_shapes():
    x, y = RNG.normal(size=(3, 4)), RNG.integers(-2, 3, size=4)
    check(lambda x, y: (np.isclose(x, y), np.isclose(y, x), np.allclose(x, y), np.isclose(x, x[0] + 1e-9)), x, y)
    check(lambda x, y: (np.isclose(x, y), np.isclose(y, 3), np.isclose(x > 0, y)), y.astype(np.float32), x[0])
    check(lambda x, y: (np.isclose(x, y), np.allclose(x, y, rtol=0.5, atol=1)), y, y + 1)
    check(lambda a, b: (np.isclose(a, b), np.allclose(a, b), np.isclose(a, [1.0, a, np.inf])), 1.0, 1.0 + 1e-7)


# ------------------------------------------------------------------------------- meshgrid
def test_meshgrid():
    a, b, c = np.arange(3.0), RNG.integers(0, 9, size=4), RNG.normal(size=2).astype(np.float32)
    check(lambda a, b: np.meshgrid(a, b), a, b)
    check(lambda a, b, c: (np.meshgrid(a, b, c, indexing="ij"), np.meshgrid(a, b, c), np.meshgrid(a),
                           np.meshgrid(c, a, sparse=True), np.meshgrid(a, b, c, sparse=True, indexing="ij")), a, b, c)
    check(lambda a, b: np.meshgrid(a, b > 3, indexing="ij"), np.zeros(0), b)
    check(lambda a, m: np.meshgrid(a, m), a, RNG.normal(size=(2, 3)))        # n-d inputs are flattened

    def written(a, b):
        x, y = np.meshgrid(a, b)
        x[0, 0] = -1.0                         # new arrays, not views of a
        return x, y, a
    check(written, a, b)
    with pytest.raises(ValueError, match="Valid values for `indexing`"):
        trace(lambda a: np.meshgrid(a, a, indexing="xx"), fullgraph=True)(a)


# ------------------------------------------------------------------------------- sinc
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_sinc(dtype):
    x = np.concatenate([[0.0, -0.0, 0.5, 1.0, -3.0, np.nan, 1e-30], RNG.normal(size=2000) * 3,
                        RNG.uniform(-1e5, 1e5, size=200)]).astype(dtype) if dtype != np.int64 else \
        RNG.integers(-1000, 1000, size=500)
    # float32: NumPy's own float32 sin is not correctly rounded (up to an ulp off)
    check(lambda x: (np.sinc(x), np.sinc(x[:3]), np.sinc(x[2])), x, rtol=3e-7 if dtype == np.float32 else 0.0)
    check(lambda a: (np.sinc(a), np.sinc(0.0), np.sinc(a * 2)), 0.25)


def test_sinc_of_inf_runs_python():
    f = trace(lambda x: np.sinc(x), fullgraph=True)
    x = np.array([1.0, np.inf])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.array_equal(f(x), np.sinc(x), equal_nan=True)


# ------------------------------------------------------------------------------- NaN-ignoring
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6,), (3, 4), (1, 5), (2, 3, 2), (5, 0), (40, 3)], ids=str)
def test_nansum_nanmean(dtype, shape):
    means = 0 not in shape              # no slice without numbers: those run Python (below)

    def f(x):
        out = (np.nansum(x), np.nansum(x, axis=-1), np.nansum(x, axis=0, keepdims=True))
        if means:
            out += (np.nanmean(x), np.nanmean(x, axis=-1), np.nanmean(x, axis=-1, keepdims=True))
        return out
    long = dtype == np.float64 and np.prod(shape) >= 8      # NumPy adds 8 or more in pairs, the compiled
    rtol = 1e-6 if dtype == np.float32 else 1e-13 if long else 0.0     # sum in order: the last bits
    x = arrays_of(dtype, shape)
    if dtype in (np.float32, np.float64):
        x.reshape(-1)[::4] = np.nan
    check_as(dtype, f, x, rtol=rtol)


def test_nanmean_of_no_numbers_runs_python():
    f = trace(lambda x: np.nanmean(x, axis=0), fullgraph=True)
    x = np.array([[np.nan, 1.0], [np.nan, 3.0]])
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        got = f(x)
    assert np.array_equal(got, [np.nan, 2.0], equal_nan=True)
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        assert np.isnan(trace(lambda x: np.nanmean(x), fullgraph=True)(np.full(3, np.nan)))
    check(lambda x: np.nanmean(x[0]), x)


# ------------------------------------------------------------------------------- fill_diagonal
def test_fill_diagonal():
    def in_place(a, v):
        np.fill_diagonal(a, v)
        return a
    check(in_place, RNG.normal(size=(4, 4)), 2.5)
    check(in_place, RNG.normal(size=(3, 5)).astype(np.float32), 0.1)
    check(in_place, RNG.integers(0, 9, size=(5, 3)), 7)

    def made_here(n, v):
        a = np.zeros((n, n))
        b = np.ones((n + 3, n), dtype=np.int64)
        c = np.zeros((n, n, n))
        d = np.zeros((7, 3))
        e = np.arange(16).reshape(4, 4).astype(np.float64)
        np.fill_diagonal(a, v)
        np.fill_diagonal(b, v)                 # a float into an int array: truncated, as NumPy casts
        np.fill_diagonal(c, -v)
        np.fill_diagonal(d, v, wrap=True)
        np.fill_diagonal(e[1:, 1:], v)         # through a view
        f = a > 0
        np.fill_diagonal(f, False)
        return a, b, c, d, e, f
    check(made_here, 3, 2.75)
    check(made_here, 1, -1.5)

    def in_branch(a, v):
        if v > 0:
            np.fill_diagonal(a, v)
        return a
    check(in_branch, np.zeros((3, 3)), 4.0)
    for fn in [lambda a: np.fill_diagonal(a[0], 1.0), lambda a: np.fill_diagonal(np.zeros((2, 3, 2)), 1.0)]:
        with pytest.raises(ValueError):
            fn(np.zeros((3, 3)))
        with pytest.raises(ValueError):
            trace(fn, fullgraph=True)(np.zeros((3, 3)))


ARANGE_VALUES = [0.0, 1.0, 0.1, -0.3, 7.0, 3, -2, 0.7, 1e-3, 1e16, -0.0]


@pytest.mark.parametrize("step", [0.1, -0.1, 0.3, 1.0, 2, -1e-3, 0.7])
def test_float_arange_is_numpys_bit_for_bit(step):
    compiled = trace(lambda a, b, c: np.arange(a, b, c), fullgraph=True)
    for a in ARANGE_VALUES:
        for b in ARANGE_VALUES:
            if abs((b - a) / step) > 1e5:
                continue
            got, expected = compiled(a, b, step), np.arange(a, b, step)
            assert got.dtype == expected.dtype and np.array_equal(got, expected), (a, b, step)
            assert np.array_equal(np.signbit(got), np.signbit(expected))
    check(lambda: (np.arange(5.0), np.arange(0, 1, 0.1), np.arange(2.5), np.arange(1, 2.0)))
    check(lambda n: np.arange(n), 4.5)
    with pytest.raises(ZeroDivisionError):
        trace(lambda: np.arange(0.0, 1.0, 0.0), fullgraph=True)()
