"""Lowering of NumPy's own elementwise math (tracer/ir/numpy_math_ops.py): `np_exp`, `np_log`,
`np_tanh`, and `c_hypot`, a call of the C library's hypot.

Straight-line code, no calls and no branches, so that LLVM vectorizes the loop over an array's
elements: np_exp's overflow raises the CPU's overflow flag (codegen.fpflags watches it around
array ops), np_log's failures (log of 0 or of a negative) are only noted inside a `map`
(codegen.lower.lower_map). The same IEEE operations as the ops' evaluators, in the same order
(each fma one rounding), so compiled code and the IR interpreter agree bit for bit.

Where the JIT compiles for a CPU with AVX-512, a kernel with these ops gets vectors of 8 doubles
(`WIDE_VECTOR_OPS`, codegen.jit): LLVM's tuning of Intel's CPUs prefers 4, faster for loops bound
by memory, nearly twice slower for these, bound by arithmetic. And np_exp's loop is a third
shorter and overlaps more (`_avx512`): its scaling by 2^n, p * 2^first * 2^second, is p * 2^n
rounded once (the first product is exact), so it is llvm.ldexp there, one vscalefpd (with the
same flags), not the eight integer operations and two multiplications of the portable form, and n
comes from llvm.lrint (one conversion, not a rounding and two conversions); and the loop
interleaves 4 vectors: its body is one chain of 16 dependent fmas, which LLVM's cost
model, seeing a big body, leaves at 1, and the CPU then keeps too few iterations in flight to
fill its FMA units.
"""
from __future__ import annotations

import struct

from llvmlite import ir as ll

from codegen.kernel import DOUBLE, I32, I64
from codegen.lowerings import lowers
from codegen.target import host_has_avx512
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
    TANH_ONE,
    TANH_Q,
    TANH_S,
    TANH_SMALL,
    TWO_54,
)


def _power_of_two(k, n):
    """2.0 ** n for an i64 n that a normal double's exponent holds."""
    b = k.builder
    return b.bitcast(b.shl(b.add(n, k.i64(1023)), k.i64(52)), DOUBLE)


INF_BITS = 0x7FF0_0000_0000_0000
SIGN_BIT = -(1 << 63)                          # (as a signed i64)
NEGATIVE_INF_BITS = SIGN_BIT | INF_BITS
CLAMP_BITS = struct.unpack("<q", struct.pack("<d", EXP_CLAMP))[0]


def _classes(k, x):
    """(x's bits, |x|'s bits, x is NaN), from its bits: a float compare of a NaN may raise the
    invalid flag (x86's ordered vector compares signal), and that flag would make the call run
    the Python function."""
    b = k.builder
    bits = b.bitcast(x, I64)
    magnitude = b.and_(bits, k.i64(0x7FFF_FFFF_FFFF_FFFF))
    return bits, magnitude, b.icmp_signed(">", magnitude, k.i64(INF_BITS))


WIDE_VECTOR_OPS = ("np_exp", "np_log", "np_tanh")


def _avx512(k) -> bool:
    """Whether the kernel is the JIT's (it polls: it runs here, for this CPU), on a CPU with AVX-512."""
    return k.check_signals is not None and host_has_avx512()


def _interleaved(module: ll.Module, count: int) -> ll.MDValue:
    """A loop's llvm.loop metadata asking LLVM's vectorizer to interleave `count` vectors."""
    hint = module.add_metadata([ll.MetaDataString(module, "llvm.loop.interleave.count"), ll.Constant(I32, count)])
    loop = ll.MDValue(module, [hint], name=str(len(module.metadata)))      # (one per loop: not shared)
    loop.operands = (loop, hint)                                            # (it begins with itself)
    return loop


@lowers("np_exp")
def np_exp(k, v, x):
    b = k.builder
    bits, magnitude, _ = _classes(k, x)
    finite = b.icmp_signed("<", magnitude, k.i64(INF_BITS))
    # x clamped to [-EXP_CLAMP, EXP_CLAMP] by its bits (its magnitude's, its sign kept): integer
    # operations, of less latency than a float max and min; inf and nan: 0.0 (any finite value,
    # their results are chosen below)
    clamped = b.select(b.icmp_unsigned("<", magnitude, k.i64(CLAMP_BITS)), magnitude, k.i64(CLAMP_BITS))
    y = b.select(finite, b.bitcast(b.or_(b.and_(bits, k.i64(SIGN_BIT)), clamped), DOUBLE), k.f64(0.0))
    scaled = _exp_of_finite(k, y)
    # x not finite: 0.0 for -inf (of those, the one whose bits, as an i64, are at most -inf's),
    # x itself for inf and nan. (Not `bits == -inf's`: LLVM makes that a float compare, whose
    # scalar form raises the invalid flag for a nan.)
    special = b.select(b.icmp_signed("<", bits, k.i64(NEGATIVE_INF_BITS + 1)), k.f64(0.0), x)
    return b.select(finite, scaled, special)


def _exp_of_finite(k, y):
    """e^y for a y in [-EXP_CLAMP, EXP_CLAMP], as np_exp (and its evaluator) computes it."""
    b = k.builder
    avx512, t = _avx512(k), b.fmul(y, k.f64(LOG2E))
    if avx512:     # n = rint(t), as an integer first (one vcvtpd2qq, which the ldexp below reuses)
        whole = b.call(k.declare_function("llvm.lrint.i64.f64", ll.FunctionType(I64, [DOUBLE])), [t])
        n = b.sitofp(whole, DOUBLE)          # (0.0 where rint's is -0.0: that changes r's zero, not p)
    else:
        n = k.intrinsic("rint", t)
        whole = b.fptosi(n, I64)
    minus_n = b.fneg(n)
    r = k.intrinsic("fma", minus_n, k.f64(LN2_HI), y)
    r = k.intrinsic("fma", minus_n, k.f64(LN2_LO), r)
    p = k.f64(EXP_COEFFICIENTS[0])
    for c in EXP_COEFFICIENTS[1:]:
        p = k.intrinsic("fma", p, r, k.f64(c))
    if avx512:
        scaled = b.call(k.declare_function("llvm.ldexp.f64.i64", ll.FunctionType(DOUBLE, [DOUBLE, I64])), [p, whole])
        k.loop_metadata = _interleaved(k.module, 4)
    else:
        first = b.ashr(whole, k.i64(1))
        scaled = b.fmul(b.fmul(p, _power_of_two(k, first)), _power_of_two(k, b.sub(whole, first)))
    return scaled


@lowers("np_tanh")
def np_tanh(k, v, x):
    """Both forms for every lane, then the one its |x| takes (by its bits: no float compare), each
    fed a harmless value in the lanes of the other (no flag: no overflow of t, no nan)."""
    b = k.builder
    bits, magnitude, nan = _classes(k, x)
    a = b.bitcast(magnitude, DOUBLE)
    small = b.icmp_signed("<", magnitude, k.i64(_bits_of(TANH_SMALL)))
    one = b.icmp_signed(">=", magnitude, k.i64(_bits_of(TANH_ONE)))
    near = b.select(small, a, k.f64(0.0))                          # the rational form's x
    far = b.select(b.or_(small, b.or_(one, nan)), k.f64(1.0), a)   # np_exp's half argument
    t = b.fmul(near, near)
    ratio = b.fdiv(_horner(k, TANH_S, t), _horner(k, TANH_Q, t))
    rational = k.intrinsic("fma", near, b.fmul(t, ratio), near)
    by_exp = b.fsub(k.f64(1.0), b.fdiv(k.f64(2.0), b.fadd(_exp_of_finite(k, b.fmul(k.f64(2.0), far)), k.f64(1.0))))
    r = b.select(small, rational, b.select(one, k.f64(1.0), by_exp))
    signed = b.bitcast(b.or_(b.bitcast(r, I64), b.and_(bits, k.i64(SIGN_BIT))), DOUBLE)
    return b.select(nan, x, signed)


def _horner(k, coefficients, t):
    total = k.f64(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        total = k.intrinsic("fma", total, t, k.f64(c))
    return total


def _bits_of(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


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
