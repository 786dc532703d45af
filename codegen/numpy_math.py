"""Lowering of NumPy's own elementwise math (tracer/ir/numpy_math_ops.py): `np_exp`, `np_log`, and
`c_hypot`, a call of the C library's hypot.

Straight-line code, no calls and no branches, so that LLVM vectorizes the loop over an array's
elements: np_exp's overflow raises the CPU's overflow flag (codegen.fpflags watches it around
array ops), np_log's failures (log of 0 or of a negative) are only noted inside a `map`
(codegen.lower.lower_map). The same IEEE operations as the ops' evaluators, in the same order
(each fma one rounding), so compiled code and the IR interpreter agree bit for bit.
"""
from __future__ import annotations

from codegen.kernel import DOUBLE, I64
from codegen.lowerings import lowers
from tracer.errors import Status
from tracer.ir.numpy_math_ops import (
    EXP_CLAMP,
    EXP_COEFFICIENTS,
    LN2_HI,
    LN2_LO,
    LOG2E,
    LOG_LN2_HI,
    LOG_LN2_LO,
    LOG_SERIES,
    MANTISSA,
    SQRT_TWO_BITS,
    TWO_54,
)


def _power_of_two(k, n):
    """2.0 ** n for an i64 n that a normal double's exponent holds."""
    b = k.builder
    return b.bitcast(b.shl(b.add(n, k.i64(1023)), k.i64(52)), DOUBLE)


INF_BITS = 0x7FF0_0000_0000_0000


def _classes(k, x):
    """(x's bits, |x|'s bits, x is NaN), from its bits: a float compare of a NaN may raise the
    invalid flag (x86's ordered vector compares signal), and that flag would make the call run
    the Python function."""
    b = k.builder
    bits = b.bitcast(x, I64)
    magnitude = b.and_(bits, k.i64(0x7FFF_FFFF_FFFF_FFFF))
    return bits, magnitude, b.icmp_signed(">", magnitude, k.i64(INF_BITS))


@lowers("np_exp")
def np_exp(k, v, x):
    b = k.builder
    bits, magnitude, nan = _classes(k, x)
    finite = b.icmp_signed("<", magnitude, k.i64(INF_BITS))
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


@lowers("np_log")
def np_log(k, v, x):
    b = k.builder
    bits, magnitude, nan = _classes(k, x)
    zero = b.icmp_signed("==", magnitude, k.i64(0))
    negative = b.and_(b.icmp_signed("<", bits, k.i64(0)), b.not_(b.or_(nan, zero)))
    positive = b.icmp_unsigned("<", b.sub(bits, k.i64(1)), k.i64(INF_BITS - 1))   # in (0, inf)
    y = b.select(positive, x, k.f64(1.0))            # (the other lanes: any positive, chosen below)
    tiny = b.icmp_signed("<", b.bitcast(y, I64), k.i64(1 << 52))                # subnormal: * 2^54
    y = b.select(tiny, b.fmul(y, k.f64(TWO_54)), y)
    y_bits = b.bitcast(y, I64)
    exponent = b.sub(b.add(b.ashr(y_bits, k.i64(52)), b.select(tiny, k.i64(-54), k.i64(0))), k.i64(1023))
    m_bits = b.or_(b.and_(y_bits, k.i64(MANTISSA)), k.i64(1023 << 52))
    halve = b.icmp_signed(">", m_bits, k.i64(SQRT_TWO_BITS))
    m = b.bitcast(b.select(halve, b.sub(m_bits, k.i64(1 << 52)), m_bits), DOUBLE)
    kf = b.sitofp(b.add(exponent, b.zext(halve, I64)), DOUBLE)
    f = b.fsub(m, k.f64(1.0))
    s = b.fdiv(f, b.fadd(k.f64(2.0), f))
    z = b.fmul(s, s)
    r = k.f64(LOG_SERIES[0])
    for c in LOG_SERIES[1:]:
        r = b.fadd(b.fmul(r, z), k.f64(c))
    r = b.fmul(r, z)
    half_square = b.fmul(b.fmul(k.f64(0.5), f), f)
    inner = b.fadd(b.fmul(s, b.fadd(half_square, r)), b.fmul(kf, k.f64(LOG_LN2_LO)))
    result = b.fsub(b.fmul(kf, k.f64(LOG_LN2_HI)), b.fsub(b.fsub(half_square, inner), f))
    # NumPy warns of log(0) (divide by zero) and of a negative's (invalid value): the call fails
    # there, and the Python function runs (in a `map`, the failure is only noted: no exit from the loop)
    k.fail_if(b.or_(zero, negative), Status.FALLBACK)
    result = b.select(zero, k.f64(float("-inf")), b.select(negative, k.f64(float("nan")), result))
    return b.select(b.or_(nan, b.icmp_signed("==", bits, k.i64(INF_BITS))), x, result)


@lowers("c_hypot")
def c_hypot(k, v, x, y):
    return k.libm("hypot", x, y)
