"""Array ops: NumPy arrays as IR values (registered into `tracer.ir.ops.OPS`).

Two kinds of op work on arrays:
- **Elementwise**: every scalar op of `tracer.ir.ops` that computes numbers (`add`, `exp`, `lt`,
  `select`, `to_f64`, ...) also applies element by element. Its operands are arrays of one shape
  and scalars (a scalar stands for every element), and its result is an array of that shape.
  The front end makes shapes equal first (`broadcast_in_dim`, NumPy's broadcasting); two sizes
  known only at run time that differ make the op fail with FALLBACK (so NumPy's own ValueError
  is raised by the Python function). An element that fails the scalar op (1.0 / 0.0, an int past
  64 bits) fails the op the same way: NumPy gives inf, nan or a wrapped int there, with a warning,
  and running the Python function gives exactly that.
- **The ops below**: views, which share memory with their operand (`broadcast_in_dim`,
  `transpose`, `index`, `slice`); reductions (`reduce`, `argreduce`); `matmul`; new arrays (`full`,
  `iota`, `pack`, `copy`, `reshape`); and the two ops that write memory (`store`, `writeback`).

Every op but a view makes a new array. Only `store` writes into an array (one made by the
function itself, or a view of one), and `writeback` copies the final contents of argument arrays the function
updated in place back into them, as its last step (so a failure before it changes nothing and
the Python function can run instead). Float sums over the last axis add in pairs, as NumPy's do
(`pairwise_sum`); other reductions run in row-major order, one element after another.
"""
from __future__ import annotations

import math
from dataclasses import replace

from tracer.errors import OpFailure, Status
from tracer.ir import cast_ops, numpy_math_ops  # noqa: F401 (np_exp, cast: defined before ELEMENTWISE extends them)
from tracer.ir.graph import Value
from tracer.ir.reductions import COUNTED_SUMS, reduce_in_order
from tracer.ir.registry import OPS, FailureRule, OpDef, define, may_fail_by_status
from tracer.ir.scalar_ops import MATH_UNARY, fused_multiply_add
from tracer.ir.types import (
    BOOL,
    F16,
    F32,
    F64,
    I64,
    NUMPY_DTYPE_NAMES,
    ArrayType,
    ScalarType,
    TupleType,
    Type,
    type_of_constant,
)

ELEMENTWISE = {
    "add", "sub", "mul", "div", "fdiv", "floordiv", "mod", "pow", "ieee_pow", "neg", "abs", "min", "max",
    "maximum", "minimum", "fma", "lt", "le", "gt", "ge", "eq", "ne", "not", "select", "to_f64", "to_f32", "to_i64",
    "to_bool", *MATH_UNARY, "ieee_log", "fabs", "atan2", "copysign", "fmod", "hypot", "c_hypot", "math_pow", "floor",
    "ceil", "trunc", "round_even", "isnan", "isinf", "isfinite", "np_exp", "np_log", "np_tanh", "np_pow", "cast", "bit_and", "bit_or", "bit_xor", "lshift", "rshift",
    "invert",
}


def element_type(t: Type) -> ScalarType:
    return t.dtype if isinstance(t, ArrayType) else t


def _numpy():
    import numpy
    return numpy


def _dtype(t: ScalarType):
    return _numpy().dtype(NUMPY_DTYPE_NAMES[t])


def _python_scalar(x):
    return x.item() if hasattr(x, "item") else x


# ------------------------------------------------------------------- NumPy's maximum/minimum
# np.maximum(a, b) is a if a > b or a is NaN, else b (so a NaN on either side wins, and a tie
# of signed zeros gives b: np.maximum(-0.0, 0.0) is 0.0, np.maximum(0.0, -0.0) is -0.0). At a tie the gradient is split in half, as JAX does for maximum.
def _extremum_rules(pick_a):
    def rule_a(ct, out, a, b):
        return ct * pick_a(a, b).select(1.0, a.eq(b).select(0.5, 0.0))

    def rule_b(ct, out, a, b):
        return ct * pick_a(b, a).select(1.0, a.eq(b).select(0.5, 0.0))
    return rule_a, rule_b


def _numpy_maximum(a, b):
    return a if a > b or a != a else b


def _numpy_minimum(a, b):
    return a if a < b or a != a else b


_NUMBER_BINARY = OPS["min"].result_type
define("maximum", "np.maximum(a, b): a if a > b or a is NaN, else b", _NUMBER_BINARY, _numpy_maximum,
        vjp=_extremum_rules(lambda a, b: a > b))
define("minimum", "np.minimum(a, b): a if a < b or a is NaN, else b", _NUMBER_BINARY, _numpy_minimum,
        vjp=_extremum_rules(lambda a, b: a < b))


# arrays: reading their elements. The evaluators take NumPy arrays. An index out of bounds
# returns SHAPE_MISMATCH, so the Python function runs and raises NumPy's own IndexError (its message
# names the index, axis and size); that is exact while compiled code does not write to arrays.
def _dim_type(t, a):
    if len(t) != 1 or not isinstance(t[0], ArrayType) or not 0 <= a["axis"] < t[0].rank:
        raise TypeError("dim takes an array and an axis below its rank")
    return I64


def _load_type(t, a):
    if not t or not isinstance(t[0], ArrayType) or tuple(t[1:]) != (I64,) * t[0].rank:
        raise TypeError("load takes an array and one i64 index per axis")
    return t[0].dtype


def _load(array, *indices):
    position = []
    for i, n in zip(indices, array.shape):
        i = i + n if i < 0 else i
        if not 0 <= i < n:
            raise OpFailure(Status.SHAPE_MISMATCH)
        position.append(i)
    x = array[tuple(position)]
    return bool(x) if array.dtype == bool else int(x) if array.dtype.kind in "iu" else float(x)


define("dim", "the size of axis attrs['axis'] of an array", _dim_type, lambda a, axis: a.shape[axis],
        attrs=("axis",))
define("load", "the element of an array at one i64 index per axis (a negative index counts from "
        "the end, as in NumPy)", _load_type, _load, [Status.SHAPE_MISMATCH])


# ------------------------------------------------------------------------ elementwise on arrays
def _elementwise_type(scalar_rule):
    def rule(types, attrs):
        shapes = {t.shape for t in types if isinstance(t, ArrayType)}
        if not shapes:
            return scalar_rule(types, attrs)
        if len(shapes) != 1:
            raise TypeError("elementwise operands must have one shape, not " + ", ".join(map(str, types)))
        return ArrayType(scalar_rule(tuple(element_type(t) for t in types), attrs), shapes.pop())
    return rule


for _name in ELEMENTWISE:
    OPS[_name] = replace(OPS[_name], result_type=_elementwise_type(OPS[_name].result_type))


def evaluate_elementwise(v: Value, operands: list):
    """An elementwise op on NumPy arrays, element by element with the scalar op's evaluator
    (so an element fails exactly where the compiled op fails)."""
    np = _numpy()
    shapes = {x.shape for x in operands if isinstance(x, np.ndarray)}
    if len(shapes) != 1:
        raise OpFailure(Status.SHAPE_MISMATCH)          # run-time sizes that differ: NumPy's ValueError
    shape = shapes.pop()
    scalar = OPS[v.op].evaluate
    out = np.empty(shape, dtype=_dtype(v.type.dtype))
    for index in np.ndindex(shape):
        out[index] = scalar(*(_python_scalar(x[index]) if isinstance(x, np.ndarray) else x for x in operands),
                            **v.attrs)
    return out


def run_map(v: Value, operands: list, run_block):
    """The value of a `map` (see tracer.ir.ops.run): its region on every element, in row-major order
    (into its first attrs['into'] operands, if any, which it returns)."""
    np = _numpy()
    if len({x.shape for x in operands}) != 1:
        raise OpFailure(Status.SHAPE_MISMATCH)
    shape = operands[0].shape
    types = v.type.elements if isinstance(v.type, TupleType) else (v.type,)
    n = v.attrs.get("into", 0)
    outs = operands[:n] if n else [np.empty(shape, dtype=_dtype(t.dtype)) for t in types]
    operands = operands[n:]
    for index in np.ndindex(shape):
        for out, x in zip(outs, run_block(v.regions[0], [_python_scalar(x[index]) for x in operands])):
            out[index] = x
    return tuple(outs) if isinstance(v.type, TupleType) else outs[0]


def may_fail(opdef: OpDef, v: Value, scalar_rule: FailureRule) -> bool:
    """The failure rule of ops on arrays (a failed allocation is not counted: a dead array op
    may go, as a dead float op may). An elementwise op fails where its scalar op would."""
    statuses = [s for s in opdef.statuses if s != Status.NO_MEMORY]
    sized_at_run_time = [a for a in v.args if isinstance(a.type, ArrayType) and None in a.type.shape]
    if v.op == "map":                # operands whose sizes differ (its region's ops fail by their own rules)
        return len(sized_at_run_time) >= 2
    if v.op in ELEMENTWISE:
        if len(sized_at_run_time) >= 2:
            return True
        scalar = Value(v.op, tuple(Value("param", (), a.type.dtype) if isinstance(a.type, ArrayType) else a
                                   for a in v.args), element_type(v.type), v.attrs)
        return scalar_rule(opdef, scalar)
    if v.op == "full":               # only a negative size fails
        return any(a.op != "const" or a.attrs["value"] < 0 for a in v.args[1:])
    if v.op == "broadcast_in_dim":   # only a run-time size that does not match fails
        return None in v.args[0].type.shape
    return bool(statuses)


def with_array_failures(ops: dict[str, OpDef]) -> None:
    """Give every op in `ops` a failure rule that applies `may_fail` to its uses on arrays (run
    once, after every op is declared)."""
    def on_arrays(scalar_rule: FailureRule) -> FailureRule:
        def rule(op: OpDef, v: Value) -> bool:
            if isinstance(v.type, ArrayType) or any(isinstance(a.type, ArrayType) for a in v.args):
                return may_fail(op, v, scalar_rule)
            return scalar_rule(op, v)
        return rule
    for name, op in ops.items():
        ops[name] = replace(op, fails_when=on_arrays(op.fails_when or may_fail_by_status))


# ------------------------------------------------------------------------------ helpers
def _array(t: Type, what: str) -> ArrayType:
    if not isinstance(t, ArrayType):
        raise TypeError(f"{what} takes an array, not {t}")
    return t


def _sizes(types, count: int, what: str) -> None:
    if len(types) != count or any(t != I64 for t in types):
        raise TypeError(f"{what} takes {count} i64 size(s)")


def _with_fallback(f):
    """An evaluator whose NumPy errors (bad sizes, out of bounds) are run-time failures."""
    def evaluate(*args, **attrs):
        try:
            return f(*args, **attrs)
        except (ValueError, IndexError):
            raise OpFailure(Status.SHAPE_MISMATCH) from None
    return evaluate


def _sizes_of(ct, x):
    """The sizes of array Sym `x`, as i64 Syms (constants where the type knows them)."""
    return [ct.constant(n) if n is not None else x.apply_attrs("dim", axis=a)
            for a, n in enumerate(x.type.shape)]


def zeros_like(ct, x):
    """Zeros of x's type, for derivative rules."""
    return ct.constant(0.0).apply_attrs("full", *_sizes_of(ct, x), shape=x.type.shape)


# --------------------------------------------------------------------------------- views
def _broadcast_type(t, a):
    x = _array(t[0], "broadcast_in_dim")
    shape, dims = tuple(a["shape"]), tuple(a["dims"])
    _sizes(t[1:], len(shape), "broadcast_in_dim")
    if len(dims) != x.rank or list(dims) != sorted(set(dims)) or any(not 0 <= d < len(shape) for d in dims):
        raise TypeError(f"broadcast_in_dim: dims {dims} must map the {x.rank} axes of {x} in order")
    for n, d in zip(x.shape, dims):
        if n not in (1, None) and shape[d] not in (n, None):
            raise TypeError(f"broadcast_in_dim: cannot broadcast {x} to shape {shape}")
    return ArrayType(x.dtype, shape)


def _broadcast(x, *sizes, shape, dims):
    np = _numpy()
    expanded = x.reshape([x.shape[dims.index(d)] if d in dims else 1 for d in range(len(shape))])
    return expanded if expanded.shape == tuple(sizes) else np.broadcast_to(expanded, sizes)


def _broadcast_rule(ct, out, x, *sizes, shape, dims):
    """Sum the gradient over the axes broadcasting made: new ones, and ones stretched from 1."""
    stretched = tuple(d for n, d in zip(x.type.shape, dims) if n == 1 and shape[d] != 1)
    if stretched:
        ct = ct.apply_attrs("reduce", kind="sum", axes=stretched, keepdims=True)
    new = tuple(d for d in range(len(shape)) if d not in dims)
    if new:
        ct = ct.apply_attrs("reduce", kind="sum", axes=new, keepdims=False)
    return ct


define("broadcast_in_dim", "a view of array x with shape attrs['shape'] (the i64 operands give its sizes): "
        "input axis i becomes output axis dims[i]; new axes and axes of size 1 repeat (stride 0)",
        _broadcast_type, _with_fallback(_broadcast), [Status.FALLBACK, Status.SHAPE_MISMATCH], attrs=("shape", "dims"),
        vjp=(_broadcast_rule,))


def _transpose_type(t, a):
    x = _array(t[0], "transpose")
    perm = tuple(a["perm"])
    if len(t) != 1 or sorted(perm) != list(range(x.rank)):
        raise TypeError(f"transpose: {perm} is not a permutation of the axes of {x}")
    return ArrayType(x.dtype, tuple(x.shape[p] for p in perm))


def _inverse(perm):
    return tuple(sorted(range(len(perm)), key=lambda i: perm[i]))


define("transpose", "a view of x with its axes permuted: axis i of the result is axis perm[i] of x",
        _transpose_type, lambda x, perm: x.transpose(perm), attrs=("perm",),
        vjp=(lambda ct, out, x, perm: ct.apply_attrs("transpose", perm=_inverse(perm)),))


def _index_type(t, a):
    x = _array(t[0], "index")
    if not 1 <= len(t) - 1 < x.rank or any(i != I64 for i in t[1:]):
        raise TypeError("index takes an array and fewer i64 indices than its rank (at least one)")
    return ArrayType(x.dtype, x.shape[len(t) - 1:])


def _bounded(x, indices):
    position = []
    for i, n in zip(indices, x.shape):
        i = i + n if i < 0 else i
        if not 0 <= i < n:
            raise OpFailure(Status.SHAPE_MISMATCH)      # NumPy's IndexError, raised by the Python function
        position.append(i)
    return tuple(position)


def _scatter_rule(ct, out, x, *indices):
    """The gradient of x[indices]: zeros with ct at that place."""
    z = zeros_like(ct, x)
    z.apply_attrs("store", ct, *indices)
    return z


define("index", "a view of x[i0, ..., ik] (fewer indices than axes; negative ones count from the end)",
        _index_type, lambda x, *indices: x[_bounded(x, indices)], [Status.FALLBACK, Status.SHAPE_MISMATCH],
        vjp=(_scatter_rule,))
# a scalar element read (`load`, defined with the scalar ops) has the same derivative
OPS["load"] = replace(OPS["load"], vjp=(_scatter_rule,))


def _slice_type(t, a):
    x = _array(t[0], "slice")
    steps, shape = tuple(a["steps"]), tuple(a["shape"])
    if len(steps) != x.rank or len(shape) != x.rank or 0 in steps:
        raise TypeError(f"slice: steps {steps} and shape {shape} for {x}")
    _sizes(t[1:], 2 * x.rank, "slice")
    return ArrayType(x.dtype, shape)


def _slice(x, *bounds, steps, shape):
    return x[tuple(slice(bounds[2 * d], bounds[2 * d + 1], step) for d, step in enumerate(steps))]


def _unslice_rule(ct, out, x, *bounds, steps, shape):
    """The gradient of x[slices]: zeros with ct in the sliced places."""
    z = zeros_like(ct, x)
    z.apply_attrs("slice", *bounds, steps=steps, shape=shape).apply_attrs("store", ct)
    return z


define("slice", "a view of x[start_0:stop_0:steps[0], ...] (operands: x, then start and stop of every axis; "
        "Python's rules: negative bounds count from the end, bounds past the ends are clamped)",
        _slice_type, _slice, attrs=("steps", "shape"), vjp=(_unslice_rule,))


# ------------------------------------------------------------------------------ reductions
REDUCTIONS = {"sum", "prod", "max", "min"}


def _reduce_type(t, a):
    x = _array(t[0], "reduce")
    axes, kind = tuple(a["axes"]), a["kind"]
    if len(t) != 1 or kind not in REDUCTIONS or list(axes) != sorted(set(axes)) or not all(0 <= d < x.rank for d in axes):
        raise TypeError(f"reduce: kind {kind!r} over axes {axes} of {x}")
    if x.dtype == F16 and kind not in ("sum", "prod"):
        raise TypeError(f"reduce: {kind} of {x} (of float16, NumPy's float16 loops: sum and prod)")
    if a.get("dtype") is not None and (a["dtype"] != "float32" or x.dtype != F16 or kind != "sum"):
        raise TypeError(f"reduce: the {kind} of {x} with dtype {a['dtype']!r} (only a float16 sum in float32)")
    dtype = F32 if a.get("dtype") else I64 if kind in ("sum", "prod") and x.dtype == BOOL or \
        kind == "sum" and x.dtype in COUNTED_SUMS else x.dtype
    if len(axes) == x.rank and not a["keepdims"]:
        return dtype
    if a["keepdims"]:
        return ArrayType(dtype, tuple(1 if d in axes else n for d, n in enumerate(x.shape)))
    return ArrayType(dtype, tuple(n for d, n in enumerate(x.shape) if d not in axes))


def _reduce_rule(ct, out, x, kind, axes, keepdims):
    if kind == "prod":
        raise NotImplementedError("the derivative of a product reduction")
    sizes = _sizes_of(ct, x)
    kept = tuple(range(x.type.rank)) if keepdims else tuple(d for d in range(x.type.rank) if d not in axes)

    def spread(s):     # s has the reduced shape (a scalar if every axis went): back to x's shape
        if isinstance(s.type, ArrayType):
            return s.apply_attrs("broadcast_in_dim", *sizes, shape=x.type.shape, dims=kept)
        return s.apply_attrs("full", *sizes, shape=x.type.shape)
    if kind == "sum":
        return spread(ct)
    # max/min: the gradient goes to the elements equal to the result, split evenly (as JAX does)
    hit = x.eq(spread(out)).to_f64()
    count = hit.apply_attrs("reduce", kind="sum", axes=axes, keepdims=keepdims)
    return spread(ct / count) * hit


define("reduce", "attrs['kind'] (sum, prod, max, min) of x over attrs['axes'] (keepdims as NumPy's); "
        "all axes without keepdims give a scalar; of float16, NumPy's float16 loop, or with attrs['dtype'] "
        "'float32' np.add.reduce(x, dtype=float32) (tracer.ir.reductions)", _reduce_type, reduce_in_order, [Status.FALLBACK, Status.SHAPE_MISMATCH],
        attrs=("kind", "axes", "keepdims"), vjp=(_reduce_rule,))


def _argreduce_type(t, a):
    x = _array(t[0], "argreduce")
    axis = a["axis"]
    if len(t) != 1 or a["kind"] not in ("argmax", "argmin") or not (axis is None or 0 <= axis < x.rank):
        raise TypeError(f"argreduce: kind {a['kind']!r} over axis {axis} of {x}")
    if axis is None:
        return I64
    return ArrayType(I64, tuple(n for d, n in enumerate(x.shape) if d != axis))


def _argreduce(x, kind, axis):
    np = _numpy()
    if x.size == 0 or (axis is not None and x.shape[axis] == 0):
        raise OpFailure(Status.SHAPE_MISMATCH)
    r = getattr(np, kind)(x, axis=axis)
    return int(r) if axis is None else np.asarray(r, dtype=np.int64)


define("argreduce", "the index of the first largest (argmax) or smallest (argmin) element over attrs['axis'] "
        "(None: of the flattened array); a NaN counts as the extreme", _argreduce_type, _argreduce,
        [Status.FALLBACK, Status.SHAPE_MISMATCH], attrs=("kind", "axis"), vjp=(None,))


# ---------------------------------------------------------------------------------- matmul
def matmul_shape(a: tuple, b: tuple) -> tuple | None:
    """The shape of a @ b for ranks 1 and 2 (None: a rank matmul does not take)."""
    if not (1 <= len(a) <= 2 and 1 <= len(b) <= 2):
        return None
    return a[:-1] + b[1:] if len(b) == 2 else a[:-1]


def _matmul_type(t, a):
    x, y = (_array(u, "matmul") for u in t)
    shape = matmul_shape(x.shape, y.shape)
    k_x, k_y = x.shape[-1], y.shape[0]
    if shape is None or x.dtype != y.dtype or x.dtype != F64 or (None not in (k_x, k_y) and k_x != k_y):
        raise TypeError(f"matmul of {x} and {y}")
    return ArrayType(F64, shape) if shape else F64


DOT_LANES = 16    # the partial sums of a vector times a vector (codegen.matmul: 4 vectors of 4 doubles)


def _dot_in_lanes(x, y, fused: bool) -> float:
    """x @ y of two vectors as compiled: the terms of the whole blocks of DOT_LANES added into
    DOT_LANES partial sums (term p into sum p % DOT_LANES, each in order from +0.0), the sums
    halved pairwise (sum l plus sum l + half) down to one, then the terms left over in order.
    (NumPy's BLAS splits its sums too, in an order of its own.)"""
    np = _numpy()
    n = x.shape[0]
    whole = n - n % DOT_LANES
    if fused:
        sums = [0.0] * DOT_LANES
        for p in range(whole):
            sums[p % DOT_LANES] = fused_multiply_add(float(x[p]), float(y[p]), sums[p % DOT_LANES])
    elif whole:
        terms = (x[:whole] * y[:whole]).reshape(-1, DOT_LANES)
        sums = [float(s) for s in np.add.accumulate(terms, axis=0)[-1] + 0.0]     # (from +0.0)
    else:
        sums = [0.0] * DOT_LANES
    while len(sums) > 1:
        half = len(sums) // 2
        sums = [sums[i] + sums[i + half] for i in range(half)]
    total = sums[0]
    for p in range(whole, n):
        total = fused_multiply_add(float(x[p]), float(y[p]), total) if fused else total + float(x[p]) * float(y[p])
    return total


def _matmul(x, y, fused=False):
    np = _numpy()
    if x.shape[-1] != y.shape[0]:
        raise OpFailure(Status.SHAPE_MISMATCH)
    if x.ndim == 1 and y.ndim == 1:
        return _dot_in_lanes(x, y, fused)
    a = x if x.ndim == 2 else x[None, :]
    b = y if y.ndim == 2 else y[:, None]
    if a.shape[1] == 0:
        out = np.zeros((a.shape[0], b.shape[1]))
    elif fused:   # each term added with one rounding (the FMA pass's matmul), in order
        out = np.zeros((a.shape[0], b.shape[1]))
        for i, j in np.ndindex(out.shape):
            total = 0.0           # (NumPy's dot and matmul start at +0.0)
            for k in range(a.shape[1]):
                total = fused_multiply_add(float(a[i, k]), float(b[k, j]), total)
            out[i, j] = total
    else:   # in the compiled order: each sum over k, one product after another
        out = np.add.accumulate(a[:, :, None] * b[None, :, :], axis=1)[:, -1, :] + 0.0   # from +0.0
    out = out.reshape(matmul_shape(x.shape, y.shape))
    return out.item() if out.ndim == 0 else out


def _outer(ct, u, v):
    """u[:, None] * v[None, :] for 1-D Syms."""
    m, n = _sizes_of(ct, u)[0], _sizes_of(ct, v)[0]
    shape = (u.type.shape[0], v.type.shape[0])
    return (u.apply_attrs("broadcast_in_dim", m, n, shape=shape, dims=(0,))
            * v.apply_attrs("broadcast_in_dim", m, n, shape=shape, dims=(1,)))


def _matmul_rule_a(ct, out, a, b):
    if b.type.rank == 1:
        return ct * b if a.type.rank == 1 else _outer(ct, ct, b)        # (k)@(k), (m,k)@(k)
    return ct.apply_attrs("matmul", b.apply_attrs("transpose", perm=(1, 0)))   # ct @ b.T


def _matmul_rule_b(ct, out, a, b):
    if a.type.rank == 1:
        return ct * a if b.type.rank == 1 else _outer(ct, a, ct)        # (k)@(k), (k)@(k,n)
    return a.apply_attrs("transpose", perm=(1, 0)).apply_attrs("matmul", ct)  # a.T @ ct


define("matmul", "a @ b for f64 arrays of rank 1 or 2 (NumPy's matmul; the sum over k runs in order, but for a "
        "vector times a vector, in DOT_LANES partial sums: _dot_in_lanes; "
        "attrs fused=True, set by FMA fusion: each term is added with one fma)",
        _matmul_type, _matmul, [Status.FALLBACK, Status.SHAPE_MISMATCH], vjp=(_matmul_rule_a, _matmul_rule_b))


# ----------------------------------------------------------------------------- new arrays
def _full_type(t, a):
    shape = tuple(a["shape"])
    if not t or not isinstance(t[0], ScalarType):
        raise TypeError("full takes a scalar fill value and the sizes")
    _sizes(t[1:], len(shape), "full")
    return ArrayType(t[0], shape)


def _full(fill, *sizes, shape, unread=False):
    if any(n < 0 for n in sizes):
        raise OpFailure(Status.SHAPE_MISMATCH)        # NumPy: "negative dimensions are not allowed"
    return _numpy().full(sizes, fill, dtype=_dtype(type_of_constant(fill)))


define("full", "a new array of the i64 sizes (shape attrs['shape']) with every element the fill value "
        "(attrs unread=True: stores write every element before any is read, so compiled code may skip the fill)",
        _full_type, _full, [Status.FALLBACK, Status.SHAPE_MISMATCH, Status.NO_MEMORY], attrs=("shape",),
        vjp=(lambda ct, out, fill, *sizes, shape, unread=False: ct.apply_attrs("reduce", kind="sum", axes=tuple(range(len(shape))),
                                                                  keepdims=False),))


def _iota_type(t, a):
    _sizes(t, 1, "iota")
    return ArrayType(I64, tuple(a["shape"]))


def _iota(n, shape):
    if n < 0:
        n = 0
    return _numpy().arange(n, dtype=_numpy().int64)


define("iota", "a new i64 array 0, 1, ..., n - 1 (np.arange(n); empty for n <= 0)", _iota_type, _iota,
        [Status.NO_MEMORY], attrs=("shape",))


def _pack_type(t, a):
    shape = tuple(a["shape"])
    if not t or len(set(t)) != 1 or not isinstance(t[0], ScalarType) or math.prod(shape) != len(t):
        raise TypeError("pack takes prod(shape) scalars of one type")
    return ArrayType(t[0], shape)


def _pack_rule(i):
    def rule(ct, out, *xs, shape):
        import numpy
        index = numpy.unravel_index(i, shape)
        return ct.apply("load", *(ct.constant(int(j)) for j in index))
    return rule


class _PackRules(tuple):
    """pack has one operand per element: its i-th rule reads element i of the gradient."""
    def __iter__(self):
        i = 0
        while True:
            yield _pack_rule(i)
            i += 1


define("pack", "a new array of shape attrs['shape'] from its scalar operands in row-major order "
        "(np.array([a, b, c]))", _pack_type,
        lambda *xs, shape: _numpy().array(xs).reshape(shape), [Status.NO_MEMORY], attrs=("shape",),
        vjp=_PackRules())


def _same_type(t, a):
    x = _array(t[0], "copy")
    if len(t) != 1:
        raise TypeError("copy takes one array")
    return x


define("copy", "a new array with the elements of x (C order)", _same_type, lambda x: x.copy(),
        [Status.NO_MEMORY], vjp=(lambda ct, out, x: ct,))


def _reshape_type(t, a):
    x = _array(t[0], "reshape")
    shape = tuple(a["shape"])
    _sizes(t[1:], len(shape), "reshape")
    return ArrayType(x.dtype, shape)


def _reshape(x, *sizes, shape):
    if math.prod(sizes) != x.size or any(n < 0 for n in sizes):
        raise OpFailure(Status.SHAPE_MISMATCH)
    return x.reshape(sizes).copy()


define("reshape", "a new array with the elements of x in C order and the i64 sizes (shape attrs['shape'])",
        _reshape_type, _reshape, [Status.FALLBACK, Status.SHAPE_MISMATCH, Status.NO_MEMORY], attrs=("shape",),
        vjp=(lambda ct, out, x, *sizes, shape: ct.apply_attrs("reshape", *_sizes_of(ct, x), shape=x.type.shape),))


# ---------------------------------------------------------------------------------- writes
def _store_type(t, a):
    x = _array(t[0], "store")
    k = len(t) - 2
    if k < 0 or k > x.rank or any(i != I64 for i in t[2:]):
        raise TypeError("store takes an array, a value and at most one i64 index per axis")
    target = ArrayType(x.dtype, x.shape[k:]) if k < x.rank else x.dtype
    if t[1] != target and not (isinstance(t[1], ArrayType) and isinstance(target, ArrayType)
                               and t[1].dtype == x.dtype and len(t[1].shape) == len(target.shape)):
        raise TypeError(f"store: cannot write {t[1]} into {target}")
    return TupleType(())


def _store(x, value, *indices):
    np = _numpy()
    position = _bounded(x, indices)
    if isinstance(value, np.ndarray):
        if value.shape != x[position].shape:
            raise OpFailure(Status.SHAPE_MISMATCH)
        x[position] = value.copy()
    else:
        x[position] = value
    return ()


define("store", "x[indices] = value (fewer indices than axes: value is an array of the rest's shape); "
        "x is an array the function made, or an argument array the in-place pass lets it write "
        "(tracer.transforms.passes.inplace)", _store_type, _store, [Status.FALLBACK, Status.SHAPE_MISMATCH], effect=True)


def _writeback_type(t, a):
    if len(t) % 2 or any(not isinstance(u, ArrayType) for u in t) or any(t[i] != t[i + 1] for i in range(0, len(t), 2)):
        raise TypeError("writeback takes pairs (argument array, its new contents) of one type")
    return TupleType(())


def _writeback(*pairs):
    for target, value in zip(pairs[::2], pairs[1::2]):
        target[...] = value
    return ()


define("writeback", "copy each new contents into its argument array (pairs of operands), after checking that "
        "no written argument overlaps another argument array (else FALLBACK: Python does it)",
        _writeback_type, _writeback, [Status.FALLBACK], effect=True)


def _in_place_check_type(t, a):
    if any(not isinstance(u, ArrayType) for u in t) or sum(a["groups"]) != len(t) or 0 in a["groups"]:
        raise TypeError("in_place_check takes groups of arrays (an argument array, then what its map reads)")
    return TupleType(())


def _in_place_check(*arrays, groups):
    start = 0
    for n in groups:
        target, *read = arrays[start:start + n]
        if any(x.shape != target.shape for x in read):
            raise OpFailure(Status.SHAPE_MISMATCH)
        start += n
    return ()


define("in_place_check", "before maps write argument arrays in place (tracer.transforms.passes.inplace): per group "
        "(attrs['groups'] gives their sizes) of an argument array and the arrays its map reads, the sizes agree "
        "(else SHAPE_MISMATCH), and the argument shares no memory with another argument array (else FALLBACK)",
        _in_place_check_type, _in_place_check, [Status.FALLBACK, Status.SHAPE_MISMATCH], attrs=("groups",),
        effect=True)
