"""Sorting inside a trace: `np.sort`, `np.argsort` (and `x.argsort()`), and the order statistics
built on a sort, `np.median`, `np.percentile` and `np.quantile` (method 'linear', q a Python
number or a list of them), for float64, float32 and int64 arrays, along one axis, several
(moved last and merged, as NumPy's _ureduce does) or the flattened array (axis=None).

Registered into `tracer.frontend.numpy_more`'s tables. The sort is the IR's `sort` / `argsort`
(tracer/ir/sort_ops.py) of the kind asked for, NaNs last, as NumPy orders them; compiled code
calls NumPy's own sort function of that kind, so ties (equal elements, -0.0 and 0.0, NaNs of other
payloads) come out in NumPy's order too, and `np.unique` sorts as NumPy's does. Median and
percentiles pick elements by position from a quicksort where NumPy partitions: there a -0.0 may
come out where NumPy picks a 0.0, or the other way round.

Median and percentiles follow NumPy's own algorithm step by step on the sorted data (the same
IEEE operations in the same dtype, so results agree bit for bit; float16 data is sorted as its
exact float32 values):
- median: np.mean of the middle element or two: (0.0 + a) / 1 or (0.0 + a + b) / 2 (NumPy's sum
  starts from 0.0: -0.0 comes out 0.0), in the array's float dtype, float64 for ints; a slice
  whose last element (sorted) is NaN gives that NaN. Of float16, NumPy's mean adds in float32 and
  divides in float64: the same as (a + b) / 2 in float64 rounded once to float16, which it is here;
- percentile / quantile: NumPy's `_quantile` with `_lerp`: the virtual index (n - 1) * q, its
  neighbours (both the last element at or past n - 1), gamma, and a + (b - a) * gamma, or
  b - (b - a) * (1 - gamma) where gamma >= 0.5 (each product rounded: no FMA); a Python float q
  is "weak" (float32 and float16 data stay float32 and float16: gamma rounded to it, each step
  in it), a list is not (b - a in the data's dtype, then float64); an int q of np.quantile picks
  an element (the array's dtype).
Where NumPy warns or raises, the compiled call fails and the Python function gives NumPy's own
result and warning: an empty slice (median: NaN and "Mean of empty slice"; percentile: an
IndexError), and an IEEE invalid operation or overflow in the arithmetic (inf - inf, a sum past
the largest float: NumPy's "invalid value" / "overflow encountered" RuntimeWarnings; percentiles
also fail where an inf is one of the two elements interpolated, which may warn).
"""
from __future__ import annotations

import math

from tracer.frontend import arrays, indexing
from tracer.frontend.arrays import convert, emit_elementwise, sizes_of, wrap
from tracer.frontend.builder import is_traced
from tracer.frontend.numpy_more import (
    METHODS,
    as_array,
    axis_index,
    axis_tuple,
    fallback_unless,
    numpy_function,
    unsupported_arguments,
)
from tracer.frontend.numpy_scalars import made_by_numpy
from tracer.frontend.numpy_shapes import join
from tracer.frontend.objects import TracedArray
from tracer.ir import BOOL, F16, F32, F64, I64, NUMPY_DTYPE_NAMES, ArrayType

METHODS.update({"argsort", "sort"})      # x.argsort() is np.argsort(x); x.sort() sorts x in place
KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _sortable(tracer, a, what: str):
    x = as_array(tracer, a, what)
    if x.type.dtype not in (F64, F32, I64):
        raise tracer.error(f"{what} of an array of {x.type.dtype} is not supported yet (float64, float32, int64)")
    return x


def _ordered(tracer, a, what: str):
    """What _Lines sorts: the array, float16 as its exact float32 values (their order)."""
    if isinstance(a, TracedArray) and a.type.dtype == F16:
        return wrap(tracer, convert(tracer, a.value, F32))
    return _sortable(tracer, a, what)


# ------------------------------------------------------------------------------- sort, argsort
def _sorted(tracer, op, a, axis, kind, order, stable, what):
    unsupported_arguments(tracer, what, order=order)
    if kind not in KINDS or stable not in (None, True, False):
        raise tracer.error(f"{what}(..., kind={kind!r}) is not supported")
    x = _sortable(tracer, a, what)
    if axis is None:
        x, axis = arrays.reshape(tracer, x, (-1,)), 0
    else:
        axis = axis_index(tracer, axis, x.rank)
    kind = "stable" if stable or kind in ("stable", "mergesort") else "quicksort"   # (NumPy 2 heapsorts so too)
    return wrap(tracer, tracer.builder.emit(op, (x.value,), axis=axis, kind=kind))


@numpy_function("sort", array_result=True)
def sort(tracer, a, axis=-1, kind=None, order=None, *, stable=None):
    return _sorted(tracer, "sort", a, axis, kind, order, stable, "np.sort")


def sort_in_place(tracer, x, axis=-1, kind=None, order=None, *, stable=None):
    """x.sort(): x's contents sorted along the axis, in place (an argument is written back)."""
    if axis is None:
        raise tracer.error("x.sort(axis=None) is not supported (NumPy sorts the flattened copy)")
    arrays.assign(tracer, x, _sorted(tracer, "sort", x, axis, kind, order, stable, "x.sort").value)


@numpy_function("unique", array_result=True)
def unique(tracer, ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):
    """np.unique(x): the sorted distinct elements of the flattened array (NaNs one, at the end:
    equal_nan), as a sort, then the elements that differ from the one before them. With
    return_index, return_inverse or return_counts, as NumPy: an argsort `perm` (stable, as
    NumPy's with return_index; without it NumPy's quicksort may put -0.0 or 0.0 first, and so
    which zero stands for both), the elements in its order, and from the places where a new
    value starts, the first index of each value, each element's place among the values (the
    input's shape), and the counts."""
    unsupported_arguments(tracer, "np.unique", axis=axis)
    if not equal_nan:
        raise tracer.error("np.unique(..., equal_nan=False) is not supported yet")
    b = tracer.builder
    x = _sortable(tracer, ar, "np.unique")
    flat = arrays.reshape(tracer, x, (-1,)).value
    extras = return_index or return_inverse or return_counts
    if return_index or return_inverse:     # (as NumPy: counts alone need only the sorted values)
        perm = b.emit("argsort", (flat,), axis=0, kind="stable" if return_index else "quicksort")   # NumPy's
        u = wrap(tracer, b.emit("index_select", (flat, perm)))
    else:
        u = wrap(tracer, b.emit("sort", (flat,), axis=0, kind="quicksort"))
    head, tail = (indexing.subscript(tracer, u, part) for part in (slice(None, -1), slice(1, None)))
    new = arrays.binary(tracer, "ne", tail, head)        # where a value differs from the one before it
    if x.type.dtype != I64:                    # NaN != NaN, but NaNs are one value here
        nans = [emit_elementwise(tracer, "isnan", [convert(tracer, v.value, F64)], F64) for v in (tail, head)]
        both = wrap(tracer, b.emit("select", (nans[0], nans[1], b.const(False))))
        new = arrays.binary(tracer, "and", new, arrays.unary(tracer, "invert", both))
    n = sizes_of(tracer, u.value)[0]
    one = min(n, 1) if type(n) is int else b.emit("min", (n, b.const(1)))
    first = wrap(tracer, b.emit("full", (b.const(True), b.value(one)), shape=(None,)))
    keep = join(tracer, [first, new], 0).value           # (the first element starts a value, if there is one)
    values = wrap(tracer, b.emit("mask_select", (u.value, keep)))
    if not extras:
        return values
    results = [values]
    starts = b.emit("mask_select", (b.emit("iota", (b.value(n),), shape=u.type.shape), keep))
    if return_index:
        results.append(wrap(tracer, b.emit("index_select", (perm, starts))))
    if return_inverse:
        position = emit_elementwise(tracer, "sub", [b.emit("scan", (convert(tracer, keep, I64),), kind="sum", axis=0), 1], I64)
        inverse = b.emit("index_update", (b.emit("full", (b.const(0), b.value(n)), shape=u.type.shape), perm, position))
        results.append(arrays.reshape(tracer, wrap(tracer, inverse), tuple(sizes_of(tracer, x.value))))
    if return_counts:               # each start's distance to the next start (the last: to n)
        following = indexing.subscript(tracer, wrap(tracer, starts), slice(1, None))
        ends = join(tracer, [following, wrap(tracer, b.emit("full", (b.value(n), b.const(1)), shape=(1,)))], 0)
        ends = indexing.subscript(tracer, ends, slice(0, sizes_of(tracer, starts)[0]))     # (none for no starts)
        results.append(wrap(tracer, b.emit("sub", (ends.value, starts))))
    return tuple(results)


def _common(tracer, *arrays_):
    """The arrays in their common dtype (NumPy's promotion), which must be sortable."""
    dtype = arrays.promote(tracer, *(x.value for x in arrays_))
    if dtype not in (F64, F32, I64):
        raise tracer.error(f"searching arrays of {dtype} is not supported yet")
    return [wrap(tracer, convert(tracer, x.value, dtype)) for x in arrays_]


@numpy_function("searchsorted")
def searchsorted(tracer, a, v, side="left", sorter=None):
    """np.searchsorted(a, v, side): where each value goes in the sorted 1-d array a."""
    unsupported_arguments(tracer, "np.searchsorted", sorter=sorter)
    if side not in ("left", "right"):
        raise tracer.error(f"np.searchsorted(..., side={side!r}) is not supported")
    x, values = as_array(tracer, a, "np.searchsorted"), as_array(tracer, v, "np.searchsorted")
    if x.rank != 1:
        raise tracer.error("np.searchsorted of an array that is not 1-d is not supported")
    x, values = _common(tracer, x, values)
    return wrap(tracer, tracer.builder.emit("searchsorted", (x.value, values.value), side=side))


@numpy_function("digitize")
def digitize(tracer, x, bins, right=False):
    """np.digitize: searchsorted of monotonic bins (of decreasing ones, reversed); bins that are
    neither, or hold a NaN, run the Python function (NumPy's ValueError)."""
    b = tracer.builder
    x, edges = as_array(tracer, x, "np.digitize"), as_array(tracer, bins, "np.digitize")
    if edges.rank != 1:
        raise ValueError("object too deep for desired array")
    x, edges = _common(tracer, x, edges)
    side = "left" if right else "right"
    low, high = indexing.subscript(tracer, edges, slice(None, -1)), indexing.subscript(tracer, edges, slice(1, None))

    def none(op, p, q):                    # no pair of neighbours with p <op> q
        return b.emit("eq", (b.emit("reduce", (b.emit("to_i64", (arrays.binary(tracer, op, p, q).value,)),),
                                    kind="sum", axes=(0,), keepdims=False), b.const(0)))
    increasing, decreasing = none("gt", low, high), none("lt", low, high)
    if edges.type.dtype != I64:
        nans = b.emit("to_i64", (emit_elementwise(tracer, "isnan", [convert(tracer, edges.value, F64)], F64),))
        fallback_unless(tracer, b.emit("eq", (b.emit("reduce", (nans,), kind="sum", axes=(0,), keepdims=False),
                                              b.const(0))))
    fallback_unless(tracer, b.emit("select", (increasing, b.const(True), decreasing)))
    up = b.emit("searchsorted", (edges.value, x.value), side=side)
    backwards = indexing.subscript(tracer, edges, slice(None, None, -1))
    down = emit_elementwise(tracer, "sub", [sizes_of(tracer, edges.value)[0],
                                            b.emit("searchsorted", (backwards.value, x.value), side=side)], I64)
    chosen = b.emit("select", tuple(arrays.broadcast(tracer, [increasing, up, down])))
    return wrap(tracer, chosen)


@numpy_function("argsort", array_result=True)
def argsort(tracer, a, axis=-1, kind=None, order=None, *, stable=None):
    return _sorted(tracer, "argsort", a, axis, kind, order, stable, "np.argsort")


# ------------------------------------------------------------------------------- helpers
class _Lines:
    """An array sorted along one axis `axis` (the reduced axes of `a`, moved last and merged as
    NumPy's _ureduce does; axis=None: flattened), to read elements at positions along it."""

    def __init__(self, tracer, a, axis, what: str):
        b = tracer.builder
        x = _ordered(tracer, a, what)
        if x.rank == 0:
            raise tracer.error(f"{what} of a 0-d array is not supported yet")
        self.rank_in = x.rank
        self.reduced = tuple(range(x.rank)) if axis is None else axis_tuple(tracer, axis, x.rank)
        if axis is None:
            x, ax = arrays.reshape(tracer, x, (-1,)), 0
        elif len(self.reduced) == 1:
            ax = self.reduced[0]
        else:
            keep = [d for d in range(x.rank) if d not in self.reduced]
            sizes = sizes_of(tracer, x.value)
            x = arrays.transpose(tracer, x, tuple(keep) + self.reduced)
            x, ax = arrays.reshape(tracer, x, tuple(sizes[d] for d in keep) + (-1,)), len(keep)
        self.tracer, self.axis = tracer, ax
        self.dtype = F16 if isinstance(a, TracedArray) and a.type.dtype == F16 else x.type.dtype  # (the data's)
        self.n = sizes_of(tracer, x.value)[ax]
        self.sorted = b.emit("sort", (x.value,), axis=ax, kind="quicksort")    # (NumPy partitions: unstable too)
        if x.rank > 1 and ax != 0:
            perm = (ax,) + tuple(d for d in range(x.rank) if d != ax)
            self.front = b.emit("transpose", (self.sorted,), perm=perm)
        else:
            self.front = self.sorted

    def at(self, i):
        """The elements at position i along the axis (a scalar for a 1-d array)."""
        b = self.tracer.builder
        op = "load" if self.front.type.rank == 1 else "index"
        return b.emit(op, (self.front, b.value(i)))

    def fail_if_empty(self):
        """An empty axis fails the call (NumPy warns or raises: the Python function does)."""
        if is_traced(self.n) or self.n == 0:
            fallback_unless(self.tracer, self.tracer.builder.compare("ne", self.tracer.builder.value(self.n), 0))

    def with_nans(self, result, dtype):
        """NumPy's _median_nancheck: where the last element of a line is NaN, that NaN."""
        if self.dtype == I64:
            return result
        last = self.at(self.tracer.builder.binary("sub", self.n, 1))
        return _select(self.tracer, _isnan(self.tracer, last), last, result, dtype)

    def shaped(self, result, keepdims):
        """The result with the reduced axes kept as 1s (keepdims)."""
        if not keepdims:
            return result
        tracer = self.tracer
        kept = [n for n in (sizes_of(tracer, result) if _is_array(result) else [])]
        sizes, it = [], iter(kept)
        for d in range(self.rank_in):
            sizes.append(1 if d in self.reduced else next(it))
        return arrays.reshape(tracer, as_array(tracer, result, "keepdims"), tuple(sizes)).value


def _is_array(v) -> bool:
    return is_traced(v) and isinstance(v.type, ArrayType)


def _select(tracer, cond, x, y, dtype):
    """np.where(cond, x, y) of `dtype` operands (float32 selected as float64: exact)."""
    b = tracer.builder
    if not is_traced(cond):
        return convert(tracer, x if cond else y, dtype)
    compute = F64 if dtype in (F32, F16) else dtype
    values = [b.value(cond)] + [b.value(convert(tracer, convert(tracer, v, dtype), compute)) for v in (x, y)]
    return convert(tracer, b.emit("select", tuple(arrays.broadcast(tracer, values))), dtype)


def _test(tracer, op, x):
    b = tracer.builder
    return b.emit(op, (b.value(convert(tracer, x, F64)),))


def _isnan(tracer, x):
    return _test(tracer, "isnan", x)


def _and(tracer, p, q):
    return _select(tracer, p, q, False, BOOL)


def _or(tracer, p, q):
    return _select(tracer, p, True, q, BOOL)


def _not(tracer, p):
    return tracer.builder.emit("not", (p,))


def _ieee_flag(tracer, result, *operands):
    """Where computing `result` from `operands` raised an IEEE invalid operation (a NaN from
    numbers) or overflow (an inf from finite numbers): NumPy warns there."""
    invalid, overflow = _isnan(tracer, result), _test(tracer, "isinf", result)
    for x in operands:
        if not is_traced(x) and math.isfinite(x):
            continue
        invalid = _and(tracer, invalid, _not(tracer, _isnan(tracer, x)))
        overflow = _and(tracer, overflow, _test(tracer, "isfinite", x))
    return _or(tracer, invalid, overflow)


def _unfused(tracer, product):
    """A product NumPy rounds before adding it: kept out of FMA fusion, which fuses an f64 `mul`
    feeding an add or sub (in the elementwise loops fusion makes too): a select of it is the
    same number, and no `mul`."""
    if is_traced(product) and arrays.kind(product) == F64:
        b = tracer.builder
        return b.emit("select", (_isnan(tracer, product), product, product))
    return product


def _fail_where(tracer, flags):
    """Fail the compiled call if any of `flags` (bool scalars or arrays) is true anywhere."""
    b = tracer.builder
    for flag in flags:
        if _is_array(flag):
            count = b.emit("reduce", (convert(tracer, flag, I64),), kind="sum", axes=tuple(range(flag.type.rank)),
                           keepdims=False)
            fallback_unless(tracer, b.emit("eq", (count, b.const(0))))
        else:
            fallback_unless(tracer, _not(tracer, flag))


# ------------------------------------------------------------------------------- median
@numpy_function("median")
def median(tracer, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    b = tracer.builder
    unsupported_arguments(tracer, "np.median", out=out, overwrite_input=overwrite_input)
    lines = _Lines(tracer, a, axis, "np.median")
    n, dtype = lines.n, lines.dtype
    lines.fail_if_empty()              # NumPy: NaN and "Mean of empty slice" (the Python function)
    t = F64 if dtype in (I64, F16) else dtype
    low = convert(tracer, lines.at(b.binary("floordiv", b.binary("sub", n, 1), 2)), t)
    high = convert(tracer, lines.at(b.binary("floordiv", n, 2)), t)
    total = emit_elementwise(tracer, "add", [low, high], t)
    # np.mean's add.reduce starts from 0.0 (so a -0.0 sum is 0.0), then divides by the count
    mean = emit_elementwise(tracer, "div", [emit_elementwise(tracer, "add", [total, 0.0], t), 2.0], t)
    low = emit_elementwise(tracer, "add", [low, 0.0], t)
    odd = b.compare("eq", b.binary("mod", n, 2), 1)
    if dtype != I64:                     # (ints: sums of float64 conversions are finite)
        flag = _ieee_flag(tracer, total, low, high)       # (low + 0.0 is low here: the same flags)
        _fail_where(tracer, [_and(tracer, _not(tracer, odd) if is_traced(odd) else (not odd), flag)])
    result = lines.with_nans(_select(tracer, odd, low, mean, t), t)
    return wrap(tracer, lines.shaped(convert(tracer, result, dtype) if dtype == F16 else result, keepdims))


# ------------------------------------------------------------------------------- quantiles
def _quantiles(tracer, q, what: str, scale: float):
    """q as NumPy sees it: a list of (value divided by `scale`, whether it is an int: a virtual
    index with no interpolation), whether q is weak (a Python number: float32 data stays
    float32) and whether it is one number. Numbers the trace knows are checked now (NumPy's
    ValueError); traced ones at run time (out of range: the Python function raises it)."""
    b = tracer.builder
    message = "Percentiles must be in the range [0, 100]" if scale != 1 else "Quantiles must be in the range [0, 1]"
    one = type(q) not in (list, tuple)
    items = [q] if one else list(q)
    if not items or any(not (type(x) in (int, float) or (is_traced(x) and x.type in (F64, I64))) for x in items):
        raise tracer.error(f"{what} with q other than a number or a list of numbers is not supported yet")
    integer = scale == 1 and all(arrays.kind(x) == I64 for x in items)     # np.asanyarray(q)'s dtype
    weak = one and (type(q) in (int, float) or not made_by_numpy(tracer, q))
    values = []
    for x in items:
        if not integer:
            x = b.convert(x, F64) if is_traced(x) else float(x)
            x = b.binary("div", x, float(scale)) if scale != 1 else x          # np.true_divide(q, 100)
        if is_traced(x):
            fallback_unless(tracer, _and(tracer, b.compare("ge", x, 0), b.compare("le", x, 1)))
        elif not 0 <= x <= 1:
            raise ValueError(message)
        values.append((x, integer))
    return values, weak, one


def _quantile_of(tracer, lines: _Lines, q, integer: bool, weak: bool):
    """NumPy's _quantile (method 'linear') for one q (a number or a traced f64 or i64)."""
    b = tracer.builder
    n, dtype = lines.n, lines.dtype
    last_index = b.binary("sub", n, 1)
    if integer:                                 # an integer virtual index: take the element
        return lines.with_nans(lines.at(b.binary("mul", last_index, q)), dtype), dtype
    if is_traced(n) or is_traced(q):
        virtual = b.binary("mul", b.convert(last_index, F64), q)
        above = b.compare("ge", virtual, b.convert(last_index, F64))
        floor = b.emit("to_i64", (virtual,))       # virtual >= 0: truncation is floor
    else:
        virtual = float(last_index) * q
        above = virtual >= float(last_index)
        floor = math.floor(virtual)
    previous_f = _select(tracer, above, -1.0, b.convert(floor, F64), F64)
    previous = _select(tracer, above, last_index, floor, I64)
    following = _select(tracer, above, last_index, b.binary("add", floor, 1), I64)
    gamma = b.binary("sub", virtual, previous_f)
    t = dtype if dtype in (F32, F16) and weak else F64
    low, high = lines.at(previous), lines.at(following)
    diff = emit_elementwise(tracer, "sub", [high, low], dtype)
    step = _unfused(tracer, emit_elementwise(tracer, "mul", [diff, gamma], t))
    lerp = emit_elementwise(tracer, "add", [low, step], t)
    rest = b.binary("sub", 1.0, gamma)
    back = _unfused(tracer, emit_elementwise(tracer, "mul", [diff, rest], t))
    from_high = emit_elementwise(tracer, "sub", [high, back], t)
    upper = b.compare("ge", gamma, 0.5)
    result = _select(tracer, upper, from_high, lerp, t)
    if dtype != I64:
        # NumPy warns where an operation gives NaN from numbers or inf from finite numbers. With a
        # NaN among low and high every result is a quiet NaN; with both finite, a warning makes
        # the result inf or NaN (and only one does); an inf among them may warn: the call fails
        quiet = _or(tracer, _or(tracer, _isnan(tracer, low), _isnan(tracer, high)), _test(tracer, "isfinite", result))
        _fail_where(tracer, [_not(tracer, quiet)])
    return lines.with_nans(result, t), t


def _quantile(tracer, what, scale, a, q, axis, out, overwrite_input, method, keepdims, weights, interpolation):
    b = tracer.builder
    unsupported_arguments(tracer, what, out=out, overwrite_input=overwrite_input, weights=weights, interpolation=interpolation)
    if method != "linear":
        raise tracer.error(f"{what}(..., method={method!r}) is not supported yet (only 'linear')")
    qs, weak, one = _quantiles(tracer, q, what, scale)
    lines = _Lines(tracer, a, axis, what)
    if lines.dtype in (F32, F16) and not weak and one:
        raise tracer.error(f"{what} of {NUMPY_DTYPE_NAMES[lines.dtype]} data with q a NumPy scalar is not supported "
                           "yet (NumPy's result dtype depends on the data there)")
    lines.fail_if_empty()                # NumPy: an IndexError (the Python function raises it)
    if one:
        result, _ = _quantile_of(tracer, lines, *qs[0], weak)
        return wrap(tracer, lines.shaped(result, keepdims))
    if lines.front.type.rank != 1 or keepdims or type(q[0]) in (list, tuple):
        raise tracer.error(f"{what} of a list of q is supported only for a result per q that is a number")
    values = [_quantile_of(tracer, lines, x, integer, weak) for x, integer in qs]
    t = values[0][1]
    return wrap(tracer, b.emit("pack", tuple(b.value(convert(tracer, v, t)) for v, _ in values), shape=(len(values),)))


@numpy_function("percentile")
def percentile(tracer, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               weights=None, interpolation=None):
    return _quantile(tracer, "np.percentile", 100, a, q, axis, out, overwrite_input, method, keepdims, weights,
                     interpolation)


@numpy_function("quantile")
def quantile(tracer, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             weights=None, interpolation=None):
    return _quantile(tracer, "np.quantile", 1, a, q, axis, out, overwrite_input, method, keepdims, weights,
                     interpolation)
