"""Part of the control-flow corpus (`cf_corpus.py` gathers the parts into `CASES`): `raise` and `assert`, and variables bound on only some paths.

Every function here is ordinary Python that CPython runs as it is, registered with
`@cf_case(args, argnums=None, points=(), fused_rel=1e-12)` (`cf_case.py`).
"""
from __future__ import annotations

import math

from cf_case import Registry

nan, inf = math.nan, math.inf


CASES = Registry()
cf_case = CASES.cf_case


# ---------------------------------------------------------------- raise and assert
@cf_case(args=[(2.0,), (1.0,), (0.0,), (-0.0,), (-1.0,), (nan,), (inf,), (-inf,), (5e-324,)],
         argnums=0, points=[(2.0,), (0.5,)])
def log_positive(x):
    if x <= 0:
        raise ValueError("x must be positive")
    return math.log(x)


@cf_case(args=[(4.0,), (0.0,), (-0.0,), (-1.0,), (nan,), (inf,), (-inf,)],
         argnums=0, points=[(4.0,), (0.5,)])
def sqrt_nonneg(x):
    assert x >= 0, "x must be non-negative"
    return math.sqrt(x)


@cf_case(args=[(1.0, 2.0), (2.0, 1.0), (1.0, 1.0), (nan, 1.0), (-inf, inf)],
         argnums=(0, 1), points=[(1.0, 2.0), (-3.0, 0.5)])
def ordered_gap(x, y):
    assert x < y
    return y - x


@cf_case(args=[(1.0, 2.0, 1.0), (1.0, 2.0, 0.0), (0.0, 2.0, 1.0), (-0.0, 4.0, 0.0), (0.0, 0.0, 1.0), (0.0, 0.0, 0.0), (1.0, -3.0, 2.0),
               (1.0, 0.3, 0.02), (2.0, 1.0, 3.0), (-1.0, 0.5, 2.0), (nan, 1.0, 1.0)])
def solve_quadratic(a, b, c):
    if a == 0.0:
        if b == 0.0:
            raise ValueError("degenerate equation")
        return -c / b, -c / b
    disc = b * b - 4.0 * a * c
    if disc < 0.0:
        raise ValueError("no real roots")
    r = math.sqrt(disc)
    return (-b - r) / (2.0 * a), (-b + r) / (2.0 * a)


@cf_case(args=[(3.0,), (2.0,), (1.0,), (0.5,), (-4.0,), (2.5,), (nan,), (inf,)],
         argnums=0, points=[(3.0,), (0.5,), (2.5,)])
def reciprocal_shifted(x):
    if x > 1.0:
        return 1.0 / (x - 2.0)
    return x


@cf_case(args=[(7, 3, 1.0), (7, 0, 1.0), (7, 0, -1.0), (-7, 3, -1.0), (7, 3, -1.0), (0, 0, 0.0),
               (5, 2, nan)],
         argnums=2, points=[(7, 3, 1.0), (7, 0, 2.5)])
def mod_or_scale(n, m, x):
    if x < 0.0:
        return float(n % m)
    return x * n


@cf_case(args=[(4.0,), (0.0,), (-0.0,), (-1.0,), (nan,), (inf,), (-inf,)],
         argnums=0, points=[(4.0,), (-1.0,)])
def sqrt_or_minus_one(x):
    return math.sqrt(x) if x >= 0.0 else -1.0      # sqrt(-1.0) would raise: only on the branch not taken


@cf_case(args=[(4.0,), (0.0,), (-0.0,), (-2.0,), (nan,), (inf,), (5e-324,)],
         argnums=0, points=[(4.0,), (-2.0,)])
def reciprocal_or_inf(x):
    return 1.0 / x if x != 0.0 else math.inf


@cf_case(args=[(3.7,), (-3.7,), (0.0,), (nan,), (inf,), (-inf,), (1e300,)])
def floor_if_finite(x):
    return int(x) if math.isfinite(x) else 0       # int(nan) and int(inf) raise: not taken


@cf_case(args=[(2 ** 40, 1.0), (2 ** 40, -1.0), (3, 1.0), (3, 0.0), (-2 ** 33, 2.0), (7, nan)])
def square_if_positive(n, x):
    if x > 0.0:
        return n * n                                # past 64 bits for n = 2**40: Python's big int
    return -n


# ---------------------------------------------------------------- variables bound on only some paths
@cf_case(args=[(4.0,), (0.0,), (-1.0,), (nan,), (inf,), (5e-324,)],
         argnums=0, points=[(4.0,), (0.5,)])
def sqrt_if_positive(x):
    if x > 0.0:
        y = math.sqrt(x)
    return y


@cf_case(args=[(1.0, 2.0, 3.0), (1.0, -2.0, -3.0), (-1.0, -2.0, -3.0), (-1.0, 2.0, -3.0), (nan, nan, nan),
               (0.0, -0.0, 0.0)],
         argnums=(0, 1, 2), points=[(1.0, 2.0, 3.0), (1.0, -2.0, -3.0)])
def last_positive(a, b, c):
    for v in (a, b, c):
        if v > 0.0:
            last = v
    return last


@cf_case(args=[(0.5, 10), (5.0, 10), (0.05, 10), (1.0, 0), (nan, 3), (inf, 4)])
def index_after_loop(x, n):
    for i in range(n):
        if x * i > 1.0:
            break
    return i


@cf_case(args=[(1.0, 2.0, 3.0, 2.0), (1.0, 2.0, 3.0, 5.0), (4.0, 2.0, 3.0, 2.0), (1.0, 2.0, 3.0, 3.0),
               (nan, nan, nan, 0.0), (1.0, 2.0, 3.0, -inf)])
def first_at_least(a, b, c, target):
    for i, v in enumerate((a, b, c)):   # noqa: B007  (i is read after the loop)
        if v >= target:
            break
    else:
        return -1
    return i
