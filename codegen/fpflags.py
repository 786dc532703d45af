"""NumPy's floating-point warnings: an array op that makes a NaN, an infinity or a division by
zero (`inf * 0`, `1e308 * 10`, a sum that overflows) gives NumPy's "invalid value / overflow /
divide by zero encountered in ..." RuntimeWarning. NumPy learns of them from the CPU's
floating-point status flags, cleared before each ufunc and read after it; compiled code does the
same around each array op that computes floats (tracer.ir.ops.sets_fp_flags), and a raised flag fails the
kernel with FALLBACK: the Python function runs instead and NumPy gives its result and its warning
(ir.Function.python_on_failure). Scalar code raises Python's exceptions instead, and compares
(a NaN compares quietly in NumPy) and selections raise nothing, so neither is checked.

NumPy's scalars warn too (`x[0] * 1e300`: "overflow encountered in scalar multiply"), but LLVM
may move scalar arithmetic past a test of the flags, and a test around each op in a loop would
cost more than the op. Their results are checked instead (op numpy_scalar_check: an infinity
from finite operands, a NaN from operands that are not NaN), and the answers gathered in one
flag (KernelBuilder.numpy_warns) that fails the kernel with FALLBACK before it writes its
argument arrays (CHECKED_BEFORE) and before it returns. Where the result is finite (nearly
always) a check is one compare and a branch not taken.

Only where the kernel runs under Python (the JIT): an exported library has no one to warn.
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen.arrays import VIEWS
from codegen.lowerings import lowers
from tracer import ir
from tracer.errors import Status
from tracer.ir.ops import FLAG_OPS
from tracer.ir.scalar_ops import KEEPS_NONFINITE as CHAIN
from tracer.ir.scalar_ops import MAX_CHAIN

# <fenv.h>'s FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW, by architecture
WATCHED = {"x86_64": 0x01 | 0x04 | 0x08, "aarch64": 0x01 | 0x02 | 0x04}

# the ops that write argument arrays: what comes after them cannot run the Python function again
CHECKED_BEFORE = ("writeback", "in_place_check")

I1, I32 = ll.IntType(1), ll.IntType(32)


def watched_flags(module: ll.Module) -> int | None:
    """The flags to watch on this module's target, or None where they are not known."""
    return WATCHED.get(module.triple.split("-")[0])


def clear_flags(k, flags: int) -> None:
    fn = k.declare_function("feclearexcept", ll.FunctionType(I32, [I32]), ("nounwind",))
    k.builder.call(fn, [ll.Constant(I32, flags)])


def flags_raised(k, flags: int) -> ll.Value:
    fn = k.declare_function("fetestexcept", ll.FunctionType(I32, [I32]), ("nounwind",))
    return k.builder.icmp_unsigned("!=", k.builder.call(fn, [ll.Constant(I32, flags)]), ll.Constant(I32, 0))


def start_numpy_warns(k, fn: ir.Function) -> None:
    """The flag of NumPy scalars' warnings, cleared (only where the kernel runs under Python and
    can run the Python function again: a kernel that called into it cannot). Where the kernel
    stores into argument arrays (tracer.transforms.passes.inplace) a warning fails it at once
    instead: the Python function then runs again having seen only the stores before the warning."""
    ops = {v.op for v in fn.walk()}
    if "numpy_scalar_check" in ops and "python_call" not in ops and k.check_signals is not None:
        k.numpy_warns = k.stack_slot(I1, "numpy_warns")
        k.builder.store(ll.Constant(I1, 0), k.numpy_warns)
        k.numpy_warns_at_once = any(v.op == "store" and _root(v.args[0]).op == "param" for v in fn.walk())


def _root(v: ir.Value) -> ir.Value:
    while v.op in VIEWS:
        v = v.args[0]
    return v


def fail_if_numpy_warns(k) -> None:
    """FALLBACK if a checked NumPy scalar result would have warned (the Python function runs)."""
    if k.numpy_warns is not None:
        k.fail_if(k.builder.load(k.numpy_warns), Status.FALLBACK)


@lowers("numpy_scalar_check")
def numpy_scalar_check(k, v: ir.Value, result, a, b):
    if k.numpy_warns is None:
        return result
    bld = k.builder
    # one compare where the result is finite (nearly always): a loop pays little for its checks
    with bld.if_then(bld.not_(_magnitude(k, result, "<")), likely=False):
        link = v.args[0]
        warns = _warns(k, link, result, a, b) if link.op in CHAIN else _warns(k, None, result, a, b)
        if k.numpy_warns_at_once:
            k.fail_if(warns, Status.FALLBACK)
        else:
            bld.store(bld.or_(bld.load(k.numpy_warns), warns), k.numpy_warns)
    return result


def any_nonfinite(k, region: ir.Block) -> ll.Value:
    """Whether a float result of the arithmetic of `region` (straight-line, just lowered) is an
    infinity or a NaN: by integer tests of the exponent bits, which raise no flag themselves.
    It reads the results, so LLVM keeps (and vectorizes) the arithmetic that makes them."""
    bld = k.builder
    found = ll.Constant(I1, 0)
    for x in region.values:
        if x.op in FLAG_OPS and x.type in (ir.F64, ir.F32) and not x.regions:
            bits, exponent = (ll.IntType(64), 0x7FF << 52) if x.type == ir.F64 else (I32, 0xFF << 23)
            masked = bld.and_(bld.bitcast(k.regions.values[x], bits), ll.Constant(bits, exponent))
            found = bld.or_(found, bld.icmp_unsigned("==", masked, ll.Constant(bits, exponent)))
    return found


def _warns(k, link: ir.Value | None, result, a, b, depth: int = MAX_CHAIN) -> ll.Value:
    """Whether NumPy warns computing `result` from a and b: an infinity from finite operands, or
    a NaN from operands that are not NaN; or, where `link` (the IR op that made it) is an add,
    sub or mul, in the unchecked links of the chain before it (tracer.transforms.passes.numpy_checks)."""
    bld = k.builder
    overflow = bld.and_(_magnitude(k, result, "=="), bld.and_(_magnitude(k, a, "<"), _magnitude(k, b, "<")))
    invalid = bld.and_(k.is_nan(result), bld.fcmp_ordered("ord", a, b))
    warns = bld.or_(overflow, invalid)
    if link is None or depth == 0:
        return warns
    for x in link.args:
        if x.op in CHAIN and x.type == ir.F64 and x in k.regions.values:
            x_a, x_b = (k.regions.values[y] for y in x.args)
            warns = bld.or_(warns, _warns(k, x, k.regions.values[x], x_a, x_b, depth - 1))
    return warns


def _magnitude(k, x, op: str) -> ll.Value:
    """|x| <op> inf, in x's own type (f64 or f32)."""
    size = "f32" if x.type == ll.FloatType() else "f64"
    magnitude = k.call_intrinsic(f"llvm.fabs.{size}", x.type, [x.type], x)
    return k.builder.fcmp_ordered(op, magnitude, ll.Constant(x.type, float("inf")))
