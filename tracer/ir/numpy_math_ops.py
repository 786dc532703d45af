"""NumPy's elementwise math as its own ops (registered into `tracer.ir.ops.OPS`), where NumPy's
results are not CPython's `math` results: `np_exp`, `np_log`, `np_tanh` and `np_pow`, np.exp,
np.log, np.tanh and x ** y of float64 arrays, and `c_hypot`, the C library's hypot (np.hypot, abs of complex numbers in NumPy and in
CPython, cmath: math.hypot has an algorithm of its own, a last bit apart in about 1 result of 300).

NumPy computes np.exp with SIMD kernels of its own (not the C library's exp, which CPython's
math.exp calls); so does `np_exp`, in a form LLVM vectorizes: x = n ln2 + r with
n = rint(x / ln2) and r in [-ln2/2, ln2/2] (ln2 in two parts, each step one fused
multiply-add), e^r by its Taylor polynomial to r^13 (Horner, one fma per step), scaled by 2^n
in two multiplications by powers of two (so an overflow raises the CPU's overflow flag, and
NumPy's "overflow encountered in exp" comes from the Python function, codegen.fpflags; a
result past the smallest normal double is rounded once). The op itself never fails. Non-finite x: exp(inf) = inf,
exp(-inf) = 0.0, exp(nan) = nan, without a flag. Measured against CPython's math.exp (the C
library's, correctly rounded but for rare cases) the result is at most 1 ulp off
(tests/codegen/test_numpy_math.py), as NumPy's own AVX-512 exp is.

`np_log` likewise: x = 2^k m with m in [sqrt(2)/2, sqrt(2)) (a subnormal x times 2^54 first),
then m c = 1 + r with c = J/8 of four values chosen by compares (|r| < 0.117; r exact: J has 4
bits; no division, no table in memory: each entry costs a compare and three blends of vectors, more
than the two fmas a longer polynomial costs), and log x = k ln2 - log c + log1p(r), with
k ln2 - log c in two parts (the first exact), log1p(r) = r + r^2 (-1/2 + r P(r)), P a polynomial
near the minimax one (one Horner chain of fmas, one product by r^2 fused with the small terms'
sum). Where NumPy warns, log(0) (divide by
zero) and log(x < 0) (invalid value), the op fails with FALLBACK and the Python function runs;
log(inf) = inf, log(nan) = nan. Within 1 ulp of math.log, as NumPy's own, and equal to it about as
often: for 99.26% of inputs in (0.7, 1.4) (NumPy's AVX-512 log: 99.21%), 99.63% in (0, 2) (NumPy's:
99.65%), all but 2 in 10^5 over all exponents (tests/codegen/test_numpy_math.py).

`np_pow`, x ** y of float64 arrays (NumPy's own is a SIMD pow, within 1 ulp of math.pow): e^t
with t = y log|x|, log|x| as np_log reduces it (but with six entries, |r| < 0.077) in two doubles (relative error near 2^-67)
and t likewise, e^t as np_exp reduces it with its last sums in two doubles: 0.50x ulp from the
exact value, within 1 ulp of math.pow (equal for 99.8% of inputs, NumPy's for 96%). C's pow's
special values (NumPy's too), y = 2 and 1 as x * x and x (NumPy's bits); where NumPy warns
(an overflow, 0 ** negative, 0 ** -inf, negative ** fraction) the op fails with FALLBACK, and
also where NumPy's result depends on the exponent being a scalar ((-0.0) ** 0.5, (-inf) ** 0.5).

`np_tanh` (NumPy's own tanh is a SIMD kernel too, up to 3 ulp from math.tanh): for |x| below
0.625, x + x t S(t) / Q(t) with t = x^2, a rational form of Lambert's continued fraction for tanh
(its error far below an ulp; the correction is at most a ninth of x, so the result is within an
ulp); from 0.625 to 22, 1 - 2 / (e + 1) with e = np_exp(2|x|) (the result is above 0.55: within
2 ulps); from 22 on, 1.0; the sign of x; nan stays nan. No lane raises a flag.

The evaluators compute the same sequences of IEEE operations (fused_multiply_add is one
rounding), so the IR interpreter and compiled code agree bit for bit.
"""
from __future__ import annotations

import functools
import math
import struct
import sys

from tracer.errors import OpFailure, Status
from tracer.ir.registry import define, signature
from tracer.ir.scalar_ops import POW_RULES, fused_multiply_add
from tracer.ir.types import F64

LOG2E = 1.4426950408889634             # 1 / ln 2, rounded
LN2_HI = 0.6931471805599453            # ln 2 rounded to a double
LN2_LO = 2.3190468138462996e-17        # ln 2 - LN2_HI, rounded
EXP_COEFFICIENTS = tuple(1.0 / math.factorial(i) for i in range(13, -1, -1))   # r^13 ... r^0
EXP_CLAMP = 1100.0                     # beyond it e^x is inf or 0 in double; keeps 2^n two normal powers


def scale_parts(n: int) -> tuple[int, int]:
    """n as two exponents, each a normal double's (|n| <= EXP_CLAMP)."""
    first = n >> 1
    return first, n - first


def exp_of(x: float) -> float:
    """np_exp's value, as the compiled code computes it."""
    if math.isnan(x):
        return x
    if math.isinf(x):
        return x if x > 0 else 0.0
    x = min(max(x, -EXP_CLAMP), EXP_CLAMP)
    n = float(round(x * LOG2E))          # (Python's round: half to even, as rint)
    r = fused_multiply_add(-n, LN2_HI, x)
    r = fused_multiply_add(-n, LN2_LO, r)
    p = EXP_COEFFICIENTS[0]
    for c in EXP_COEFFICIENTS[1:]:
        p = fused_multiply_add(p, r, c)
    first, second = scale_parts(int(n))
    try:
        return p * math.ldexp(1.0, first) * math.ldexp(1.0, second)
    except OverflowError:
        return math.inf


define("np_exp", "np.exp(a) of a float64 array's elements: NumPy's result to 1 ulp, computed as NumPy does, "
       "vectorizable (see tracer/ir/numpy_math_ops.py); never fails: an overflow is inf, and raises the "
       "CPU's overflow flag (over arrays, codegen.fpflags makes that NumPy's warning)",
       signature(((F64,), F64)), exp_of, vjp=(lambda ct, out, x: ct * out,))


# ------------------------------------------------------------------------------- log
SQRT_TWO_BITS = 0x3FF6A09E667F3BCD     # sqrt(2): an m in [1, 2) above it is halved
TWO_54 = 18014398509481984.0
MANTISSA = (1 << 52) - 1


def _bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _float(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<q", bits))[0]


def log_parts(x: float) -> tuple[float, float]:
    """(k, m) with x = 2^k m, m in [sqrt(2)/2, sqrt(2)), for a positive finite x."""
    k = -54 if x < 2.2250738585072014e-308 else 0
    if k:
        x *= TWO_54
    bits = _bits(x)
    k += (bits >> 52) - 1023
    m_bits = (bits & MANTISSA) | (1023 << 52)                  # m in [1, 2)
    if m_bits > SQRT_TWO_BITS:
        m_bits -= 1 << 52                                      # m / 2, in [sqrt(2)/2, 1): k + 1
        k += 1
    return float(k), _float(m_bits)


def _decimal_parts(value_of) -> tuple[float, float]:
    """(hi, lo): the value `value_of(Decimal)` (60 digits) as two doubles."""
    from decimal import Decimal, localcontext
    with localcontext() as context:
        context.prec = 60
        exact = value_of(Decimal)
        hi = float(exact)
        return hi, float(exact - Decimal(hi))


def _multiple_of(x: float, step_bits: int) -> float:
    """x rounded to a multiple of 2^-step_bits."""
    return round(x * 2.0 ** step_bits) / 2.0 ** step_bits


LOG_LN2_HI = _multiple_of(math.log(2.0), 42)     # k * LOG_LN2_HI exact for |k| < 2^11, a multiple of 2^-42
LOG_LN2_LO = _decimal_parts(lambda D: D(2).ln() - D(LOG_LN2_HI))[0]


def _log_table(j: tuple[int, ...]) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    """(bounds, hi, lo) of the table c = J / 8 for m from sqrt(2)/2 up: m from bounds[i] on takes
    J[i + 1] (|m c - 1| least there), -log c = hi + lo with hi a multiple of 2^-42 (k LOG_LN2_HI + hi:
    exact). m c - 1 is exact: m has 53 bits, J at most 4, and |m c - 1| < 1/8."""
    bounds = tuple(16.0 / (a + b) for a, b in zip(j, j[1:]))
    exact = tuple(_decimal_parts(lambda D, c=c: -(D(c) / 8).ln()) for c in j)
    hi = tuple(_multiple_of(h, 42) for h, _ in exact)
    return bounds, hi, tuple(float(h - rounded) + lo for (h, lo), rounded in zip(exact, hi))


LOG_J = (11, 10, 9, 8, 7, 6)                     # np_pow's: |m c - 1| < 0.077
LOG_BOUNDS, LOG_C_HI, LOG_C_LO = _log_table(LOG_J)
NP_LOG_J = (10, 8, 7, 6)                         # np_log's: -0.117 < m c - 1 < 0.112
NP_LOG_BOUNDS, NP_LOG_C_HI, NP_LOG_C_LO = _log_table(NP_LOG_J)
# np_log's log1p(r) = r - r^2/2 + r^3 P(r): P interpolates (log1p(r) - r + r^2/2) / r^3 at the 12
# Chebyshev nodes of [-0.1162, 0.1112] (degree 11; its error there below 2^-58.6 / r^2, so r^3 P's
# below 2^-61.6, and below 2^-58.6 relative to r where c is 1: 4 entries and 2 more fmas than with
# np_pow's 6, 8 fewer vector instructions)
LOG1P_P3 = (0.3333333333333332, -0.24999999999999542, 0.2000000000008597, -0.16666666667548038,
            0.14285714208217776, -0.12499999529659168, 0.11111136687176712, -0.10000103383608498,
            0.09087092010230126, -0.08322899392442683, 0.07954438726002878, -0.07601817783270384)[::-1]


def _fast_two_sum(a: float, b: float) -> tuple[float, float]:
    s = a + b
    return s, (a - s) + b


def log_reduced(x: float, j: tuple[int, ...] = LOG_J, bounds: tuple[float, ...] = LOG_BOUNDS) -> tuple[float, int, float]:
    """(k, i, r) with x = 2^k m and m c = 1 + r, c = j[i] / 8 (r exact), for a positive finite x."""
    k, m = log_parts(x)
    i = sum(m >= bound for bound in bounds)
    return k, i, fused_multiply_add(m, j[i] / 8.0, -1.0)


def log_of(x: float) -> float:
    """np_log's value, as the compiled code computes it."""
    if math.isnan(x):
        return x
    if x == 0.0:
        return -math.inf
    if x < 0.0:
        return math.nan
    if math.isinf(x):
        return x
    k, i, r = log_reduced(x, NP_LOG_J, NP_LOG_BOUNDS)
    t1 = k * LOG_LN2_HI + NP_LOG_C_HI[i]                           # exact
    hi, e = _fast_two_sum(t1, r)                                   # (|t1| > |r| where t1 is not 0)
    q = LOG1P_P3[0]
    for c in LOG1P_P3[1:] + (-0.5,):
        q = fused_multiply_add(q, r, c)                             # -1/2 + r P(r)
    return hi + fused_multiply_add(r * r, q, e + fused_multiply_add(k, LOG_LN2_LO, NP_LOG_C_LO[i]))


def _np_log(x: float) -> float:
    if x <= 0.0:
        raise OpFailure(Status.FALLBACK)     # NumPy warns (divide by zero, invalid value)
    return log_of(x)


define("np_log", "np.log(a) of a float64 array's elements: NumPy's result to 1 ulp, vectorizable (see "
       "tracer/ir/numpy_math_ops.py); log(0) and log of a negative FALLBACK (NumPy warns)",
       signature(((F64,), F64)), _np_log, [Status.FALLBACK], vjp=(lambda ct, out, x: ct / x,),
       fails_when=lambda op, v: True)


# ------------------------------------------------------------------------------- tanh
TANH_SMALL = 0.625                     # below, the rational form; from it, by np_exp
TANH_ONE = 22.0                        # from it, tanh rounds to 1.0


def _tanh_rational(levels: int = 8) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(S, Q), coefficients from t^0 up, with tanh(x) ~ x + x t S(t) / Q(t), t = x^2: Lambert's
    continued fraction x / (1 + t / (3 + t / (5 + ... t / (2 levels - 1)))) as a ratio x P(t) / Q(t)
    (exact rationals), then S = (P - Q) / t, each divided by Q(0). Its error is far below an
    ulp for |x| < TANH_SMALL."""
    from fractions import Fraction

    def plus(p, q):
        n = max(len(p), len(q))
        return [a + b for a, b in zip(p + [Fraction(0)] * (n - len(p)), q + [Fraction(0)] * (n - len(q)))]
    q, p = [Fraction(2 * levels - 1)], [Fraction(1)]
    for k in range(levels - 1, 0, -1):
        q, p = plus([c * (2 * k - 1) for c in q], [Fraction(0)] + p), q
    difference = plus(p, [-c for c in q])
    return tuple(float(c / q[0]) for c in difference[1:]), tuple(float(c / q[0]) for c in q)


TANH_S, TANH_Q = _tanh_rational()


def _horner(coefficients: tuple[float, ...], t: float) -> float:
    total = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        total = fused_multiply_add(total, t, c)
    return total


def tanh_of(x: float) -> float:
    """np_tanh's value, as the compiled code computes it."""
    if math.isnan(x):
        return x
    a = abs(x)
    if a >= TANH_ONE:
        r = 1.0
    elif a >= TANH_SMALL:
        r = 1.0 - 2.0 / (exp_of(2.0 * a) + 1.0)
    else:
        t = a * a
        r = fused_multiply_add(a, t * (_horner(TANH_S, t) / _horner(TANH_Q, t)), a)
    return math.copysign(r, x)


define("np_tanh", "np.tanh(a) of a float64 array's elements: within 2 ulp of the exact value (NumPy's own: 3), "
       "vectorizable (see tracer/ir/numpy_math_ops.py); never fails and raises no flag",
       signature(((F64,), F64)), tanh_of, vjp=(lambda ct, out, x: ct * (1.0 - out * out),))


# ------------------------------------------------------------------------------- hypot
@functools.cache
def _c_library_hypot():
    import ctypes
    import ctypes.util
    c_hypot = ctypes.CDLL(ctypes.util.find_library("m") or None).hypot
    c_hypot.restype, c_hypot.argtypes = ctypes.c_double, [ctypes.c_double, ctypes.c_double]
    return c_hypot


def c_hypot(x: float, y: float) -> float:
    """The C library's hypot(x, y), as compiled code calls it."""
    return _c_library_hypot()(x, y)


define("c_hypot", "the C library's hypot(a, b): never fails (an overflow is inf, and raises the CPU's overflow "
       "flag; an infinite operand gives inf, even with a NaN)", signature(((F64, F64), F64)), c_hypot,
       vjp=(lambda ct, out, a, b: ct * a / out, lambda ct, out, a, b: ct * b / out))


# ------------------------------------------------------------------------------- pow
# np_pow(x, y) = x ** y of float64 arrays (np.power): e^(y log|x|) with log|x| in two doubles
# (hi + lo, relative error near 2^-68) and e^t of t = hi + lo likewise, so the one rounding that
# matters is the last (see `pow_of`). No table lookups (a vector gather costs more than the
# arithmetic it saves): |x| = 2^k m, m in [sqrt(2)/2, sqrt(2)), then m c = 1 + r with
# c = J/8 of six values chosen by compares (|r| < 0.077, r exact: J has 4 bits), and
# log|x| = k ln2 - log c + log1p(r), log1p by its Taylor series to r^18.
POW_THIRD = _decimal_parts(lambda D: D(1) / 3)
# r^4 Q(r) = log1p(r) - (r - r^2/2 + r^3/3), e^r = 1 + r + r^2/2 + r^3 W(r): Chebyshev economizations of
# the Taylor series, Q to degree 11 on |r| <= 0.077 (error below 2^-59.3, r^4 Q's below 2^-74),
# W to degree 9 on |r| <= 0.3468 (below 2^-56.7, r^3 W's below 2^-61.3)
POW_LOG1P = (-0.25, 0.19999999999999998, -0.16666666666668303, 0.14285714285718185, -0.12499999996781054,
             0.1111111110585374, -0.1000000231412423, 0.09090912127839869, -0.08332581853568546,
             0.07691455521818931, -0.07255145817390311, 0.06781239990726334)[::-1]
POW_EXP = (0.16666666666666669, 0.04166666666666667, 0.008333333333330048, 0.0013888888888883724,
           0.0001984126986312731, 2.4801587325628475e-05, 2.755726834583361e-06, 2.7557273540931114e-07,
           2.5100439668655995e-08, 2.091472941687864e-09)[::-1]
POW_Y_CLAMP = 2.0 ** 70          # |y| beyond it: y log|x| is past the range of e^t (or 0: x is 1)
POW_T_CLAMP = 1100.0
POW_SQUARE_LIMIT = math.sqrt(sys.float_info.max)   # x ** inf from here on: NumPy warns of an overflow


def pow_log(x: float) -> tuple[float, float]:
    """log(x) as (hi, lo), for a positive finite x, as np_pow computes it."""
    k, i, r = log_reduced(x)
    fma = fused_multiply_add
    t1 = k * LOG_LN2_HI + LOG_C_HI[i]                                    # exact
    t2, e2 = _fast_two_sum(t1, r)
    ar = -0.5 * r
    ar2 = ar * r
    ar2_lo = fma(ar, r, -ar2)                                            # -r^2/2 = ar2 + ar2_lo
    hi, e3 = _fast_two_sum(t2, ar2)
    r3 = (-2.0 * r) * ar2
    r3_lo = fma(-2.0 * r, ar2_lo, fma(-2.0 * r, ar2, -r3))               # r^3 = r3 + r3_lo
    p3 = r3 * POW_THIRD[0]
    p3_lo = fma(r3, POW_THIRD[0], -p3) + fma(r3_lo, POW_THIRD[0], r3 * POW_THIRD[1])
    q = POW_LOG1P[0]
    for c in POW_LOG1P[1:]:
        q = fma(q, r, c)
    hi, e4 = _fast_two_sum(hi, p3)
    lo = fma(q, r3 * r, (((e2 + e3) + (ar2_lo + p3_lo)) + fma(k, LOG_LN2_LO, LOG_C_LO[i])) + e4)
    total = hi + lo
    return total, (hi - total) + lo


def pow_exp(t: float, t_lo: float) -> float:
    """e^(t + t_lo) for |t| <= POW_T_CLAMP, as np_pow computes it."""
    fma = fused_multiply_add
    n = float(round(t * LOG2E))
    r1 = fma(-n, LOG_LN2_HI, t)                                          # exact
    # (Fast2Sum: exact where |r1| is at least the second term, below 2^-32; elsewhere its error is below 2^-84)
    r, r_lo = _fast_two_sum(r1, fma(-n, LOG_LN2_LO, t_lo))
    rr = r * r
    h = 0.5 * rr
    h_lo = 0.5 * fma(r, r, -rr)
    w = POW_EXP[0]
    for c in POW_EXP[1:]:
        w = fma(w, r, c)
    w = w * (rr * r)
    s1, e1 = _fast_two_sum(1.0, r)
    s2, e2 = _fast_two_sum(s1, h)
    p = s2 + fma(r_lo, s2, ((e1 + e2) + h_lo) + w)
    first, second = scale_parts(int(n))
    try:
        return p * math.ldexp(1.0, first) * math.ldexp(1.0, second)
    except OverflowError:
        return math.inf


def _is_odd_integer(y: float) -> bool:
    return math.isfinite(y) and y == math.floor(y) and 0.5 * y != math.floor(0.5 * y)


def pow_of(x: float, y: float) -> float:
    """np_pow's value, as the compiled code computes it: C's pow for the special values; x * x
    and x for y = 2 and 1, as NumPy (and a correctly rounded pow) gives them."""
    if y == 0.0 or x == 1.0:
        return 1.0
    if y == 2.0 or y == 1.0:
        return x * x if y == 2.0 else x
    if math.isnan(x) or math.isnan(y):
        return x if math.isnan(x) else y
    odd, ax = _is_odd_integer(y), abs(x)
    if math.isinf(y):
        return 1.0 if ax == 1.0 else (math.inf if (ax > 1.0) == (y > 0.0) else 0.0)
    if math.isinf(x) or x == 0.0:
        big = (y > 0.0) == math.isinf(x)
        return math.copysign(math.inf if big else 0.0, x if odd else 1.0)
    if x < 0.0 and y != math.floor(y):
        return math.nan
    yc = min(max(y, -POW_Y_CLAMP), POW_Y_CLAMP)
    hi, lo = pow_log(ax)
    t = yc * hi
    t_lo = fused_multiply_add(yc, lo, fused_multiply_add(yc, hi, -t))
    if abs(t) > POW_T_CLAMP:
        t, t_lo = math.copysign(POW_T_CLAMP, t), 0.0
    g = pow_exp(t, t_lo)
    return -g if x < 0.0 and odd else g


def _np_pow(x: float, y: float) -> float:
    result = pow_of(x, y)
    if math.isfinite(x) and math.isfinite(y) and not math.isfinite(result):
        raise OpFailure(Status.FALLBACK)     # NumPy warns: overflow, 0 ** negative, negative ** fraction
    if y == 0.5 and (x == -math.inf or (x == 0.0 and math.copysign(1.0, x) < 0.0)):
        raise OpFailure(Status.FALLBACK)     # NumPy's own: sqrt(x) for a scalar exponent, C's pow for an array
    if x == 0.0 and y == -math.inf:
        raise OpFailure(Status.FALLBACK)     # inf, and C's divide-by-zero flag: NumPy warns
    if y == math.inf and math.isfinite(x) and abs(x) > POW_SQUARE_LIMIT:
        raise OpFailure(Status.FALLBACK)     # inf, and NumPy's own pow raises the overflow flag: it warns
    return result


define("np_pow", "x ** y (np.power) of float64 arrays' elements: within 1 ulp of math.pow, vectorizable (see "
       "tracer/ir/numpy_math_ops.py); where x and y are finite and the result is not (overflow, 0 ** negative, "
       "negative ** fraction: NumPy warns), FALLBACK", signature(((F64, F64), F64)), _np_pow, [Status.FALLBACK],
       vjp=POW_RULES, fails_when=lambda op, v: True)
