"""More NumPy functions in traced code (tracer.frontend.numpy_more, numpy_shapes; the `scan` op)
against NumPy itself: linspace, var/std/average, cumsum/cumprod, and the shape and matrix
functions, on float64, float32, int64 and bool arrays of several shapes (empty ones, size-1 axes),
negative axes, NumPy's errors, and gradients against finite differences.

Every function is traced with fullgraph=True (what does not compile fails the test), and every
compiled result is also checked against the IR interpreter on the optimized function, which
fails where the compiled call would fail and run the Python function instead (so a result that
only came from NumPy through that fallback is noticed). Results must have NumPy's type, dtype
and shape, and equal values bit for bit, except var, std and average of more than a few
elements: compiled sums add in order where NumPy adds pairwise (compared to 1e-12 relative).
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

from tracer import grad, trace
from tracer.errors import OpFailure
from tracer.ir.ops import run

RNG = np.random.default_rng(7)


def arrays_of(dtype, shape):
    """An argument for a test of `dtype`: bool arrays are made inside (x > 0.0, check_as), since
    traced code does not take them as arguments yet."""
    if dtype == np.bool_:
        return RNG.normal(size=shape)
    if dtype == np.int64:
        return RNG.integers(-5, 6, size=shape).astype(np.int64)
    return RNG.normal(size=shape).astype(dtype)


DTYPES = [np.float64, np.float32, np.int64, np.bool_]
SHAPES = [(5,), (0,), (1,), (3, 4), (1, 4), (4, 0), (2, 3, 2)]


def same(got, expected, rtol=0.0):
    """NumPy's result type (ndarray or NumPy scalar of that dtype), shape and values."""
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            same(g, e, rtol)
        return
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), (type(got), expected)
    else:
        assert not isinstance(got, np.ndarray) and np.ndim(got) == 0, (got, expected)
    g, e = np.asarray(got), np.asarray(expected)
    assert g.shape == e.shape, (g.shape, e.shape)
    if isinstance(expected, np.ndarray) or not isinstance(got, float):
        assert g.dtype == e.dtype, (g.dtype, e.dtype)
    elif isinstance(expected, np.floating):      # a traced float64 comes back as a Python float
        assert e.dtype == np.float64, e.dtype
    if rtol and e.dtype.kind == "f":
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol)
    else:
        assert np.array_equal(g, e, equal_nan=True), (got, expected)
        assert np.array_equal(np.signbit(g), np.signbit(e)) if e.dtype.kind == "f" else True


def check(fn, *args, rtol=0.0):
    """fn compiled (fullgraph) against fn in Python, and against the IR interpreter."""
    compiled = trace(fn, fullgraph=True)
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    originals = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = fn(*copies)
        got = compiled(*args)
    same(got, expected, rtol)
    (spec,) = compiled.specializations
    names = list(inspect.signature(fn).parameters)
    by_name = dict(zip(names, originals))
    params = [by_name[p.name] for p in spec.optimized.params]
    try:
        interpreted = run(spec.optimized, params)
    except OpFailure as e:                   # the compiled call ran the Python function
        raise AssertionError(f"the compiled call fails ({e}): its result came from Python") from None
    if isinstance(interpreted, np.ndarray) and isinstance(got, np.ndarray):
        assert np.array_equal(interpreted, got, equal_nan=True)
    for a, e in zip(args, copies):           # arguments updated in place as NumPy updates them
        if isinstance(a, np.ndarray):
            assert np.array_equal(a, e, equal_nan=True)
    return got


def check_as(dtype, fn, *args, rtol=0.0):
    """check, for arrays of `dtype` (bool: fn of x > 0.0)."""
    if dtype == np.bool_:
        inner = fn
        fn = (lambda x: inner(x > 0.0)) if len(args) == 1 else (lambda x, w: inner(x > 0.0, w))
    return check(fn, *args, rtol=rtol)


def cases(dtypes=DTYPES, shapes=SHAPES):
    return [pytest.param(d, s, id=f"{np.dtype(d).name}-{'x'.join(map(str, s)) or '0d'}") for d in dtypes
            for s in shapes]


# ------------------------------------------------------------------------------- linspace
@pytest.mark.parametrize("num", [0, 1, 2, 5, 50])
@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("start, stop", [(0.0, 1.0), (0.3, 1.7), (-2.5, 10.0), (1.0, 1.0), (3, -7), (1e308, -1e308),
                                         (0.1, 0.1 + 1e-17)])
def test_linspace_is_numpys_bit_for_bit(start, stop, num, endpoint):
    def f(a, b):
        return np.linspace(a, b, num, endpoint=endpoint)
    check(f, start, stop)


def test_linspace_options():
    check(lambda a, b: np.linspace(a, b, 7, retstep=True), 0.25, 3.0)
    check(lambda a, b: np.linspace(a, b, 1, retstep=True), 0.25, 3.0)
    check(lambda a, b: np.linspace(a, b, 9, dtype=int), -3.5, 4.25)
    check(lambda a, b: np.linspace(a, b, 6, axis=-1), 0.0, 5.0)
    check(lambda a: np.linspace(a, 2.0 * a, 4), 1.5)
    check(lambda a, b: np.linspace(np.float32(a), np.float32(b), 11), 0.1, 0.9)


def test_linspace_errors_are_numpys():
    for num, error, match in [(-1, ValueError, "must be non-negative"), (2.5, TypeError, "cannot be interpreted")]:
        with pytest.raises(error, match=match):
            trace(lambda a: np.linspace(a, 1.0, num), fullgraph=True)(0.0)
        with pytest.raises(error, match=match):
            np.linspace(0.0, 1.0, num)


# ------------------------------------------------------------------------------- statistics
STAT_SHAPES = [(5,), (1,), (3, 4), (1, 4), (2, 3, 2), (40,), (7, 33)]


@pytest.mark.parametrize("dtype, shape", cases(shapes=STAT_SHAPES))
def test_var_and_std(dtype, shape):
    x = arrays_of(dtype, shape)
    tol = 1e-6 if dtype == np.float32 else 1e-12   # float32: NumPy rounds each partial sum to float32
    check_as(dtype, lambda x: np.var(x), x, rtol=tol)
    check_as(dtype, lambda x: x.std(), x, rtol=tol)
    check_as(dtype, lambda x: np.var(x, axis=-1, ddof=0), x, rtol=tol)
    check_as(dtype, lambda x: np.std(x, axis=0, keepdims=True), x, rtol=tol)
    if x.shape[-1] > 1:
        check_as(dtype, lambda x: x.var(axis=-1, ddof=1), x, rtol=tol)
    if x.ndim > 1:
        check_as(dtype, lambda x: np.std(x, axis=(0, -1), correction=1), x, rtol=tol)


def test_var_without_degrees_of_freedom_runs_python():
    """NumPy's nan (and warning) for an empty array or ddof >= count: the compiled call fails its
    division and the Python function gives them."""
    f = trace(lambda x: np.var(x, ddof=2), fullgraph=True)
    for x in (np.zeros(0), np.ones(2), np.ones((2, 2))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = f(x)
        assert np.isnan(got) or np.isinf(got) or got == np.var(x, ddof=2)
        assert caught or x.size > 2
    with pytest.raises(ValueError, match="ddof and correction"):
        trace(lambda x: np.var(x, ddof=1, correction=1), fullgraph=True)(np.ones(3))


@pytest.mark.parametrize("dtype, shape", cases(shapes=[(5,), (3, 4), (2, 3, 2)]))
def test_average(dtype, shape):
    x = arrays_of(dtype, shape)
    tol = 1e-6 if dtype == np.float32 else 1e-12
    check_as(dtype, lambda x: np.average(x), x, rtol=tol)
    check_as(dtype, lambda x: np.average(x, axis=-1), x, rtol=tol)
    check_as(dtype, lambda x: np.average(x, axis=0, returned=True), x, rtol=tol)
    w = RNG.random(shape) + 0.5
    check_as(dtype, lambda x, w: np.average(x, weights=w), x, w, rtol=tol)
    check_as(dtype, lambda x, w: np.average(x, weights=w, returned=True), x, w, rtol=tol)
    check_as(dtype, lambda x, w: np.average(x, axis=-1, weights=w, keepdims=True), x, w, rtol=tol)
    w1 = RNG.integers(1, 4, size=shape[-1])
    check_as(dtype, lambda x, w: np.average(x, axis=-1, weights=w), x, w1, rtol=tol)
    if len(shape) == 3:
        w2 = RNG.random((shape[2], shape[0]))
        check_as(dtype, lambda x, w: np.average(x, axis=(2, 0), weights=w), x, w2, rtol=tol)


def test_average_errors_are_numpys():
    x = np.ones((3, 4))
    with pytest.raises(TypeError, match="Axis must be specified"):
        trace(lambda x, w: np.average(x, weights=w), fullgraph=True)(x, np.ones(4))
    with pytest.raises(ValueError, match="Shape of weights must be consistent"):
        trace(lambda x, w: np.average(x, axis=0, weights=w), fullgraph=True)(x, np.ones(4))
    f = trace(lambda x, w: np.average(x, axis=1, weights=w), fullgraph=True)
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        f(x, np.zeros(4))
    with pytest.raises(ValueError, match="Shape of weights must be consistent"):
        f(x, np.ones(5))                             # sizes the trace does not know: NumPy's error


# ------------------------------------------------------------------------------- running sums
@pytest.mark.parametrize("dtype, shape", cases())
def test_cumsum_and_cumprod_are_numpys_bit_for_bit(dtype, shape):
    x = arrays_of(dtype, shape)
    check_as(dtype, lambda x: np.cumsum(x), x)
    check_as(dtype, lambda x: x.cumprod(), x)
    check_as(dtype, lambda x: np.cumsum(x, axis=-1), x)
    check_as(dtype, lambda x: np.cumprod(x, axis=0), x)
    check_as(dtype, lambda x: x.cumsum(axis=0, dtype=np.float64), x)


def test_cumsum_of_long_float_arrays_adds_in_order():
    x = RNG.normal(size=1000) * 10.0 ** RNG.integers(-8, 8, size=1000)
    check(lambda x: np.cumsum(x), x)
    check(lambda x: np.cumsum(x), x.astype(np.float32))
    check(lambda x: np.cumsum(x[::-3]), x)


def test_cumsum_past_int64_runs_python():
    x = np.array([2 ** 62, 2 ** 62, 5], dtype=np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.array_equal(trace(lambda x: np.cumsum(x), fullgraph=True)(x), np.cumsum(x))
    with pytest.raises(np.exceptions.AxisError):
        trace(lambda x: np.cumsum(x, axis=2), fullgraph=True)(np.ones((2, 2)))


# ------------------------------------------------------------------------------- shapes
SHAPE_FUNCTIONS = {
    "diff": lambda x: np.diff(x),
    "diff0": lambda x: np.diff(x, axis=0),
    "diff2": lambda x: np.diff(x, n=2),
    "roll": lambda x: np.roll(x, 2),
    "roll_axis": lambda x: np.roll(x, -1, axis=-1),
    "roll_axes": lambda x: np.roll(x, (1, 3), axis=(0, -1)),
    "flip": lambda x: np.flip(x),
    "flip0": lambda x: np.flip(x, 0),
    "reversed": lambda x: x[::-1],
    "atleast_1d": lambda x: np.atleast_1d(x),
    "atleast_2d": lambda x: np.atleast_2d(x),
    "atleast_3d": lambda x: np.atleast_3d(x),
    "squeeze": lambda x: np.squeeze(x),
    "expand_dims": lambda x: np.expand_dims(x, -1),
    "expand_dims2": lambda x: np.expand_dims(x, (0, 2)),
    "ravel": lambda x: np.ravel(x),
    "flatten": lambda x: x.flatten(),
    "swapaxes": lambda x: np.swapaxes(x, 0, -1),
    "moveaxis": lambda x: np.moveaxis(x, 0, -1),
    "tril": lambda x: np.tril(x),
    "triu": lambda x: np.triu(x, -1),
    "tril1": lambda x: np.tril(x, 1),
    "concatenate": lambda x: np.concatenate([x, x[::-1], x], axis=-1),
    "concatenate0": lambda x: np.concatenate((x, x)),
    "concatenate_none": lambda x: np.concatenate([x, x], axis=None),
    "stack": lambda x: np.stack([x, x]),
    "stack_last": lambda x: np.stack([x, x, x], axis=-1),
    "vstack": lambda x: np.vstack([x, x]),
    "hstack": lambda x: np.hstack((x, x)),
    "tile": lambda x: np.tile(x, 2),
    "tile2": lambda x: np.tile(x, (2, 1, 3)),
    "repeat": lambda x: np.repeat(x, 3),
    "repeat_axis": lambda x: x.repeat(2, axis=-1),
}


SHAPE_CASES = cases([np.float64], [(5,), (0,), (1, 4), (3, 4), (2, 3, 2)]) + cases([np.int64], [(3, 4)]) + \
    cases([np.float32], [(2, 3, 2)]) + cases([np.bool_], [(5,), (3, 4)])


@pytest.mark.parametrize("name", sorted(SHAPE_FUNCTIONS))
@pytest.mark.parametrize("dtype, shape", SHAPE_CASES)
def test_shape_functions_are_numpys(name, dtype, shape):
    x = arrays_of(dtype, shape)
    fn = SHAPE_FUNCTIONS[name]
    if dtype == np.bool_:
        fn = (lambda f: lambda x: f(x > 0.0))(fn)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(x.copy())
    except Exception as e:                  # NumPy refuses: so must the compiled function
        with pytest.raises(type(e)):
            trace(fn, fullgraph=True)(x)
        return
    check(fn, x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 2), (1, 3), (0, 3)])
@pytest.mark.parametrize("k", [0, 1, -2])
def test_matrix_functions(dtype, shape, k):
    x = arrays_of(dtype, shape)
    check_as(dtype, lambda x: np.diag(x, k), x)
    check_as(dtype, (lambda x: np.diag(x[0], k)) if shape[0] else (lambda x: np.diag(x[:, 0], k)), x)
    tol = 1e-5 if dtype == np.float32 else 1e-12     # float32: NumPy rounds each partial sum to float32
    check_as(dtype, lambda x: np.trace(x, k), x, rtol=tol)
    check_as(dtype, lambda x: x.trace(), x, rtol=tol)
    check_as(dtype, lambda x: np.tril(x, k), x)
    check_as(dtype, lambda x: np.triu(x, k), x)


def test_eye_and_identity():
    for n, m, k in [(3, None, 0), (4, 6, 1), (5, 2, -2), (0, 3, 0), (1, 1, 3)]:
        check(lambda n: np.eye(n, m, k), n)
        check(lambda n: np.eye(n, m, k, dtype=int), n)
    check(lambda n: np.identity(n), 4)
    check(lambda n: np.identity(n, dtype=bool), 3)


def test_views_write_through():
    def f(x):
        y = np.flip(x, 0)
        y[0] = 7.0
        z = np.swapaxes(x, 0, 1)
        z[0, 1] += 1.0
        np.expand_dims(x, 0)[0, 1, 1] = -1.0
        return x
    check(f, np.zeros((3, 2)))


def test_squeeze():
    check(lambda x: np.squeeze(x, axis=0), np.ones((1, 3, 1)))
    check(lambda x: np.squeeze(x, axis=(0, -1)), np.ones((1, 3, 1)))
    check(lambda x: x.squeeze(), np.ones((1, 1)))
    with pytest.raises(ValueError, match="cannot select an axis"):
        trace(lambda x: np.squeeze(x, axis=1), fullgraph=True)(np.ones((1, 3, 1)))
    f = trace(lambda x: np.squeeze(x[1:]), fullgraph=True)     # a size only the run time knows
    assert f(np.ones((2, 3))).shape == (3,)
    assert f(np.ones((3, 3))).shape == (2, 3)


def test_shape_errors_are_numpys():
    x = np.ones((2, 3))
    for fn in [lambda x: np.concatenate([x, x.T]), lambda x: np.concatenate([x, x[0]]),
               lambda x: np.stack([x, x.T]), lambda x: np.moveaxis(x, (0, 1), 0), lambda x: np.diff(x, n=-1),
               lambda x: np.diag(x[None]), lambda x: np.repeat(x, -1), lambda x: np.swapaxes(x, 0, 2),
               lambda x: np.concatenate([])]:
        with pytest.raises(Exception) as expected:
            fn(x)
        with pytest.raises(type(expected.value)):
            trace(fn, fullgraph=True)(x)
    f = trace(lambda x, y: np.concatenate([x, y], axis=0), fullgraph=True)
    with pytest.raises(ValueError, match="must match exactly"):
        f(np.ones((2, 3)), np.ones((2, 4)))            # sizes only the run time knows: NumPy's error


def test_traced_counts():
    check(lambda x, n: np.roll(x, n), np.arange(7.0), 3)
    check(lambda x, n: np.roll(x, n), np.arange(7.0), -10)
    check(lambda x, n: np.repeat(x, n), np.arange(3.0), 4)
    check(lambda x, n: np.eye(n, dtype=np.float32), np.zeros(1), 3)


# ------------------------------------------------------------------------------- gradients
def finite_difference(fn, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        plus, minus = x.copy(), x.copy()
        plus.flat[i] += eps
        minus.flat[i] -= eps
        g.flat[i] = (fn(plus) - fn(minus)) / (2 * eps)
    return g


WEIGHTS = np.linspace(0.5, 2.0, 12).reshape(3, 4)
GRADIENTS = {
    "cumsum": lambda x: np.sum(np.cumsum(x) * WEIGHTS.ravel()),
    "cumsum_axis": lambda x: np.sum(np.cumsum(x, axis=0) * WEIGHTS),
    "var": lambda x: np.var(x) + x.std(axis=1).sum(),
    "var_ddof": lambda x: np.sum(np.var(x, axis=0, ddof=1) * WEIGHTS[0, :4]),
    "average": lambda x: np.average(x, weights=WEIGHTS) + np.average(x, axis=1).sum(),
    "flip": lambda x: np.sum(np.flip(x) * WEIGHTS),
    "diff": lambda x: np.sum(np.diff(x) ** 2),
    "tril": lambda x: np.sum(np.tril(x, 1) * WEIGHTS),
    "swapaxes": lambda x: np.sum(np.swapaxes(x, 0, 1) * WEIGHTS.T),
    "tile": lambda x: np.sum(np.tile(x, (2, 1)) ** 2),
    "linspace": lambda x: np.sum(np.linspace(0.0, 1.0, 12).reshape(3, 4) * x),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_match_finite_differences(name):
    fn = GRADIENTS[name]
    x = np.random.default_rng(3).normal(size=(3, 4))
    g = grad(fn)(x)
    np.testing.assert_allclose(g, finite_difference(fn, x), rtol=1e-6, atol=1e-6)
