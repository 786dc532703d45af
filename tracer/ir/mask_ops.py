"""Boolean-mask ops on arrays (registered into `tracer.ir.ops.OPS`): `mask_select` (x[mask], a
new array of the elements where a bool mask is true) and `mask_update` (a copy of x with those
elements replaced: `x[mask] = values` is this op, then the array's usual in-place update).

The mask covers x's leading axes: mask.shape == x.shape[:k] (k = mask's rank, 1 <= k <= x's
rank). The elements are taken, and replaced, in C order of the mask: the result of
`mask_select` has shape (count, *x.shape[k:]), count being the number of true elements, a size
known only at run time. A mask of other sizes than x's leading ones is NumPy's IndexError
("boolean index did not match indexed array ..."), and `values` with another first size than
count is NumPy's ValueError ("NumPy boolean array indexing assignment cannot assign ..."): both
are SHAPE_MISMATCH, and the Python function raises NumPy's error. np.nonzero, np.argwhere,
np.extract and np.compress are built on `mask_select` by the front end
(tracer/frontend/numpy_masks.py); codegen/masks.py lowers both ops (two passes over the mask).

Both are differentiable in x and in the values: the gradient of x[mask] is the incoming one put
back at the true positions (zeros elsewhere), by `mask_update`; that of `mask_update` is the
incoming one with zeros at the true positions for x, and its elements there for the values
(summed, for one scalar value).
"""
from __future__ import annotations

from tracer.errors import OpFailure, Status
from tracer.ir.array_ops import zeros_like
from tracer.ir.registry import define
from tracer.ir.types import BOOL, ArrayType, ScalarType


def _mask_rank(x, mask, what: str) -> int:
    if not isinstance(x, ArrayType) or not isinstance(mask, ArrayType) or mask.dtype != BOOL:
        raise TypeError(f"{what} takes an array and a bool array")
    if not 1 <= mask.rank <= x.rank:
        raise TypeError(f"{what}: a mask of rank {mask.rank} for an array of rank {x.rank}")
    for m, n in zip(mask.shape, x.shape):
        if m is not None and n is not None and m != n:
            raise TypeError(f"{what}: mask {mask} does not fit {x}")
    return mask.rank


def _select_type(t, a):
    if len(t) != 2:
        raise TypeError("mask_select takes an array and a bool mask")
    k = _mask_rank(t[0], t[1], "mask_select")
    return ArrayType(t[0].dtype, (None,) + t[0].shape[k:])


def _update_type(t, a):
    if len(t) != 3:
        raise TypeError("mask_update takes an array, a bool mask and the values")
    x, mask, values = t
    k = _mask_rank(x, mask, "mask_update")
    if isinstance(values, ScalarType):
        if values != x.dtype:
            raise TypeError(f"mask_update: a {values} value for an array of {x.dtype}")
        return x
    rest = x.shape[k:]
    if not isinstance(values, ArrayType) or values.dtype != x.dtype or values.rank != 1 + len(rest) or any(
            m is not None and n is not None and m != n for m, n in zip(values.shape[1:], rest)):
        raise TypeError(f"mask_update: values {values} do not fit the selection of {x} by {mask}")
    return x


def _check_mask(x, mask):
    if mask.shape != x.shape[:mask.ndim]:
        raise OpFailure(Status.SHAPE_MISMATCH)        # NumPy's IndexError (the Python function raises it)


def _mask_select(x, mask):
    _check_mask(x, mask)
    return x[mask]                                    # (a new array)


def _mask_update(x, mask, values, into=0):
    import numpy as np
    _check_mask(x, mask)
    if isinstance(values, np.ndarray):
        count = int(np.count_nonzero(mask))
        if values.shape != (count,) + x.shape[mask.ndim:]:
            raise OpFailure(Status.SHAPE_MISMATCH)    # NumPy's ValueError (the Python function raises it)
    out = x if into else x.copy()                     # into=1: x itself (an argument written in place)
    out[mask] = values
    return out


def _select_rule(ct, out, x, mask):
    """d x[mask]: the incoming gradient at the true positions, zeros elsewhere."""
    return zeros_like(ct, x).apply("mask_update", mask, ct)


def _update_rule_x(ct, out, x, mask, values):
    """The elements replaced take no gradient back to x."""
    return ct.apply("mask_update", mask, ct.constant(0.0))


def _update_rule_values(ct, out, x, mask, values):
    picked = ct.apply("mask_select", mask)
    if isinstance(values.type, ArrayType):
        return picked
    return picked.apply_attrs("reduce", kind="sum", axes=tuple(range(picked.type.rank)), keepdims=False)


define("mask_select", "x[mask]: a new array of the elements (or sub-arrays) of x where the bool array mask, of "
       "x's leading sizes, is true, in C order (shape (count, *x.shape[mask.ndim:]); a mask of other sizes: "
       "SHAPE_MISMATCH)", _select_type, _mask_select, [Status.FALLBACK, Status.SHAPE_MISMATCH, Status.NO_MEMORY],
       vjp=(_select_rule, None))
define("mask_update", "a copy of x with x[mask] = values (a scalar, or an array of shape (count, "
       "*x.shape[mask.ndim:]), else SHAPE_MISMATCH; a mask of other sizes than x's leading ones: SHAPE_MISMATCH; "
       "attrs into=1: written into x itself, after the checks)",
       _update_type, _mask_update, [Status.FALLBACK, Status.SHAPE_MISMATCH, Status.NO_MEMORY],
       vjp=(_update_rule_x, None, _update_rule_values))
