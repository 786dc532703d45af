"""Boolean masks inside a trace: `x[mask]`, `x[mask] = v` (and `x[mask] += v`), `np.nonzero`
(and `x.nonzero()`), `np.flatnonzero`, `np.argwhere`, `np.extract` and `np.compress`.

The IR's `mask_select` and `mask_update` (tracer/ir/mask_ops.py) do the work; their results have
a first size known only at run time (the number of true elements). As in NumPy:
- `x[mask]` takes a bool array of x's shape, or of its leading sizes (then each true element
  selects a sub-array), and gives a new array of the selected elements in C order; a mask
  computed in the trace (`x[x > 0]`) is one too;
- `x[mask] = v` writes a scalar into every selected element, or the rows of an array of
  (count, *rest) values (an array of the rest's shape, or with a first size of 1 the trace
  knows, is broadcast first); values are cast as `x[i] = v` casts them (an argument array is
  written in place: written back into the caller's array when the function returns);
- np.nonzero gives one int64 index array per axis, np.argwhere a (count, ndim) array of them,
  np.flatnonzero those of the flattened array; the elements tested are x != 0 (NaN is true);
- np.extract(cond, x) and np.compress(cond, x, axis) select by a condition of the (flattened)
  array's size, or of the axis' length.
Sizes the trace knows that NumPy rejects raise NumPy's error now (IndexError "boolean index did
not match indexed array along axis 0; ...", "too many indices for array"); sizes known only at run
time that do not match fail the compiled call (SHAPE_MISMATCH), and the Python function runs and
raises NumPy's error (IndexError, or ValueError "NumPy boolean array indexing assignment cannot
assign 3 input values to the 2 output values where the mask is true"), or, for np.extract and
np.compress with a condition of another length, gives NumPy's own result.

Registered into `tracer.frontend.numpy_more`'s tables; `x[mask]` and `x[mask] = v` are dispatched
here from tracer/frontend/indexing.py (`subscript`, `store_item`) through `indexing.MASK_INDEXING`.
np.where(cond) with one argument is np.nonzero(cond) in NumPy, but np.where lives in numpy_api.
"""
from __future__ import annotations

from tracer.frontend import arrays, indexing
from tracer.frontend.arrays import emit_elementwise, operand, sizes_of, unwrap_0d, wrap
from tracer.frontend.numpy_more import METHODS, as_array, axis_index, numpy_function
from tracer.frontend.objects import TracedArray, array_unsupported
from tracer.ir import BOOL, F32, I64, ArrayType

METHODS.update({"nonzero"})      # x.nonzero() is np.nonzero(x)


def _check(tracer, x: TracedArray, mask: TracedArray) -> None:
    """NumPy's errors for a mask the trace knows does not fit x (IndexError)."""
    if mask.rank == 0:
        raise array_unsupported(tracer, "indexing with a 0-d bool array")
    if mask.rank > x.rank:
        raise IndexError(f"too many indices for array: array is {x.rank}-dimensional, but {mask.rank} were indexed")
    for axis, (m, n) in enumerate(zip(mask.type.shape, x.type.shape)):
        if m is not None and n is not None and m != n:
            raise IndexError(f"boolean index did not match indexed array along axis {axis}; size of axis is {n} "
                             f"but size of corresponding boolean axis is {m}")


def _select(tracer, x: TracedArray, mask: TracedArray) -> TracedArray:
    _check(tracer, x, mask)
    return wrap(tracer, tracer.builder.emit("mask_select", (x.value, mask.value)))


def _count(tracer, mask: TracedArray):
    """The number of true elements of `mask` (an i64 value)."""
    b = tracer.builder
    return b.emit("reduce", (b.emit("to_i64", (mask.value,)),), kind="sum", axes=tuple(range(mask.rank)),
                  keepdims=False)


# ------------------------------------------------------------------------------- x[mask]
def subscript(tracer, array: TracedArray, mask: TracedArray) -> TracedArray:
    """array[mask]: a new array of the selected elements (or sub-arrays)."""
    return _select(tracer, array, mask)


def store_item(tracer, array: TracedArray, mask: TracedArray, value) -> None:
    """array[mask] = value: the array's contents replaced by a copy with the selected elements
    written (arrays.assign: in place for a view, an argument, or inside a branch or loop)."""
    b = tracer.builder
    _check(tracer, array, mask)
    dtype = array.type.dtype
    rest = array.type.shape[mask.rank:]
    value = unwrap_0d(tracer, operand(tracer, value, "assignment"))
    value = arrays.cast_stored(tracer, value, dtype)
    if isinstance(value.type, ArrayType):
        rank, shape = 1 + len(rest), value.type.shape
        if value.type.rank > rank:
            raise array_unsupported(tracer, f"x[mask] = an array of {value.type.rank} dimensions (NumPy broadcasts "
                                            f"it to (count, ...) of {rank})")
        # broadcast to (count, *rest): a first size of 1 the trace knows (or none) repeats; an
        # unknown one must be count (else the call fails: the Python function broadcasts or raises)
        repeat = value.type.rank < rank or shape[0] == 1
        if repeat or shape[1:] != rest:
            first = _count(tracer, mask) if repeat else b.emit("dim", (value,), axis=0)
            sizes = [first] + sizes_of(tracer, array.value)[mask.rank:]
            static = (None if repeat else shape[0],) + rest
            value = b.emit("broadcast_in_dim", (value, *(b.value(s) for s in sizes)), shape=static,
                           dims=tuple(range(rank - value.type.rank, rank)))
    elif value.type == F32:          # (no float32 scalar operands outside arithmetic: as an array)
        sizes = [_count(tracer, mask)] + sizes_of(tracer, array.value)[mask.rank:]
        value = b.emit("full", (value, *(b.value(s) for s in sizes)), shape=(None,) + rest)
    new = b.emit("mask_update", (array.value, mask.value, value))
    arrays.assign(tracer, array, new)


indexing.MASK_INDEXING.update(subscript=subscript, store_item=store_item)


# ------------------------------------------------------------------------------- functions
def _truth(tracer, x: TracedArray) -> TracedArray:
    """x != 0 (NaN is true), a bool array."""
    if x.type.dtype == BOOL:
        return x
    return wrap(tracer, emit_elementwise(tracer, "ne", [x.value, 0], x.type.dtype))


def _positions(tracer, mask: TracedArray, axis: int, shape: tuple):
    """An i64 array of `shape` (mask's shape, then maybe more axes) whose element is its index
    along `axis`."""
    b = tracer.builder
    n = sizes_of(tracer, mask.value)[axis]
    line = b.emit("iota", (b.value(n),), shape=(mask.type.shape[axis],))
    sizes = sizes_of(tracer, mask.value) + list(shape[mask.rank:])
    if len(shape) == 1:
        return line
    return b.emit("broadcast_in_dim", (line, *(b.value(s) for s in sizes)), shape=shape, dims=(axis,))


def _nonzero(tracer, a, what: str) -> tuple:
    x = as_array(tracer, a, what)
    if x.rank == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() instead.")
    mask = _truth(tracer, x)
    b = tracer.builder
    return tuple(wrap(tracer, b.emit("mask_select", (_positions(tracer, mask, d, mask.type.shape), mask.value)))
                 for d in range(mask.rank))


@numpy_function("nonzero", array_result=True)
def nonzero(tracer, a):
    return _nonzero(tracer, a, "np.nonzero")


@numpy_function("flatnonzero", array_result=True)
def flatnonzero(tracer, a):
    return _nonzero(tracer, arrays.reshape(tracer, as_array(tracer, a, "np.flatnonzero"), (-1,)), "np.flatnonzero")[0]


@numpy_function("argwhere", array_result=True)
def argwhere(tracer, a):
    """The (count, ndim) indices: element [..., d] of a (mask.shape, ndim) array is its index
    along axis d (a sum of products by 0 and 1: exact), selected by the mask."""
    x = as_array(tracer, a, "np.argwhere")
    if x.rank == 0:
        raise tracer.error("np.argwhere of a 0-d array is not supported yet")
    mask = _truth(tracer, x)
    rank = mask.rank
    b = tracer.builder
    shape = mask.type.shape + (rank,)
    table = None
    for d in range(rank):
        unit = [0] * rank
        unit[d] = 1
        picks = b.emit("pack", tuple(b.const(u) for u in unit), shape=(rank,))
        term = emit_elementwise(tracer, "mul", [_positions(tracer, mask, d, shape), picks], I64)
        table = term if table is None else emit_elementwise(tracer, "add", [table, term], I64)
    return wrap(tracer, b.emit("mask_select", (table, mask.value)))


def _fits(tracer, x: TracedArray, mask: TracedArray, what: str) -> None:
    """A condition whose length the trace knows is not the array's: NumPy pads or truncates it."""
    for m, n in zip(mask.type.shape, x.type.shape):
        if m is not None and n is not None and m != n:
            raise tracer.error(f"{what} with a condition of another length than the array's is not supported")


@numpy_function("extract", array_result=True)
def extract(tracer, condition, arr):
    x = arrays.reshape(tracer, as_array(tracer, arr, "np.extract"), (-1,))
    cond = arrays.reshape(tracer, as_array(tracer, condition, "np.extract"), (-1,))
    mask = _truth(tracer, cond)
    _fits(tracer, x, mask, "np.extract")
    return wrap(tracer, tracer.builder.emit("mask_select", (x.value, mask.value)))


@numpy_function("compress", array_result=True)
def compress(tracer, condition, a, axis=None, out=None):
    if out is not None:
        raise tracer.error("np.compress(..., out=...) is not supported yet")
    b = tracer.builder
    cond = as_array(tracer, condition, "np.compress")
    if cond.rank != 1:
        raise ValueError("condition must be a 1-d array")
    mask = _truth(tracer, cond)
    x = as_array(tracer, a, "np.compress")
    if axis is None:
        x = arrays.reshape(tracer, x, (-1,))
        _fits(tracer, x, mask, "np.compress")
        return wrap(tracer, b.emit("mask_select", (x.value, mask.value)))
    axis = axis_index(tracer, axis, x.rank)
    perm = (axis,) + tuple(d for d in range(x.rank) if d != axis)
    front = arrays.transpose(tracer, x, perm)
    _fits(tracer, front, mask, "np.compress")
    picked = wrap(tracer, b.emit("mask_select", (front.value, mask.value)))
    back = arrays.transpose(tracer, picked, tuple(sorted(range(x.rank), key=lambda i: perm[i])))
    return wrap(tracer, b.emit("copy", (back.value,))) if back is not picked else picked

