"""NumPy's elementwise math as its own ops (registered into `tracer.ir.ops.OPS`), where NumPy's
results are not CPython's `math` results: `np_exp` and `np_log`, np.exp and np.log of float64
arrays, and `c_hypot`, the C library's hypot (np.hypot, abs of complex numbers in NumPy and in
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

`np_log` likewise: x = 2^k m with m in [sqrt(2)/2, sqrt(2)) (a subnormal x scaled by 2^54
first), f = m - 1 (exact), and log(1 + f) = f - (f^2/2 - s (f^2/2 + R)) with s = f / (2 + f) and
R = 2 (z/3 + z^2/5 + ... + z^10/21), z = s^2 (the series of 2 atanh(s), whose next term is below
an ulp here), plus k ln2 in two parts (the first exact for every k). Where NumPy warns, log(0) (divide by
zero) and log(x < 0) (invalid value), the op fails with FALLBACK and the Python function runs;
log(inf) = inf, log(nan) = nan. Within 1 ulp of math.log, as NumPy's own.

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

from tracer.errors import OpFailure, Status
from tracer.ir.registry import define, signature
from tracer.ir.scalar_ops import fused_multiply_add
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
LOG_LN2_HI = 0.6931471803691238        # ln 2 to 32 bits: k * LOG_LN2_HI is exact for |k| <= 1100
LOG_LN2_LO = 1.9082149292705877e-10    # ln 2 - LOG_LN2_HI, rounded
LOG_SERIES = tuple(2.0 / (2 * i + 1) for i in range(10, 0, -1))     # z^10 ... z^1 of R / z
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
    k, m = log_parts(x)
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    r = LOG_SERIES[0]
    for c in LOG_SERIES[1:]:
        r = r * z + c
    r = r * z
    half_square = 0.5 * f * f
    return k * LOG_LN2_HI - ((half_square - (s * (half_square + r) + k * LOG_LN2_LO)) - f)


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
