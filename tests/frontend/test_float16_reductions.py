"""NumPy's sums, products, means and statistics of float16 arrays, traced: float16 results bit for
bit as NumPy gives them (tracer.frontend.numpy_float16; the IR's `reduce` and `scan` of float16,
tracer.ir.reductions and codegen.reductions).

NumPy adds float16 in float32 within each call of its float16 loop (pairwise, as float32 and
float64) and rounds to float16 after each call; it multiplies in float32 along a call; it rounds
every step of a cumsum or cumprod; np.mean sums in float32 through its casting buffers of 8192;
np.var divides float16 sums by the count in float64. Every case here runs the function traced
with fullgraph=True (`@trace(fullgraph=True)`) and by NumPy on the same arrays, on the call that
compiles and on later ones: the same result type and dtype, the same values to the bit (signs of
zero too), the same exception or the same RuntimeWarnings (a float16 result that overflows is
NumPy's inf with its warning: the compiled call runs the Python function there). Where NumPy
neither warns nor raises, the compiled code must give the result itself: `agree` checks that the
Python function did not run (tracer.api.run_plain, recorded by `python_runs`).
"""
from __future__ import annotations

import ctypes
import itertools

import numpy as np
import pytest
from dtype_cases import check_same, outcome

import tracer.api
from codegen.jit import compile_function
from tracer import ir, trace
from tracer.errors import Status
from tracer.ir import F16, F32, ArrayType, ops
from tracer.ir.reductions import reduce_in_order

LENGTHS = [0, 1, 7, 8, 9, 127, 128, 129, 1000, 10000]
f16 = np.float16
PYTHON_RUNS: list = []          # the functions whose Python code ran in place of compiled code


@pytest.fixture(autouse=True)
def python_runs(monkeypatch):
    plain = tracer.api.run_plain

    def recorded(fn, *args, **kwargs):
        PYTHON_RUNS.append(fn)
        return plain(fn, *args, **kwargs)
    monkeypatch.setattr(tracer.api, "run_plain", recorded)
    PYTHON_RUNS.clear()
    yield PYTHON_RUNS
    PYTHON_RUNS.clear()


def agree(traced, fn, *args, calls=2) -> None:
    """`traced` (fn under trace) and `fn` run by NumPy give the same result, exception and
    RuntimeWarnings, on each of `calls` calls (on the arrays themselves: views keep their layout);
    where NumPy neither warns nor raises, the compiled code gives it (no Python run)."""
    expected, expected_exc, expected_warnings = outcome(fn, args)
    for call in range(calls):
        PYTHON_RUNS.clear()
        got, got_exc, got_warnings = outcome(traced, args)
        where = f"call {call} on {[(a.shape, a.strides) for a in args]}"
        if expected_exc is not None:
            assert (type(got_exc), str(got_exc)) == (type(expected_exc), str(expected_exc)), where
        else:
            assert got_exc is None, f"{where}: raised {got_exc!r} where NumPy returns {expected!r}"
            check_same(got, expected, where)
        assert got_warnings == expected_warnings, f"{where}: warnings {got_warnings} where NumPy gives {expected_warnings}"
        if expected_exc is None and not expected_warnings:
            assert not PYTHON_RUNS, f"{where}: the Python function ran (NumPy: {expected!r})"
    assert len(traced.specializations) < tracer.api.DEFAULT_MAX_SPECIALIZATIONS


def spread(n: int, seed: int, scale: float = 1.0) -> np.ndarray:
    """n float16 values of mixed signs and magnitudes (sums of them stay in float16's range)."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * scale * 10.0 ** rng.integers(-3, 2, n)).astype(f16)


def near_one(n: int, seed: int) -> np.ndarray:
    """n float16 values near 1 (products of them stay in float16's range)."""
    return np.random.default_rng(seed).uniform(0.99, 1.01, n).astype(f16)


# ------------------------------------------------------------------------------- whole arrays
def total(x):
    return np.sum(x)


def product(x):
    return np.prod(x)


def method_sum(x):
    return x.sum()


def mean(x):
    return np.mean(x)


def method_mean(x):
    return x.mean()


def average(x):
    return np.average(x)


def variance(x):
    return np.var(x)


def deviation(x):
    return x.std(ddof=1)


def median(x):
    return np.median(x)


def nan_total(x):
    return np.nansum(x)


def nan_mean(x):
    return np.nanmean(x)


def running_sum(x):
    return np.cumsum(x)


def running_product(x):
    return x.cumprod()


def percentile(x):
    return np.percentile(x, 37.5)


def quantiles(x):
    return np.quantile(x, [0.0, 0.3, 0.5, 0.99, 1.0])


WHOLE = [total, method_sum, mean, method_mean, average, variance, deviation, median, nan_total, nan_mean,
         running_sum, percentile, quantiles]
PRODUCTS = [product, running_product]


@pytest.mark.parametrize("fn", WHOLE, ids=lambda f: f.__name__)
def test_whole_arrays_of_every_length(fn):
    traced = trace(fn, fullgraph=True)
    for n in LENGTHS:
        for seed, scale in ((n, 1.0), (n + 1, 100.0)):
            x = spread(n, seed, scale)
            if fn in (nan_total, nan_mean) and n:
                x[::3] = np.nan
            agree(traced, fn, x)


@pytest.mark.parametrize("fn", PRODUCTS, ids=lambda f: f.__name__)
def test_products_of_every_length(fn):
    traced = trace(fn, fullgraph=True)
    for n in LENGTHS:
        agree(traced, fn, near_one(n, n))


def test_the_decorator_and_float32_steps():
    @trace(fullgraph=True)
    def stats(x):
        return x.sum(), x.mean(), np.prod(x), x.cumsum()

    # float32 inside a call of NumPy's loop: 2048 + 1 + 1 is 2050 (in float16 steps: 2048)
    x = np.array([2048, 1, 1], dtype=f16)
    got = stats(x)
    assert got[0] == f16(2050) and type(got[0]) is np.float16
    assert got[1].dtype == f16 and got[2].dtype == f16 and got[3].dtype == f16
    np.testing.assert_array_equal(got[3], np.cumsum(x))           # every step rounded: 2048, 2048, 2048
    for got_one, want in zip(got, (x.sum(), x.mean(), np.prod(x), x.cumsum())):
        np.testing.assert_array_equal(got_one, want)
        assert np.asarray(got_one).dtype == np.asarray(want).dtype
    # means add in float32: 65504 + 65504 does not overflow (the sum does: NumPy's inf and warning)
    big = np.array([65504, 65504], dtype=f16)
    with pytest.warns(RuntimeWarning, match="overflow encountered"):
        got = stats(big)
    assert got[0] == np.inf and got[1] == f16(65504)


# ------------------------------------------------------------------------------- axes
AXES = {1: [None, 0, -1, ()], 2: [None, 0, 1, -1, (0, 1)], 3: [None, 0, 2, (1, 2), (0, 2), (0, 1)]}
SHAPES = [(7,), (3, 7), (9, 129), (129, 9), (4, 0), (0, 4), (2, 3, 50), (5, 1000)]
REDUCERS = {
    "sum": lambda axis, keepdims: (lambda x: np.sum(x, axis=axis, keepdims=keepdims)),
    "prod": lambda axis, keepdims: (lambda x: (x * f16(0.01) + f16(1)).prod(axis=axis, keepdims=keepdims)),
    "mean": lambda axis, keepdims: (lambda x: x.mean(axis=axis, keepdims=keepdims)),
    "average": lambda axis, keepdims: (lambda x: np.average(x, axis=axis, keepdims=keepdims)),
    "var": lambda axis, keepdims: (lambda x: np.var(x, axis=axis, keepdims=keepdims)),
    "std": lambda axis, keepdims: (lambda x: np.std(x, axis=axis, keepdims=keepdims, ddof=1)),
    "nansum": lambda axis, keepdims: (lambda x: np.nansum(x, axis=axis, keepdims=keepdims)),
    "nanmean": lambda axis, keepdims: (lambda x: np.nanmean(x, axis=axis, keepdims=keepdims)),
    "median": lambda axis, keepdims: (lambda x: np.median(x, axis=axis, keepdims=keepdims)),
    "percentile": lambda axis, keepdims: (lambda x: np.percentile(x, 62.5, axis=axis, keepdims=keepdims)),
}


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name", sorted(REDUCERS))
def test_axes_and_keepdims(name, keepdims):
    for rank, axes in AXES.items():
        for axis in axes:
            if name in ("median", "percentile") and axis == ():
                continue                        # (NumPy's own rules for an empty axis tuple)
            fn = REDUCERS[name](axis, keepdims)
            traced = trace(fn, fullgraph=True)
            for shape in (s for s in SHAPES if len(s) == rank):
                x = spread(int(np.prod(shape)), sum(shape), 10.0).reshape(shape)
                if name.startswith("nan") and x.size:
                    x.flat[::5] = np.nan
                agree(traced, fn, x, calls=1)


@pytest.mark.parametrize("kind", ["cumsum", "cumprod"])
def test_running_sums_and_products_along_an_axis(kind):
    for axis in (None, 0, 1, -1):
        fn = (lambda x: np.cumsum(x, axis=axis)) if kind == "cumsum" else (lambda x: np.cumprod(x, axis=axis))
        traced = trace(fn, fullgraph=True)
        for shape in ((3, 7), (9, 129), (0, 4)):
            x = spread(int(np.prod(shape)), 3, 10.0).reshape(shape)
            agree(traced, fn, x if kind == "cumsum" else x * f16(0.01) + f16(1), calls=1)


# ------------------------------------------------------------------------------- layouts
def views(base):
    """Views NumPy iterates in other orders: strided, reversed, transposed, Fortran-ordered."""
    m = base.reshape(4, -1)
    return [base[::2], base[::-1], m, m.T, m[:, ::2], m[::2], np.asfortranarray(m), m[::-1, ::-1],
            base.reshape(2, 2, -1)[:, :, ::2], base.reshape(2, 2, -1).transpose(2, 0, 1)]


def rows_inner(x) -> bool:
    """Whether NumPy's iterator runs x's axes in the order the compiled reductions take: any
    1-d or 2-d array, and a larger one whose strides shrink from the first axis to the last. (A
    larger one in another order, x.transpose(2, 0, 1), NumPy may reduce over an axis in another
    order: as for float32 and float64, not followed yet; a whole-array reduction is.)"""
    sizes = [abs(s) for s in x.strides]
    return x.ndim <= 2 or sizes == sorted(sizes, reverse=True)


@pytest.mark.parametrize("fn", [total, mean, variance, running_sum, median, percentile], ids=lambda f: f.__name__)
def test_views_in_numpys_order(fn):
    traced = trace(fn, fullgraph=True)
    for n in (8, 128, 1000, 4096):
        for x in views(spread(n, n, 10.0)):
            agree(traced, fn, x, calls=1)


def test_views_along_axes():
    """(An array the function computes, x * 2.0, is row-major here, where NumPy's keeps the layout
    of x: reduced over an axis, such a temporary of a transposed x may differ in its last bits, as
    for float32 and float64. These reduce the views themselves.)"""
    fns = [lambda x: x.sum(axis=0), lambda x: x.sum(axis=-1, keepdims=True), lambda x: np.prod(x, axis=0),
           lambda x: x.prod(axis=-1), lambda x: x.mean(axis=-1), lambda x: x.mean(axis=0, keepdims=True),
           lambda x: np.cumsum(x, axis=0)]
    for fn in fns:
        traced = trace(fn, fullgraph=True)
        for x in filter(rows_inner, views(spread(1000, 5, 10.0)) + views(near_one(1000, 6))):
            agree(traced, fn, x, calls=1)


# ------------------------------------------------------------------------------- overflow
OVERFLOWS = {
    "sum": (lambda x: x.sum(), [60000, 60000]),
    "sum-axis": (lambda x: x.reshape(2, 2).sum(axis=0), [60000, 1, 60000, 2]),
    "sum-in-a-long-run": (lambda x: np.sum(x), [4000] * 20),
    "prod": (lambda x: np.prod(x), [300, 300, 1]),
    "prod-past-float32": (lambda x: np.prod(x), [60000] * 9),
    "cumsum": (lambda x: np.cumsum(x), [60000, 1, 60000]),
    "cumprod": (lambda x: x.cumprod(), [300, 300]),
    "nansum": (lambda x: np.nansum(x), [60000, np.nan, 60000]),
    "var": (lambda x: np.var(x), [-60000, 60000]),
    "std-axis": (lambda x: np.std(x.reshape(2, 2), axis=1), [-60000, 60000, 1, 2]),
    "inf-inf": (lambda x: x.sum(), [np.inf, -np.inf, 1]),
    "inf": (lambda x: (x.sum(), x.mean(), x.cumsum()), [np.inf, 1, 2]),
    "nan": (lambda x: (x.sum(), x.prod(), x.cumsum(), x.var()), [np.nan, 1, 2]),
    "mean-no-overflow": (lambda x: x.mean(), [65504, 65504, 65504]),
    "mean-of-empty": (lambda x: (x.mean(), np.nanmean(x)), []),
    "var-ddof-too-large": (lambda x: np.var(x, ddof=3), [1, 2]),
}


@pytest.mark.parametrize("case", list(OVERFLOWS.values()), ids=list(OVERFLOWS))
def test_overflow_and_specials_as_numpy(case):
    fn, values = case
    agree(trace(fn, fullgraph=True), fn, np.array(values, dtype=f16))


# ------------------------------------------------------------------------------- weights, q
def test_weighted_averages():
    rng = np.random.default_rng(11)
    x = spread(600, 12, 10.0).reshape(20, 30)
    for weights in (rng.uniform(0, 2, (20, 30)).astype(f16), rng.uniform(0, 2, (20, 30)),
                    rng.uniform(0, 2, (20, 30)).astype(np.float32)):
        for axis in (None, 0, 1):
            fn = (lambda a, w: np.average(a, axis=axis, weights=w, returned=True))
            agree(trace(fn, fullgraph=True), fn, x, weights, calls=1)
    fn = (lambda a: np.average(a, axis=1, returned=True))
    agree(trace(fn, fullgraph=True), fn, x)


def test_quantiles_weak_and_strong():
    """A Python float q interpolates in float16 (each step rounded); a list of q in float64."""
    for q in (0.0, 0.1, 0.25, 0.5, 0.7, 0.999, 1.0):
        fn = (lambda x: (np.quantile(x, q), np.percentile(x, q * 100), np.quantile(x, [q, 0.5])))
        traced = trace(fn, fullgraph=True)
        for n in (1, 2, 9, 1000):
            agree(traced, fn, spread(n, n, 1000.0), calls=1)


# ------------------------------------------------------------------------------- the kernels
def reduction_kernel(dtype: str | None, kind: str):
    """A compiled IR function of a 1-d float16 array: its reduce over axis 0 (a float16 result,
    or float32 with dtype 'float32'), called through the kernel ABI (no Python function to fall
    back on): ("ok", value) or ("fail", status)."""
    x = ir.make_param(0, "x", ArrayType(F16, (None,)))
    attrs = {"kind": kind, "axes": (0,), "keepdims": False, **({"dtype": dtype} if dtype else {})}
    v = ir.Value("reduce", (x,), ops.OPS["reduce"].result_type((x.type,), attrs), attrs)
    block = ir.Block()
    block.values.append(v)
    block.results = [v]
    fn = ir.verify(ir.Function("reduction", [x], block))
    compiled = compile_function(fn, None)
    out_type = ctypes.c_float if v.type == F32 else ctypes.c_uint16
    call = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                            ctypes.POINTER(out_type))(compiled.kernel_address)

    def run(a):
        out = out_type()
        status = call(a.ctypes.data, a.shape[0], a.strides[0], ctypes.byref(out))
        if status != Status.OK:
            return "fail", Status(status)
        return "ok", np.float32(out.value) if v.type == F32 else np.array(out.value, np.uint16).view(f16)[()]
    run.keep = compiled          # (the code lives while the kernel does)
    return run


@pytest.mark.parametrize("dtype, kind", [(None, "sum"), (None, "prod"), ("float32", "sum")])
def test_the_compiled_kernel_computes_numpys_bits(dtype, kind):
    """The kernel itself (not the Python function) gives NumPy's float16 sum and product and the
    float32 sum np.mean takes, on contiguous and strided runs, and fails where NumPy warns."""
    run = reduction_kernel(dtype, kind)
    for n in LENGTHS + [20000]:
        base = spread(2 * n, n, 10.0) if kind == "sum" else near_one(2 * n, n)
        for x in (base[:n], base[::2], base[::-1][:n]):
            want = np.add.reduce(x, dtype=np.float32) if dtype else np.add.reduce(x) if kind == "sum" else np.prod(x)
            got = run(x)
            assert got[0] == "ok" and got[1] == want and type(got[1]) is type(want), (n, x.strides, got, want)
            assert got[1] == reduce_in_order(x, kind, (0,), False, dtype), n
    too_big = np.array([60000, 60000], f16) if kind == "sum" else np.array([300, 300], f16)
    assert run(too_big) == (("fail", Status.FALLBACK) if dtype is None else ("ok", np.float32(120000)))


def test_the_evaluator_is_numpys():
    """tracer.ir.reductions (the oracle the compiled code is tested against, and what folding and
    the IR interpreter give) is NumPy's float16 loop, over layouts and axes."""
    rng = np.random.default_rng(13)
    for n in (8, 128, 1000, 4096):
        base = (rng.standard_normal(n) * 100).astype(f16)
        for x in [base, *views(base)]:
            for r in range(1, x.ndim + 1):
                for axes in itertools.combinations(range(x.ndim), r):
                    if r < x.ndim and not rows_inner(x):
                        continue
                    for kind, ufunc in (("sum", np.add), ("prod", np.multiply)):
                        data = x if kind == "sum" else x * f16(0.001) + f16(1)
                        want = ufunc.reduce(data, axis=axes)
                        np.testing.assert_array_equal(reduce_in_order(data, kind, axes, False), want)
                    if not rows_inner(x):
                        continue                # (NumPy's casting buffers take these in memory order)
                    want = np.add.reduce(x, axis=axes, dtype=np.float32)
                    got = reduce_in_order(x, "sum", axes, False, "float32")
                    np.testing.assert_array_equal(got, want)
                    assert not isinstance(got, np.ndarray) or got.dtype == np.float32
