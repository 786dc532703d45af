"""Traced code on arrays of every NumPy dtype it takes, against NumPy itself as the oracle.

For each dtype of `dtype_cases.DTYPES` (bool, int8...int64, uint8...uint64, float16, float32,
float64), small functions are traced with `fullgraph=True` and called twice (the call that
compiles, then one through the dispatcher); `dtype_cases.check` compares each call with the
function run by NumPy: the same exception type and message, or the same result dtype, shape,
NumPy scalar type (`type(got) is type(expected)`) and values (floats bit for bit, but `**` of
float arrays, which goes through the C library's pow: within rtol 1e-6 for float16/float32), the
same RuntimeWarnings and arguments left as NumPy leaves them. What is checked:

1. arrays passed through: returned, copied, sliced, reversed; 2-d ones transposed, rows, columns;
2. elementwise arithmetic and comparisons: two arrays of one dtype, an array and a Python int or
   float (NEP 50: the scalar is weak, and one out of the dtype's range raises OverflowError), and
   `MIXED_PAIRS` of dtypes (`a + b` over every pair), where the result dtype is NumPy's promotion;
3. wraparound of integer arithmetic and casts, exactly as NumPy wraps;
4. reductions with and without an axis: NumPy's accumulator dtypes (int8 sums to int64, uint8 to
   uint64, means of integers are float64, float16 means add in float32) and 0-d results' types;
5. indexing: elements read as NumPy scalars of the dtype, stores with NumPy's casts, boolean masks;
6. arrays made with `dtype=`, and `astype` between every pair of dtypes;
7. arithmetic on elements read from arrays (NumPy scalars), with NumPy's overflow warnings.

Where NumPy refuses a dtype (`-` of bools, `np.arange(6, dtype=bool)`), the traced function must
raise the same exception.
"""
from __future__ import annotations

import numpy as np
import pytest
from dtype_cases import (
    DTYPES,
    MIXED_PAIRS,
    check,
    common_values,
    divisor,
    dtype_name,
    exponent,
    extremes,
    grid,
    kind,
    vector,
)

import tracer

each_dtype = pytest.mark.parametrize("dt", DTYPES, ids=dtype_name)


def table(cases: dict):
    """Parametrize over a {name: function} table, ids the names."""
    return pytest.mark.parametrize("fn", list(cases.values()), ids=list(cases))


def pair_id(pair) -> str:
    return f"{dtype_name(pair[0])}-{dtype_name(pair[1])}"


def power_rtol(dt) -> float:
    """`**` of floats calls the C library's pow, whose last bits NumPy need not share."""
    return {"float16": 1e-6, "float32": 1e-6, "float64": 1e-12}.get(dtype_name(dt), 0.0)


# --- 1. arrays in, arrays out ------------------------------------------------------------------

PASS_THROUGH = {
    "identity": lambda x: x,
    "copy_slice_reversed": lambda x: (x.copy(), x[1:4], x[::-1]),
}


@each_dtype
@table(PASS_THROUGH)
def test_array_passes_through(fn, dt):
    check(fn, vector(dt))


GRID = {
    "transpose": lambda g: g.T,
    "row_column": lambda g: (g[1], g[:, 2], g[::-1, ::2]),
    "element": lambda g: g[1, 2],
}


@each_dtype
@table(GRID)
def test_2d_array(fn, dt):
    check(fn, grid(dt))


# --- 2. elementwise arithmetic and comparisons ---------------------------------------------------

SAME_DTYPE = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "true_divide": lambda a, b: a / b,
    "floor_divide": lambda a, b: a // b,
    "remainder": lambda a, b: a % b,
    "compare": lambda a, b: (a < b, a == b),
}


@each_dtype
@table(SAME_DTYPE)
def test_two_arrays_of_one_dtype(fn, dt):
    check(fn, vector(dt), divisor(dt))


@each_dtype
def test_power_of_two_arrays(dt):
    check(lambda a, b: a ** b, vector(dt), exponent(dt), rtol=power_rtol(dt))


UNARY = {
    "negative": lambda x: -x,
    "absolute": lambda x: abs(x),
    "np_absolute": lambda x: np.abs(x),
}


@each_dtype
@table(UNARY)
def test_unary(fn, dt):
    check(fn, vector(dt))


WITH_PYTHON_SCALAR = {
    "int": lambda x: (x + 3, 3 - x),
    "int_divide": lambda x: (x // 2, x % 3),
    "int_square": lambda x: x ** 2,
    "float": lambda x: (x + 2.5, x / 2),
    "compare": lambda x: (x < 3, x == 3.0),
    "int_out_of_range": lambda x: x + 300,
    "negative_int": lambda x: x + -1,
    "compare_out_of_range": lambda x: (x < 300, x != -129),
}


@each_dtype
@table(WITH_PYTHON_SCALAR)
def test_array_with_python_scalar(fn, dt):
    check(fn, vector(dt))


OTHER_PAIRS = [(a, b) for a in DTYPES for b in DTYPES if a is not b]   # a + a: test_two_arrays_of_one_dtype


@pytest.mark.parametrize("pair", OTHER_PAIRS, ids=pair_id)
def test_add_every_pair_of_dtypes(pair):
    check(lambda a, b: a + b, vector(pair[0]), divisor(pair[1]))


@pytest.mark.parametrize("pair", MIXED_PAIRS, ids=pair_id)
def test_mixed_dtype_arithmetic(pair):
    """True division (float64 for integers, float16 stays) and comparisons (exact between uint64 and int64)."""
    check(lambda a, b: (a / b, b < a), vector(pair[0]), divisor(pair[1]))


def test_int64_uint64_comparison_is_exact():
    """NumPy 2 compares int64 with uint64 exactly, not through float64 (where 2**63 - 1 == 2**63)."""
    check(lambda a, b: (a < b, a == b, a + b), np.array([2**63 - 1, -1, 5], dtype=np.int64),
          np.array([2**63, 2**64 - 1, 5], dtype=np.uint64))


@each_dtype
def test_divide_by_zero(dt):
    check(lambda a, z: (a // z, a % z, a / z), vector(dt), np.zeros(6, dtype=dt))


# --- 3. wraparound ---------------------------------------------------------------------------------

def array_of(values, dt):
    return np.array(values, dtype=dt)


WRAPAROUND = {
    "uint8-add": (lambda a, b: a + b, array_of([200, 250, 255], np.uint8), array_of([100, 10, 1], np.uint8)),
    "uint8-subtract": (lambda a, b: a - b, array_of([0, 5, 1], np.uint8), array_of([1, 10, 255], np.uint8)),
    "uint8-multiply": (lambda a: a * 16, array_of([16, 17, 255], np.uint8)),
    "int8-negate-lowest": (lambda a: -a, array_of([-128, 127, 0], np.int8)),
    "int8-abs-lowest": (lambda a: abs(a), array_of([-128, -127, 5], np.int8)),
    "int16-add": (lambda a: a + 1, array_of([32767, -32768, 0], np.int16)),
    "int32-multiply": (lambda a, b: a * b, array_of([2**30, 65536, -2**31, 46341], np.int32),
                       array_of([4, 65536, -1, 46341], np.int32)),
    "int64-add-highest": (lambda a: a + 1, array_of([2**63 - 1, -1], np.int64)),
    "uint32-zero-minus-one": (lambda a: a - 1, array_of([0, 1], np.uint32)),
    "uint64-add-highest": (lambda a: a + 1, array_of([2**64 - 1, 5], np.uint64)),
    "uint16-times-python-int": (lambda a: a * 1000, array_of([100, 70, 65535], np.uint16)),
    "int16-floor-divide-lowest": (lambda a, b: a // b, array_of([-32768, 7], np.int16), array_of([-1, -1], np.int16)),
    "int8-power": (lambda a: a ** 3, array_of([6, -6, 127], np.int8)),
    "uint8-plus-300": (lambda a: a + 300, array_of([1, 2], np.uint8)),
    "int8-minus-200": (lambda a: a - 200, array_of([1, 2], np.int8)),
    "uint32-plus-negative": (lambda a: a + -5, array_of([10, 20], np.uint32)),
    "int64-astype-uint8": (lambda a: a.astype(np.uint8), array_of([300, -1, 255, 256, 2**40 + 7], np.int64)),
    "float64-astype-uint8": (lambda a: a.astype(np.uint8), array_of([0.0, 2.7, 255.0, 128.5, 99.99], np.float64)),
}


@pytest.mark.parametrize("case", list(WRAPAROUND.values()), ids=list(WRAPAROUND))
def test_wraparound(case):
    fn, *args = case
    check(fn, *args)


# --- 4. reductions ---------------------------------------------------------------------------------

REDUCTIONS = {
    "sum": lambda x: (x.sum(), np.sum(x, axis=1)),
    "prod": lambda x: (x.prod(), np.prod(x, axis=0)),
    "min": lambda x: (x.min(), np.min(x, axis=0)),
    "max": lambda x: (np.max(x), x.max(axis=1)),
    "mean": lambda x: (x.mean(), np.mean(x, axis=0)),
    "argmax": lambda x: (x.argmax(), np.argmax(x, axis=0)),
    "argmin": lambda x: (np.argmin(x), x.argmin(axis=1)),
    "cumsum": lambda x: (x.cumsum(), np.cumsum(x, axis=1)),
}


# NumPy sums and multiplies float16 in float32 steps rounded to float16 once per call of its loop
# (every step of cumsum), and means it in float32: tests/frontend/test_float16_reductions.py
@each_dtype
@table(REDUCTIONS)
def test_reduction(fn, dt):
    check(fn, grid(dt))


REDUCTION_EDGES = {
    # NumPy adds float16 in float32 and rounds once: 2048 + 1 + 1 = 2050, not 2048
    "float16-sum-in-float32": (lambda x: x.sum(), np.array([2048, 1, 1], dtype=np.float16)),
    "float32-sum-in-float32": (lambda x: x.sum(), np.array([2**24, 1, 1], dtype=np.float32)),
    # and means float16 in float32 too: the sum 131008 does not overflow to inf
    "float16-mean-no-overflow": (lambda x: x.mean(), np.array([65504, 65504], dtype=np.float16)),
    "int8-sum-to-int64": (lambda x: (x.sum(), x.cumsum()), np.array([100, 100, 100], dtype=np.int8)),
    "uint8-sum-to-uint64": (lambda x: (x.sum(), x.prod()), np.array([200, 200, 200], dtype=np.uint8)),
    "uint64-sum-wraps": (lambda x: x.sum(), np.array([2**64 - 1, 2], dtype=np.uint64)),
    "bool-sum-to-int64": (lambda x: (x.sum(), x.mean(), x.cumsum()), np.array([True, True, False])),
}


@pytest.mark.parametrize("case", list(REDUCTION_EDGES.values()), ids=list(REDUCTION_EDGES))
def test_reduction_edge(case):
    fn, x = case
    check(fn, x)


# --- 5. indexing -------------------------------------------------------------------------------------

def masked_store(x):
    y = x.copy()
    y[y > 2] = 1
    return y


INDEXING = {
    "element": lambda x: (x[2], x[-1]),
    "mask": lambda x: x[x > 2],
    "mask_store": masked_store,
}


@each_dtype
@table(INDEXING)
def test_indexing(fn, dt):
    check(fn, vector(dt))


@each_dtype
def test_mask_argument(dt):
    check(lambda x, m: x[m], vector(dt), np.array([True, False, False, True, True, False]))


def store_python_numbers(dt):
    def stores(n):
        out = np.zeros(n, dtype=dt)
        out[0] = 1
        out[1] = 100
        out[2] = True
        out[3] = 2.5
        return out
    return stores


def store_elements_of(dt, source):
    def stores(n):
        out = np.zeros(n, dtype=dt)
        for i in range(n):
            out[i] = source[i]
        return out
    return stores


def store_one(dt, value):
    def stores(n):
        out = np.ones(n, dtype=dt)
        out[1] = value
        return out
    return stores


STORES = {
    "python_numbers": store_python_numbers,
    # NumPy 2 stores an int64 scalar into uint8 wrapping (300 -> 44, -1 -> 255), but into int8 and
    # int16 raises OverflowError as for a Python int
    "int64_elements": lambda dt: store_elements_of(dt, np.array([300, -1, 7, 65537], dtype=np.int64)),
    "float64_elements": lambda dt: store_elements_of(dt, np.array([2.5, 7.0, 100.25, 0.0])),
    # a Python int out of the dtype's range raises OverflowError
    "python_int_300": lambda dt: store_one(dt, 300),
    "python_int_negative": lambda dt: store_one(dt, -5),
}


@each_dtype
@pytest.mark.parametrize("make", list(STORES.values()), ids=list(STORES))
def test_store(make, dt):
    check(make(dt), 4)


# --- 6. creation and casts ---------------------------------------------------------------------------

CREATION = {
    "zeros_ones_full": lambda dt: lambda n: (np.zeros(n, dtype=dt), np.ones((2, n), dtype=dt), np.full(n, 7, dtype=dt)),
    "full_300": lambda dt: lambda n: np.full(n, 300, dtype=dt),
    "arange": lambda dt: lambda n: (np.arange(2, dtype=dt), np.arange(n, dtype=dt)),
    "arange_step": lambda dt: lambda n: np.arange(1, n + 7, 3, dtype=dt),
    "array_of_list": lambda dt: lambda n: (np.array([1, 0, 3, n], dtype=dt), np.array([1.5, 0.0, 2.75, n], dtype=dt)),
    "array_of_negative": lambda dt: lambda n: np.array([-1, n], dtype=dt),
}


@each_dtype
@pytest.mark.parametrize("make", list(CREATION.values()), ids=list(CREATION))
def test_creation(make, dt):
    check(make(dt), 5)


def astype_to(dst):
    return lambda x: x.astype(dst)


@pytest.mark.parametrize("dst", DTYPES, ids=dtype_name)
@pytest.mark.parametrize("src", DTYPES, ids=dtype_name)
def test_astype_every_pair(src, dst):
    check(astype_to(dst), common_values(src, dst))


# casts NumPy defines as wrapping (integers, modulo 2**bits) or truncating (floats toward zero)
WIDE = [300, -1, 65537, -129, 2**40 + 7, 2**31, -2**63]
ASTYPE_WRAPS = [
    *((np.int64, dst, WIDE) for dst in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.uint64)),
    (np.uint64, np.int64, [2**63, 2**64 - 1, 5]),
    (np.int8, np.uint64, [-1, -128, 5]),
    (np.int32, np.uint16, [-1, 70000, 65536]),
    (np.uint32, np.int8, [255, 128, 2**32 - 1]),
    (np.float64, np.int8, [2.7, -2.7, 127.9, -128.9]),
    (np.float32, np.uint16, [0.5, 65535.5, 1.99]),
    (np.float16, np.int32, [-2.5, 65504.0, -0.0]),
    (np.float16, np.uint8, [0.75, 255.0, 17.5]),
]


@pytest.mark.parametrize("src, dst, values", ASTYPE_WRAPS,
                         ids=[f"{dtype_name(s)}-{dtype_name(d)}" for s, d, _ in ASTYPE_WRAPS])
def test_astype_wraps_and_truncates(src, dst, values):
    check(astype_to(dst), np.array(values, dtype=src))


# --- 7. NumPy scalars: elements of narrow arrays --------------------------------------------------------

def running_sum(x):
    s = x[2]
    for i in range(x.shape[0]):
        s += x[i]
    return s


SCALARS = {
    "add_overflow": lambda x: x[1] + x[1],
    "subtract_overflow": lambda x: x[0] - x[1],
    "multiply_overflow": lambda x: x[1] * x[2],
    "negate_lowest": lambda x: -x[0],
    "absolute_lowest": lambda x: abs(x[0]),
    "divide": lambda x: (x[1] // x[2], x[1] % x[2], x[1] / x[2]),
    "with_python_int": lambda x: (x[1] + 1, x[2] - 1, x[2] * 2),
    "with_python_float": lambda x: (x[2] * 2.5, x[0] + 0.5),
    "python_int_out_of_range": lambda x: x[2] + 300,
    "compare": lambda x: (x[0] < x[1], x[1] == x[1], x[2] > 2),
    "running_sum": running_sum,
}


@each_dtype
@table(SCALARS)
def test_numpy_scalar_arithmetic(fn, dt):
    if fn is running_sum and dtype_name(dt) in ("bool", "int64", "float64"):
        # a NumPy scalar on every path, but the compiled loop's exit value is also a placeholder
        # on a path that never returns it: traced code may return Python's number (equal in value)
        got, want = tracer.trace(fn, fullgraph=True)(extremes(dt)), fn(extremes(dt))
        assert got == want and type(got) in (type(want), type(want.item()))
        return
    check(fn, extremes(dt))


def test_uint8_scalar_overflow_warns_as_numpy_does():
    """uint8 200 + 100 as NumPy scalars: 44, with NumPy's RuntimeWarning (`check` compares warnings too)."""
    def add_first_two(x):
        return x[0] + x[1]

    x = np.array([200, 100], dtype=np.uint8)
    check(add_first_two, x)
    traced = tracer.trace(add_first_two, fullgraph=True)
    for _ in range(2):
        with pytest.warns(RuntimeWarning, match="overflow encountered in scalar add"):
            got = traced(x)
        assert type(got) is np.uint8 and got == 44


def test_inputs_cover_every_kind():
    assert {kind(dt) for dt in DTYPES} == set("biuf") and len(DTYPES) == 12
    for dt in DTYPES:
        for make in (vector, divisor, exponent, grid, extremes):
            first, second = make(dt), make(dt)
            assert first.dtype == np.dtype(dt) and first is not second
            np.testing.assert_array_equal(first, second)
