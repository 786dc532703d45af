"""Matrix algebra on `Sym`s (tracer.transforms.sym), for the derivative rules of the `np.linalg` ops
(tracer.ir.linalg_derivatives): each helper emits existing IR ops, on one matrix (rank 2) or on a
stack of them (the last two axes; the leading axes of every operand the same).

    mm(a, b)                 a @ b: `matmul` for two matrices; for stacks, the products broadcast to
                             (..., m, n, k) and summed over k (the IR's matmul takes ranks 1 and 2)
    mT(x)                    x with its last two axes swapped (a `transpose` view)
    lower(x, strict)         x's lower triangle (strict: below the diagonal), zeros above
    with_diagonal(x, c)      x with the number c on its diagonal; off_diagonal(x): with zeros there
    diagonal_part(x)         x's diagonal, zeros elsewhere
    diagonal_matrix(v, like) v (..., n) on the diagonal of a matrix shaped like `like`, zeros elsewhere
    spread(v, like, axis)    v (..., n) repeated into like's shape: [i, j] = v[i] (axis "rows") or v[j]
    safe_denominator(x)      x as a new array (a `copy`), so that a division by it divides by its values
    per_matrix(c, like)      a number per matrix (a scalar, or an array of the stack's axes) spread
                             over like's matrices
    column_slice(x, i, j)    x[..., :, i:j] (i, j: i64 Syms), a view; row_slice(x, i, j): x[..., i:j, :]
    as_shape_of(x, like)     x typed with like's static shape (a view where the two types differ)

The sizes of an array are read with `dim` where its type does not know them, so every helper
works on matrices whose sizes are known only at run time.
"""
from __future__ import annotations

from tracer.ir.types import ArrayType


def sizes(x) -> list:
    """The sizes of array Sym `x`, as i64 Syms (constants where the type knows them)."""
    return [x.constant(n) if n is not None else x.apply_attrs("dim", axis=a) for a, n in enumerate(x.type.shape)]


def _merged(*shapes: tuple) -> tuple:
    """One static shape for arrays whose types may know different sizes: a size where all agree."""
    return tuple(ns[0] if len(set(ns)) == 1 else None for ns in zip(*shapes))


def as_shape_of(x, like):
    """x, typed with like's shape where the two static shapes differ (the run-time sizes are the
    same): elementwise ops take operands of one static shape."""
    if x.type.shape == like.type.shape:
        return x
    return x.apply_attrs("broadcast_in_dim", *sizes(like), shape=like.type.shape, dims=tuple(range(like.type.rank)))


def mT(x):
    r = x.type.rank
    return x.apply_attrs("transpose", perm=(*range(r - 2), r - 1, r - 2))


def mm(a, b):
    """a @ b for matrices, or stacks of them with the same leading axes."""
    if a.type.rank == 2 and b.type.rank == 2:
        return a.apply_attrs("matmul", b)
    r = a.type.rank
    sa, sb = sizes(a), sizes(b)
    lead = _merged(a.type.shape[:-2], b.type.shape[:-2])
    k = _merged((a.type.shape[-1],), (b.type.shape[-2],))
    shape = (*lead, a.type.shape[-2], b.type.shape[-1], *k)
    full = (*sa[:-2], sa[-2], sb[-1], sa[-1])
    left = a.apply_attrs("broadcast_in_dim", *full, shape=shape, dims=(*range(r - 2), r - 2, r))
    right = mT(b).apply_attrs("broadcast_in_dim", *full, shape=shape, dims=(*range(r - 2), r - 1, r))
    return (left * right).apply_attrs("reduce", kind="sum", axes=(r,), keepdims=False)


def _positions(x):
    """(rows, cols): i64 arrays shaped like x, holding each element's row and column."""
    r, s = x.type.rank, sizes(x)
    rows = s[-2].apply_attrs("iota", shape=(x.type.shape[-2],))
    cols = s[-1].apply_attrs("iota", shape=(x.type.shape[-1],))
    return (rows.apply_attrs("broadcast_in_dim", *s, shape=x.type.shape, dims=(r - 2,)),
            cols.apply_attrs("broadcast_in_dim", *s, shape=x.type.shape, dims=(r - 1,)))


def lower(x, strict: bool = False):
    rows, cols = _positions(x)
    return (rows > cols if strict else rows >= cols).select(x, 0.0)


def with_diagonal(x, value):
    """x with `value` (a number) on its diagonal."""
    rows, cols = _positions(x)
    return rows.eq(cols).select(value, x)


def safe_denominator(x):
    """x (made with a `select` that keeps zeros out of it), as a new array to divide by. Fused into
    the division's loop, LLVM may rewrite `n / select(c, 1.0, d)` to `select(c, n, n / d)`, computing
    the division by zero that the select avoided, and the floating-point flag it raises makes
    compiled NumPy code run as Python (codegen.fpflags): a `copy` is an array op fusion stops at."""
    return x.apply("copy")


def off_diagonal(x):
    return with_diagonal(x, 0.0)


def diagonal_part(x):
    """x's diagonal, zeros elsewhere."""
    rows, cols = _positions(x)
    return rows.eq(cols).select(x, 0.0)


def diagonal_matrix(v, like):
    rows, cols = _positions(like)
    return rows.eq(cols).select(spread(v, like, "cols"), 0.0)


def spread(v, like, axis: str):
    r = like.type.rank
    return v.apply_attrs("broadcast_in_dim", *sizes(like), shape=like.type.shape,
                         dims=(*range(r - 2), r - 2 if axis == "rows" else r - 1))


def square_of(v):
    """Zeros (..., n, n) for a vector (or stack of vectors) v (..., n): a template for `spread`."""
    s = sizes(v)
    return v.constant(0.0).apply_attrs("full", *s, s[-1], shape=(*v.type.shape, v.type.shape[-1]))


def per_matrix(c, like):
    if not isinstance(c.type, ArrayType):
        return c
    return c.apply_attrs("broadcast_in_dim", *sizes(like), shape=like.type.shape,
                         dims=tuple(range(like.type.rank - 2)))


def column_slice(x, start, stop, width=None):
    """x[..., :, start:stop] (a view; `width` its static size, if known)."""
    bounds = []
    for size in sizes(x)[:-1]:
        bounds += [x.constant(0), size]
    return x.apply_attrs("slice", *bounds, start, stop, steps=(1,) * x.type.rank,
                         shape=(*x.type.shape[:-1], width))


def row_slice(x, start, stop, height=None):
    """x[..., start:stop, :] (a view)."""
    return mT(column_slice(mT(x), start, stop, height))
