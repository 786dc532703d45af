"""0-d arrays (`np.array(2.0)`) in traced code, against NumPy running the same function.

NumPy's rules: a ufunc or a reduction whose result would be 0-d gives a NumPy scalar
(`np.array(2.0) * 2.0` is np.float64(4.0)); what makes an array (`x.copy()`, `x.astype(...)`,
`x[...]`, `np.where`, the argument itself) gives a 0-d ndarray. The compiled function must give the
same values, types, dtypes and shapes (a compiled np.float64 or np.int64 comes back as the Python
float or int it subclasses, as for elements of other arrays; an np.float32 stays np.float32),
raise NumPy's own exceptions, and leave the arguments as NumPy leaves them. Whatever it does not
compile is a clear TracerError, never an internal one.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from tracer import trace
from tracer.errors import TracerError

V = np.array([1.0, -2.0, 3.0])
V32 = np.array([1.0, 2.0], dtype=np.float32)


def _iadd(x):
    x += 1
    return x


def _iadd_through_index(x):
    x[()] += 1
    return x


def _iadd_through_ellipsis(x):
    x[...] += 2
    return x


def _write_through_view(x):
    y = x[...]
    y *= 3
    return x


def _store_0d_into_element(x):
    y = np.zeros(3)
    y[1] = x
    return y


def _store_0d_into_slice(x):
    y = np.zeros(3)
    y[1:] = x
    return y


def _branch(x):
    if x > 1:
        return x * 2
    return x - 1


def _truth(x):
    return 1.0 if x else 2.0


def _loop(x, n=5):
    s = 0.0
    for i in range(n):
        s += x * i
    return s


CASES = {
    # elementwise: scalars
    "mul": lambda x: x * 2.0, "rmul": lambda x: 2.0 * x, "neg": lambda x: -x, "square": lambda x: x * x,
    "pow": lambda x: x ** 2, "floordiv": lambda x: x // 2, "mod": lambda x: x % 2, "div0": lambda x: x / 0,
    "exp": lambda x: np.exp(x), "sqrt": lambda x: np.sqrt(x), "abs": lambda x: np.abs(x), "sign": lambda x: np.sign(x), "maximum": lambda x: np.maximum(x, 3.0),
    "isnan": lambda x: np.isnan(x), "logical_not": lambda x: np.logical_not(x), "gt": lambda x: x > 1.0, "eq": lambda x: x == 2,
    "clip": lambda x: np.clip(x, 0.0, 1.0), "float32_of": lambda x: np.float32(x), "float64_of": lambda x: np.float64(x),
    "f32_scalar": lambda x: x * np.float32(2.0), "pos": lambda x: +x, "invert": lambda x: ~x.astype(bool),
    # elementwise with arrays of rank 1: arrays (0-d arrays are not weak: float32 meets float64)
    "add_1d": lambda x: x + V, "mul_1d": lambda x: V * x, "lt_1d": lambda x: x < V, "with_f32": lambda x: V32 * x,
    "maximum_1d": lambda x: np.maximum(x, V),
    # reductions: scalars
    "sum": lambda x: x.sum(), "np_sum": lambda x: np.sum(x), "max": lambda x: x.max(), "min": lambda x: np.min(x), "prod": lambda x: x.prod(),
    "mean": lambda x: x.mean(), "keepdims": lambda x: np.sum(x, keepdims=True), "argmax": lambda x: x.argmax(),
    "dot": lambda x: np.dot(x, x),
    # indexing and conversions
    "index": lambda x: x[()], "ellipsis": lambda x: x[...], "ellipsis_add": lambda x: x[...] + 1,
    "newaxis": lambda x: x[None], "float": lambda x: float(x), "int": lambda x: int(x), "bool": lambda x: bool(x), "item": lambda x: x.item(),
    "float_times": lambda x: float(x) * 3, "int_index": lambda x: V[int(x) % 3], "truth": _truth,
    "branch": _branch, "loop": _loop,
    # what makes arrays: 0-d arrays
    "identity": lambda x: x, "copy": lambda x: x.copy(), "astype": lambda x: x.astype(np.int64),
    "T": lambda x: x.T, "where": lambda x: np.where(x > 1, x, 0.0), "zeros_like": lambda x: np.zeros_like(x),
    "reshape": lambda x: x.reshape(1), "ravel": lambda x: x.ravel(), "shape": lambda x: np.zeros(x.shape),
    "tuple": lambda x: (x * 2, x.sum(), x.ndim, x.size),
    # in place
    "iadd": _iadd, "iadd_index": _iadd_through_index, "iadd_ellipsis": _iadd_through_ellipsis,
    "view_write": _write_through_view, "into_element": _store_0d_into_element, "into_slice": _store_0d_into_slice,
    # NumPy's errors
    "len": lambda x: len(x), "element": lambda x: x[0], "matmul": lambda x: x @ V, "axis": lambda x: x.sum(axis=0),
}
ARGUMENTS = {"f64": np.array(2.0), "i64": np.array(3), "f32": np.array(1.5, dtype=np.float32)}


def outcome(fn, x):
    """What a call returns (described by kind, dtype, shape and value) or raises, and what it leaves in x."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = describe(fn(x))
    except TracerError:
        raise
    except Exception as exc:       # the outcome under test: NumPy's exception
        result = ("raise", type(exc), str(exc))
    return result, x.dtype, x.shape, x.tolist()


def describe(v):
    if isinstance(v, tuple):
        return tuple(describe(e) for e in v)
    if isinstance(v, np.ndarray):
        return ("ndarray", v.dtype, v.shape, v.tolist())
    if isinstance(v, np.float32):
        return ("float32", v.item())
    # np.float64, np.int64 and np.bool_ come back as the Python float, int and bool they stand for
    for kind in (bool, np.bool_, int, np.integer, float, np.floating):
        if isinstance(v, kind):
            return ({np.bool_: bool, np.integer: int, np.floating: float}.get(kind, kind).__name__, v.item()
                    if hasattr(v, "item") else v)
    raise AssertionError(f"unexpected result {v!r}")


@pytest.mark.parametrize("arg", ARGUMENTS)
@pytest.mark.parametrize("case", CASES)
def test_zero_d_arrays_as_numpy(case, arg):
    fn = CASES[case]
    expected = outcome(fn, ARGUMENTS[arg].copy())
    compiled = trace(fn)
    for _ in range(2):            # the call that compiles, then the native entry
        assert outcome(compiled, ARGUMENTS[arg].copy()) == expected


def test_zero_d_results_are_arrays_or_scalars_as_in_numpy():
    assert type(trace(lambda x: x * 2.0)(np.array(2.0))) is not np.ndarray
    assert type(trace(lambda x: x * 2.0)(np.array(2.0, dtype=np.float32))) is np.float32
    got = trace(lambda x: x.copy())(np.array(2.0))
    assert type(got) is np.ndarray and got.shape == () and got.dtype == np.float64 and got == 2.0


def test_a_0d_argument_is_updated_in_place():
    x = np.array(2.5)
    assert trace(_iadd)(x) is not None
    assert x == 3.5 and x.shape == ()


def test_what_is_not_compiled_is_a_clear_error():
    with pytest.raises(TracerError, match="tolist"):
        trace(lambda x: x.tolist(), fullgraph=True)(np.array(2.0))
    with pytest.raises(TracerError, match="not 0-d"):
        trace(lambda x: float(x), fullgraph=True)(np.ones(1))


@pytest.mark.parametrize("power", [2.0, 0.5, -1])
@pytest.mark.parametrize("value", [1e300, -1.0, 0.0, -np.inf])
def test_powers_numpy_computes_otherwise_warn_as_numpy(power, value):
    """x ** 2, x ** 0.5 and x ** -1 of a 0-d array are NumPy's multiply, sqrt and reciprocal:
    their overflow, invalid value or division by zero warns as NumPy's power does."""
    def f(x):
        return x ** power
    compiled = trace(f)
    for _ in range(2):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            result = compiled(np.array(value))
        with warnings.catch_warnings(record=True) as expected:
            warnings.simplefilter("always")
            want = f(np.array(value))
        assert [str(w.message) for w in got] == [str(w.message) for w in expected]
        assert np.array_equal(result, want, equal_nan=True)


@pytest.mark.parametrize("value", [-0.0, 0.0, 3.5, np.nan, -np.inf])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_sum_over_no_axis_adds_to_plus_zero_as_numpy(value, dtype):
    """np.sum of a 0-d array (or over axis=()) is each element added to +0.0: -0.0 sums to 0.0."""
    def f(x):
        return x.sum(), x.mean(), x.prod(), np.sum(x), x.sum(keepdims=True), np.sum(x, axis=())
    x = np.array(value, dtype=dtype)
    for got, want in zip(trace(f)(x), f(x)):
        assert np.array_equal(got, want, equal_nan=True) and np.signbit(got) == np.signbit(want)
