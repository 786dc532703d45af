"""NumPy's sums, products, means and statistics of float16 arrays, bit for bit and float16 as
NumPy's are. NumPy computes them in float32 steps that it rounds to float16 at places of its
own; these make the same steps (tracer.frontend.numpy_dtypes sends float16 arrays here):

    sum, prod, nansum   np.add.reduce / np.multiply.reduce in NumPy's float16 loop: the IR's
                        `reduce` of the float16 array (tracer.ir.reductions: float32 within each
                        call of the loop, a run of elements, rounded to float16 after each)
    cumsum, cumprod     the IR's `scan` of the float16 array: every step rounded to float16
    mean, average       np.mean's: the sum in float32 (`reduce` with dtype float32, by NumPy's
                        casting buffers) divided by the count in float64 and rounded to float16
                        (an array result through float32, as NumPy's true_divide(..., out=) of
                        the float32 sums); weighted, in float16 (float16 weights) or in the
                        weights' float32 or float64 (the array cast up exactly)
    var, std            NumPy's _var: the float16 sum (keepdims) divided by the count, the
                        deviations and their squares in float16, their float16 sum divided by the
                        count less ddof; std its float16 square root
    nanmean             the float16 sum of the array with its NaNs made 0.0, divided by the
                        count of the others

A quotient by a count is taken in float64 (NumPy's count is an np.intp: float16 / intp promotes
to float64) and rounded to float16 once. A rounding past float16's range fails the call, and
so does a count of 0 or weights that sum to 0: the Python function gives NumPy's result and its
warning or error. np.median, np.percentile and np.quantile take float16 arrays themselves
(tracer.frontend.numpy_sort).
"""
from __future__ import annotations

from tracer.frontend import arrays, numpy_more
from tracer.frontend.arrays import convert, emit_elementwise, sizes_of, wrap
from tracer.frontend.builder import is_traced
from tracer.frontend.dtypes import cast
from tracer.frontend.numpy_more import (
    all_true,
    as_array,
    axis_index,
    axis_tuple,
    count_of,
    fallback_unless,
    select,
    sum_of,
    unsupported_arguments,
)
from tracer.frontend.objects import TracedArray
from tracer.ir import F16, F32, F64, I64, ArrayType

FUNCTIONS: dict = {}            # NumPy function name -> its implementation for float16 arrays
OWN = {"median", "percentile", "quantile"}      # implementations that take float16 arrays themselves


def float16_function(*names):
    def register(impl):
        for n in names:
            FUNCTIONS[n] = impl
        return impl
    return register


# ------------------------------------------------------------------------------- helpers
def _array(tracer, a, what: str):
    """The float16 array value of argument `a`."""
    if not isinstance(a, TracedArray) or a.type.dtype != F16:
        raise tracer.error(f"{what} of float16 data that is not one float16 array is not supported yet")
    return a.value


def _axes(tracer, axis, rank: int) -> tuple:
    return tuple(sorted(axis_tuple(tracer, axis, rank)))


def reduction(tracer, kind: str, v, axes: tuple, keepdims=False, in_float32=False):
    """np.add.reduce (kind 'sum') or np.multiply.reduce ('prod') of float16 array value `v`
    over `axes` (sorted): float16 (`in_float32`: np.add.reduce(v, dtype=float32), float32).
    Over no axis, each element with the identity: x + 0.0 (-0.0 becomes 0.0), x * 1.0."""
    b = tracer.builder
    if axes:
        return b.emit("reduce", (v,), kind=kind, axes=axes, keepdims=bool(keepdims),
                      **({"dtype": "float32"} if in_float32 else {}))
    if in_float32:
        return emit_elementwise(tracer, "add", [cast(tracer, v, F32), 0.0], F32)
    return emit_elementwise(tracer, "add", [v, 0.0], F16) if kind == "sum" else b.emit("copy", (v,))


def _quotient(tracer, total, count, through_float32=False):
    """total / count (a number of elements) in float64, rounded to float16 (`through_float32`:
    an array rounded to float32 first)."""
    quotient = emit_elementwise(tracer, "div", [total, count], F64)
    if through_float32 and isinstance(quotient.type, ArrayType):
        quotient = convert(tracer, quotient, F32)
    return cast(tracer, quotient, F16)


def _without_nans(tracer, v):
    """NumPy's _replace_nan(v, 0): the float16 array with its NaNs made 0.0, and the NaN mask."""
    wide = cast(tracer, v, F64)
    mask = tracer.builder.emit("isnan", (wide,))
    return cast(tracer, select(tracer, mask, 0.0, wide, F64), F16), mask


# ------------------------------------------------------------------------------- sums and products
@float16_function("sum")
def sum_(tracer, x, axis=None, dtype=None, keepdims=False):
    v = _array(tracer, x, "np.sum")
    return wrap(tracer, reduction(tracer, "sum", v, _axes(tracer, axis, v.type.rank), keepdims))


@float16_function("prod")
def prod(tracer, x, axis=None, dtype=None, keepdims=False):
    v = _array(tracer, x, "np.prod")
    return wrap(tracer, reduction(tracer, "prod", v, _axes(tracer, axis, v.type.rank), keepdims))


@float16_function("nansum")
def nansum(tracer, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    unsupported_arguments(tracer, "np.nansum", initial=initial, where=None if where is True else where)
    v, _ = _without_nans(tracer, _array(tracer, a, "np.nansum"))
    return wrap(tracer, reduction(tracer, "sum", v, _axes(tracer, axis, v.type.rank), keepdims))


def _running(tracer, kind: str, a, axis):
    x = as_array(tracer, a, f"np.cum{kind}")
    _array(tracer, x, f"np.cum{kind}")
    if axis is None:
        x, axis = arrays.reshape(tracer, x, (-1,)), 0
    else:
        axis = axis_index(tracer, axis, x.rank)
    return wrap(tracer, tracer.builder.emit("scan", (x.value,), kind=kind, axis=axis))


@float16_function("cumsum")
def cumsum(tracer, a, axis=None, dtype=None, out=None):
    return _running(tracer, "sum", a, axis)


@float16_function("cumprod")
def cumprod(tracer, a, axis=None, dtype=None, out=None):
    return _running(tracer, "prod", a, axis)


# ------------------------------------------------------------------------------- means
def mean_of(tracer, v, axes: tuple, keepdims=False):
    """np.mean of float16 array value `v` over `axes` (sorted)."""
    total = reduction(tracer, "sum", v, axes, keepdims, in_float32=True)
    return _quotient(tracer, total, count_of(tracer, v, axes), through_float32=True)


@float16_function("mean")
def mean(tracer, x, axis=None, keepdims=False):
    v = _array(tracer, x, "np.mean")
    return wrap(tracer, mean_of(tracer, v, _axes(tracer, axis, v.type.rank), keepdims))


@float16_function("nanmean")
def nanmean(tracer, a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    unsupported_arguments(tracer, "np.nanmean", where=None if where is True else where)
    v, mask = _without_nans(tracer, _array(tracer, a, "np.nanmean"))
    axes = _axes(tracer, axis, v.type.rank)
    count = sum_of(tracer, tracer.builder.emit("not", (mask,)), axes, keepdims)     # (int64)
    return wrap(tracer, _quotient(tracer, reduction(tracer, "sum", v, axes, keepdims), count))


@float16_function("average")
def average(tracer, a, axis=None, weights=None, returned=False, *, keepdims=None):
    """NumPy's average: the mean; weighted, sum(a * w) / sum(w) in their result dtype."""
    b = tracer.builder
    v = _array(tracer, a, "np.average")
    axes = _axes(tracer, axis, v.type.rank)
    kd = bool(keepdims) if keepdims is not None else False
    if weights is not None:
        w = as_array(tracer, weights, "np.average's weights").value
        wider = {F32: F32, F64: F64, I64: F64}.get(w.type.dtype)    # NumPy's result dtype with float16
        if wider is not None:                 # computed there: the float16 array cast up is exact
            return numpy_more.average(tracer, wrap(tracer, cast(tracer, v, wider)), axis, wrap(tracer, w), returned,
                                      keepdims=keepdims)
        if w.type.dtype != F16 or w.type.rank != v.type.rank:
            raise tracer.error("np.average of a float16 array with weights other than float16, float32 or float64 "
                               "ones of its shape is not supported yet")
        for m, n in zip(sizes_of(tracer, v), sizes_of(tracer, w)):
            if is_traced(m) or is_traced(n) or m != n:
                fallback_unless(tracer, b.compare("eq", m, n))     # (else NumPy's error: Python raises it)
        scale = reduction(tracer, "sum", w, axes, kd)
        nonzero = b.emit("ne", (cast(tracer, scale, F64), b.const(0.0)) if not isinstance(scale.type, ArrayType) else
                         tuple(arrays.broadcast(tracer, [cast(tracer, scale, F64), b.const(0.0)])))
        fallback_unless(tracer, all_true(tracer, nonzero) if isinstance(nonzero.type, ArrayType) else nonzero)
        total = reduction(tracer, "sum", emit_elementwise(tracer, "mul", [v, w], F16), axes, kd)
        avg = emit_elementwise(tracer, "div", [total, scale], F16)
    else:
        avg = mean_of(tracer, v, axes, kd)
        count = count_of(tracer, v, range(v.type.rank))
        if isinstance(avg.type, ArrayType):
            count = b.binary("floordiv", count, count_of(tracer, avg, range(avg.type.rank)))
        scale = cast(tracer, b.convert(b.value(count), F64) if is_traced(count) else float(count), F16)
    if not returned:
        return wrap(tracer, avg)
    if isinstance(avg.type, ArrayType) and (not isinstance(scale.type, ArrayType) or scale.type.shape != avg.type.shape):
        scale = b.emit("full", (b.value(scale), *(b.value(n) for n in sizes_of(tracer, avg))), shape=avg.type.shape) \
            if not isinstance(scale.type, ArrayType) else b.emit("copy", (arrays.broadcast(tracer, [scale, avg])[0],))
    return wrap(tracer, avg), wrap(tracer, scale)


# ------------------------------------------------------------------------------- var and std
def variance(tracer, what, a, axis, ddof, keepdims, where, mean, correction):
    """NumPy's _var of a float16 array (the module's docstring)."""
    b = tracer.builder
    unsupported_arguments(tracer, what, mean=mean, where=None if where is True else where)
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    if not (type(ddof) in (int, float) or (is_traced(ddof) and not isinstance(ddof.type, ArrayType))):
        raise tracer.error(f"{what} with a ddof of type {type(ddof).__name__} is not supported")
    v = _array(tracer, a, what)
    axes = _axes(tracer, axis, v.type.rank)
    count = count_of(tracer, v, axes)
    center = _quotient(tracer, reduction(tracer, "sum", v, axes, True), count)
    deviation = emit_elementwise(tracer, "sub", [v, center], F16)
    total = reduction(tracer, "sum", emit_elementwise(tracer, "mul", [deviation, deviation], F16), axes, keepdims)
    freedom = b.binary("sub", count, ddof)
    if is_traced(freedom):
        freedom = b.emit("select", (b.value(b.compare("lt", freedom, 0)), b.value(convert(tracer, 0, freedom.type)),
                                    freedom))
    else:
        freedom = max(freedom, 0)
    return _quotient(tracer, total, freedom)


@float16_function("var")
def var(tracer, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    return wrap(tracer, variance(tracer, "np.var", a, axis, ddof, keepdims, where, mean, correction))


@float16_function("std")
def std(tracer, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    v = variance(tracer, "np.std", a, axis, ddof, keepdims, where, mean, correction)
    return wrap(tracer, emit_elementwise(tracer, "sqrt", [v], F16))
