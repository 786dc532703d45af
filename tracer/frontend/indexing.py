"""Indexing NumPy arrays in traced code (`x[i]`, `x[1:-1, None]`, `x[..., 0]`, and the stores
`x[i] = v`, `x[a:b] += y`): NumPy's basic indexing as views of the indexed array (ops `index`,
`slice`, `transpose`, `broadcast_in_dim`), an element as a `load`. A bool array index (a mask) and
an int array index are NumPy's advanced indexing, done by tracer/frontend/numpy_masks.py and
tracer/frontend/numpy_take.py, which register here (MASK_INDEXING, INDEX_ARRAYS).
"""
from __future__ import annotations

from tracer.frontend.arrays import make_view, sizes_of, store, writable_root
from tracer.frontend.builder import is_traced
from tracer.frontend.objects import TracedArray, array_unsupported
from tracer.ir import BOOL, I64, I64_MAX, I64_MIN


def _index(tracer, i):
    """An int index as an int or i64 value; NumPy's IndexError for what is not an index."""
    if type(i) is int:
        return i
    if is_traced(i) and i.type == I64:
        return i
    if type(i) is bool or (is_traced(i) and i.type == BOOL) or isinstance(i, TracedArray):
        raise array_unsupported(tracer, "indexing with a bool or an array")
    if type(i) in (list, tuple):
        raise array_unsupported(tracer, "indexing with a sequence")
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                     "integer or boolean arrays are valid indices")


def _slice_bound(tracer, x):
    if x is None or type(x) is int or (is_traced(x) and x.type == I64):
        return x
    if type(x) is bool or (is_traced(x) and x.type == BOOL):
        return int(x) if not is_traced(x) else tracer.builder.convert(x, I64)
    raise TypeError("slice indices must be integers or None or have an __index__ method")


def _entries(tracer, array: TracedArray, index) -> list:
    """NumPy's basic index as a list of ("int", i), ("slice", start, stop, step) and ("new",),
    with the ellipsis expanded and trailing axes filled with full slices."""
    items = index if type(index) is tuple else (index,)
    if sum(1 for i in items if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for i in items if i is not None and i is not Ellipsis)
    if used > array.rank:
        raise IndexError(f"too many indices for array: array is {array.rank}-dimensional, "
                         f"but {used} were indexed")
    full = ("slice", None, None, 1)
    entries = []
    for i in items:
        if i is Ellipsis:
            entries.extend([full] * (array.rank - used))
        elif i is None:
            entries.append(("new",))
        elif isinstance(i, slice):
            step = 1 if i.step is None else tracer.builder.concretize(_slice_bound(tracer, i.step), "a slice step")
            if step == 0:
                raise ValueError("slice step cannot be zero")
            entries.append(("slice", _slice_bound(tracer, i.start), _slice_bound(tracer, i.stop), step))
        else:
            entries.append(("int", _index(tracer, i)))
    if not any(i is Ellipsis for i in items):
        entries.extend([full] * (array.rank - used))
    return entries


def _element(array: TracedArray, entries: list):
    """The indices of `entries` if they pick one element (an int for every axis), else None;
    an int index out of bounds of a size the trace knows is NumPy's IndexError."""
    axes = [e for e in entries if e[0] != "new"]
    for axis, e in enumerate(axes):
        n = array.type.shape[axis]
        if e[0] == "int" and type(e[1]) is int and n is not None and not -n <= e[1] < n:
            raise IndexError(f"index {e[1]} is out of bounds for axis {axis} with size {n}")
    if len(entries) == array.rank and all(e[0] == "int" for e in entries):
        return tuple(e[1] for e in entries)
    return None


def _has_ellipsis(index) -> bool:
    return any(i is Ellipsis for i in (index if type(index) is tuple else (index,)))


# x[mask] and x[mask] = v (a bool array index): tracer/frontend/numpy_masks.py registers here
MASK_INDEXING: dict = {}
INDEX_ARRAYS: dict = {}    # x[idx] with an int array (tracer.frontend.numpy_take fills it)


def _is_mask(index) -> bool:
    return isinstance(index, TracedArray) and index.type.dtype == BOOL and bool(MASK_INDEXING)


def subscript(tracer, array: TracedArray, index):
    """array[index] with NumPy's basic indexing: an element, or a view (ints, slices, None, ...)."""
    b = tracer.builder
    if _is_mask(index):
        return MASK_INDEXING["subscript"](tracer, array, index)
    if INDEX_ARRAYS and INDEX_ARRAYS["takes"](index):
        return INDEX_ARRAYS["subscript"](tracer, array, index)
    entries = _entries(tracer, array, index)
    element = _element(array, entries)
    if element is not None and not (array.rank == 0 and _has_ellipsis(index)):   # 0-d x[...]: a view
        return b.emit("load", (array.value, *(b.value(i) for i in element)))
    axes = [e for e in entries if e[0] != "new"]             # one per axis of `array`
    x = array
    if any(e[0] == "slice" and e[1:] != (None, None, 1) for e in axes):
        x = _slice(tracer, x, axes)
    if len(entries) != len(axes):                             # np.newaxis: axes of size 1
        shape, dims, sizes = [], [], []
        old, old_sizes = iter(x.type.shape), iter(sizes_of(tracer, x.value))
        for position, e in enumerate(entries):
            if e[0] == "new":
                shape.append(1)
                sizes.append(b.value(1))
            else:
                shape.append(next(old))
                sizes.append(b.value(next(old_sizes)))
                dims.append(position)
        x = make_view(tracer, x, "broadcast_in_dim", tuple(sizes), shape=tuple(shape), dims=tuple(dims))
    ints = [d for d, e in enumerate(entries) if e[0] == "int"]
    if ints:
        rest = [d for d in range(len(entries)) if d not in ints]
        if ints != list(range(len(ints))):                    # x[:, 3]: the int axes first
            x = make_view(tracer, x, "transpose", (), perm=tuple(ints + rest))
        x = make_view(tracer, x, "index", tuple(b.value(entries[d][1]) for d in ints))
    return x


def _slice(tracer, array: TracedArray, axes: list) -> TracedArray:
    """The `slice` view for the slices among `axes` (the int axes keep their whole length here)."""
    b = tracer.builder
    bounds, steps, shape = [], [], []
    for n, e in zip(array.type.shape, axes):
        start, stop, step = e[1:] if e[0] == "slice" else (None, None, 1)
        steps.append(step)
        low, high = (I64_MIN, I64_MAX) if step > 0 else (I64_MAX, I64_MIN)
        bounds += [b.value(low if start is None else start), b.value(high if stop is None else stop)]
        if (start, stop, step) == (None, None, 1):
            shape.append(n)
        elif n is not None and not is_traced(start) and not is_traced(stop):
            shape.append(len(range(*slice(start, stop, step).indices(n))))
        else:
            shape.append(None)
    return make_view(tracer, array, "slice", tuple(bounds), steps=tuple(steps), shape=tuple(shape))


def store_item(tracer, array: TracedArray, index, value) -> None:
    """`array[index] = value` (STORE_SUBSCR): into an element, or into the view `array[index]`."""
    if _is_mask(index):
        MASK_INDEXING["store_item"](tracer, array, index, value)
        return
    if INDEX_ARRAYS and INDEX_ARRAYS["takes"](index):
        INDEX_ARRAYS["store_item"](tracer, array, index, value)
        return
    element = _element(array, _entries(tracer, array, index))
    if element is not None:
        store(tracer, array, element, value)
        return
    target = subscript(tracer, array, index)
    if value is not target:
        store(tracer, target, (), value)
    else:               # x[a:b] += y has written already; x[:] = x writes nothing, but is a write
        writable_root(tracer, target)
