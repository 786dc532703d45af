"""Lowering of NumPy's own elementwise math (tracer/ir/numpy_math_ops.py): `np_exp`.

Straight-line code, no calls, no branches and no failure (an overflow raises the CPU's overflow
flag, which codegen.fpflags watches around array ops), so that LLVM vectorizes the loop over an
array's elements; the same IEEE operations as the op's evaluator, in the same order (each fma one
rounding), so compiled code and the IR interpreter agree bit for bit.
"""
from __future__ import annotations

from codegen.kernel import DOUBLE, I64
from codegen.lowerings import lowers
from tracer.ir.numpy_math_ops import EXP_CLAMP, EXP_COEFFICIENTS, LN2_HI, LN2_LO, LOG2E


def _power_of_two(k, n):
    """2.0 ** n for an i64 n that a normal double's exponent holds."""
    b = k.builder
    return b.bitcast(b.shl(b.add(n, k.i64(1023)), k.i64(52)), DOUBLE)


@lowers("np_exp")
def np_exp(k, v, x):
    b = k.builder
    # x's class from its bits: a float compare of a NaN may raise the invalid flag (x86's ordered
    # vector compares signal), and that flag would make the call run the Python function
    bits = b.bitcast(x, I64)
    magnitude = b.and_(bits, k.i64(0x7FFF_FFFF_FFFF_FFFF))
    finite = b.icmp_signed("<", magnitude, k.i64(0x7FF0_0000_0000_0000))
    nan = b.icmp_signed(">", magnitude, k.i64(0x7FF0_0000_0000_0000))
    y = b.select(finite, x, k.f64(0.0))           # (inf and nan: any finite value, chosen below)
    y = b.select(b.fcmp_ordered("<", y, k.f64(-EXP_CLAMP)), k.f64(-EXP_CLAMP), y)
    y = b.select(b.fcmp_ordered(">", y, k.f64(EXP_CLAMP)), k.f64(EXP_CLAMP), y)
    n = k.intrinsic("rint", b.fmul(y, k.f64(LOG2E)))
    minus_n = b.fneg(n)
    r = k.intrinsic("fma", minus_n, k.f64(LN2_HI), y)
    r = k.intrinsic("fma", minus_n, k.f64(LN2_LO), r)
    p = k.f64(EXP_COEFFICIENTS[0])
    for c in EXP_COEFFICIENTS[1:]:
        p = k.intrinsic("fma", p, r, k.f64(c))
    whole = b.fptosi(n, I64)
    first = b.ashr(whole, k.i64(1))
    scaled = b.fmul(b.fmul(p, _power_of_two(k, first)), _power_of_two(k, b.sub(whole, first)))
    special = b.select(b.icmp_signed(">=", bits, k.i64(0)), x, k.f64(0.0))     # inf: inf; -inf: 0.0
    special = b.select(nan, x, special)
    return b.select(finite, scaled, special)
