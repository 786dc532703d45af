"""NumPy's floating-point warnings: an array op that makes a NaN, an infinity or a division by
zero (`inf * 0`, `1e308 * 10`, a sum that overflows) gives NumPy's "invalid value / overflow /
divide by zero encountered in ..." RuntimeWarning. NumPy learns of them from the CPU's
floating-point status flags, cleared before each ufunc and read after it; compiled code does the
same around each array op that computes floats (`sets_flags`), and a raised flag fails the
kernel with FALLBACK: the Python function runs instead and NumPy gives its result and its warning
(ir.Function.python_on_failure). Scalar code raises Python's exceptions instead, and compares
(a NaN compares quietly in NumPy) and selections raise nothing, so neither is checked.

Only where the kernel runs under Python (the JIT): an exported library has no one to warn.
"""
from __future__ import annotations

from llvmlite import ir as ll

from tracer import ir
from tracer.ir.scalar_ops import MATH_UNARY

# ops whose float arithmetic can raise the invalid, overflow or divide-by-zero flag
FLAG_OPS = frozenset({"add", "sub", "mul", "div", "fdiv", "floordiv", "mod", "pow", "ieee_pow", "math_pow", "fma",
                      "hypot", "atan2", "fmod", "remainder", "ieee_log", "to_f32", "reduce", "matmul", "scan",
                      *MATH_UNARY})

# <fenv.h>'s FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW, by architecture
WATCHED = {"x86_64": 0x01 | 0x04 | 0x08, "aarch64": 0x01 | 0x02 | 0x04}

I32 = ll.IntType(32)


def watched_flags(module: ll.Module) -> int | None:
    """The flags to watch on this module's target, or None where they are not known."""
    return WATCHED.get(module.triple.split("-")[0])


def sets_flags(v: ir.Value) -> bool:
    """Whether `v` computes floats over arrays in a way that can raise a watched flag."""
    if not any(isinstance(a.type, ir.ArrayType) for a in v.args):
        return False
    if v.op == "map":
        return any(x.op in FLAG_OPS for x in _walk(v.regions[0]))
    if v.op == "reduce" and v.attrs["kind"] not in ("sum", "prod"):
        return False
    element = v.args[0].type.dtype if isinstance(v.args[0].type, ir.ArrayType) else v.args[0].type
    floats = any(t in (ir.F64, ir.F32) for t in (element, getattr(v.type, "dtype", v.type)))
    return v.op in FLAG_OPS and floats


def clear_flags(k, flags: int) -> None:
    fn = k.declare_function("feclearexcept", ll.FunctionType(I32, [I32]), ("nounwind",))
    k.builder.call(fn, [ll.Constant(I32, flags)])


def flags_raised(k, flags: int) -> ll.Value:
    fn = k.declare_function("fetestexcept", ll.FunctionType(I32, [I32]), ("nounwind",))
    return k.builder.icmp_unsigned("!=", k.builder.call(fn, [ll.Constant(I32, flags)]), ll.Constant(I32, 0))


def _walk(block: ir.Block):
    for x in block.values:
        yield x
        for region in x.regions:
            yield from _walk(region)
