"""Integer-array ("fancy") indexing inside a trace: `x[idx]`, `x[:, idx]`, `x[idx] = v` (and
`x[idx] += v`), `np.take` and `np.add.at`.

The index is an int64 array (computed in the trace, passed in, or a list of ints) in one place
of the index, every other place a whole axis (`:`); or several such arrays on the leading axes
(`x[rows, cols]`, broadcast together: the array seen with those axes as one, indexed by the
combined index). As in NumPy, `x[idx]` is a new array of
shape x.shape[:k] + idx.shape + x.shape[k + 1:] for the array at place k; a negative index
counts from the end; one out of bounds raises NumPy's IndexError (from the Python function,
when only the run time knows). `x[idx] = v` (the array at place 0) writes a scalar, or values
broadcast to idx.shape + x.shape[1:], in idx's order (the last of repeated indices wins);
`x[idx] += v` is `x[idx] = x[idx] + v` there too (a repeated index adds once), while
`np.add.at(x, idx, v)` adds at every occurrence. The IR's `index_select`, `index_update` and
`index_add` (tracer/ir/index_ops.py) do the work; x[idx] and np.add.at are differentiable.

Dispatched here from tracer/frontend/indexing.py (`subscript`, `store_item`) through
`indexing.INDEX_ARRAYS`; np.take and np.add.at register into tracer.frontend.numpy_more's tables.
"""
from __future__ import annotations

from tracer.frontend import arrays, indexing
from tracer.frontend.arrays import make_view, operand, sizes_of, unwrap_0d, wrap
from tracer.frontend.builder import is_traced
from tracer.frontend.dtypes import widen
from tracer.frontend.numpy_more import all_true, as_array, axis_index, fallback_unless, numpy_function
from tracer.frontend.objects import TracedArray, array_unsupported
from tracer.ir import BOOL, F32, I64, INTEGERS, ArrayType


def _is_index_array(e) -> bool:
    if isinstance(e, TracedArray):
        return e.type.dtype in INTEGERS and e.rank > 0   # (a 0-d one is an int index in NumPy)
    return type(e) is list and bool(e) and all(type(i) is int or (is_traced(i) and i.type == I64) for i in e)


def takes(index) -> bool:
    """Whether `index` is one int array among whole axes (x[idx], x[:, idx], x[idx, :]), or
    several int arrays first, then whole axes (x[rows, cols], x[i, j, :])."""
    entries = index if type(index) is tuple else (index,)
    arrays_ = sum(map(_is_index_array, entries))
    if arrays_ > 1:
        return all(map(_is_index_array, entries[:arrays_])) and all(e == slice(None) for e in entries[arrays_:])
    return (arrays_ == 1
            and all(_is_index_array(e) or (type(e) is slice and e == slice(None)) for e in entries))


def _flat_index(tracer, array: TracedArray, entries) -> tuple:
    """(array seen as (n0 * n1 * ..., rest...), the one index into its first axis) for the int
    arrays `entries` on its leading axes, broadcast together (NumPy's IndexError, from the
    Python function, where one is out of bounds)."""
    b = tracer.builder
    if len(entries) > array.rank:
        raise IndexError(f"too many indices for array: array is {array.rank}-dimensional, but "
                         f"{len(entries)} were indexed")
    values = [_index_value(tracer, e) for e in entries]
    try:
        values = arrays.broadcast(tracer, values)
    except ValueError:
        shapes = " ".join(arrays.shape_text(v.type) for v in values)
        raise IndexError(f"shape mismatch: indexing arrays could not be broadcast together with shapes {shapes}") \
            from None
    sizes = sizes_of(tracer, array.value)
    flat = None
    for idx, n in zip(values, sizes):
        inside = arrays.binary(tracer, "and", arrays.binary(tracer, "ge", wrap(tracer, idx), b.binary("sub", 0, n)),
                               arrays.binary(tracer, "lt", wrap(tracer, idx), n))
        fallback_unless(tracer, all_true(tracer, inside.value))
        wrapped = b.emit("select", tuple(arrays.broadcast(tracer, [
            b.value(arrays.binary(tracer, "lt", wrap(tracer, idx), 0).value),
            b.value(arrays.binary(tracer, "add", wrap(tracer, idx), n).value), idx])))
        flat = wrapped if flat is None else arrays.binary(tracer, "add", arrays.binary(
            tracer, "mul", wrap(tracer, flat), n), wrap(tracer, wrapped)).value
    rest = sizes[len(entries):]
    return arrays.reshape(tracer, array, (-1, *rest)), flat


def _split(tracer, array: TracedArray, index):
    """(the int array's place, its value) of an index `takes` accepted."""
    entries = index if type(index) is tuple else (index,)
    if len(entries) > array.rank:
        raise IndexError(f"too many indices for array: array is {array.rank}-dimensional, but "
                         f"{len(entries)} were indexed")
    place = next(i for i, e in enumerate(entries) if _is_index_array(e))
    return place, _index_value(tracer, entries[place])


def _index_value(tracer, e):
    """An index array's value as int64 (an int32 or uint8 one cast, exactly)."""
    return widen(tracer, e.value) if isinstance(e, TracedArray) else arrays.array_from(tracer, e)


def select(tracer, array: TracedArray, idx, place: int = 0) -> TracedArray:
    """array[(:,) * place + (idx,)]: the rows idx names along axis `place`."""
    b = tracer.builder
    x = array
    rank = array.rank
    if place:                                  # that axis first, then back after the index's axes
        x = make_view(tracer, x, "transpose", (), perm=(place, *range(place), *range(place + 1, rank)))
    out = wrap(tracer, b.emit("index_select", (x.value, idx)))
    if place:
        r = idx.type.rank
        out = make_view(tracer, out, "transpose", (),
                        perm=(*range(r, r + place), *range(r), *range(r + place, r + rank - 1)))
    return out


def _leading_arrays(index) -> int:
    return sum(map(_is_index_array, index)) if type(index) is tuple else 1


def subscript(tracer, array: TracedArray, index) -> TracedArray:
    if _leading_arrays(index) > 1:
        flat_array, flat = _flat_index(tracer, array, index[:_leading_arrays(index)])
        return select(tracer, flat_array, flat)
    place, idx = _split(tracer, array, index)
    return select(tracer, array, idx, place)


def _values(tracer, array: TracedArray, idx, value):
    """`value` cast to the array's dtype, an array broadcast to idx.shape + array.shape[1:]."""
    b = tracer.builder
    dtype = array.type.dtype
    value = unwrap_0d(tracer, operand(tracer, value, "assignment"))
    value = arrays.cast_stored(tracer, value, dtype)
    shape = idx.type.shape + array.type.shape[1:]
    sizes = sizes_of(tracer, idx) + sizes_of(tracer, array.value)[1:]
    if isinstance(value.type, ArrayType) and value.type.shape != shape:
        if value.type.rank > len(shape):
            raise ValueError(f"shape mismatch: value array of shape {arrays.shape_text(value.type)} could not be "
                             f"broadcast to indexing result of shape {arrays.shape_text(ArrayType(dtype, shape))}")
        value = b.emit("broadcast_in_dim", (value, *(b.value(s) for s in sizes)), shape=shape,
                       dims=tuple(range(len(shape) - value.type.rank, len(shape))))
    elif value.type == F32:              # (no float32 scalar operands outside arithmetic: as an array)
        value = b.emit("full", (value, *(b.value(s) for s in sizes)), shape=shape)
    return value


def _with_rank(tracer, value, rank: int):
    """The array value `value` with axes of size 1 in front, up to `rank` (NumPy's broadcasting)."""
    extra = rank - value.type.rank
    if extra <= 0:
        return value
    b = tracer.builder
    sizes = [b.value(1)] * extra + [b.value(n) for n in sizes_of(tracer, value)]
    return b.emit("broadcast_in_dim", (value, *sizes), shape=(1,) * extra + value.type.shape,
                  dims=tuple(range(extra, rank)))


def store_item(tracer, array: TracedArray, index, value) -> None:
    """array[idx] = value: the array's contents replaced by a copy with those rows written
    (arrays.assign: in place for a view, an argument, or inside a branch or loop)."""
    if _leading_arrays(index) > 1:                # x[i, j] = v: through x seen with those axes as one
        flat_array, flat = _flat_index(tracer, array, index[:_leading_arrays(index)])
        new = tracer.builder.emit("index_update", (flat_array.value, flat, _values(tracer, flat_array, flat, value)))
        sizes = sizes_of(tracer, array.value)
        arrays.assign(tracer, array, arrays.reshape(tracer, wrap(tracer, new), tuple(sizes)).value)
        return
    place, idx = _split(tracer, array, index)
    if place:                      # x[:, idx] = v: through the view with that axis first
        rank = array.rank
        view = make_view(tracer, array, "transpose", (), perm=(place, *range(place), *range(place + 1, rank)))
        r = idx.type.rank
        value = operand(tracer, value, "assignment")
        if isinstance(value.type if is_traced(value) else None, ArrayType) and value.type.rank > 0:
            # v has NumPy's shape x.shape[:place] + idx.shape + x.shape[place+1:]: the same move
            value = _with_rank(tracer, value, rank - 1 + r)
            value = tracer.builder.emit("transpose", (value,), perm=(*range(place, place + r), *range(place),
                                                                     *range(place + r, rank - 1 + r)))
        new = tracer.builder.emit("index_update", (view.value, idx, _values(tracer, view, idx, value)))
        arrays.assign(tracer, view, new)
        return
    new = tracer.builder.emit("index_update", (array.value, idx, _values(tracer, array, idx, value)))
    arrays.assign(tracer, array, new)


indexing.INDEX_ARRAYS.update(takes=takes, subscript=subscript, store_item=store_item)


# ------------------------------------------------------------------------------- functions
def _index_operand(tracer, indices, what: str):
    if not _is_index_array(indices):
        raise array_unsupported(tracer, f"{what} with indices that are not an int array or a list of ints")
    return _index_value(tracer, indices)


@numpy_function("take", array_result=True)
def take(tracer, a, indices, axis=None, out=None, mode="raise"):
    if out is not None or mode != "raise":
        raise array_unsupported(tracer, "np.take with out= or mode=")
    x = as_array(tracer, a, "np.take")
    idx = _index_operand(tracer, indices, "np.take")
    if axis is None:
        x = arrays.reshape(tracer, x, (-1,))
        return select(tracer, x, idx)
    return select(tracer, x, idx, axis_index(tracer, axis, x.rank))


@numpy_function("add.at")
def add_at(tracer, a, indices, b=None):
    """np.add.at(a, indices, b): b added at each index (repeated ones add up), in place."""
    if not isinstance(a, TracedArray) or a.rank == 0:
        raise array_unsupported(tracer, "np.add.at on anything but an array of rank 1 or more")
    if a.type.dtype == BOOL:
        raise array_unsupported(tracer, "np.add.at on a bool array")
    if b is None:
        raise TypeError("at() takes exactly 3 arguments for binary ufuncs (2 given)")
    idx = _index_operand(tracer, indices, "np.add.at")
    new = tracer.builder.emit("index_add", (a.value, idx, _values(tracer, a, idx, b)))
    arrays.assign(tracer, a, new)
    return None
