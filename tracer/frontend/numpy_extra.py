"""Still more NumPy functions inside a trace: truth tests (`np.any`, `np.all`, `x.any()`,
`x.all()`, `np.count_nonzero`), angle units (`np.radians`, `np.degrees`, `np.deg2rad`,
`np.rad2deg`), closeness (`np.isclose`, `np.allclose`), `np.meshgrid`, `np.sinc`, the NaN-ignoring
`np.nansum` and `np.nanmean`, and `np.fill_diagonal`.

Registered into `tracer.frontend.numpy_more`'s tables. Each follows NumPy's own algorithm:
- any/all/count_nonzero count the true elements (x != 0; NaN is true) as int64 sums (all: the
  count equals the number of elements), so an empty array or axis gives NumPy's False/True/0
  without a special case;
- the angle functions are NumPy's C `x * (180.0 / NPY_PI)` and `x * (NPY_PI / 180.0)`, the
  constant computed in float32 for float32 arrays (180.0f / NPY_PIf): bit for bit;
- isclose is `abs(x - y) <= atol + rtol * abs(y)` and `isfinite(y)`, or `x == y` (y made inexact
  first); the product is kept out of FMA fusion, so the comparison sees NumPy's two roundings;
- sinc is `sin(y) / y` with `y = pi * x`, or the dtype's eps where that is 0;
- nansum and nanmean replace NaNs with 0 and sum (in order, where NumPy sums in pairs: the last
  bits of long sums may differ); a slice with no number divides by a count of 0, which fails the
  compiled call, and the Python function gives NumPy's NaN and "Mean of empty slice" warning;
- meshgrid broadcasts each (flattened) input along its own axis into a new array (copy=True);
- fill_diagonal writes one value (cast as NumPy casts it) where the indices are equal, in place
  (an argument array is written back, as `x[i] = v` is).
"""
from __future__ import annotations

import math

from tracer.frontend import arrays
from tracer.frontend.arrays import convert, emit_elementwise, kind, operand, promote, sizes_of, wrap
from tracer.frontend.builder import is_number, is_traced
from tracer.frontend.numpy_more import (
    METHODS,
    as_array,
    axis_tuple,
    count_of,
    fallback_unless,
    index_arg,
    mean_of,
    numpy_function,
    select,
    sum_of,
    unsupported_arguments,
)
from tracer.frontend.objects import TracedArray
from tracer.ir import BOOL, F32, F64, FLOATS, I64, ArrayType

METHODS.update({"any", "all"})      # x.any() is np.any(x), ...


def _is_array(v) -> bool:
    return is_traced(v) and isinstance(v.type, ArrayType)


def _and(tracer, a, b):
    bld = tracer.builder
    return bld.emit("select", tuple(arrays.broadcast(tracer, [bld.value(a), bld.value(b), bld.const(False)])))


def _or(tracer, a, b):
    bld = tracer.builder
    return bld.emit("select", tuple(arrays.broadcast(tracer, [bld.value(a), bld.const(True), bld.value(b)])))


# ------------------------------------------------------------------------------- truth tests
def _truth(tracer, a, what: str):
    """The array `a` as bools (x != 0; NaN is true), and its rank."""
    x = as_array(tracer, a, what)
    return convert(tracer, x.value, BOOL), x.rank


def _count_true(tracer, a, axis, keepdims, what: str):
    truth, rank = _truth(tracer, a, what)
    axes = axis_tuple(tracer, axis, rank)
    if not axes:
        return convert(tracer, truth, I64)
    return sum_of(tracer, truth, axes, bool(keepdims))


def _test(name, negate):
    def impl(tracer, a, axis=None, out=None, keepdims=False, *, where=None):
        unsupported_arguments(tracer, f"np.{name}", out=out)
        if where is not None and where is not True:
            raise tracer.error(f"np.{name}(..., where=...) is not supported yet")
        count = _count_true(tracer, a, axis, keepdims, f"np.{name}")
        if not negate:
            return wrap(tracer, emit_elementwise(tracer, "ne", [count, 0], I64))
        x = as_array(tracer, a, f"np.{name}")         # all: every element along the axes is true
        size = count_of(tracer, x.value, axis_tuple(tracer, axis, x.rank))
        return wrap(tracer, emit_elementwise(tracer, "eq", [count, size], I64))
    return impl


numpy_function("any")(_test("any", False))
numpy_function("all")(_test("all", True))


@numpy_function("count_nonzero")
def count_nonzero(tracer, a, axis=None, *, keepdims=False):
    return wrap(tracer, _count_true(tracer, a, axis, keepdims, "np.count_nonzero"))


# ------------------------------------------------------------------------------- angles
def _scale(name: str, to_degrees: bool):
    def impl(tracer, x, out=None, **kwargs):
        import numpy
        unsupported_arguments(tracer, f"np.{name}", out=out, **kwargs)
        v = operand(tracer, x, f"np.{name}")
        if not is_traced(v):
            return tracer.builder.const(float(getattr(numpy, name)(v)))   # a constant: NumPy itself
        if kind(v) == BOOL:
            raise tracer.error(f"np.{name} of bools (NumPy gives float16) is not supported")
        t = F32 if kind(v) == F32 else F64
        # NumPy's RAD2DEG (180.0/NPY_PI) and DEG2RAD (NPY_PI/180.0), in the dtype's own arithmetic
        pi, half_turn = (numpy.float32(numpy.pi), numpy.float32(180.0)) if t == F32 else (math.pi, 180.0)
        factor = float(half_turn / pi if to_degrees else pi / half_turn)
        return wrap(tracer, emit_elementwise(tracer, "mul", [v, factor], t))
    return impl


for _names, _to_degrees in ((("radians", "deg2rad"), False), (("degrees", "rad2deg"), True)):
    for _name in _names:
        numpy_function(_name)(_scale(_name, _to_degrees))


# ------------------------------------------------------------------------------- closeness
def _tolerance(tracer, t, what: str) -> float:
    """A tolerance: a Python number, or a traced scalar (an argument); one that is not finite
    (NumPy's arithmetic with it may warn) fails the call, and the Python function runs."""
    if is_traced(t) and t.type in (F64, I64, BOOL):
        b = tracer.builder
        fallback_unless(tracer, b.emit("isfinite", (b.value(convert(tracer, t, F64)),)))
        return t
    if type(t) not in (int, float, bool):
        raise tracer.error(f"np.{what} with a tolerance that is not a number is not supported yet")
    if not math.isfinite(t):
        raise tracer.error(f"np.{what} with a tolerance that is not finite is not supported")
    return t


def close(tracer, a, b, rtol, atol, equal_nan, what: str):
    """NumPy's isclose: (|x - y| <= atol + rtol * |y|) & isfinite(y) | (x == y)."""
    bld = tracer.builder
    rtol, atol = _tolerance(tracer, rtol, what), _tolerance(tracer, atol, what)
    x, y = operand(tracer, a, f"np.{what}"), operand(tracer, b, f"np.{what}")
    if not is_traced(x) and not is_traced(y):
        import numpy
        return bld.const(bool(numpy.isclose(x, y, rtol, atol, bool(equal_nan))))
    x, y = arrays.unwrap_0d(tracer, x), arrays.unwrap_0d(tracer, y)
    if is_traced(y):
        y = convert(tracer, y, F32 if kind(y) == F32 else F64)      # result_type(y, 1.0)
    elif type(y) in (int, bool):
        y = float(y)
    dt = promote(tracer, x, y)
    dt = F64 if dt in (I64, BOOL) else dt
    ty = kind(y)
    diff = emit_elementwise(tracer, "abs", [emit_elementwise(tracer, "sub", [x, y], dt)], dt)
    ay = emit_elementwise(tracer, "abs", [y], ty)
    finite = bld.emit("isfinite", (bld.value(convert(tracer, y, F64)),))
    scaled = emit_elementwise(tracer, "mul", [rtol, ay], promote(tracer, rtol, ay))
    if is_traced(scaled) and kind(scaled) == F64:   # not fused with the add: NumPy rounds twice
        scaled = select(tracer, finite, scaled, 0.0, F64)
    bound = emit_elementwise(tracer, "add", [atol, scaled], promote(tracer, atol, scaled))
    result = _and(tracer, emit_elementwise(tracer, "le", [diff, bound], promote(tracer, diff, bound)), finite)
    result = _or(tracer, result, emit_elementwise(tracer, "eq", [x, y], promote(tracer, x, y)))
    if equal_nan and kind(x) in (F64, F32):
        both = _and(tracer, *(bld.emit("isnan", (bld.value(convert(tracer, v, F64)),)) for v in (x, y)))
        result = _or(tracer, result, both)
    return result


@numpy_function("isclose")
def isclose(tracer, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return wrap(tracer, close(tracer, a, b, rtol, atol, equal_nan, "isclose"))


@numpy_function("allclose")
def allclose(tracer, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    result = close(tracer, a, b, rtol, atol, equal_nan, "allclose")
    if not _is_array(result):
        return result
    everywhere = sum_of(tracer, tracer.builder.emit("not", (result,)), tuple(range(result.type.rank)))
    return emit_elementwise(tracer, "eq", [everywhere, 0], I64)


# ------------------------------------------------------------------------------- grids
@numpy_function("meshgrid", array_result=True)
def meshgrid(tracer, *xi, copy=True, sparse=False, indexing="xy"):
    """NumPy's: each input flattened along its own axis (the first two swapped for 'xy'), then
    broadcast to the whole grid (sparse: left with size-1 axes), as new arrays."""
    b = tracer.builder
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    if not copy:
        raise tracer.error("np.meshgrid(..., copy=False) is not supported yet")
    flat = []
    for x in xi:
        x = as_array(tracer, x, "np.meshgrid")
        flat.append(x.value if x.rank == 1 else arrays.reshape(tracer, x, (-1,)).value)
    ndim = len(flat)
    axis_of = list(range(ndim))
    if indexing == "xy" and ndim > 1:
        axis_of[0], axis_of[1] = 1, 0
    sizes, shape = [None] * ndim, [None] * ndim
    for v, d in zip(flat, axis_of):
        sizes[d], shape[d] = sizes_of(tracer, v)[0], v.type.shape[0]
    out = []
    for v, d in zip(flat, axis_of):
        if sparse:
            grid_sizes = [sizes[d] if e == d else 1 for e in range(ndim)]
            grid_shape = tuple(shape[d] if e == d else 1 for e in range(ndim))
        else:
            grid_sizes, grid_shape = sizes, tuple(shape)
        spread = b.emit("broadcast_in_dim", (v, *(b.value(n) for n in grid_sizes)), shape=grid_shape, dims=(d,))
        out.append(wrap(tracer, b.emit("copy", (spread,))))
    return tuple(out)


# ------------------------------------------------------------------------------- sinc
@numpy_function("sinc")
def sinc(tracer, x):
    """NumPy's: y = pi * x (a float: float64 for ints), the float dtype's eps where y is 0, then
    sin(y) / y (sin(inf) fails the compiled call: the Python function gives NumPy's NaN and warning)."""
    v = operand(tracer, x, "np.sinc")
    if not is_traced(v):
        import numpy
        return tracer.builder.const(float(numpy.sinc(v)))
    v = arrays.unwrap_0d(tracer, v)
    t = F32 if kind(v) == F32 else F64
    y = emit_elementwise(tracer, "mul", [math.pi, v], t)
    eps = 2.0 ** -23 if t == F32 else 2.0 ** -52
    zero = emit_elementwise(tracer, "eq", [y, 0.0], t)
    y = select(tracer, zero, eps, y, t)
    return wrap(tracer, emit_elementwise(tracer, "div", [emit_elementwise(tracer, "sin", [y], t), y], t))


# ------------------------------------------------------------------------------- NaN-ignoring
def _without_nans(tracer, a, what: str):
    """NumPy's _replace_nan(a, 0): the array with its NaNs made +0.0, and the mask (None for
    arrays of ints and bools, which hold no NaN)."""
    x = as_array(tracer, a, what)
    v = x.value
    if v.type.dtype not in (F64, F32):
        return v, None
    mask = tracer.builder.emit("isnan", (convert(tracer, v, F64),))
    return select(tracer, mask, 0.0, v, v.type.dtype), mask


def _nan_checks(tracer, what, dtype, out, initial=None, where=None):
    unsupported_arguments(tracer, what, dtype=dtype, out=out, initial=initial)
    if where is not None and where is not True:
        raise tracer.error(f"{what}(..., where=...) is not supported yet")


@numpy_function("nansum")
def nansum(tracer, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _nan_checks(tracer, "np.nansum", dtype, out, initial, where)
    v, _ = _without_nans(tracer, a, "np.nansum")
    axes = axis_tuple(tracer, axis, v.type.rank)
    if not axes:
        total = convert(tracer, v, I64) if v.type.dtype == BOOL else v
        return wrap(tracer, total if total is not v or v.type.rank == 0 else tracer.builder.emit("copy", (v,)))
    return wrap(tracer, sum_of(tracer, v, axes, keepdims))


@numpy_function("nanmean")
def nanmean(tracer, a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _nan_checks(tracer, "np.nanmean", dtype, out, where=where)
    v, mask = _without_nans(tracer, a, "np.nanmean")
    axes = axis_tuple(tracer, axis, v.type.rank)
    if mask is None:                                 # np.mean (of float64)
        return wrap(tracer, mean_of(tracer, v, axes, keepdims))
    count = sum_of(tracer, tracer.builder.emit("not", (mask,)), axes, keepdims)
    total = sum_of(tracer, v, axes, keepdims)
    # NumPy's _divide_by_count: float32 / intp is computed in float64, then cast back
    mean = emit_elementwise(tracer, "div", [total, count], F64)
    return wrap(tracer, convert(tracer, mean, v.type.dtype))


# ------------------------------------------------------------------------------- fill_diagonal
@numpy_function("fill_diagonal")
def fill_diagonal(tracer, a, val, wrap=False):
    """In place: a.flat[::step] = val for step n + 1 (2-d, n columns; up to n * n unless wrap),
    or the elements with every index equal (all axes of one length)."""
    b = tracer.builder
    if not isinstance(a, TracedArray):
        raise tracer.error("np.fill_diagonal of something other than an array is not supported")
    if a.rank < 2:
        raise ValueError("array must be at least 2-d")
    v = operand(tracer, val, "np.fill_diagonal")
    v = arrays.unwrap_0d(tracer, v)
    if not (is_number(v) or (is_traced(v) and not _is_array(v))):
        raise tracer.error("np.fill_diagonal with an array of values is not supported yet (only one value)")
    dtype = a.type.dtype
    if dtype != BOOL and kind(v) == BOOL:
        v = convert(tracer, v, I64)
    if dtype == I64 and kind(v) in (F64, F32):         # NumPy's unsafe cast: truncated (NaN: Python runs)
        v = b.emit("to_i64", (b.value(convert(tracer, v, F64)),))
    sizes = sizes_of(tracer, a.value)
    known = {n for n in a.type.shape if n is not None}
    if a.rank > 2:
        if len(known) > 1:
            raise ValueError("All dimensions of input must be of equal length")
        for n in sizes[1:]:
            if is_traced(n) or is_traced(sizes[0]):
                fallback_unless(tracer, b.compare("eq", n, sizes[0]))
    grid = [b.emit("broadcast_in_dim", (b.emit("iota", (b.value(n),), shape=(s,)), *(b.value(m) for m in sizes)),
                   shape=a.type.shape, dims=(d,)) for d, (n, s) in enumerate(zip(sizes, a.type.shape))]
    if a.rank == 2 and wrap:
        cols = sizes[1]
        flat = emit_elementwise(tracer, "add", [emit_elementwise(tracer, "mul", [grid[0], cols], I64), grid[1]], I64)
        on = emit_elementwise(tracer, "eq", [emit_elementwise(tracer, "mod", [flat, b.binary("add", cols, 1)], I64),
                                             0], I64)
    else:
        on = b.emit("eq", (grid[0], grid[1]))
        for g in grid[2:]:
            on = _and(tracer, on, b.emit("eq", (grid[0], g)))
    arrays.assign(tracer, a, select(tracer, on, v, a.value, dtype))
    return None


# ------------------------------------------------------------------------------- round
METHODS.add("round")


@numpy_function("round", "around")
def round_(tracer, a, decimals=0, out=None):
    """NumPy's PyArray_Round: integers as they are (decimals >= 0); floats multiplied by 10**d,
    rounded half to even (rint), divided by 10**d again (d < 0: divided, then multiplied)."""
    if out is not None:
        raise tracer.error("np.round(..., out=) is not supported yet")
    x = operand(tracer, a, "np.round")
    d = index_arg(tracer, decimals, "np.round's decimals")
    if kind(x) not in FLOATS:
        if d < 0:
            raise tracer.error("np.round of integers to negative decimals is not supported yet")
        return wrap(tracer, tracer.builder.emit("copy", (x,))) if is_traced(x) and isinstance(x.type, ArrayType) else x
    scale = _power_of_ten(abs(d))
    first, then = ("mul", "div") if d >= 0 else ("div", "mul")
    y = emit_elementwise(tracer, first, [x, scale])
    y = emit_elementwise(tracer, "round_even", [y], kind(y))
    return wrap(tracer, emit_elementwise(tracer, then, [y, scale]))


def _power_of_ten(n: int) -> float:
    """NumPy's power_of_ten: exact below 1e9, then multiplied by 10 step by step."""
    if n < 9:
        return float(10 ** n)
    scale = 1e9
    for _ in range(n - 9):
        scale *= 10.0
    return scale
