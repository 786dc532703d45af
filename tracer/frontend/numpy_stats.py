"""NumPy's counting, NaN-ignoring extremes, running extremes and norms inside a trace:
`np.bincount`, `np.nanmax` / `np.nanmin`, `np.ptp`, `ufunc.accumulate` (`np.add.accumulate`,
`np.maximum.accumulate`, ...), `np.linalg.norm` and `np.trapezoid`, each built from the IR's ops
in the order NumPy computes it.

Where NumPy raises or warns (a negative count in np.bincount, a slice of only NaNs in np.nanmax)
the compiled call fails and the Python function runs: NumPy's own error or warning. Registered
into `tracer.frontend.numpy_more`'s tables.
"""
from __future__ import annotations

from tracer.frontend import arrays, indexing, numpy_more, numpy_shapes
from tracer.frontend.arrays import convert, emit_elementwise, sizes_of, wrap
from tracer.frontend.builder import is_number, is_traced
from tracer.frontend.numpy_more import (
    all_true,
    as_array,
    axis_index,
    axis_tuple,
    fallback_unless,
    numpy_function,
    select,
    sum_of,
    unsupported_arguments,
)
from tracer.frontend.objects import TracedArray
from tracer.ir import BOOL, F32, F64, I64, INTEGERS, U64, ArrayType


# ------------------------------------------------------------------------------- bincount
@numpy_function("bincount", array_result=True)
def bincount(tracer, x, weights=None, minlength=0):
    """np.bincount: the count (or the sum of the weights) of each value 0..max(x), at least
    `minlength` of them; a negative value is NumPy's ValueError (from the Python function)."""
    b = tracer.builder
    xs = as_array(tracer, x, "np.bincount")
    if xs.rank != 1 or xs.type.dtype not in (BOOL, *INTEGERS) or xs.type.dtype == U64:   # (NumPy: no safe cast of u64)
        raise tracer.error("np.bincount of anything but a 1-D array of ints (not uint64) is not supported yet")
    v = convert(tracer, xs.value, I64)
    if not is_traced(minlength) and (type(minlength) is not int or minlength < 0):
        raise ValueError("'minlength' must not be negative")
    # no negative value, then max(x) + 1 (0 for an empty x; the min and max of nothing fail the
    # call, and the Python function runs)
    smallest, largest = (b.emit("reduce", (v,), kind=kind, axes=(0,), keepdims=False) for kind in ("min", "max"))
    fallback_unless(tracer, b.emit("ge", (smallest, b.const(0))))
    n = sizes_of(tracer, v)[0]
    length = b.emit("select", (b.value(b.compare("eq", n, 0)), b.const(0), b.value(b.binary("add", largest, 1))))
    length = b.emit("select", (b.value(b.compare("lt", length, minlength)), b.value(minlength), length))
    if weights is None:
        zeros, values = b.emit("full", (b.const(0), length), shape=(None,)), b.const(1)
    else:
        w = as_array(tracer, weights, "np.bincount")
        if w.type.shape != xs.type.shape and None not in (w.type.shape + xs.type.shape):
            raise ValueError("The weights and list don't have the same length.")
        fallback_unless(tracer, b.compare("eq", sizes_of(tracer, w.value)[0], n) if w.rank == 1 else False)
        zeros, values = b.emit("full", (b.const(0.0), length), shape=(None,)), convert(tracer, w.value, F64)
    if not is_traced(values):
        values = b.emit("full", (b.value(values), b.value(n)), shape=xs.type.shape)
    return wrap(tracer, b.emit("index_add", (zeros, v, values)))


# ------------------------------------------------------------------------------- nanmax, nanmin
def _nan_extreme(kind: str):
    def impl(tracer, a, axis=None, out=None, keepdims=False, initial=None, where=None):
        what = f"np.nan{kind}"
        unsupported_arguments(tracer, what, out=out, initial=initial, where=where)
        x = as_array(tracer, a, what)
        b = tracer.builder
        axes = axis_tuple(tracer, axis, x.rank)
        v = x.value
        if v.type.dtype in (F64, F32):
            nan = b.emit("isnan", (convert(tracer, v, F64),))
            # NumPy warns "All-NaN slice encountered" where a slice holds only NaNs: the Python function runs
            counted = sum_of(tracer, b.emit("not", (nan,)), axes) if axes else b.emit("not", (nan,))
            found = b.emit("gt", (counted, b.const(0 if axes else False)))
            fallback_unless(tracer, all_true(tracer, found) if isinstance(found.type, ArrayType) else found)
            v = select(tracer, nan, float("-inf") if kind == "max" else float("inf"), v, v.type.dtype)
        if not axes:
            return wrap(tracer, v if v is not x.value else b.emit("copy", (v,)))
        return wrap(tracer, b.emit("reduce", (v,), kind=kind, axes=axes, keepdims=bool(keepdims)))
    return impl


numpy_function("nanmax")(_nan_extreme("max"))
numpy_function("nanmin")(_nan_extreme("min"))


# ------------------------------------------------------------------------------- ptp
@numpy_function("ptp")
def ptp(tracer, a, axis=None, out=None, keepdims=False):
    """np.ptp: the maximum less the minimum along the axes, by NumPy's subtraction (integers wrap,
    a NaN gives NaN, inf - inf NumPy's warning); of bools NumPy's TypeError, and of an empty
    slice the reductions' ValueError (from the Python function)."""
    unsupported_arguments(tracer, "np.ptp", out=out)
    x = as_array(tracer, a, "np.ptp")
    if x.type.dtype == BOOL:
        raise TypeError("numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, "
                        "the `^` operator, or the logical_xor function instead.")
    axes = axis_tuple(tracer, axis, x.rank)
    b = tracer.builder
    if not axes:                       # a 0-d array, or axis=(): each element less itself
        high = low = x.value
    else:
        high, low = (b.emit("reduce", (x.value,), kind=k, axes=axes, keepdims=bool(keepdims)) for k in ("max", "min"))
    return arrays.binary(tracer, "sub", wrap(tracer, high), wrap(tracer, low))


# ------------------------------------------------------------------------------- accumulate
def _accumulate(name: str, kind: str):
    def impl(tracer, array, axis=0, dtype=None, out=None):
        what = f"np.{name}.accumulate"
        unsupported_arguments(tracer, what, dtype=dtype, out=out)
        x = as_array(tracer, array, what)
        if x.rank == 0:
            raise TypeError("cannot accumulate on a scalar")
        if x.type.dtype == BOOL:
            raise tracer.error(f"{what} of a bool array is not supported yet")
        axis = axis_index(tracer, axis, x.rank)
        return wrap(tracer, tracer.builder.emit("scan", (x.value,), kind=kind, axis=axis))
    return impl


for _name, _kind in (("add", "sum"), ("multiply", "prod"), ("maximum", "max"), ("minimum", "min")):
    numpy_function(f"{_name}.accumulate", array_result=True)(_accumulate(_name, _kind))


# ------------------------------------------------------------------------------- linalg.norm
@numpy_function("linalg.norm")
def norm(tracer, x, ord=None, axis=None, keepdims=False):
    """The 2-norm (Frobenius for a matrix): sqrt of the sum of squares, over all elements or
    along `axis`. (NumPy's whole-array norm sums with BLAS's dot, whose order differs from the
    sum's here: the last bit may differ.)"""
    if ord is not None and not (ord == 2 and axis is not None and not isinstance(axis, tuple)) and ord != "fro":
        raise tracer.error(f"np.linalg.norm(..., ord={ord!r}) is not supported yet (the 2-norm is)")
    a = as_array(tracer, x, "np.linalg.norm")
    v = convert(tracer, a.value, F64) if a.type.dtype in (I64, BOOL) else a.value
    t = v.type.dtype
    squares = emit_elementwise(tracer, "mul", [v, v], t)
    axes = axis_tuple(tracer, axis, a.rank)
    total = sum_of(tracer, squares, axes, keepdims) if axes else squares
    return wrap(tracer, emit_elementwise(tracer, "sqrt", [total], t))


# ------------------------------------------------------------------------------- trapezoid
@numpy_function("trapezoid", "trapz")
def trapezoid(tracer, y, x=None, dx=1.0, axis=-1):
    """NumPy's trapezoid rule: (d * (y[1:] + y[:-1]) / 2.0).sum(axis)."""
    ys = as_array(tracer, y, "np.trapezoid")
    if ys.type.dtype in (I64, BOOL):
        ys = wrap(tracer, convert(tracer, ys.value, F64))
    axis = axis_index(tracer, axis, ys.rank)

    def part(a: TracedArray, piece: slice):
        return _along(tracer, a, axis, piece)

    if x is None:
        d = dx if is_number(dx) or is_traced(dx) else as_array(tracer, dx, "np.trapezoid")
    else:
        xs = as_array(tracer, x, "np.trapezoid")
        if xs.rank == 1:
            d = arrays.binary(tracer, "sub", _along(tracer, xs, 0, slice(1, None)), _along(tracer, xs, 0, slice(None, -1)))
            if ys.rank > 1:
                shape = [1] * ys.rank
                shape[axis] = -1
                d = arrays.reshape(tracer, d, tuple(shape))
        else:
            d = arrays.binary(tracer, "sub", part(xs, slice(1, None)), part(xs, slice(None, -1)))
    pairs = arrays.binary(tracer, "add", part(ys, slice(1, None)), part(ys, slice(None, -1)))
    terms = arrays.binary(tracer, "div", arrays.binary(tracer, "mul", d, pairs), 2.0)
    value = terms.value if isinstance(terms, TracedArray) else terms
    return wrap(tracer, sum_of(tracer, value, (axis,)))


def _along(tracer, x: TracedArray, axis: int, piece: slice) -> TracedArray:
    """x[..., piece, ...], `piece` on `axis`."""
    return indexing.subscript(tracer, x, numpy_shapes.along(x.rank, axis, piece))


# ------------------------------------------------------------------------------- diagflat, polyval
@numpy_function("diagflat", array_result=True)
def diagflat(tracer, v, k=0):
    """np.diag of the flattened input."""
    return numpy_shapes.diag(tracer, arrays.reshape(tracer, as_array(tracer, v, "np.diagflat"), (-1,)), k)


@numpy_function("polyval")
def polyval(tracer, p, x):
    """NumPy's Horner loop, y = y * x + c for each coefficient c (an np.float64 or np.int64) from
    the highest power, starting from zeros like x: for coefficients in a list or tuple, or an
    array whose length the trace knows."""
    if type(p) in (list, tuple):
        p = wrap(tracer, arrays.array_from(tracer, p))
    if not isinstance(p, TracedArray):
        raise tracer.error(f"np.polyval of a {type(p).__name__} is not supported")
    if p.rank != 1 or p.type.shape[0] is None:
        raise tracer.error("np.polyval with coefficients in an array of run-time length is not supported "
                           "yet (pass a list or tuple)")
    xs = as_array(tracer, x, "np.polyval")
    b = tracer.builder
    zero = {F64: 0.0, F32: 0.0, I64: 0, BOOL: False}[xs.type.dtype]
    fill = convert(tracer, zero, xs.type.dtype)
    y = wrap(tracer, b.emit("full", (b.value(fill), *(b.value(n) for n in sizes_of(tracer, xs.value))),
                            shape=xs.type.shape))
    for i in range(p.type.shape[0]):
        product = arrays.binary(tracer, "mul", y, xs)
        value = product.value if isinstance(product, TracedArray) else product
        if arrays.kind(value) == F32 and p.type.dtype in (F64, I64):   # NEP 50: the np.float64 / np.int64
            product = wrap(tracer, convert(tracer, value, F64))         # coefficient makes it float64
        y = arrays.binary(tracer, "add", product, indexing.subscript(tracer, p, i))
    return y


# ------------------------------------------------------------------------------- interp
@numpy_function("interp")
def interp(tracer, x, xp, fp, left=None, right=None, period=None):
    """np.interp as NumPy's compiled loop computes it: for x in [xp[j], xp[j+1]),
    slope * (x - xp[j]) + fp[j] (from the other end where that is NaN), fp[j] where x == xp[j],
    `left` / `right` outside, NaN for NaN (float64 xp and fp, increasing, as NumPy assumes)."""
    unsupported_arguments(tracer, "np.interp", period=period)
    b = tracer.builder
    xs = as_array(tracer, x, "np.interp")
    xp_, fp_ = (as_array(tracer, v, "np.interp") for v in (xp, fp))
    if xp_.rank != 1 or fp_.rank != 1:
        raise ValueError("object too deep for desired array" if max(xp_.rank, fp_.rank) > 1 else
                         "object of too small depth for desired array")
    xv, dx, dy = (convert(tracer, v.value, F64) for v in (xs, xp_, fp_))
    n = sizes_of(tracer, dx)[0]
    if None not in (xp_.type.shape[0], fp_.type.shape[0]) and xp_.type.shape != fp_.type.shape:
        raise ValueError("fp and xp are not of the same length.")
    fallback_unless(tracer, b.compare("eq", n, sizes_of(tracer, dy)[0]))      # NumPy's ValueError
    fallback_unless(tracer, b.compare("gt", n, 0))                            # (array of sample points is empty)
    last = b.binary("sub", n, 1)

    def at(values, index):                     # values[index] for an array of indices in [0, n)
        return b.emit("index_select", (values, index))

    def full(v):
        return b.emit("full", (b.value(v), *(b.value(s) for s in sizes_of(tracer, xv))), shape=xv.type.shape)

    low = at(dy, full(0)) if left is None else full(convert(tracer, left, F64))
    high = at(dy, full(last)) if right is None else full(convert(tracer, right, F64))
    j = b.emit("sub", (b.emit("searchsorted", (dx, xv), side="right"), b.value(full(1))))
    inner = b.emit("select", (b.emit("lt", (j, b.value(full(0)))), full(0), j))
    inner = b.emit("select", (b.emit("gt", (inner, full(b.binary("sub", n, 2)))), full(b.binary("sub", n, 2)), inner))
    inner = b.emit("select", (b.emit("lt", (inner, full(0))), full(0), inner))      # (n == 1: 0)
    nxt = b.emit("select", (b.emit("lt", (b.emit("add", (inner, full(1))), full(n))),
                            b.emit("add", (inner, full(1))), inner))
    x0, x1, y0, y1 = at(dx, inner), at(dx, nxt), at(dy, inner), at(dy, nxt)
    slope = b.emit("div", (b.emit("sub", (y1, y0)), b.emit("sub", (x1, x0))))
    forward = b.emit("add", (b.emit("mul", (slope, b.emit("sub", (xv, x0)))), y0))
    backward = b.emit("add", (b.emit("mul", (slope, b.emit("sub", (xv, x1)))), y1))
    value = b.emit("select", (b.emit("isnan", (forward,)), backward, forward))
    value = b.emit("select", (b.emit("isnan", (value,)), b.emit("select", (b.emit("eq", (y0, y1)), y0, value)), value))
    value = b.emit("select", (b.emit("eq", (x0, xv)), y0, value))             # x on a sample point
    j_last = b.emit("eq", (j, full(last)))
    value = b.emit("select", (j_last, at(dy, full(last)), value))
    value = b.emit("select", (b.emit("lt", (xv, at(dx, full(0)))), low, value))
    value = b.emit("select", (b.emit("gt", (xv, at(dx, full(last)))), high, value))
    value = b.emit("select", (b.emit("isnan", (xv,)), xv, value))
    return wrap(tracer, value)


# ------------------------------------------------------------------------------- histogram
@numpy_function("histogram")
def histogram(tracer, a, bins=10, range=None, density=None, weights=None):
    """np.histogram(a, bins=n, range=None or (lo, hi)) as NumPy's equal-bins path computes it:
    edges = np.linspace(lo, hi, n + 1) (lo, hi = a.min(), a.max(), widened by 0.5 where equal),
    each value's bin from ((v - lo) / (hi - lo)) * n then corrected against the edges, values
    outside [lo, hi] left out. A range NumPy refuses (not finite: NaN in `a`) fails the call, and
    the Python function raises NumPy's ValueError."""
    unsupported_arguments(tracer, "np.histogram", density=density, weights=weights)
    if type(bins) is not int:
        raise tracer.error("np.histogram with bins other than a number of equal bins is not supported yet")
    if bins < 1:
        raise ValueError("`bins` must be positive, when an integer")
    b = tracer.builder
    x = as_array(tracer, a, "np.histogram")
    if x.type.dtype == F32:
        raise tracer.error("np.histogram of a float32 array is not supported yet")
    v = convert(tracer, arrays.reshape(tracer, x, (-1,)).value, F64)
    if range is None:
        first, last = (b.emit("reduce", (v,), kind=k, axes=(0,), keepdims=False) for k in ("min", "max"))
    else:
        first, last = (convert(tracer, e, F64) for e in range)
        if not is_traced(first) and not is_traced(last) and first > last:
            raise ValueError("max must be larger than min in range parameter.")
    finite = [b.emit("isfinite", (b.value(e),)) for e in (first, last)]
    fallback_unless(tracer, b.emit("select", (finite[0], finite[1], b.const(False))))
    fallback_unless(tracer, b.emit("le", (b.value(first), b.value(last))))
    same = b.emit("eq", (b.value(first), b.value(last)))
    first = b.emit("select", (same, b.value(b.binary("sub", first, 0.5)), b.value(first)))
    last = b.emit("select", (same, b.value(b.binary("add", last, 0.5)), b.value(last)))
    edges = numpy_more.linspace(tracer, first, last, bins + 1)
    keep = b.emit("select", (b.emit("ge", (v, b.value(first))), b.emit("le", (v, b.value(last))), b.const(False)))
    inside = b.emit("select", (keep, v, b.value(first)))        # (left out below: any bin will do)
    scaled = emit_elementwise(tracer, "mul", [emit_elementwise(tracer, "div", [
        emit_elementwise(tracer, "sub", [inside, first], F64), b.binary("sub", last, first)], F64), bins], F64)
    index = b.emit("to_i64", (scaled,))
    index = emit_elementwise(tracer, "sub", [index, b.emit("eq", (index, b.const(bins)))], I64)

    def edge(i):
        return b.emit("index_select", (edges.value, i))
    index = emit_elementwise(tracer, "sub", [index, b.emit("lt", (inside, edge(index)))], I64)
    up = b.emit("select", (b.emit("ge", (inside, edge(emit_elementwise(tracer, "add", [index, 1], I64)))),
                           b.emit("ne", (index, b.const(bins - 1))), b.const(False)))
    index = emit_elementwise(tracer, "add", [index, up], I64)
    zeros = b.emit("full", (b.const(0), b.const(bins)), shape=(bins,))
    counts = b.emit("index_add", (zeros, index, convert(tracer, keep, I64)))
    return wrap(tracer, counts), edges
