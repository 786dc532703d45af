"""Sorting ops on arrays (registered into `tracer.ir.ops.OPS`): `sort` and `argsort` along one
axis (np.sort, np.argsort; np.median, np.percentile and np.quantile are built on `sort` by the
front end, tracer/frontend/numpy_sort.py).

Both sort in NumPy's order: ascending, with every NaN after every number. attrs['kind'] is
'stable' (the default: NaNs keep their order among themselves, as do -0.0 and 0.0, which compare
equal, and ties in `argsort`) or NumPy's unstable 'quicksort' (in fact an introsort or a SIMD
sort; NumPy 2 sorts kind='heapsort' with it too), which orders ties its own way. codegen/sorts.py lowers both: under Python
by NumPy's own sort function of the kind (so the ties come out as NumPy's), in an exported
library by a stable merge sort.

`sort` is differentiable: its gradient is the incoming one put back where each element came
from, by `permute` (np.take_along_axis with a permutation along the axis) and the ranks
(argsort of argsort; equal elements take the places the stable order gives them, as JAX does).
`searchsorted` finds where values go in a sorted 1-d array, in the same order (np.searchsorted;
np.digitize is built on it).
"""
from __future__ import annotations

from tracer.errors import OpFailure, Status
from tracer.ir.registry import define
from tracer.ir.types import F32, F64, I64, ArrayType

SORTABLE = (F64, F32, I64)


def _sort_type(t, a):
    if len(t) != 1 or not isinstance(t[0], ArrayType) or t[0].dtype not in SORTABLE:
        raise TypeError("sort takes one f64, f32 or i64 array")
    if not 0 <= a["axis"] < t[0].rank:
        raise TypeError(f"sort along axis {a['axis']} of {t[0]}")
    return t[0]


def _argsort_type(t, a):
    return ArrayType(I64, _sort_type(t, a).shape)


def _sort(x, axis, kind="stable"):
    import numpy as np
    return np.sort(x, axis=axis, kind=kind)


def _argsort(x, axis, kind="stable"):
    import numpy as np
    return np.argsort(x, axis=axis, kind=kind).astype(np.int64)


def _permute_type(t, a):
    if len(t) != 2 or not all(isinstance(x, ArrayType) for x in t) or t[1].dtype != I64 or t[0].rank != t[1].rank:
        raise TypeError("permute takes an array and an i64 array of its rank")
    if not 0 <= a["axis"] < t[0].rank:
        raise TypeError(f"permute along axis {a['axis']} of {t[0]}")
    return t[0]


def _permute(x, index, axis):
    import numpy as np
    if x.shape != index.shape or (index.size and (index.min() < 0 or index.max() >= x.shape[axis])):
        raise OpFailure(Status.SHAPE_MISMATCH)
    return np.take_along_axis(x, index, axis=axis)


def _permute_rule(ct, out, x, index, axis):
    """Each line of index is a permutation: its transpose is the inverse permutation."""
    return ct.apply_attrs("permute", index.apply_attrs("argsort", axis=axis), axis=axis)


def _sort_rule(ct, out, x, axis, kind="stable"):
    """d sort: each element's gradient is the gradient of the place it was sorted to (ties go
    by the stable order), ct permuted by the inverse of the sorting permutation."""
    ranks = x.apply_attrs("argsort", axis=axis).apply_attrs("argsort", axis=axis)
    return ct.apply_attrs("permute", ranks, axis=axis)


define("sort", "x sorted along attrs['axis'], NaNs last (np.sort(x, axis, kind) of an f64, f32 or i64 array; "
       "attrs['kind']: 'stable' (the default) or NumPy's 'quicksort')", _sort_type, _sort,
       [Status.FALLBACK, Status.NO_MEMORY], attrs=("axis",),
       vjp=(_sort_rule,))
define("permute", "x rearranged along attrs['axis'] by index, an i64 array of x's shape whose every line along "
       "the axis is a permutation of 0..n-1: np.take_along_axis(x, index, axis) (sort's derivative)",
       _permute_type, _permute, [Status.FALLBACK, Status.SHAPE_MISMATCH, Status.NO_MEMORY], attrs=("axis",),
       vjp=(_permute_rule, None))
define("argsort", "the i64 indices that sort x along attrs['axis'], NaNs last (np.argsort(x, axis, kind); "
       "attrs['kind'] as sort's)", _argsort_type, _argsort, [Status.FALLBACK, Status.NO_MEMORY], attrs=("axis",))


def _searchsorted_type(t, a):
    if (len(t) != 2 or not all(isinstance(x, ArrayType) for x in t) or t[0].rank != 1 or t[0].dtype not in SORTABLE
            or t[1].dtype != t[0].dtype or a["side"] not in ("left", "right")):
        raise TypeError("searchsorted takes a 1-d f64, f32 or i64 array, values of its dtype, side 'left' or 'right'")
    return ArrayType(I64, t[1].shape)


def _searchsorted(a, v, side):
    import numpy as np
    return np.searchsorted(a, v, side=side).astype(np.int64)


define("searchsorted", "for each value of v, where it goes in the sorted 1-d array a to keep it sorted (NumPy's "
       "order, NaNs last): before equal elements (attrs['side'] 'left') or after them ('right'); "
       "np.searchsorted(a, v, side)", _searchsorted_type, _searchsorted, [Status.FALLBACK, Status.NO_MEMORY],
       attrs=("side",))
