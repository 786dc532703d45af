"""CPython's own `math` algorithms, in LLVM IR (Modules/mathmodule.c), and the math ops that need
more than one libm call: where CPython does not just call libm, neither may we.

    gamma, lgamma          m_tgamma, m_lgamma: Lanczos' approximation (N=13, g=6.0246...) as a
                           rational function, the reflection formula through m_sinpi
    fsum                   math_fsum: Shewchuk's exact partials, then CPython's half-even fix-up
    frexp_*, ldexp         math_frexp, math_ldexp (C's frexp by the bits; LLVM's exact ldexp)
    round_digits           float's round(x, n): the decimal digits by an exact product, not dtoa

Each branch of CPython's code is computed and the right one selected (floating-point work on
the other branches' inputs is harmless: no traps), with CPython's errno rules made statuses:
EDOM is MATH_DOMAIN, ERANGE with an infinite result MATH_RANGE.
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen.integers import loop
from codegen.kernel import DOUBLE, I1, I64
from codegen.lowerings import lowers
from tracer.errors import Status

I32 = ll.IntType(32)
PI = 3.141592653589793238462643383279502884197
LOG_PI = 1.144729885849400174143427351353058711647
LANCZOS_G = 6.024680040776729583740234375
LANCZOS_G_MINUS_HALF = 5.524680040776729583740234375
LANCZOS_NUM_COEFFS = [
    23531376880.410759688572007674451636754734846804940,
    42919803642.649098768957899047001988850926355848959,
    35711959237.355668049440185451547166705960488635843,
    17921034426.037209699919755754458931112671403265390,
    6039542586.3520280050642916443072979210699388420708,
    1439720407.3117216736632230727949123939715485786772,
    248874557.86205415651146038641322942321632125127801,
    31426415.585400194380614231628318205362874684987640,
    2876370.6289353724412254090516208496135991145378768,
    186056.26539522349504029498971604569928220784236328,
    8071.6720023658162106380029022722506138218516325024,
    210.82427775157934587250973392071336271166969580291,
    2.5066282746310002701649081771338373386264310793408,
]
LANCZOS_DEN_COEFFS = [0.0, 39916800.0, 120543840.0, 150917976.0, 105258076.0, 45995730.0,
                      13339535.0, 2637558.0, 357423.0, 32670.0, 1925.0, 66.0, 1.0]
GAMMA_INTEGRAL = [1.0]               # gamma(1) .. gamma(23): (n - 1)!, exact in a double
for _n in range(1, 23):
    GAMMA_INTEGRAL.append(GAMMA_INTEGRAL[-1] * _n)


def _sinpi(k, x):
    """m_sinpi: sin(pi * x) accurate near integers, for finite x."""
    b = k.builder
    y = b.frem(k.intrinsic("fabs", x), k.f64(2.0))
    twice = k.intrinsic("round", b.fmul(k.f64(2.0), y))
    n = b.fptosi(b.select(k.is_nan(twice), k.f64(0.0), twice), I64)   # (no poison from a non-finite x)
    cases = [
        k.libm("sin", b.fmul(k.f64(PI), y)),
        k.libm("cos", b.fmul(k.f64(PI), b.fsub(y, k.f64(0.5)))),
        k.libm("sin", b.fmul(k.f64(PI), b.fsub(k.f64(1.0), y))),
        b.fneg(k.libm("cos", b.fmul(k.f64(PI), b.fsub(y, k.f64(1.5))))),
        k.libm("sin", b.fmul(k.f64(PI), b.fsub(y, k.f64(2.0)))),
    ]
    r = k.select_chain(cases[0], *((b.icmp_signed("==", n, k.i64(i)), c) for i, c in enumerate(cases) if i))
    return b.fmul(k.intrinsic("copysign", k.f64(1.0), x), r)


def _lanczos_sum(k, x):
    """lanczos_sum for x > 0: the rational function in x below 5.0, in 1/x from there."""
    b = k.builder
    num, den = k.f64(0.0), k.f64(0.0)
    for i in reversed(range(len(LANCZOS_NUM_COEFFS))):
        num = b.fadd(b.fmul(num, x), k.f64(LANCZOS_NUM_COEFFS[i]))
        den = b.fadd(b.fmul(den, x), k.f64(LANCZOS_DEN_COEFFS[i]))
    small = b.fdiv(num, den)
    num, den = k.f64(0.0), k.f64(0.0)
    for i in range(len(LANCZOS_NUM_COEFFS)):
        num = b.fadd(b.fdiv(num, x), k.f64(LANCZOS_NUM_COEFFS[i]))
        den = b.fadd(b.fdiv(den, x), k.f64(LANCZOS_DEN_COEFFS[i]))
    return b.select(b.fcmp_ordered("<", x, k.f64(5.0)), small, b.fdiv(num, den))


def _first(k, default, cases):
    """CPython's chain of early returns: `cases` are (condition, value, domain error, range
    error), the first whose condition holds wins; else `default` (value, domain, range)."""
    b = k.builder
    value, domain, range_ = default
    for cond, v, d, r in reversed(cases):
        value, domain, range_ = b.select(cond, v, value), b.select(cond, d, domain), b.select(cond, r, range_)
    k.fail_if(domain, Status.MATH_DOMAIN)
    k.fail_if(range_, Status.MATH_RANGE)
    return value


@lowers("gamma")
def gamma(k, v, x):
    """m_tgamma, with math_1a's errors: EDOM a domain error, ERANGE (an infinity) a range error."""
    b = k.builder
    yes, no = ll.Constant(I1, 1), ll.Constant(I1, 0)
    zero, nan, inf = k.f64(0.0), k.f64(float("nan")), k.f64(float("inf"))
    negative = b.fcmp_ordered("<", x, zero)
    integral = b.fcmp_ordered("==", x, k.intrinsic("floor", x))
    absx = k.intrinsic("fabs", x)
    in_table = b.and_(b.fcmp_ordered(">=", x, k.f64(1.0)), b.fcmp_ordered("<=", x, k.f64(23.0)))
    index = b.fptosi(b.select(in_table, x, k.f64(1.0)), I64)
    table = k.select_chain(k.f64(GAMMA_INTEGRAL[0]), *((b.icmp_signed("==", index, k.i64(i + 1)), k.f64(g))
                                                        for i, g in enumerate(GAMMA_INTEGRAL) if i))
    tiny = b.fdiv(k.f64(1.0), x)
    y = b.fadd(absx, k.f64(LANCZOS_G_MINUS_HALF))
    z = b.select(b.fcmp_ordered(">", absx, k.f64(LANCZOS_G_MINUS_HALF)),
                 b.fsub(b.fsub(y, absx), k.f64(LANCZOS_G_MINUS_HALF)),
                 b.fsub(b.fsub(y, k.f64(LANCZOS_G_MINUS_HALF)), absx))
    z = b.fdiv(b.fmul(z, k.f64(LANCZOS_G)), y)
    lanczos = _lanczos_sum(k, absx)
    below_140 = b.fcmp_ordered("<", absx, k.f64(140.0))
    power = k.libm("pow", y, b.fsub(absx, k.f64(0.5)))
    sqrt_power = k.libm("pow", y, b.fsub(b.fdiv(absx, k.f64(2.0)), k.f64(0.25)))
    # x < 0: the reflection formula
    r = b.fmul(b.fdiv(b.fdiv(k.f64(-PI), _sinpi(k, absx)), absx), k.libm("exp", y))
    r = b.fdiv(r, lanczos)
    r = b.fsub(r, b.fmul(z, r))
    reflected = b.select(below_140, b.fdiv(r, power), b.fdiv(b.fdiv(r, sqrt_power), sqrt_power))
    r = b.fdiv(lanczos, k.libm("exp", y))
    r = b.fadd(r, b.fmul(z, r))
    direct = b.select(below_140, b.fmul(r, power), b.fmul(b.fmul(r, sqrt_power), sqrt_power))
    r = b.select(negative, reflected, direct)
    return _first(k, (r, no, k.is_inf(r)), [
        (b.not_(k.is_finite(x)), b.select(b.fcmp_ordered("==", x, b.fneg(inf)), nan, x),
         b.fcmp_ordered("==", x, b.fneg(inf)), no),
        (b.fcmp_ordered("==", x, zero), k.intrinsic("copysign", inf, x), yes, no),
        (b.and_(integral, negative), nan, yes, no),
        (b.and_(integral, b.fcmp_ordered("<=", x, k.f64(23.0))), table, no, no),
        (b.fcmp_ordered("<", absx, k.f64(1e-20)), tiny, no, k.is_inf(tiny)),
        (b.and_(b.fcmp_ordered(">", absx, k.f64(200.0)), negative), b.fdiv(zero, _sinpi(k, x)), no, no),
        (b.fcmp_ordered(">", absx, k.f64(200.0)), inf, no, yes),
    ])


@lowers("lgamma")
def lgamma(k, v, x):
    """m_lgamma, with math_1a's errors."""
    b = k.builder
    yes, no = ll.Constant(I1, 1), ll.Constant(I1, 0)
    zero, inf = k.f64(0.0), k.f64(float("inf"))
    integral = b.fcmp_ordered("==", x, k.intrinsic("floor", x))
    absx = k.intrinsic("fabs", x)
    r = b.fsub(k.libm("log", _lanczos_sum(k, absx)), k.f64(LANCZOS_G))
    shifted = b.fsub(b.fadd(absx, k.f64(LANCZOS_G)), k.f64(0.5))
    r = b.fadd(r, b.fmul(b.fsub(absx, k.f64(0.5)), b.fsub(k.libm("log", shifted), k.f64(1.0))))
    reflected = b.fsub(b.fsub(b.fsub(k.f64(LOG_PI), k.libm("log", k.intrinsic("fabs", _sinpi(k, absx)))),
                              k.libm("log", absx)), r)
    r = b.select(b.fcmp_ordered("<", x, zero), reflected, r)
    return _first(k, (r, no, k.is_inf(r)), [
        (k.is_nan(x), x, no, no),
        (k.is_inf(x), inf, no, no),
        (b.and_(integral, b.fcmp_ordered("<=", x, zero)), inf, yes, no),
        (b.and_(integral, b.fcmp_ordered("<=", x, k.f64(2.0))), zero, no, no),
        (b.fcmp_ordered("<", absx, k.f64(1e-20)), b.fneg(k.libm("log", absx)), no, no),
    ])


# ----------------------------------------------------------------------------------- frexp, ldexp
EXPONENT_MASK = 0x7FF << 52


def _frexp(k, x):
    """C's frexp by the bits: (m, e) with x == m * 2**e and 0.5 <= |m| < 1; (x, 0) for zeros,
    infinities and NaN. A subnormal is first scaled by 2**54 (exactly)."""
    b = k.builder
    subnormal = b.fcmp_ordered("<", k.intrinsic("fabs", x), k.f64(2.0 ** -1022))
    scaled = b.select(subnormal, b.fmul(x, k.f64(2.0 ** 54)), x)
    bits = b.bitcast(scaled, I64)
    biased = b.and_(b.lshr(bits, k.i64(52)), k.i64(0x7FF))
    e = b.sub(b.sub(biased, k.i64(1022)), b.select(subnormal, k.i64(54), k.i64(0)))
    m = b.bitcast(b.or_(b.and_(bits, k.i64(~EXPONENT_MASK)), k.i64(1022 << 52)), DOUBLE)
    plain = b.or_(b.fcmp_unordered("==", x, k.f64(0.0)), b.not_(k.is_finite(x)))
    return b.select(plain, x, m), b.select(plain, k.i64(0), e)


@lowers("frexp_mantissa")
def frexp_mantissa(k, v, x):
    return _frexp(k, x)[0]


@lowers("frexp_exponent")
def frexp_exponent(k, v, x):
    return _frexp(k, x)[1]


@lowers("ldexp")
def ldexp(k, v, x, e):
    """math_ldexp: zeros, infinities and NaN unchanged; the exponent clamped to C's int (beyond
    it the result is an infinity or a zero anyway); an infinite result from a finite x is a range
    error."""
    b = k.builder
    e = b.select(b.icmp_signed(">", e, k.i64(2 ** 31 - 1)), k.i64(2 ** 31 - 1), e)
    e = b.select(b.icmp_signed("<", e, k.i64(-2 ** 31)), k.i64(-2 ** 31), e)
    r = k.call_intrinsic("llvm.ldexp.f64.i32", DOUBLE, [DOUBLE, I32], x, b.trunc(e, I32))
    k.fail_if(b.and_(k.is_inf(r), k.is_finite(x)), Status.MATH_RANGE)
    return b.select(b.or_(b.fcmp_unordered("==", x, k.f64(0.0)), b.not_(k.is_finite(x))), x, r)


@lowers("nextafter")
def nextafter(k, v, x, y):
    return k.libm("nextafter", x, y)


# ------------------------------------------------------------------------------------------ fsum
def _stack_array(k, n: int):
    """An [n x double] on the stack, allocated in the kernel's entry block (once, not per loop
    iteration)."""
    b = k.builder
    here = b.block
    b.position_at_start(k.function.entry_basic_block)
    slot = b.alloca(DOUBLE, size=k.i64(n))
    b.position_at_end(here)
    return slot


def _at(k, array, i):
    return k.builder.gep(array, [i], inbounds=True, source_etype=DOUBLE)


def _load(k, array, i):
    return k.builder.load(_at(k, array, i), typ=DOUBLE)


@lowers("fsum")
def fsum(k, v, *xs):
    """math_fsum over the operands: CPython's loop, item by item (the items stored in an array),
    keeping the partials in another; its two errors (an intermediate overflow, inf - inf) fall
    back, and CPython raises them."""
    b = k.builder
    if not xs:
        return k.f64(0.0)
    items, partials = _stack_array(k, len(xs)), _stack_array(k, len(xs))
    for i, x in enumerate(xs):
        b.store(x, _at(k, items, k.i64(i)))

    def add_item(j, n, special, inf_sum, overflow):
        xsave = _load(k, items, j)

        def add_partial(jj, i, x):        # for y in partials: exact two-sum, keep nonzero lows
            y = _load(k, partials, jj)
            swap = b.fcmp_ordered("<", k.intrinsic("fabs", x), k.intrinsic("fabs", y))
            x, y = b.select(swap, y, x), b.select(swap, x, y)
            hi = b.fadd(x, y)
            lo = b.fsub(y, b.fsub(hi, x))
            keep = b.fcmp_unordered("!=", lo, k.f64(0.0))
            with b.if_then(keep):
                b.store(lo, _at(k, partials, i))
            return [b.add(jj, k.i64(1)), b.select(keep, b.add(i, k.i64(1)), i), hi]
        _, i, x = loop(k, [k.i64(0), k.i64(0), xsave], lambda jj, i, x: b.icmp_signed("<", jj, n), add_partial)
        nonzero = b.fcmp_unordered("!=", x, k.f64(0.0))
        nonfinite = b.and_(nonzero, b.not_(k.is_finite(x)))
        overflow = b.or_(overflow, b.and_(nonfinite, k.is_finite(xsave)))
        inf_sum = b.select(b.and_(nonfinite, k.is_inf(xsave)), b.fadd(inf_sum, xsave), inf_sum)
        special = b.select(nonfinite, b.fadd(special, xsave), special)
        append = b.and_(nonzero, b.not_(nonfinite))
        with b.if_then(append):
            b.store(x, _at(k, partials, i))
        n = b.select(nonfinite, k.i64(0), b.select(append, b.add(i, k.i64(1)), i))
        return [b.add(j, k.i64(1)), n, special, inf_sum, overflow]
    _, n, special, inf_sum, overflow = loop(
        k, [k.i64(0), k.i64(0), k.f64(0.0), k.f64(0.0), ll.Constant(I1, 0)],
        lambda j, *rest: b.icmp_signed("<", j, k.i64(len(xs))), add_item)
    k.fail_if(overflow, Status.FALLBACK)
    is_special = b.fcmp_unordered("!=", special, k.f64(0.0))
    k.fail_if(b.and_(is_special, k.is_nan(inf_sum)), Status.FALLBACK)
    return b.select(is_special, special, _fsum_tail(k, partials, n))


def _fsum_tail(k, partials, n):
    """The sum of the partials from the top while it stays exact, then the half-even fix-up."""
    b = k.builder
    top = b.select(b.icmp_signed(">", n, k.i64(0)), b.sub(n, k.i64(1)), k.i64(0))
    hi0 = b.select(b.icmp_signed(">", n, k.i64(0)), _load(k, partials, top), k.f64(0.0))

    def add_down(m, hi, lo, exact):
        y = _load(k, partials, b.sub(m, k.i64(1)))
        new_hi = b.fadd(hi, y)
        new_lo = b.fsub(y, b.fsub(new_hi, hi))
        return [b.sub(m, k.i64(1)), new_hi, new_lo, b.fcmp_ordered("==", new_lo, k.f64(0.0))]
    m, hi, lo, _ = loop(k, [top, hi0, k.f64(0.0), ll.Constant(I1, 1)],
                        lambda m, hi, lo, exact: b.and_(exact, b.icmp_signed(">", m, k.i64(0))), add_down)
    below = _load(k, partials, b.select(b.icmp_signed(">", m, k.i64(0)), b.sub(m, k.i64(1)), k.i64(0)))
    same_sign = b.or_(b.and_(b.fcmp_ordered("<", lo, k.f64(0.0)), b.fcmp_ordered("<", below, k.f64(0.0))),
                      b.and_(b.fcmp_ordered(">", lo, k.f64(0.0)), b.fcmp_ordered(">", below, k.f64(0.0))))
    y = b.fmul(lo, k.f64(2.0))
    x = b.fadd(hi, y)
    exact = b.fcmp_ordered("==", y, b.fsub(x, hi))
    # (`below` is read past the partials when m == 0: select, as `and` would spread its poison)
    fix = b.select(b.icmp_signed(">", m, k.i64(0)), b.and_(same_sign, exact), ll.Constant(I1, 0))
    return b.select(fix, x, hi)


# ------------------------------------------------------------------------------------ round(x, n)
@lowers("round_digits")
def round_digits(k, v, x, n):
    """round(x, n) as CPython's double_round gives it (x rounded half-even, by its exact value, to
    n decimal places, then the nearest double), without dtoa, for 0 <= n <= 22 (10**n exact)
    and |x * 10**n| < 2**52; elsewhere FALLBACK. x * 10**n is exactly p + e (an FMA); K, the
    integer nearest to it (ties to even), is roundeven(p) but where p is halfway between two
    integers and e breaks the tie; K / 10**n, one correctly rounded division, is the result."""
    b = k.builder
    in_table = b.icmp_unsigned("<=", n, k.i64(22))
    scale = k.f64(1.0)
    for bit, power in enumerate((1e1, 1e2, 1e4, 1e8, 1e16)):     # 10**n, each product exact
        set_ = b.icmp_unsigned("!=", b.and_(n, k.i64(1 << bit)), k.i64(0))
        scale = b.fmul(scale, b.select(set_, k.f64(power), k.f64(1.0)))
    p = b.fmul(x, scale)
    e = k.intrinsic("fma", x, scale, b.fneg(p))
    whole = b.not_(b.fcmp_ordered("<", k.intrinsic("fabs", x), k.f64(2.0 ** 52)))     # or inf, NaN
    small = b.fcmp_ordered("<", k.intrinsic("fabs", p), k.f64(2.0 ** 52))
    k.fail_if(b.not_(b.and_(in_table, b.or_(whole, small))), Status.FALLBACK)
    nearest = k.intrinsic("roundeven", p)
    f = b.fsub(p, nearest)
    up = b.and_(b.fcmp_ordered("==", f, k.f64(0.5)), b.fcmp_ordered(">", e, k.f64(0.0)))
    down = b.and_(b.fcmp_ordered("==", f, k.f64(-0.5)), b.fcmp_ordered("<", e, k.f64(0.0)))
    digits = b.fadd(nearest, b.select(up, k.f64(1.0), b.select(down, k.f64(-1.0), k.f64(0.0))))
    r = k.intrinsic("copysign", b.fdiv(digits, scale), x)
    return b.select(whole, x, r)
