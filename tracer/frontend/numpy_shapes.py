"""NumPy's shape functions inside a trace: joining (`np.concatenate`, `np.stack`, `np.vstack`,
`np.hstack`), rearranging (`np.roll`, `np.flip`, `np.swapaxes`, `np.moveaxis`, `np.squeeze`,
`np.expand_dims`, `np.atleast_1d/2d/3d`, `np.ravel`, `np.tile`, `np.repeat`), differences
(`np.diff`) and matrices (`np.eye`, `np.identity`, `np.diag`, `np.trace`, `np.tril`, `np.triu`).

Registered into `tracer.frontend.numpy_more`'s tables. Views stay views where NumPy's are
(flip, swapaxes, moveaxis, squeeze, expand_dims, atleast_*d); joins and rolls write their pieces
into a new array (`store` into `slice` views: no gradient flows through them yet); the matrix
functions select with index comparisons (exact: no arithmetic on the elements). Sizes only the
run time knows are checked there: a mismatch NumPy would refuse fails the compiled call, and
the Python function raises NumPy's error.
"""
from __future__ import annotations

import itertools

from tracer.frontend import arrays, indexing
from tracer.frontend.arrays import convert, promote, sizes_of, wrap
from tracer.frontend.builder import is_traced
from tracer.frontend.numpy_more import (
    METHODS,
    as_array,
    axis_index,
    axis_tuple,
    fallback_unless,
    index_arg,
    numpy_function,
    select,
    sum_of,
)
from tracer.frontend.objects import TracedArray
from tracer.ir import BOOL, I64

FULL = slice(None)
METHODS.update({"squeeze", "swapaxes", "repeat", "trace"})      # x.squeeze() is np.squeeze(x), ...


def along(rank: int, axis: int, s) -> tuple:
    """The index that is `s` at `axis` and `:` elsewhere."""
    return tuple(s if d == axis else FULL for d in range(rank))


def _new_array(tracer, dtype, sizes: list, shape: tuple, covered: bool = False):
    """A new array of zeros; `covered`: the caller's writes cover every element before anything
    reads it (the zeros are never seen: compiled code leaves the memory as it is)."""
    b = tracer.builder
    fill = b.value(convert(tracer, False if dtype == BOOL else 0, dtype))
    unread = {"unread": True} if covered else {}
    return wrap(tracer, b.emit("full", (fill, *(b.value(n) for n in sizes)), shape=shape, **unread))


def _write(tracer, target: TracedArray, index: tuple, value) -> None:
    """target[index] = value (a piece of a new array; the store checks run-time sizes)."""
    view = indexing.subscript(tracer, target, index)
    tracer.builder.emit("store", (view.value, convert(tracer, value.value, target.type.dtype)))


# ------------------------------------------------------------------------------- joining
def join(tracer, pieces: list, axis: int) -> TracedArray:
    """np.concatenate of arrays of one rank along `axis` (in range)."""
    b = tracer.builder
    rank = pieces[0].rank
    dtype = promote(tracer, *(p.value for p in pieces))
    shape, sizes = [], []
    for d in range(rank):
        if d == axis:
            total = 0
            for p in pieces:
                total = b.binary("add", total, sizes_of(tracer, p.value)[d])
            shape.append(total if type(total) is int else None)
            sizes.append(total)
            continue
        known = {p.type.shape[d] for p in pieces} - {None}
        if len(known) > 1:
            i = next(i for i, p in enumerate(pieces) if p.type.shape[d] is not None and p.type.shape[d] != min(known))
            first = next(p.type.shape[d] for p in pieces if p.type.shape[d] is not None)
            raise ValueError(f"all the input array dimensions except for the concatenation axis must match exactly, "
                             f"but along dimension {d}, the array at index 0 has size {first} and the array at "
                             f"index {i} has size {pieces[i].type.shape[d]}")
        shape.append(known.pop() if known else None)
        sizes.append(shape[-1] if shape[-1] is not None else sizes_of(tracer, pieces[0].value)[d])
    out = _new_array(tracer, dtype, sizes, tuple(shape), covered=True)    # (the pieces fill it along the axis)
    offset = 0
    for p in pieces:
        end = b.binary("add", offset, sizes_of(tracer, p.value)[axis])
        _write(tracer, out, along(rank, axis, slice(offset, end)), p)
        offset = end
    return out


def _sequence(tracer, arrays_, what: str) -> list:
    if type(arrays_) not in (list, tuple):
        raise tracer.error(f"{what} of a {type(arrays_).__name__} (not a list or tuple of arrays) is not supported")
    if not arrays_:
        raise ValueError("need at least one array to concatenate")
    return [as_array(tracer, a, what) for a in arrays_]


@numpy_function("concatenate", array_result=True)
def concatenate(tracer, arrays_, axis=0, out=None, *, dtype=None, casting=None):
    if out is not None or casting is not None:
        raise tracer.error("np.concatenate(..., out=/casting=) is not supported yet")
    pieces = _sequence(tracer, arrays_, "np.concatenate")
    if axis is None:
        pieces, axis = [arrays.reshape(tracer, p, (-1,)) for p in pieces], 0
    if pieces[0].rank == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    for i, p in enumerate(pieces):
        if p.rank != pieces[0].rank:
            raise ValueError(f"all the input arrays must have same number of dimensions, but the array at index 0 "
                             f"has {pieces[0].rank} dimension(s) and the array at index {i} has {p.rank} dimension(s)")
    result = join(tracer, pieces, axis_index(tracer, axis, pieces[0].rank))
    return wrap(tracer, convert(tracer, result.value, arrays.dtype_of(tracer, dtype))) if dtype is not None else result


@numpy_function("stack", array_result=True)
def stack(tracer, arrays_, axis=0, out=None, *, dtype=None, casting=None):
    pieces = _sequence(tracer, arrays_, "np.stack")
    if len({p.type.rank for p in pieces}) > 1 or any(
            m is not None and n is not None and m != n for p in pieces for m, n in zip(pieces[0].type.shape, p.type.shape)):
        raise ValueError("all input arrays must have the same shape")
    axis = axis_index(tracer, axis, pieces[0].rank + 1)
    return concatenate(tracer, [expand_dims(tracer, p, axis) for p in pieces], axis, out, dtype=dtype, casting=casting)


@numpy_function("vstack", "row_stack", array_result=True)
def vstack(tracer, tup, *, dtype=None, casting=None):
    return concatenate(tracer, list(atleast_nd(tracer, 2, _sequence(tracer, tup, "np.vstack"))), 0, dtype=dtype,
                       casting=casting)


@numpy_function("hstack", array_result=True)
def hstack(tracer, tup, *, dtype=None, casting=None):
    pieces = list(atleast_nd(tracer, 1, _sequence(tracer, tup, "np.hstack")))
    return concatenate(tracer, pieces, 0 if pieces[0].rank == 1 else 1, dtype=dtype, casting=casting)


@numpy_function("column_stack", array_result=True)
def column_stack(tracer, tup):
    """1-d arrays become columns (n, 1); 2-d ones join as they are, along axis 1."""
    pieces = [p if p.rank >= 2 else arrays.reshape(tracer, p, (-1, 1)) if p.rank == 1 else
              arrays.reshape(tracer, p, (1, 1)) for p in _sequence(tracer, tup, "np.column_stack")]
    return concatenate(tracer, pieces, 1)


# ------------------------------------------------------------------------------- splitting
def _split(tracer, ary, indices_or_sections, axis, what: str, equal: bool) -> list:
    """np.array_split / np.split: views of `ary` along `axis`, cut where NumPy cuts (the
    sections' sizes must be known when the function is compiled)."""
    b = tracer.builder
    a = as_array(tracer, ary, what)
    axis = axis_index(tracer, axis, a.rank)
    n = sizes_of(tracer, a.value)[axis]             # (an int, or a run-time size)
    if type(indices_or_sections) in (list, tuple):
        cuts = [0, *(index_arg(tracer, i, what) for i in indices_or_sections), n]
    else:
        sections = index_arg(tracer, indices_or_sections, what)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        uneven = ValueError("array split does not result in an equal division")
        extra = b.binary("mod", n, sections)
        if equal and not is_traced(extra) and extra:
            raise uneven
        if equal and is_traced(extra):
            b.raise_if(b.value(b.compare("ne", extra, 0)), uneven)
        each = b.binary("floordiv", n, sections)
        # NumPy's cuts: the first n % sections pieces one longer
        cuts = [b.binary("add", b.binary("mul", k, each), k if not is_traced(extra) and k <= extra else
                         b.emit("min", (b.const(k), b.value(extra))) if is_traced(extra) else extra)
                for k in range(sections)] + [n]
    return [indexing.subscript(tracer, a, along(a.rank, axis, slice(lo, hi))) for lo, hi in zip(cuts, cuts[1:])]


@numpy_function("array_split")
def array_split(tracer, ary, indices_or_sections, axis=0):
    return _split(tracer, ary, indices_or_sections, axis, "np.array_split", equal=False)


@numpy_function("split")
def split(tracer, ary, indices_or_sections, axis=0):
    return _split(tracer, ary, indices_or_sections, axis, "np.split", equal=True)


@numpy_function("hsplit")
def hsplit(tracer, ary, indices_or_sections):
    a = as_array(tracer, ary, "np.hsplit")
    if a.rank == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return _split(tracer, a, indices_or_sections, 1 if a.rank > 1 else 0, "np.hsplit", equal=True)


@numpy_function("vsplit")
def vsplit(tracer, ary, indices_or_sections):
    a = as_array(tracer, ary, "np.vsplit")
    if a.rank < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split(tracer, a, indices_or_sections, 0, "np.vsplit", equal=True)


# ------------------------------------------------------------------------------- rearranging
@numpy_function("roll", array_result=True)
def roll(tracer, a, shift, axis=None):
    """NumPy's: the result's pieces written from the array's, shift % size along each axis."""
    b = tracer.builder
    x = as_array(tracer, a, "np.roll")
    if axis is None:
        flat = roll(tracer, arrays.reshape(tracer, x, (-1,)), shift, 0)
        return arrays.reshape(tracer, flat, tuple(sizes_of(tracer, x.value)))
    axes = axis if type(axis) in (tuple, list) else (axis,)
    shifts = shift if type(shift) in (tuple, list) else (shift,)
    if len(axes) != len(shifts) and 1 not in (len(axes), len(shifts)):
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    count = max(len(axes), len(shifts))
    pairs = [(shifts[i % len(shifts)], axes[i % len(axes)]) for i in range(count)]
    total = dict.fromkeys(range(x.rank), 0)
    for s, ax in pairs:
        if not (type(s) in (int, bool) or (is_traced(s) and s.type in (I64, BOOL))):
            raise TypeError(f"'{type(s).__name__}' object cannot be interpreted as an integer")
        ax = axis_index(tracer, ax, x.rank)
        total[ax] = b.binary("add", total[ax], s if not is_traced(s) else convert(tracer, s, I64))
    sizes = sizes_of(tracer, x.value)
    rolls = []
    for ax, s in total.items():
        n = sizes[ax]
        nonzero = n if type(n) is int and n else 1 if type(n) is int else \
            b.emit("select", (b.value(b.compare("eq", n, 0)), b.const(1), n))
        offset = 0 if type(s) is int and s == 0 else b.binary("mod", s, nonzero)
        if type(offset) is int and offset == 0:
            rolls.append([(FULL, FULL)])
        else:
            cut = b.binary("sub", n, offset)
            rolls.append([(slice(None, cut), slice(offset, None)), (slice(cut, None), slice(None, offset))])
    if all(r == [(FULL, FULL)] for r in rolls):
        return wrap(tracer, b.emit("copy", (x.value,)))
    out = _new_array(tracer, x.type.dtype, sizes, x.type.shape, covered=True)     # (the pieces tile it)
    for indices in itertools.product(*rolls):
        source, target = zip(*indices)
        _write(tracer, out, target, indexing.subscript(tracer, x, source))
    return out


@numpy_function("flip")
def flip(tracer, m, axis=None):
    x = as_array(tracer, m, "np.flip")
    axes = axis_tuple(tracer, axis, x.rank)
    return indexing.subscript(tracer, x, tuple(slice(None, None, -1) if d in axes else FULL for d in range(x.rank)))


@numpy_function("fliplr")
def fliplr(tracer, m):
    x = as_array(tracer, m, "np.fliplr")
    if x.rank < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(tracer, x, 1)


@numpy_function("flipud")
def flipud(tracer, m):
    x = as_array(tracer, m, "np.flipud")
    if x.rank < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(tracer, x, 0)


def atleast_nd(tracer, n: int, items):
    """np.atleast_{n}d of each item: views with axes of size 1 added where NumPy adds them."""
    for item in items:
        x = as_array(tracer, item, f"np.atleast_{n}d")
        if x.rank >= n:
            yield x
            continue
        where = {1: {0: (None,)}, 2: {0: (None, None), 1: (None, FULL)},
                 3: {0: (None, None, None), 1: (None, FULL, None), 2: (FULL, FULL, None)}}[n][x.rank]
        yield indexing.subscript(tracer, x, where)


def _atleast(n):
    def impl(tracer, *arys):
        found = tuple(atleast_nd(tracer, n, arys))
        return found[0] if len(found) == 1 else found
    return impl


for _n in (1, 2, 3):
    numpy_function(f"atleast_{_n}d", array_result=True)(_atleast(_n))


@numpy_function("squeeze", array_result=True)
def squeeze(tracer, a, axis=None):
    """A view without the axes of size 1 (axis=None: those the trace knows; one of a size only the
    run time knows, found to be 1 there, makes the call run the Python function)."""
    b = tracer.builder
    x = as_array(tracer, a, "np.squeeze")
    sizes = sizes_of(tracer, x.value)
    if axis is None:
        drop = [d for d, n in enumerate(x.type.shape) if n == 1]
        for d, n in enumerate(x.type.shape):
            if n is None:
                fallback_unless(tracer, b.compare("ne", sizes[d], 1))
    else:
        drop = sorted(axis_tuple(tracer, axis, x.rank))
        for d in drop:
            if x.type.shape[d] is None:
                b.raise_if(b.compare("ne", sizes[d], 1), ValueError(
                    "cannot select an axis to squeeze out which has size not equal to one"))
            elif x.type.shape[d] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    if not drop:
        return x
    if len(drop) == x.rank:
        return arrays.reshape(tracer, x, ())
    keep = [d for d in range(x.rank) if d not in drop]
    if drop + keep != list(range(x.rank)):
        x = arrays.transpose(tracer, x, drop + keep)
    return arrays.make_view(tracer, x, "index", tuple(b.const(0) for _ in drop))


@numpy_function("expand_dims", array_result=True)
def expand_dims(tracer, a, axis):
    x = as_array(tracer, a, "np.expand_dims")
    axes = axis_tuple(tracer, axis, x.rank + (len(axis) if type(axis) in (tuple, list) else 1))
    return indexing.subscript(tracer, x, tuple(None if d in axes else FULL for d in range(x.rank + len(axes))))


@numpy_function("ravel", array_result=True)
def ravel(tracer, a, order="C"):
    return arrays.reshape(tracer, as_array(tracer, a, "np.ravel"), (-1,), order)


@numpy_function("swapaxes", array_result=True)
def swapaxes(tracer, a, axis1, axis2):
    x = as_array(tracer, a, "np.swapaxes")
    i, j = axis_index(tracer, axis1, x.rank), axis_index(tracer, axis2, x.rank)
    perm = list(range(x.rank))
    perm[i], perm[j] = j, i
    return arrays.transpose(tracer, x, perm)


@numpy_function("moveaxis", array_result=True)
def moveaxis(tracer, a, source, destination):
    x = as_array(tracer, a, "np.moveaxis")
    source, destination = axis_tuple(tracer, source, x.rank), axis_tuple(tracer, destination, x.rank)
    if len(source) != len(destination):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    order = [n for n in range(x.rank) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return arrays.transpose(tracer, x, order)


@numpy_function("tile", array_result=True)
def tile(tracer, A, reps):
    """NumPy's: A with ndim at least len(reps), each axis repeated reps[i] times (a broadcast to
    (reps_0, n_0, reps_1, n_1, ...), then a reshape)."""
    b = tracer.builder
    reps = tuple(index_arg(tracer, r, "np.tile's reps") for r in (reps if type(reps) in (tuple, list) else (reps,)))
    x = as_array(tracer, A, "np.tile")
    if len(reps) > x.rank:
        x = indexing.subscript(tracer, x, (None,) * (len(reps) - x.rank) + (Ellipsis,))
    reps = (1,) * (x.rank - len(reps)) + reps
    if any(r < 0 for r in reps):
        raise ValueError("negative dimensions are not allowed")
    sizes = sizes_of(tracer, x.value)
    if all(r == 1 for r in reps):
        return wrap(tracer, b.emit("copy", (x.value,)))
    shape = tuple(s for r, n in zip(reps, x.type.shape) for s in (r, n))
    spread = b.emit("broadcast_in_dim", (x.value, *(b.value(s) for r, n in zip(reps, sizes) for s in (r, n))),
                    shape=shape, dims=tuple(range(1, 2 * x.rank, 2)))
    return arrays.reshape(tracer, wrap(tracer, spread), tuple(b.binary("mul", r, n) for r, n in zip(reps, sizes)))


@numpy_function("repeat", array_result=True)
def repeat(tracer, a, repeats, axis=None):
    """Each element `repeats` times along the axis (None: of the flattened array): a broadcast
    to a new axis after it, then a reshape."""
    b = tracer.builder
    if not (type(repeats) in (int, bool) or (is_traced(repeats) and repeats.type in (I64, BOOL))):
        raise tracer.error("np.repeat with repeats other than one int is not supported yet")
    x = as_array(tracer, a, "np.repeat")
    if axis is None:
        x, axis = arrays.reshape(tracer, x, (-1,)), 0
    axis = axis_index(tracer, axis, x.rank)
    r = repeats if not is_traced(repeats) else convert(tracer, repeats, I64)
    if type(r) is int and r < 0:
        raise ValueError("repeats may not contain negative values.")
    sizes = sizes_of(tracer, x.value)
    shape = x.type.shape[:axis + 1] + (r if type(r) is int else None,) + x.type.shape[axis + 1:]
    spread = b.emit("broadcast_in_dim", (x.value, *(b.value(n) for n in sizes[:axis + 1] + [r] + sizes[axis + 1:])),
                    shape=shape, dims=tuple(d if d <= axis else d + 1 for d in range(x.rank)))
    new = sizes[:axis] + [b.binary("mul", sizes[axis], r)] + sizes[axis + 1:]
    return arrays.reshape(tracer, wrap(tracer, spread), tuple(new))


@numpy_function("diff", array_result=True)
def diff(tracer, a, n=1, axis=-1, prepend=None, append=None):
    """NumPy's: a[1:] - a[:-1] along the axis, n times (!= for bools)."""
    if prepend is not None or append is not None:
        raise tracer.error("np.diff(..., prepend=/append=) is not supported yet")
    n = index_arg(tracer, n, "np.diff's n")
    x = as_array(tracer, a, "np.diff")
    if n == 0:
        return x
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    if x.rank == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = axis_index(tracer, axis, x.rank)
    op = "ne" if x.type.dtype == BOOL else "sub"
    for _ in range(n):
        x = arrays.binary(tracer, op, indexing.subscript(tracer, x, along(x.rank, axis, slice(1, None))),
                          indexing.subscript(tracer, x, along(x.rank, axis, slice(None, -1))))
    return x


# ------------------------------------------------------------------------------- matrices
def _grid(tracer, rows, cols):
    """(i, j) index arrays of shape (rows, cols), each a broadcast view of an iota."""
    b = tracer.builder
    out = []
    for n, d in ((rows, 0), (cols, 1)):
        iota = b.emit("iota", (b.value(n),), shape=(n if type(n) is int else None,))
        shape = tuple(m if type(m) is int else None for m in (rows, cols))
        out.append(b.emit("broadcast_in_dim", (iota, b.value(rows), b.value(cols)), shape=shape, dims=(d,)))
    return out


def _on_or_below(tracer, rows, cols, k):
    """tri(rows, cols, k): j <= i + k."""
    b = tracer.builder
    i, j = _grid(tracer, rows, cols)
    return b.emit("le", (j, b.emit("add", (i, b.value(k)))))


@numpy_function("eye", array_result=True)
def eye(tracer, N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    b = tracer.builder
    rows, cols = (n if not is_traced(n) else convert(tracer, n, I64) for n in (N, N if M is None else M))
    k = index_arg(tracer, k, "np.eye's k") if not is_traced(k) else k
    if any(type(n) is int and n < 0 for n in (rows, cols)):
        raise ValueError("negative dimensions are not allowed")
    i, j = _grid(tracer, rows, cols)
    return wrap(tracer, convert(tracer, b.emit("eq", (j, b.emit("add", (i, b.value(k))))),
                                arrays.dtype_of(tracer, dtype)))


@numpy_function("identity", array_result=True)
def identity(tracer, n, dtype=None, *, like=None):
    return eye(tracer, n, dtype=float if dtype is None else dtype)


def _triangle(tracer, m, k, lower: bool):
    x = as_array(tracer, m, "np.tril" if lower else "np.triu")
    if x.rank == 0:
        raise TypeError("tri() missing 1 required positional argument: 'N'")     # NumPy's, for a 0-d array
    sizes = sizes_of(tracer, x.value)
    rows, cols = (sizes[-2], sizes[-1]) if x.rank >= 2 else (sizes[0], sizes[0])
    k = k if is_traced(k) else index_arg(tracer, k, "k")
    zero = False if x.type.dtype == BOOL else 0
    if lower:
        return wrap(tracer, select(tracer, _on_or_below(tracer, rows, cols, k), x.value, zero, x.type.dtype))
    below = _on_or_below(tracer, rows, cols, tracer.builder.binary("sub", k, 1))
    return wrap(tracer, select(tracer, below, zero, x.value, x.type.dtype))


@numpy_function("tril", array_result=True)
def tril(tracer, m, k=0):
    return _triangle(tracer, m, k, True)


@numpy_function("triu", array_result=True)
def triu(tracer, m, k=0):
    return _triangle(tracer, m, k, False)


def diagonal_of(tracer, x: TracedArray, k: int):
    """The k-th diagonal of a 2-d array: the rows that have one, each summed with -0.0 (or 0,
    False) everywhere but the diagonal element (exact: the sum is that element)."""
    b = tracer.builder
    n, m = sizes_of(tracer, x.value)
    length = b.binary("sub", m, k) if k >= 0 else b.binary("add", n, k)
    length = _clamp(tracer, _minimum(tracer, n if k >= 0 else m, length))
    rows = indexing.subscript(tracer, x, (slice(0, length), FULL) if k >= 0 else (slice(-k, b.binary("sub", length, k)),
                                                                                    FULL))
    r, c = sizes_of(tracer, rows.value)
    i, j = _grid(tracer, r, c)
    on = b.emit("eq", (j, b.emit("add", (i, b.value(max(k, 0))))))
    dtype = x.type.dtype
    if dtype == BOOL:
        picked = b.emit("select", tuple(arrays.broadcast(tracer, [on, rows.value, b.const(False)])))
        return wrap(tracer, b.emit("reduce", (picked,), kind="max", axes=(1,), keepdims=False))
    picked = select(tracer, on, rows.value, -0.0 if dtype != I64 else 0, dtype)
    return wrap(tracer, sum_of(tracer, picked, (1,)))


def _minimum(tracer, a, c):
    b = tracer.builder
    if not is_traced(a) and not is_traced(c):
        return min(a, c)
    return b.emit("select", (b.value(b.compare("lt", a, c)), b.value(a), b.value(c)))


def _clamp(tracer, n):
    """max(n, 0)."""
    b = tracer.builder
    if not is_traced(n):
        return max(n, 0)
    return b.emit("select", (b.value(b.compare("lt", n, 0)), b.const(0), n))


@numpy_function("diag", array_result=True)
def diag(tracer, v, k=0):
    """Of a 1-d array: the square matrix with it on diagonal k; of a 2-d array: diagonal k."""
    b = tracer.builder
    x = as_array(tracer, v, "np.diag")
    k = index_arg(tracer, k, "np.diag's k")
    if x.rank == 2:
        return diagonal_of(tracer, x, k)
    if x.rank != 1:
        raise ValueError("Input must be 1- or 2-d.")
    length = sizes_of(tracer, x.value)[0]
    size = b.binary("add", length, abs(k))
    if k != 0:
        pad = _new_array(tracer, x.type.dtype, [abs(k)], (abs(k),))
        x = join(tracer, [x, pad], 0)
    i, j = _grid(tracer, size, size)
    on = b.emit("eq", (j, b.emit("add", (i, b.const(k))))) if k >= 0 else b.emit("eq", (i, b.emit("add", (j, b.const(-k)))))
    values = indexing.subscript(tracer, x, (slice(None), None) if k >= 0 else (None, slice(None)))
    zero = False if x.type.dtype == BOOL else 0
    return wrap(tracer, select(tracer, on, values.value, zero, x.type.dtype))


@numpy_function("trace")
def trace(tracer, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """The sum of diagonal `offset` of a 2-d array (int64 for ints and bools)."""
    x = as_array(tracer, a, "np.trace")
    if out is not None or x.rank != 2:
        raise tracer.error("np.trace of arrays other than 2-d (or with out=) is not supported yet")
    i, j = axis_index(tracer, axis1, 2), axis_index(tracer, axis2, 2)
    if i == j:
        raise ValueError("axis1 and axis2 cannot be the same")
    if (i, j) == (1, 0):
        x = arrays.transpose(tracer, x, (1, 0))
    d = diagonal_of(tracer, x, index_arg(tracer, offset, "np.trace's offset")).value
    if dtype is not None:
        d = convert(tracer, d, arrays.dtype_of(tracer, dtype))
    return wrap(tracer, sum_of(tracer, convert(tracer, d, I64) if d.type.dtype == BOOL else d, (0,)))

