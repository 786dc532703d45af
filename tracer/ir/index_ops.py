"""Integer-array indexing along the first axis (registered into `tracer.ir.ops.OPS`):
`index_select` (x[idx]: a new array of the rows of x that idx names), `index_update` (a copy of x
with x[idx] = values) and `index_add` (a copy of x with np.add.at(x, idx, values): values at a
repeated index add up).

idx is an int64 array of any rank; the result of `index_select` has shape
idx.shape + x.shape[1:], and `values` are a scalar or an array of that shape (the front end
broadcasts them). A negative index counts from the end, as in NumPy; one outside
[-len(x), len(x)) is NumPy's IndexError ("index 7 is out of bounds for axis 0 with size 5"):
SHAPE_MISMATCH, and the Python function raises it. `index_update` writes in idx's C order, so
the last of repeated indices wins, as in NumPy. The front end builds x[idx], x[idx] = v, np.take
and np.add.at on these (tracer/frontend/numpy_take.py); codegen/take.py lowers them.

`index_select` and `index_add` are differentiable: the gradient of x[idx] is the incoming one
added up at the rows idx names (`index_add` into zeros), that of `index_add` is the incoming one
for x and its rows at idx for the values. `index_update` has no rule (which of repeated indices
was written last decides where a gradient goes).
"""
from __future__ import annotations

from tracer.errors import OpFailure, Status
from tracer.ir.array_ops import zeros_like
from tracer.ir.registry import define
from tracer.ir.types import BOOL, I64, ArrayType, ScalarType

FAILS = [Status.FALLBACK, Status.SHAPE_MISMATCH, Status.NO_MEMORY]


def selected_shape(x: ArrayType, idx: ArrayType) -> tuple:
    return idx.shape + x.shape[1:]


def _check_types(t, what: str, with_values: bool):
    if len(t) != 2 + with_values or not isinstance(t[0], ArrayType) or t[0].rank == 0:
        raise TypeError(f"{what} takes an array of rank 1 or more, an int64 index array"
                        + (" and the values" if with_values else ""))
    x, idx = t[0], t[1]
    if not isinstance(idx, ArrayType) or idx.dtype != I64:
        raise TypeError(f"{what}: the index must be an int64 array, not {idx}")
    if with_values:
        values = t[2]
        if isinstance(values, ScalarType):
            if values != x.dtype:
                raise TypeError(f"{what}: a {values} value for an array of {x.dtype}")
        elif (not isinstance(values, ArrayType) or values.dtype != x.dtype
              or values.rank != idx.rank + x.rank - 1
              or any(m is not None and n is not None and m != n for m, n in zip(values.shape, selected_shape(x, idx)))):
            raise TypeError(f"{what}: values {values} do not fit {x}[{idx}]")
    return x, idx


def _select_type(t, a):
    x, idx = _check_types(t, "index_select", False)
    return ArrayType(x.dtype, selected_shape(x, idx))


def _update_type(t, a):
    return _check_types(t, "index_update", True)[0]


def _add_type(t, a):
    x, _ = _check_types(t, "index_add", True)
    if x.dtype == BOOL:
        raise TypeError("index_add: not on bool arrays")
    return x


def _check_bounds(x, idx):
    if idx.size and (idx.min() < -len(x) or idx.max() >= len(x)):
        raise OpFailure(Status.SHAPE_MISMATCH)       # NumPy's IndexError (the Python function raises it)


def _select(x, idx):
    _check_bounds(x, idx)
    return x[idx]


def _values(values, x, idx):
    import numpy as np
    if isinstance(values, np.ndarray) and values.shape != idx.shape + x.shape[1:]:
        raise OpFailure(Status.SHAPE_MISMATCH)
    return values


def _update(x, idx, values):
    _check_bounds(x, idx)
    out = x.copy()
    out[idx] = _values(values, x, idx)
    return out


def _add(x, idx, values):
    import numpy as np
    _check_bounds(x, idx)
    out = x.copy()
    np.add.at(out, idx, _values(values, x, idx))
    return out


def _select_rule(ct, out, x, idx):
    """d x[idx]: the incoming gradient added up at the rows idx names."""
    return zeros_like(ct, x).apply("index_add", idx, ct)


def _add_rule_values(ct, out, x, idx, values):
    picked = ct.apply("index_select", idx)
    if isinstance(values.type, ArrayType):
        return picked
    return picked.apply_attrs("reduce", kind="sum", axes=tuple(range(picked.type.rank)), keepdims=False)


define("index_select", "x[idx]: a new array of x's rows named by the int64 array idx (shape idx.shape + "
       "x.shape[1:]; negative indices count from the end; one out of bounds: SHAPE_MISMATCH)",
       _select_type, _select, FAILS, vjp=(_select_rule, None))
define("index_update", "a copy of x with x[idx] = values (a scalar, or an array of shape idx.shape + x.shape[1:]), "
       "written in idx's C order (the last of repeated indices wins); an index out of bounds: SHAPE_MISMATCH",
       _update_type, _update, FAILS)
define("index_add", "a copy of x with np.add.at(x, idx, values): the values added at the rows idx names, those at "
       "repeated indices added up; an index out of bounds: SHAPE_MISMATCH",
       _add_type, _add, FAILS, vjp=(lambda ct, out, x, idx, values: ct, None, _add_rule_values))
