"""Lowering of NumPy's own elementwise math (tracer/ir/numpy_math_ops.py): `np_exp`, `np_log`,
`np_tanh`, `np_pow`, and `c_hypot`, a call of the C library's hypot.

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
comes from llvm.lrint (one conversion, not a rounding and two conversions; np_pow's e^t too); and
the loop interleaves 4 vectors: its body is one chain of 16 dependent fmas, which LLVM's cost
model, seeing a big body, leaves at 1, and the CPU then keeps too few iterations in flight to
fill its FMA units. np_log's loop is bound by the count of its vector instructions (each table
entry costs a compare and three blends): its reduction is four integer operations on x's bits (a
subnormal x first multiplied by 2^54), its special values one select, and its loop is not
interleaved (with 2 vectors at a time LLVM spills the constants it broadcasts).
"""
from __future__ import annotations

import functools
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
    LOG1P_P3,
    LOG2E,
    LOG_BOUNDS,
    LOG_C_HI,
    LOG_C_LO,
    LOG_J,
    LOG_LN2_HI,
    LOG_LN2_LO,
    NP_LOG_BOUNDS,
    NP_LOG_C_HI,
    NP_LOG_C_LO,
    NP_LOG_J,
    POW_EXP,
    POW_LOG1P,
    POW_SQUARE_LIMIT,
    POW_T_CLAMP,
    POW_THIRD,
    POW_Y_CLAMP,
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


WIDE_VECTOR_OPS = ("np_exp", "np_log", "np_tanh", "np_pow")


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
    """Computed for a positive finite x (1.0 stands in for the others); +inf and nan give x. NumPy
    warns of log(0) (divide by zero) and of a negative's (invalid value): the call fails there, and
    the Python function runs (in a `map`, the failure is only noted: no exit from the loop), so
    those lanes' values are never seen."""
    b = k.builder
    bits = b.bitcast(x, I64)
    positive = b.icmp_unsigned("<", b.sub(bits, k.i64(1)), k.i64(INF_BITS - 1))   # in (0, inf)
    # zero or negative (-inf too, not a nan): its bits, as an i64, at most 0 and x at most inf in size
    k.fail_if(b.and_(b.icmp_signed("<", bits, k.i64(1)),
                     b.icmp_signed("<", b.and_(bits, k.i64(~SIGN_BIT)), k.i64(INF_BITS + 1))), Status.FALLBACK)
    kf, r, c_hi, c_lo = _log_reduced(k, b.select(positive, x, k.f64(1.0)),
                                     (NP_LOG_J, NP_LOG_BOUNDS, NP_LOG_C_HI, NP_LOG_C_LO))
    fma = functools.partial(k.intrinsic, "fma")
    hi, e = _fast_two_sum(k, fma(kf, k.f64(LOG_LN2_HI), c_hi), r)        # (k ln2_hi - log(c)_hi: exact)
    q = _horner_up(k, LOG1P_P3 + (-0.5,), r)                          # -1/2 + r P(r)
    result = b.fadd(hi, fma(b.fmul(r, r), q, b.fadd(e, fma(kf, k.f64(LOG_LN2_LO), c_lo))))
    if _avx512(k):
        k.loop_metadata = _interleaved(k.module, 1)
    return b.select(positive, result, x)


@lowers("c_hypot")
def c_hypot(k, v, x, y):
    return k.libm("hypot", x, y)


def _fast_two_sum(k, a, x):
    b = k.builder
    s = b.fadd(a, x)
    return s, b.fadd(b.fsub(a, s), x)


def _log_reduced(k, x, table=(LOG_J, LOG_BOUNDS, LOG_C_HI, LOG_C_LO)):
    """(k, r, -log(c)_hi, -log(c)_lo) with x = 2^k m, m c = 1 + r, for a positive finite x:
    tracer.ir.numpy_math_ops.log_reduced's operations (the table's entries chosen by compares;
    np_pow's table unless `table` is np_log's)."""
    j, bounds, c_hi, c_lo = table
    b = k.builder
    # a subnormal x times 2^54 (exact, no flag), k then 54 less: the multiplier is frozen, so that
    # LLVM multiplies by it, not (folding x * 1.0) computes x * 2^54 in every lane (a flag there)
    tiny = b.icmp_signed("<", b.bitcast(x, I64), k.i64(1 << 52))
    bits = b.bitcast(b.fmul(x, _opaque(k, b.select(tiny, k.f64(TWO_54), k.f64(1.0)))), I64)
    # bits - the bits of m's lowest value (just above sqrt(2)/2 with a normal's exponent) has
    # k in its top bits (arithmetic shift: k may be negative), m's mantissa in the rest
    above_lowest = b.sub(bits, k.i64(SQRT_TWO_BITS + 1 - (1 << 52)))
    whole = b.ashr(above_lowest, k.i64(52))
    m = b.bitcast(b.sub(bits, b.shl(whole, k.i64(52))), DOUBLE)
    kf = b.sitofp(b.sub(whole, b.select(tiny, k.i64(54), k.i64(0))), DOUBLE)
    above = [b.fcmp_ordered(">=", m, k.f64(bound)) for bound in bounds]

    def entry(values):
        v = k.f64(values[0])
        for cond, value in zip(above, values[1:]):
            v = b.select(cond, k.f64(value), v)
        return v
    r = k.intrinsic("fma", m, entry([c / 8.0 for c in j]), k.f64(-1.0))
    return kf, r, entry(c_hi), entry(c_lo)


def _opaque(k, value):
    """`value` frozen: LLVM then no longer sees the select it is, and cannot turn a product of
    two of them into a select of products (x * x computed in every lane, raising flags)."""
    b = k.builder
    frozen = ll.instructions.Instruction(b.block, value.type, "freeze", [value])
    b._insert(frozen)
    return frozen


def _pow_log(k, x):
    """log(x) as (hi, lo) for a positive finite x: tracer.ir.numpy_math_ops.pow_log's operations."""
    b = k.builder
    fma = functools.partial(k.intrinsic, "fma")
    kf, r, c_hi, c_lo = _log_reduced(k, x)
    t2, e2 = _fast_two_sum(k, fma(kf, k.f64(LOG_LN2_HI), c_hi), r)        # (k ln2_hi - log(c)_hi: exact)
    ar = b.fmul(k.f64(-0.5), r)
    ar2 = b.fmul(ar, r)
    ar2_lo = fma(ar, r, b.fneg(ar2))
    hi, e3 = _fast_two_sum(k, t2, ar2)
    minus_2r = b.fmul(k.f64(-2.0), r)
    r3 = b.fmul(minus_2r, ar2)
    r3_lo = fma(minus_2r, ar2_lo, fma(minus_2r, ar2, b.fneg(r3)))
    p3 = b.fmul(r3, k.f64(POW_THIRD[0]))
    p3_lo = b.fadd(fma(r3, k.f64(POW_THIRD[0]), b.fneg(p3)),
                   fma(r3_lo, k.f64(POW_THIRD[0]), b.fmul(r3, k.f64(POW_THIRD[1]))))
    hi, e4 = _fast_two_sum(k, hi, p3)
    small = b.fadd(b.fadd(b.fadd(b.fadd(e2, e3), b.fadd(ar2_lo, p3_lo)), fma(kf, k.f64(LOG_LN2_LO), c_lo)), e4)
    lo = fma(_horner_up(k, POW_LOG1P, r), b.fmul(r3, r), small)
    total = b.fadd(hi, lo)
    return total, b.fadd(b.fsub(hi, total), lo)


def _horner_up(k, coefficients, r):
    """Horner's form, coefficients from the highest power down (as the evaluators loop)."""
    total = k.f64(coefficients[0])
    for c in coefficients[1:]:
        total = k.intrinsic("fma", total, r, k.f64(c))
    return total


def _pow_exp(k, t, t_lo):
    """e^(t + t_lo) for |t| <= POW_T_CLAMP: tracer.ir.numpy_math_ops.pow_exp's operations."""
    b = k.builder
    fma = functools.partial(k.intrinsic, "fma")
    avx512, scaled = _avx512(k), b.fmul(t, k.f64(LOG2E))
    if avx512:     # n = rint(t / ln2) as an integer first (one vcvtpd2qq; vscalefpd below reuses n)
        whole = b.call(k.declare_function("llvm.lrint.i64.f64", ll.FunctionType(I64, [DOUBLE])), [scaled])
        n = b.sitofp(whole, DOUBLE)       # (0.0 where rint's is -0.0: r and p the same)
    else:
        n = k.intrinsic("rint", scaled)
        whole = b.fptosi(n, I64)
    r1 = fma(b.fneg(n), k.f64(LOG_LN2_HI), t)
    r, r_lo = _fast_two_sum(k, r1, fma(b.fneg(n), k.f64(LOG_LN2_LO), t_lo))
    rr = b.fmul(r, r)
    h = b.fmul(k.f64(0.5), rr)
    h_lo = b.fmul(k.f64(0.5), fma(r, r, b.fneg(rr)))
    w = b.fmul(_horner_up(k, POW_EXP, r), b.fmul(rr, r))
    s1, e1 = _fast_two_sum(k, k.f64(1.0), r)
    s2, e2 = _fast_two_sum(k, s1, h)
    p = b.fadd(s2, fma(r_lo, s2, b.fadd(b.fadd(b.fadd(e1, e2), h_lo), w)))
    if avx512:              # one vscalefpd: the same single rounding as the two products below
        return b.call(k.declare_function("llvm.ldexp.f64.i64", ll.FunctionType(DOUBLE, [DOUBLE, I64])), [p, whole])
    first = b.ashr(whole, k.i64(1))
    return b.fmul(b.fmul(p, _power_of_two(k, first)), _power_of_two(k, b.sub(whole, first)))


@lowers("np_pow")
def np_pow(k, v, x, y):
    """x ** y as tracer.ir.numpy_math_ops.pow_of: C's pow's special values chosen by selects
    (x's and y's classes by their bits: no float compare of a NaN), the general form computed in
    every lane on harmless operands (|x| there, 1.0 where x is 0, inf or nan; y clamped; 0.0 where
    it is inf or nan: no flag). Where x and y are finite and the result is not (an overflow,
    0 ** negative, negative ** fraction), NumPy warns: the op fails (FALLBACK)."""
    b = k.builder
    x_bits, x_magnitude, x_nan = _classes(k, x)
    y_bits, y_magnitude, y_nan = _classes(k, y)
    x_finite = b.icmp_signed("<", x_magnitude, k.i64(INF_BITS))
    y_finite = b.icmp_signed("<", y_magnitude, k.i64(INF_BITS))
    x_zero = b.icmp_signed("==", x_magnitude, k.i64(0))
    x_negative = b.icmp_signed("<", x_bits, k.i64(0))
    ax = b.bitcast(x_magnitude, DOUBLE)
    ys = b.select(y_finite, y, k.f64(0.0))
    whole = b.fcmp_ordered("==", ys, k.intrinsic("floor", ys))
    half = b.fmul(k.f64(0.5), ys)
    odd = b.and_(whole, b.fcmp_unordered("!=", half, k.intrinsic("floor", half)))
    yc = k.intrinsic("maxnum", k.intrinsic("minnum", ys, k.f64(POW_Y_CLAMP)), k.f64(-POW_Y_CLAMP))
    hi, lo = _pow_log(k, b.select(b.and_(x_finite, b.not_(x_zero)), ax, k.f64(1.0)))
    t = b.fmul(yc, hi)
    t_lo = k.intrinsic("fma", yc, lo, k.intrinsic("fma", yc, hi, b.fneg(t)))
    beyond = b.fcmp_ordered(">", k.intrinsic("fabs", t), k.f64(POW_T_CLAMP))
    g = _pow_exp(k, b.select(beyond, k.intrinsic("copysign", k.f64(POW_T_CLAMP), t), t),
                 b.select(beyond, k.f64(0.0), t_lo))
    general = b.select(b.and_(x_negative, odd), b.fneg(g), g)
    general = b.select(b.and_(x_negative, b.not_(whole)), k.f64(float("nan")), general)
    y_positive = b.icmp_signed(">", b.bitcast(y, I64), k.i64(0))          # (y is not nan there)
    x_inf = b.icmp_signed("==", x_magnitude, k.i64(INF_BITS))
    big = b.icmp_unsigned("==", y_positive, x_inf)
    sign_source = b.select(odd, x, k.f64(1.0))
    edge = k.intrinsic("copysign", b.select(big, k.f64(float("inf")), k.f64(0.0)), sign_source)
    above_one = b.icmp_signed(">", x_magnitude, k.i64(_bits_of(1.0)))
    of_inf_y = b.select(b.icmp_signed("==", x_magnitude, k.i64(_bits_of(1.0))), k.f64(1.0),
                        b.select(b.icmp_unsigned("==", above_one, y_positive), k.f64(float("inf")), k.f64(0.0)))
    squares = b.icmp_signed("==", y_bits, k.i64(_bits_of(2.0)))
    only_x = _opaque(k, b.select(squares, x, k.f64(0.0)))     # (x * x where y is 2, 0 * 0 elsewhere)
    result = k.select_chain(
        general,
        (b.or_(b.icmp_signed("==", y_magnitude, k.i64(0)), b.icmp_signed("==", x_bits, k.i64(_bits_of(1.0)))),
         k.f64(1.0)),
        (squares, b.fmul(only_x, only_x)),                  # (x * x only where y is 2: no flag elsewhere)
        (b.icmp_signed("==", y_bits, k.i64(_bits_of(1.0))), x),
        (x_nan, x), (y_nan, y), (b.not_(y_finite), of_inf_y), (b.or_(x_zero, x_inf), edge))
    _, result_magnitude, _ = _classes(k, result)
    # (-0.0) ** 0.5 and (-inf) ** 0.5: NumPy's result depends on the exponent's kind (sqrt for a
    # scalar); 0 ** -inf: inf, with C's divide-by-zero flag (NumPy's warning): the Python function runs
    edge = b.or_(b.and_(b.icmp_signed("==", y_bits, k.i64(_bits_of(0.5))),
                        b.or_(b.icmp_signed("==", x_bits, k.i64(SIGN_BIT)),
                              b.icmp_signed("==", x_bits, k.i64(NEGATIVE_INF_BITS)))),
                 b.and_(x_zero, b.icmp_signed("==", y_bits, k.i64(NEGATIVE_INF_BITS))))
    # a finite x ** inf past sqrt(DBL_MAX): NumPy's own pow raises the overflow flag there (its warning)
    past = b.and_(x_finite, b.icmp_signed(">", x_magnitude, k.i64(_bits_of(POW_SQUARE_LIMIT))))
    edge = b.or_(edge, b.and_(b.icmp_signed("==", y_bits, k.i64(INF_BITS)), past))
    k.fail_if(b.or_(b.and_(b.and_(x_finite, y_finite), b.icmp_signed(">=", result_magnitude, k.i64(INF_BITS))), edge),
              Status.FALLBACK)
    return result
