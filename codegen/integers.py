"""Lowering of the i64 bit and number-theory ops (tracer.ir.scalar_ops, "int bits"): & | ^ ~
<< >>, int.bit_length, pow(a, e, m), math.gcd, isqrt, factorial, comb and perm.

As everywhere, a rule gives what the op's evaluator gives: Python's unbounded ints, so a result
past 64 bits returns FALLBACK (the call then runs in Python), never a wrapped value. No rule
emits LLVM poison or a trap, even for the operands whose failure is only noted (inside a map,
`k.deferred`) and whose element is then discarded: shift counts are clamped below 64 and
divisors kept nonzero. Loops here end after at most about 130 iterations (a 64-bit result
overflows long before), so they need no signal polls.
"""
from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir as ll

from codegen.kernel import I1, I64
from codegen.lowerings import lowers
from tracer.errors import Status


def loop(k, initial: list, keep_going: Callable, step: Callable) -> list:
    """`values = initial; while keep_going(*values): values = step(*values)`, in LLVM blocks; the
    values after the loop."""
    b = k.builder
    start = b.block
    head, body, done = (k.function.append_basic_block(x) for x in ("while", "while_body", "while_end"))
    b.branch(head)
    b.position_at_end(head)
    phis = [b.phi(v.type) for v in initial]
    for phi, v in zip(phis, initial):
        phi.add_incoming(v, start)
    b.cbranch(keep_going(*phis), body, done)
    b.position_at_end(body)
    new = step(*phis)
    for phi, v in zip(phis, new):
        phi.add_incoming(v, b.block)
    b.branch(head)
    b.position_at_end(done)
    return phis


def _magnitude(k, a):
    """|a| as an unsigned i64 (2**63 for -2**63: the bits of the wrapped negation)."""
    b = k.builder
    return b.select(b.icmp_signed("<", a, k.i64(0)), b.neg(a), a)


# --------------------------------------------------------------------------------- bit operators
@lowers("bit_and")
def bit_and(k, v, a, b):
    return k.builder.and_(a, b)


@lowers("bit_or")
def bit_or(k, v, a, b):
    return k.builder.or_(a, b)


@lowers("bit_xor")
def bit_xor(k, v, a, b):
    return k.builder.xor(a, b)


@lowers("invert")
def invert(k, v, a):
    return k.builder.not_(a)


def _count_below_64(k, n):
    """The shift count n clamped to 0..63 (an unsigned min: a negative count, which has already
    failed, becomes 63), so that LLVM's shift is never poison."""
    b = k.builder
    return b.select(b.icmp_unsigned(">", n, k.i64(63)), k.i64(63), n)


@lowers("lshift")
def lshift(k, v, a, n):
    """a << n: FALLBACK for n < 0 (Python's ValueError was raised before) or when a bit leaves
    the 64 (shifting back does not give a, or n >= 64 with a != 0)."""
    b = k.builder
    k.fail_if(b.icmp_signed("<", n, k.i64(0)), Status.FALLBACK)
    count = _count_below_64(k, n)
    r = b.shl(a, count)
    lost = b.or_(b.icmp_signed("!=", b.ashr(r, count), a), b.icmp_unsigned(">", n, k.i64(63)))
    k.fail_if(b.and_(lost, b.icmp_signed("!=", a, k.i64(0))), Status.FALLBACK)
    return r


@lowers("rshift")
def rshift(k, v, a, n):
    """a >> n: arithmetic (floor); past 63 the sign fills every bit (0 or -1), as by 63."""
    b = k.builder
    k.fail_if(b.icmp_signed("<", n, k.i64(0)), Status.FALLBACK)
    return b.ashr(a, _count_below_64(k, n))


@lowers("bit_length")
def bit_length(k, v, a):
    b = k.builder
    zeros = k.call_intrinsic("llvm.ctlz.i64", I64, [I64, I1], _magnitude(k, a), ll.Constant(I1, 0))
    return b.sub(k.i64(64), zeros)


@lowers("bit_count")
def bit_count(k, v, a):
    return k.call_intrinsic("llvm.ctpop.i64", I64, [I64], _magnitude(k, a))


# ----------------------------------------------------------------------------- number theory
@lowers("gcd")
def gcd(k, v, x, y):
    """Euclid's algorithm on the magnitudes (unsigned); gcd(-2**63, 0) = 2**63 falls back."""
    b = k.builder
    g, _ = loop(k, [_magnitude(k, x), _magnitude(k, y)],
                lambda p, q: b.icmp_unsigned("!=", q, k.i64(0)),
                lambda p, q: [q, b.urem(p, q)])
    k.fail_if(b.icmp_signed("<", g, k.i64(0)), Status.FALLBACK)
    return g


@lowers("isqrt")
def isqrt(k, v, n):
    """The floor of sqrt(n): the double sqrt (off by at most one), corrected exactly (the squares
    of numbers up to 2**32 fit an unsigned i64)."""
    b = k.builder
    negative = b.icmp_signed("<", n, k.i64(0))
    k.fail_if(negative, Status.FALLBACK)
    n = b.select(negative, k.i64(0), n)
    s = b.fptosi(k.intrinsic("sqrt", b.sitofp(n, ll.DoubleType())), I64)
    for _ in range(2):
        s = b.sub(s, b.zext(b.icmp_unsigned(">", b.mul(s, s), n), I64))
        up = b.add(s, k.i64(1))
        s = b.add(s, b.zext(b.icmp_unsigned("<=", b.mul(up, up), n), I64))
    return s


FACTORIALS = [1]
for _i in range(1, 21):
    FACTORIALS.append(FACTORIALS[-1] * _i)


@lowers("factorial")
def factorial(k, v, n):
    """math.factorial: 0! .. 20! from a table; past 20 (or n < 0) FALLBACK."""
    b = k.builder
    k.fail_if(b.icmp_unsigned(">", n, k.i64(20)), Status.FALLBACK)
    return k.select_chain(k.i64(1), *((b.icmp_signed("==", n, k.i64(i)), k.i64(f))
                                      for i, f in enumerate(FACTORIALS) if i > 1))


def _unsigned_gcd(k, x, y):
    b = k.builder
    g, _ = loop(k, [x, y], lambda p, q: b.icmp_unsigned("!=", q, k.i64(0)), lambda p, q: [q, b.urem(p, q)])
    return g


@lowers("comb")
def comb(k, v, n, r):
    """math.comb: C(n - r + i, i) for i = 1..min(r, n - r), each exactly from the last as
    (c / g) * ((n - r + i) / (i / g)) with g = gcd(c, i) (no 128-bit division); they grow with
    i, so one past i64 means the result is (FALLBACK, and the loop stops)."""
    b = k.builder
    k.fail_if(b.or_(b.icmp_signed("<", n, k.i64(0)), b.icmp_signed("<", r, k.i64(0))), Status.FALLBACK)
    too_many = b.icmp_signed(">", r, n)
    r = b.select(too_many, k.i64(0), r)
    r = b.select(b.icmp_signed(">", r, b.sub(n, r)), b.sub(n, r), r)
    base = b.sub(n, r)

    def step(i, c, over):
        i = b.add(i, k.i64(1))
        g = _unsigned_gcd(k, c, i)
        c, overflowed = k.with_overflow("smul", b.udiv(c, g), b.udiv(b.add(base, i), b.udiv(i, g)))
        return [i, c, overflowed]
    _, c, over = loop(k, [k.i64(0), k.i64(1), ll.Constant(I1, 0)],
                      lambda i, c, over: b.and_(b.icmp_signed("<", i, r), b.not_(over)), step)
    k.fail_if(over, Status.FALLBACK)
    return b.select(too_many, k.i64(0), c)


@lowers("perm")
def perm(k, v, n, r):
    """math.perm: n * (n - 1) * ... * (n - r + 1), 0 when r > n; stops at the first overflow."""
    b = k.builder
    k.fail_if(b.or_(b.icmp_signed("<", n, k.i64(0)), b.icmp_signed("<", r, k.i64(0))), Status.FALLBACK)
    too_many = b.icmp_signed(">", r, n)

    def step(i, p, over):
        product, overflowed = k.with_overflow("smul", p, b.sub(n, i))
        return [b.add(i, k.i64(1)), product, overflowed]
    _, p, over = loop(k, [k.i64(0), k.i64(1), ll.Constant(I1, 0)],
                      lambda i, p, over: b.and_(b.icmp_signed("<", i, r), b.not_(b.or_(over, too_many))), step)
    k.fail_if(b.and_(over, b.not_(too_many)), Status.FALLBACK)
    return b.select(too_many, k.i64(0), p)


def _add_mod(k, x, y, m):
    """(x + y) mod m for x, y < m <= 2**63, unsigned (the sum fits 64 bits)."""
    b = k.builder
    total = b.add(x, y)
    return b.select(b.icmp_unsigned(">=", total, m), b.sub(total, m), total)


def _mul_mod(k, x, y, m):
    """(x * y) mod m for x, y < m <= 2**63, unsigned: one multiplication when m <= 2**32, else
    doubling and adding (no 128-bit division, which would need compiler-rt)."""
    b = k.builder
    quick = b.urem(b.mul(x, y), m)           # (exact when x, y < 2**32)
    start = b.block
    wide, done = k.function.append_basic_block("mulmod_wide"), k.function.append_basic_block("mulmod_done")
    b.cbranch(b.icmp_unsigned("<=", m, k.i64(2 ** 32)), done, wide)
    b.position_at_end(wide)

    def double_and_add(r, x, y):
        r = b.select(b.trunc(y, I1), _add_mod(k, r, x, m), r)
        return [r, _add_mod(k, x, x, m), b.lshr(y, k.i64(1))]
    r, _, _ = loop(k, [k.i64(0), x, y], lambda r, x, y: b.icmp_unsigned("!=", y, k.i64(0)), double_and_add)
    wide_end = b.block
    b.branch(done)
    b.position_at_end(done)
    result = b.phi(I64)
    result.add_incoming(quick, start)
    result.add_incoming(r, wide_end)
    return result


@lowers("powmod")
def powmod(k, v, base, e, m):
    """pow(base, e, m) modulo |m| in unsigned i64 (|m| <= 2**63); e < 0 uses the inverse of base
    (extended Euclid: its coefficients are computed modulo 2**64, exact since the one kept is
    below |m| / 2 in magnitude), FALLBACK where there is
    none or m == 0 (the front end raised Python's ValueError first). The result takes the sign
    of m, as Python's % does."""
    b = k.builder
    k.fail_if(b.icmp_signed("==", m, k.i64(0)), Status.FALLBACK)
    modulus = _magnitude(k, m)
    modulus = b.select(b.icmp_signed("==", modulus, k.i64(0)), k.i64(1), modulus)   # (no division by 0)
    r = b.urem(_magnitude(k, base), modulus)
    x = b.select(b.and_(b.icmp_signed("<", base, k.i64(0)), b.icmp_signed("!=", r, k.i64(0))), b.sub(modulus, r), r)
    negative = b.icmp_signed("<", e, k.i64(0))

    def euclid(r0, r1, s0, s1):
        q = b.udiv(r0, r1)
        return [r1, b.sub(r0, b.mul(q, r1)), s1, b.sub(s0, b.mul(q, s1))]
    g, _, s, _ = loop(k, [x, modulus, k.i64(1), k.i64(0)],
                      lambda r0, r1, s0, s1: b.icmp_unsigned("!=", r1, k.i64(0)), euclid)
    k.fail_if(b.and_(negative, b.icmp_signed("!=", g, k.i64(1))), Status.FALLBACK)
    inverse = b.select(b.icmp_signed("<", s, k.i64(0)), b.add(s, modulus), s)
    x = b.select(negative, b.urem(inverse, modulus), x)
    count = b.select(negative, b.neg(e), e)      # (-(-2**63) wraps to 2**63: read unsigned)

    def square_and_multiply(r, x, n):
        r = b.select(b.trunc(n, I1), _mul_mod(k, r, x, modulus), r)
        return [r, _mul_mod(k, x, x, modulus), b.lshr(n, k.i64(1))]
    r, _, _ = loop(k, [b.urem(k.i64(1), modulus), x, count],
                   lambda r, x, n: b.icmp_unsigned("!=", n, k.i64(0)), square_and_multiply)
    return b.select(b.and_(b.icmp_signed("<", m, k.i64(0)), b.icmp_signed("!=", r, k.i64(0))), b.add(r, m), r)
