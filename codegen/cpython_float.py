"""CPython's own float algorithms, in LLVM IR: where CPython does not just call libm, neither
may we, or the last bit (or a signed zero, or an error) would differ.

    float_mod, float_floordiv   Objects/floatobject.c: float_rem and _float_div_mod
    float_pow                   Objects/floatobject.c: float_pow
    math_hypot                  Modules/mathmodule.c: math_hypot -> vector_norm (two coordinates),
                                as 3.11 computes it and as 3.12+ does (they differ in the last bit)
"""
from __future__ import annotations

import sys

from codegen.kernel import DOUBLE, I64
from tracer.errors import Status


def float_mod(k, vx, wx):
    """CPython's float_rem: fmod, then the sign of the divisor (signed zero included)."""
    b = k.builder
    mod = b.frem(vx, wx)
    nonzero = b.fcmp_unordered("!=", mod, k.f64(0.0))            # C's `if (mod)`: NaN is true
    signs_differ = b.xor(b.fcmp_ordered("<", wx, k.f64(0.0)), b.fcmp_ordered("<", mod, k.f64(0.0)))
    return k.select_chain(k.intrinsic("copysign", k.f64(0.0), wx),
                          (b.and_(nonzero, signs_differ), b.fadd(mod, wx)),
                          (nonzero, mod))


def float_floordiv(k, vx, wx):
    """CPython's _float_div_mod, the floor quotient half: derived from fmod, then snapped."""
    b = k.builder
    mod = b.frem(vx, wx)
    div = b.fdiv(b.fsub(vx, mod), wx)
    nonzero = b.fcmp_unordered("!=", mod, k.f64(0.0))
    signs_differ = b.xor(b.fcmp_ordered("<", wx, k.f64(0.0)), b.fcmp_ordered("<", mod, k.f64(0.0)))
    div = b.select(b.and_(nonzero, signs_differ), b.fsub(div, k.f64(1.0)), div)
    floor = k.intrinsic("floor", div)
    snapped = b.select(b.fcmp_ordered(">", b.fsub(div, floor), k.f64(0.5)), b.fadd(floor, k.f64(1.0)), floor)
    zero = k.intrinsic("copysign", k.f64(0.0), b.fdiv(vx, wx))  # a zero with the true quotient's sign
    return b.select(b.fcmp_unordered("!=", div, k.f64(0.0)), snapped, zero)


def float_pow(k, iv, iw):
    """CPython's float_pow: its special cases, then libm pow on |v| with the sign put back."""
    b = k.builder
    zero, one = k.f64(0.0), k.f64(1.0)
    w_finite, v_finite = k.is_finite(iw), k.is_finite(iv)
    v_zero = b.fcmp_ordered("==", iv, zero)
    v_negative = b.fcmp_ordered("<", iv, zero)
    w_odd = k.is_odd_integer(iw)
    # 0.0 ** negative finite raises; negative ** finite non-integer is complex in Python (which
    # the original function computes, or fails to: a complex overflow has its own message)
    k.fail_if(b.and_(v_zero, b.and_(b.fcmp_ordered("<", iw, zero), w_finite)), Status.ZERO_TO_NEGATIVE_POWER)
    w_fraction = b.fcmp_unordered("!=", iw, k.intrinsic("floor", iw))
    k.fail_if(b.and_(b.and_(v_negative, v_finite), b.and_(w_finite, w_fraction)), Status.FALLBACK)

    av = k.intrinsic("fabs", iv)
    negate = b.and_(v_negative, w_odd)
    p = k.libm("pow", av, iw)
    general = b.and_(b.and_(w_finite, v_finite),
                     b.and_(b.fcmp_unordered("!=", iw, zero),
                            b.and_(b.fcmp_unordered("!=", iv, zero), b.fcmp_unordered("!=", av, one))))
    k.fail_if(b.and_(general, k.is_inf(p)), Status.POW_OVERFLOW)

    w_positive = b.fcmp_ordered(">", iw, zero)
    inf_base = b.select(w_positive, b.select(w_odd, iv, av),
                        b.select(w_odd, k.intrinsic("copysign", zero, iv), zero))
    inf_exponent = k.select_chain(
        zero, (b.fcmp_ordered("==", av, one), one),
        (b.icmp_unsigned("==", w_positive, b.fcmp_ordered(">", av, one)), k.intrinsic("fabs", iw)))
    return k.select_chain(
        b.select(negate, b.fneg(p), p),
        (b.fcmp_ordered("==", iw, zero), one),                        # v ** 0 is 1, even nan ** 0
        (k.is_nan(iv), iv),
        (k.is_nan(iw), b.select(b.fcmp_ordered("==", iv, one), one, iw)),
        (k.is_inf(iw), inf_exponent),
        (k.is_inf(iv), inf_base),
        (v_zero, b.select(w_odd, iv, zero)),
        (b.fcmp_ordered("==", av, one), b.select(negate, k.f64(-1.0), one)),
    )


def math_hypot(k, x, y):
    """math.hypot(x, y): CPython's vector_norm for two coordinates (libm hypot differs in the
    last bit), then no error: an overflow is just inf."""
    b = k.builder
    ax, ay = k.intrinsic("fabs", x), k.intrinsic("fabs", y)
    largest = k.f64(0.0)
    for a in (ax, ay):                                   # `if (x > max) max = x;`: NaN skipped
        largest = b.select(b.fcmp_ordered(">", a, largest), a, largest)
    norm = _vector_norm_2(k, ax, ay, largest)
    found_nan = b.or_(k.is_nan(ax), k.is_nan(ay))
    return k.select_chain(norm,
                          (k.is_inf(largest), largest),
                          (found_nan, k.f64(float("nan"))),
                          (b.fcmp_ordered("==", largest, k.f64(0.0)), largest))


def _vector_norm_2(k, x0, x1, largest):
    """CPython's vector_norm body for finite |x0|, |x1| <= largest, largest > 0."""
    b = k.builder
    dbl_min = sys.float_info.min
    # frexp's max_e < -1023, i.e. largest < 2**-1024: ldexp(1.0, -max_e) would overflow
    tiny = b.fcmp_ordered("<", largest, k.f64(2.0 ** -1024))
    if sys.version_info >= (3, 12):
        # 3.12+: divide by DBL_MIN to make subnormals normal, recurse once, scale back
        def scaled(z):
            return b.select(tiny, b.fdiv(z, k.f64(dbl_min)), z)
        norm = _norm_fma(k, scaled(x0), scaled(x1), scaled(largest))
        return b.select(tiny, b.fmul(k.f64(dbl_min), norm), norm)
    # 3.11: Veltkamp-Dekker squares; the tiny case divides by max instead
    return b.select(tiny, _norm_tiny_311(k, x0, x1, largest), _norm_split_311(k, x0, x1, largest))


def _scale_for(k, largest):
    """ldexp(1.0, -max_e) with max_e from frexp(largest), for 2**-1024 <= largest < inf.

    Exact bit arithmetic: max_e is the unbiased exponent + 1 (a subnormal largest is first
    scaled up by 2**54); 2**-max_e is normal except for max_e in (1023, 1024]."""
    b = k.builder
    subnormal = b.fcmp_ordered("<", largest, k.f64(2.0 ** -1022))
    y = b.select(subnormal, b.fmul(largest, k.f64(2.0 ** 54)), largest)
    biased = b.and_(b.lshr(b.bitcast(y, I64), k.i64(52)), k.i64(0x7FF))
    max_e = b.sub(b.sub(biased, k.i64(1022)), b.select(subnormal, k.i64(54), k.i64(0)))
    n = b.sub(k.i64(0), max_e)                                  # the scale is 2**n, n >= -1024

    def clamp(x, lo, hi):
        x = b.select(b.icmp_signed("<", x, k.i64(lo)), k.i64(lo), x)
        return b.select(b.icmp_signed(">", x, k.i64(hi)), k.i64(hi), x)

    normal_bits = b.shl(clamp(b.add(n, k.i64(1023)), 1, 2046), k.i64(52))
    subnormal_bits = b.shl(k.i64(1), clamp(b.add(n, k.i64(1074)), 0, 51))
    bits = b.select(b.icmp_signed(">=", n, k.i64(-1022)), normal_bits, subnormal_bits)
    return b.bitcast(bits, DOUBLE)


def _norm_fma(k, x0, x1, largest):
    """vector_norm of 3.12+: exact squares through fma (dl_mul), Neumaier sums (dl_fast_sum)."""
    b = k.builder
    scale = _scale_for(k, largest)
    one = k.f64(1.0)
    csum, frac1, frac2 = one, k.f64(0.0), k.f64(0.0)

    def dl_mul(p, q):
        z = b.fmul(p, q)
        return z, k.intrinsic("fma", p, q, b.fneg(z))

    def dl_fast_sum(p, q):
        s = b.fadd(p, q)
        return s, b.fadd(b.fsub(p, s), q)

    for x in (x0, x1):
        x = b.fmul(x, scale)
        hi, lo = dl_mul(x, x)
        csum, s_lo = dl_fast_sum(csum, hi)
        frac1, frac2 = b.fadd(frac1, lo), b.fadd(frac2, s_lo)
    h = k.intrinsic("sqrt", b.fadd(b.fsub(csum, one), b.fadd(frac1, frac2)))
    hi, lo = dl_mul(b.fneg(h), h)
    csum, s_lo = dl_fast_sum(csum, hi)
    frac1, frac2 = b.fadd(frac1, lo), b.fadd(frac2, s_lo)
    x = b.fadd(b.fsub(csum, one), b.fadd(frac1, frac2))
    h = b.fadd(h, b.fdiv(x, b.fmul(k.f64(2.0), h)))
    return b.fdiv(h, scale)


def _norm_split_311(k, x0, x1, largest):
    """vector_norm of 3.11: Veltkamp-Dekker split squares, three compensated accumulators."""
    b = k.builder
    scale = _scale_for(k, largest)
    one, t27 = k.f64(1.0), k.f64(134217729.0)
    csum, fracs = one, [k.f64(0.0)] * 3

    def split(x):
        t = b.fmul(x, t27)
        hi = b.fsub(t, b.fsub(t, x))
        return hi, b.fsub(x, hi)

    def accumulate(x, i):
        nonlocal csum
        new = b.fadd(csum, x)
        fracs[i] = b.fadd(fracs[i], b.fadd(b.fsub(csum, new), x))
        csum = new

    for x in (x0, x1):
        hi, lo = split(b.fmul(x, scale))
        accumulate(b.fmul(hi, hi), 0)
        accumulate(b.fmul(b.fmul(k.f64(2.0), hi), lo), 1)
        fracs[2] = b.fadd(fracs[2], b.fmul(lo, lo))
    total = lambda: b.fadd(b.fsub(csum, one), b.fadd(b.fadd(fracs[0], fracs[1]), fracs[2]))
    h = k.intrinsic("sqrt", total())
    hi, lo = split(h)
    accumulate(b.fmul(b.fneg(hi), hi), 0)
    accumulate(b.fmul(b.fmul(k.f64(-2.0), hi), lo), 1)
    accumulate(b.fmul(b.fneg(lo), lo), 2)
    x = total()
    return b.fdiv(b.fadd(h, b.fdiv(x, b.fmul(k.f64(2.0), h))), scale)


def _norm_tiny_311(k, x0, x1, largest):
    """3.11 below 2**-1024, where the scale would overflow: divide by the largest instead."""
    b = k.builder
    one = k.f64(1.0)
    csum, frac1 = one, k.f64(0.0)
    for x in (x0, x1):
        x = b.fdiv(x, largest)
        x = b.fmul(x, x)
        new = b.fadd(csum, x)
        frac1 = b.fadd(frac1, b.fadd(b.fsub(csum, new), x))
        csum = new
    return b.fmul(largest, k.intrinsic("sqrt", b.fadd(b.fsub(csum, one), frac1)))
