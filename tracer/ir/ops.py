"""The IR's op set, complete: `OPS` (every op, declared in `tracer.ir.registry`'s way by the three
families below), and the op set's meaning as a program: `evaluate` one value, `run` a function.

    scalar_ops     numbers: arithmetic, comparisons, conversions, `math` (Python's semantics)
    cast_ops       `cast`: a number as another NumPy dtype (wraparound, rounding; narrow dtypes)
    numpy_math_ops NumPy's own elementwise math where it differs from `math` (np.exp of arrays)
    structure_ops  tuples, control flow (if, loop, raise, map), autodiff's tapes
    array_ops      NumPy arrays: elementwise versions of the scalar ops, views, reductions, matmul
    scan_ops       cumulative sums and products along an axis (np.cumsum, np.cumprod)
    sort_ops       stable sorts along an axis (np.sort, np.argsort; median and percentiles)
    mask_ops       boolean masks: x[mask] and x[mask] = v (np.nonzero, np.extract, np.compress)
    index_ops      int64 index arrays: x[idx], x[idx] = v, np.add.at (np.take)
    list_ops       lists whose length changes at run time (append, pop, insert, del)
    linalg_ops     np.linalg through the LAPACK NumPy links (solve, inv, det, cholesky, eigh)
    complex_ops    complex arrays seen as their real and imaginary parts, and back

Every other stage keeps one table keyed by op name (grep for the op's name): `codegen.lowerings`
lowers it, passes use `evaluate` to fold it, and `tracer.transforms.autodiff` differentiates it
with the derivative rules declared next to it.
"""
from __future__ import annotations

from tracer.ir import (
    array_ops,
    cast_ops,
    complex_ops,
    index_ops,
    linalg_ops,
    list_ops,
    mask_ops,
    numpy_math_ops,
    scalar_ops,
    scan_ops,
    sort_ops,
    structure_ops,
)
from tracer.ir.array_ops import ELEMENTWISE, evaluate_elementwise, run_map, with_array_failures
from tracer.ir.graph import Function, Value
from tracer.ir.registry import OPS, OpDef
from tracer.ir.scalar_ops import MATH_CAN_OVERFLOW, MATH_UNARY
from tracer.ir.types import F16, F32, F64, ArrayType

__all__ = ["MATH_CAN_OVERFLOW", "MATH_UNARY", "OPS", "OpDef", "Raised", "evaluate", "run"]
FAMILIES = (scalar_ops, cast_ops, numpy_math_ops, structure_ops, array_ops, scan_ops, sort_ops, mask_ops, index_ops,
            list_ops, linalg_ops, complex_ops)   # the modules that declare ops, in order
with_array_failures(OPS)


def evaluate(v: Value, operands: list) -> object:
    """The value of `v` given the Python values of its operands; raises OpFailure."""
    if isinstance(v.type, ArrayType) and v.op in ELEMENTWISE:
        return evaluate_elementwise(v, operands)
    return OPS[v.op].evaluate(*operands, **v.attrs)


class Raised(Exception):
    """`run` met a `raise` op (or an op that failed): the exception the function raises."""


def run(fn: Function, args: list) -> object:
    """Interpret an IR function on Python values: the reference semantics for passes and codegen.
    A failing op raises OpFailure; a `raise` op raises its exception."""
    env = {p: a for p, a in zip(fn.params, args)}

    def run_block(block, params=()):
        env.update(zip(block.params, params))
        for v in block.values:
            if v.op == "raise":
                raise v.attrs["exception"]
            if v.op == "if":
                env[v] = run_block(v.regions[0] if env[v.args[0]] else v.regions[1])
            elif v.op == "loop":
                carried = [env[a] for a in v.args]
                while True:
                    go, *carried = run_block(v.regions[0], carried)
                    if not go:
                        break
                env[v] = tuple(carried)
            elif v.op == "map":
                env[v] = run_map(v, [env[a] for a in v.args], run_block)
            else:
                env[v] = evaluate(v, [env[a] for a in v.args])
        return tuple(env[r] for r in block.results)

    return run_block(fn.body)[0]


# ops whose float arithmetic can raise the invalid, overflow or divide-by-zero flag
FLAG_OPS = frozenset({"add", "sub", "mul", "div", "fdiv", "floordiv", "mod", "pow", "ieee_pow", "math_pow", "fma",
                      "hypot", "c_hypot", "atan2", "fmod", "remainder", "ieee_log", "to_f32", "reduce", "matmul", "scan", "np_exp", "np_log", "np_pow",
                      *MATH_UNARY})


def sets_fp_flags(v: Value) -> bool:
    """Whether `v` computes floats over arrays in a way that can raise the CPU's invalid, overflow or
    divide-by-zero flag: where NumPy would warn (codegen.fpflags watches them)."""
    if not any(isinstance(a.type, ArrayType) for a in v.args):
        return False
    if v.op == "map":
        return any(x.op in FLAG_OPS for x in _walk(v.regions[0]))
    if v.op == "reduce" and v.attrs["kind"] not in ("sum", "prod"):
        return False
    element = v.args[0].type.dtype if isinstance(v.args[0].type, ArrayType) else v.args[0].type
    floats = any(t in (F64, F32, F16) for t in (element, getattr(v.type, "dtype", v.type)))   # (float16: in float32)
    return v.op in FLAG_OPS and floats


def _walk(block):
    for x in block.values:
        yield x
        for region in x.regions:
            yield from _walk(region)
