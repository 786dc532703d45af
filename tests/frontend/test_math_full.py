"""The rest of `math` in traced code, against CPython bit for bit (floats by their bits, signed
zeros and NaN included) with CPython's exceptions and messages: the number theory of ints (gcd,
lcm, factorial, comb, perm, isqrt), fsum and prod, dist, isclose, the float decompositions
(frexp, ldexp, modf, ulp, nextafter, remainder) and the special functions (erf, erfc through
libm as CPython calls it; gamma, lgamma by CPython's own Lanczos algorithm, ported).

Each function is compiled once (fullgraph=True) and called with every case; the ops are also
checked compiled against their evaluators, so that no fallback to Python hides a difference.
"""
from __future__ import annotations

import math
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from kernel_calls import check
from like_python import assert_like_python

from tracer import ir, trace

I64_MIN, I64_MAX = ir.I64_MIN, ir.I64_MAX
inf, nan = math.inf, math.nan
SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e16 + 2, 1e308, -1e308, 5e-324, -5e-324, 1e-310,
            2.2250738585072014e-308, inf, -inf, nan]


def compiled(fn):
    return trace(fn, fuse_fma=False, fullgraph=True)


def like_python_for_all(fn, cases):
    f = compiled(fn)
    for args in cases:
        assert_like_python(f, *args)


def random_floats(n: int, seed: int, low: float = -200.0, high: float = 200.0) -> list[float]:
    rng = random.Random(seed)
    xs = []
    for _ in range(n):
        kind = rng.randrange(4)
        if kind == 0:
            xs.append(rng.uniform(low, high))
        elif kind == 1:
            xs.append(rng.uniform(-10.0, 10.0))
        elif kind == 2:
            xs.append(math.ldexp(rng.random(), rng.randint(-60, 10)) * rng.choice([1.0, -1.0]))
        else:
            xs.append(float(rng.randint(-30, 200)) + rng.choice([0.0, 0.5, 1e-9, -1e-12]))
    return xs


# ----------------------------------------------------------------------------- number theory
def divisors(a, b, c):
    return math.gcd(a, b), math.gcd(a, b, c), math.gcd(a), math.gcd(), math.lcm(a, b), math.lcm(a, b, c), \
        math.lcm(a), math.lcm()


INT_EDGES = [0, 1, -1, 6, -12, 18, 35, 2 ** 40, 2 ** 62, I64_MAX, I64_MIN, True]


def test_gcd_and_lcm_like_python():
    like_python_for_all(divisors, [(a, b, 12) for a in INT_EDGES for b in INT_EDGES])


def factorial(n):
    return math.factorial(n)


def test_factorial_like_python():
    # past 20! the result leaves 64 bits: Python's exact big int; a negative n: its ValueError
    like_python_for_all(factorial, [(n,) for n in [0, 1, 2, 5, 12, 20, 21, 30, -1, I64_MIN, True, False]])


def choose(n, k):
    return math.comb(n, k), math.perm(n, k)


def arrangements(n):
    return math.perm(n)


def test_comb_and_perm_like_python():
    cases = [(n, k) for n in [0, 1, 5, 10, 20, 21, 60, 67, 68] for k in [0, 1, 2, 5, 10, 30, 34, 68, 70]]
    cases += [(-1, 2), (2, -1), (-1, -1), (2 ** 40, 1), (2 ** 40, 2), (2 ** 62, 3), (100, 98), (True, True)]
    like_python_for_all(choose, cases)
    like_python_for_all(arrangements, [(n,) for n in [0, 1, 5, 20, 21, 30, -1, True]])


def integer_root(n):
    return math.isqrt(n)


def test_isqrt_like_python():
    squares = [3037000499 ** 2, 3037000499 ** 2 - 1, 10 ** 18, 10 ** 18 - 1, 2 ** 62, 2 ** 52 + 1]
    like_python_for_all(integer_root, [(n,) for n in [0, 1, 2, 3, 4, 15, 16, 17, I64_MAX, -1, True, *squares]])


@settings(max_examples=300, deadline=None)
@given(st.integers(0, I64_MAX))
def test_isqrt_matches_python(n):
    assert_like_python(_ISQRT, n)


_ISQRT = compiled(integer_root)


def float_for_int(x):
    return math.factorial(x)


def float_gcd(x):
    return math.gcd(x, 4)


def float_exponent(x, e):
    return math.ldexp(x, e)


@pytest.mark.parametrize("fn, args", [(float_for_int, (2.0,)), (float_gcd, (1.5,)), (float_exponent, (1.0, 2.0))],
                         ids=["factorial(float)", "gcd(float)", "ldexp(x, float)"])
def test_wrong_types_raise_pythons_type_error(fn, args):
    got = assert_like_python(compiled(fn), *args)
    assert got[0] == "raise" and got[1] is TypeError


# ----------------------------------------------------------------------------- sums, products, distances
def exact_sums(a, b, c):
    return math.fsum([a, b, c]), math.fsum((a, 1e100, b, -1e100, c)), math.fsum([a]), math.fsum([a, -a])


def products(a, b, c):
    return math.prod([a, b, c]), math.prod((a, 2), start=b), math.prod([])


def test_fsum_like_python():
    cases = [(x, y, z) for x in SPECIALS for y in SPECIALS for z in (0.0, -0.0, 1.0, 1e308, inf, -inf, nan)]
    like_python_for_all(exact_sums, cases)      # (inf - inf: ValueError; an overflow: OverflowError)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=3, max_size=3))
def test_fsum_matches_python(xs):
    assert_like_python(_SUMS, *xs)


_SUMS = compiled(exact_sums)


def sum_of_ints(n, m):
    return math.fsum([n, m, 0.1])


def test_fsum_of_ints_and_floats():
    like_python_for_all(sum_of_ints, [(1, 2), (2 ** 53 + 1, 1), (I64_MAX, I64_MIN), (True, -3)])


def test_prod_like_python():
    like_python_for_all(products, [(x, y, z) for x in SPECIALS[:12] for y in SPECIALS for z in (0.5, -0.0, 3.0)])
    like_python_for_all(products, [(a, b, c) for a in INT_EDGES for b in (3, -1, True) for c in (2, 2 ** 40)])


def distances(a, b, c, d):
    return math.dist((a, b), (c, d)), math.dist([a], [c]), math.dist((), ()), math.hypot(a), math.hypot(a, b)


def test_dist_like_python():
    like_python_for_all(distances, [(a, b, c, 1.5) for a in SPECIALS for b in SPECIALS for c in SPECIALS[:8]])


def mismatched(a):
    return math.dist((a, a), (a,))


def test_dist_of_mismatched_points_raises_valueerror():
    got = assert_like_python(compiled(mismatched), 1.0)
    assert got == ("raise", ValueError, "both points must have the same number of dimensions")


def closeness(a, b):
    return math.isclose(a, b), math.isclose(a, b, rel_tol=0.5), math.isclose(a, b, abs_tol=1e-3), \
        math.isclose(a, b, rel_tol=0.0, abs_tol=0.0)


def tolerance(a, b, r, t):
    return math.isclose(a, b, rel_tol=r, abs_tol=t)


def test_isclose_like_python():
    near = [1.0, 1.0 + 1e-10, 1.1, 1.6, -1.0, 1e-4, 0.0, -0.0]
    like_python_for_all(closeness, [(a, b) for a in SPECIALS + near for b in SPECIALS + near])
    like_python_for_all(tolerance, [(1.0, 1.1, -0.1, 0.0), (1.0, 1.1, 0.1, -1.0), (1.0, 1.1, 0.1, 0.0),
                                    (1.0, 1.1, nan, 0.0), (inf, inf, 0.0, 0.0), (1, 2, 1, 0)])


# ----------------------------------------------------------------------------- float decompositions
def decompositions(x, y):
    return math.frexp(x), math.modf(x), math.ulp(x), math.nextafter(x, y), math.copysign(x, y)


def remainders(x, y):
    return math.remainder(x, y)


def float_mod(x, y):
    return math.fmod(x, y)


def scaled(x, i):
    return math.ldexp(x, i)


def test_float_decompositions_like_python():
    like_python_for_all(decompositions, [(x, y) for x in SPECIALS for y in SPECIALS])


def test_remainder_and_fmod_like_python():
    like_python_for_all(remainders, [(x, y) for x in SPECIALS for y in SPECIALS])   # (domain errors too)
    like_python_for_all(float_mod, [(x, y) for x in SPECIALS for y in SPECIALS])


def test_ldexp_like_python():
    exponents = [0, 1, -1, 52, 1023, 1024, -1022, -1074, -1075, 2 ** 31, -2 ** 31 - 5, 2 ** 62, I64_MIN, True]
    like_python_for_all(scaled, [(x, i) for x in SPECIALS for i in exponents])


@settings(max_examples=300, deadline=None)
@given(st.floats(width=64), st.floats(width=64))
@example(6.503164428322356e-255, 1.1125369292536007e-308)     # (a zero remainder of a subnormal: +0.0)
def test_float_decompositions_match_python(x, y):
    assert_like_python(_DECOMPOSITIONS, x, y)
    assert_like_python(_REMAINDERS, x, y)


_DECOMPOSITIONS = compiled(decompositions)
_REMAINDERS = compiled(remainders)


# ----------------------------------------------------------------------------- special functions
def special(x):
    return math.erf(x), math.erfc(x), math.cbrt(x), math.expm1(x) if x < 700 else 0.0, math.log2(abs(x) + 1.0), \
        math.log1p(abs(x))


def exp2(x):
    return math.exp2(x)


def gamma(x):
    return math.gamma(x)


def lgamma(x):
    return math.lgamma(x)


GAMMA_EDGES = [0.0, -0.0, 1.0, 2.0, 0.5, -0.5, -1.0, -2.5, 23.0, 24.0, 140.5, 171.6, 171.7, 200.5, -200.5,
               -171.5, -190.3, 1e-21, -1e-21, 1e-300, 5e-324, 1e308, -1e308, 2.6e305, inf, -inf, nan, 4.9, 5.0,
               5.1, 5.524680040776729, 6.024680040776729, -6.0246, 0.1, 2000.0, -2000.0, 3]


@pytest.mark.parametrize("fn", [special, exp2, gamma, lgamma])
def test_special_functions_at_their_edges_like_python(fn):
    like_python_for_all(fn, [(x,) for x in SPECIALS + GAMMA_EDGES + [-1100.0, 1100.0]])


@pytest.mark.parametrize("fn", [gamma, lgamma, special, exp2])
def test_special_functions_bit_for_bit(fn):
    f = compiled(fn)
    for x in random_floats(4000, seed=hash(fn.__name__) % 1000):
        assert_like_python(f, x)


# ----------------------------------------------------------------------------- the ops compiled
@pytest.mark.parametrize("op", ["gamma", "lgamma", "erf", "erfc", "cbrt", "exp2", "frexp_mantissa",
                                "frexp_exponent"])
def test_unary_float_ops_compiled_equal_their_evaluators(op):
    for x in SPECIALS + GAMMA_EDGES[:-1] + random_floats(500, seed=7):
        check(op, (ir.F64,), (x,))


@pytest.mark.parametrize("op", ["nextafter", "remainder"])
def test_binary_float_ops_compiled_equal_their_evaluators(op):
    for x in SPECIALS:
        for y in SPECIALS:
            check(op, (ir.F64, ir.F64), (x, y))


def test_ldexp_compiled_equals_its_evaluator():
    for x in SPECIALS:
        for i in [0, 3, -3, 1024, -1075, 2 ** 40, I64_MIN, I64_MAX]:
            check("ldexp", (ir.F64, ir.I64), (x, i))


@pytest.mark.parametrize("n", [1, 2, 5])
def test_fsum_compiled_equals_its_evaluator(n):
    rng = random.Random(n)
    for _ in range(300):
        xs = [rng.choice([rng.uniform(-1, 1) * 10.0 ** rng.randint(-30, 30), rng.choice(SPECIALS)]) for _ in range(n)]
        check("fsum", (ir.F64,) * n, tuple(xs))


def sum_of_a_list(xs):
    return math.fsum(xs)


def test_fsum_of_a_list_argument_like_python():
    like_python_for_all(sum_of_a_list, [([0.1] * 10,), ([1e308, 1e308, -1e308],), ([1.0, 1e-16, 1e-16],),
                                        ([inf, 1.0],), ([inf, -inf],), ([],), ([nan, 1.0],), ([-0.0],)])
