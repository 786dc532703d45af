"""Part of the control-flow corpus (`cf_corpus.py` gathers the parts into `CASES`): `while` loops to a tolerance, `for` over `range()`, long loops (integrators, accumulators).

Every function here is ordinary Python that CPython runs as it is, registered with
`@cf_case(args, argnums=None, points=(), fused_rel=1e-12)` (`cf_case.py`).
"""
from __future__ import annotations

import math

from cf_case import Registry

nan, inf = math.nan, math.inf


CASES = Registry()
cf_case = CASES.cf_case


# ---------------------------------------------------------------- while loops to a tolerance
@cf_case(args=[(2.0, 1e-15), (0.25, 1e-15), (1e10, 1e-15), (1e-10, 1e-15), (9.0, 1e-15), (2.0, 1e-3),
               (1.0, 1e-15), (0.0, 1e-15), (-0.0, 1e-15), (-1.0, 1e-15), (1e100, 1e-15), (nan, 1e-15),
               (inf, 1e-15), (-inf, 1e-15)],
         argnums=0, points=[(2.0, 1e-15), (0.5, 1e-15), (9.0, 1e-15), (1e4, 1e-15)])
def newton_sqrt(x, tol):
    if x < 0.0:
        raise ValueError("x must be non-negative")
    if x == 0.0:
        return 0.0
    g = x if x > 1.0 else 1.0
    n = 0
    while n < 100:
        nxt = 0.5 * (g + x / g)
        if abs(nxt - g) <= tol * nxt:
            return nxt
        g = nxt
        n += 1
    return g


@cf_case(args=[(8.0,), (27.0,), (-2.0,), (0.3,), (1.0,), (0.0,), (-0.0,), (1e-200,), (1e200,), (nan,),
               (inf,)],
         argnums=0, points=[(8.0,), (-2.0,), (0.3,)])
def newton_cbrt(a):
    if a == 0.0:
        return a
    x = a
    prev = 0.0
    n = 0
    while abs(x - prev) > 1e-14 * abs(x) and n < 100:
        prev = x
        x = x - (x * x * x - a) / (3.0 * x * x)
        n += 1
    return x


@cf_case(args=[(2.0, 0.0, 2.0), (27.0, 0.0, 5.0), (8.0, 0.0, 4.0), (-8.0, -4.0, 1.0), (5.0, 2.0, 3.0),
               (0.0, -1.0, 1.0), (1.0, 1.0, 2.0), (1.0, 1.0, 1.0), (nan, 0.0, 1.0)])
def bisect_cube_root(c, lo, hi):
    flo = lo ** 3 - c
    if flo * (hi ** 3 - c) > 0.0:
        raise ValueError("root not bracketed")
    while hi - lo > 1e-12:
        mid = 0.5 * (lo + hi)
        fm = mid ** 3 - c
        if fm == 0.0:
            return mid
        if (fm < 0.0) == (flo < 0.0):
            lo, flo = mid, fm
        else:
            hi = mid
    return 0.5 * (lo + hi)


@cf_case(args=[(1.0,), (-1.0,), (2.5,), (-2.5,), (10.0,), (20.0,), (150.0,), (0.0,), (-0.0,), (1e-3,),
               (nan,), (inf,), (-inf,)],
         argnums=0, points=[(0.5,), (-1.2,), (3.0,)])
def exp_taylor(x):
    term = 1.0
    s = 1.0
    n = 0
    while abs(term) > 1e-16 * abs(s) and n < 200:
        n += 1
        term *= x / n
        s += term
    return s


@cf_case(args=[(0.5,), (-1.0,), (2.0,), (3.0,), (0.0,), (-0.0,), (1e-9,), (nan,)], argnums=0,
         points=[(0.5,), (-1.0,), (2.0,), (3.0,)])
def sin_series(x):
    term = x
    s = x
    for n in range(1, 100):
        term *= -x * x / ((2 * n) * (2 * n + 1))
        s += term
        if abs(term) < 1e-17:
            break
    return s


@cf_case(args=[(48, 18), (17, 5), (0, 7), (7, 0), (0, 0), (-48, 18), (48, -18), (2 ** 40, 6 ** 10),
               (1071, 462)])
def gcd(a, b):
    while b:
        a, b = b, a % b
    return abs(a)


@cf_case(args=[(1,), (2,), (6,), (7,), (27,), (97,), (0,), (-3,)])
def collatz_steps(n):
    if n < 1:
        raise ValueError("n must be positive")
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@cf_case(args=[(12345,), (0,), (9,), (-407,), (10 ** 15,)])
def digit_sum(n):
    n = abs(n)
    total = 0
    while n > 0:
        total += n % 10
        n //= 10
    return total


@cf_case(args=[(5.0,), (1.0,), (0.999,), (1e300,), (0.0,), (-3.0,), (inf,), (nan,)])
def count_halvings(x):
    n = 0
    while True:
        if not x >= 1.0 or n >= 2000:
            break
        x *= 0.5
        n += 1
    return n


@cf_case(args=[(3.0,), (0.5,), (1.0,), (1e20,), (inf,), (nan,), (-2.0,)])
def halve_below_one(x):
    n = 0
    while x > 1.0:
        x /= 2.0
        n += 1
        if n > 50:
            break
    else:
        return x, n
    return -1.0, n


@cf_case(args=[(0.5,), (3.7,), (2.0,), (-0.5,), (-3.0,), (17.25,), (-0.0,), (nan,), (inf,)],
         argnums=0, points=[(0.5,), (3.7,), (-3.25,), (17.25,)])
def wrap_to_period(x):
    if not math.isfinite(x):
        raise ValueError("x must be finite")
    while x >= 2.0:
        x -= 2.0
    while x < 0.0:
        x += 2.0
    return x


@cf_case(args=[(2.0, 10), (0.5, 10), (3.0, 20), (-1.0, 5), (0.0, 10), (2.0, 0), (30.0, 10), (nan, 10),
               (inf, 3)])
def skip_and_stop(x, n):
    total = 0.0
    i = 0
    while i < n:
        i += 1
        t = x * i - 3.0
        if t < 0.0:
            continue
        if t > 50.0:
            break
        total += t
    return total, i


# ---------------------------------------------------------------- for over range()
@cf_case(args=[(0.5, 10), (2.0, 5), (-1.5, 7), (1.0, 0), (1.0, 1), (nan, 3), (inf, 2)],
         argnums=0, points=[(0.5, 10), (-1.5, 7), (1.1, 4)])
def geometric_sum(x, n):
    acc = 0.0
    for _ in range(n):
        acc = acc * x + 1.0
    return acc


@cf_case(args=[(10, 0, -1, 1.0), (5, -5, -2, 2.0), (4, -4, -2, 1.0), (0, 10, 3, 1.5), (3, 3, 1, 1.0),
               (1, 10, -1, 1.0), (1, 2, 0, 1.0), (-10, -1, 4, -0.5)],
         argnums=3, points=[(10, 0, -1, 1.0), (-10, -1, 4, -0.5)])
def reciprocal_range_sum(a, b, step, x):
    acc = 0.0
    for i in range(a, b, step):
        acc += x / i
    return acc


@cf_case(args=[(3.7,), (10.0,), (0.5,), (1.0,), (-2.0,), (-0.0,), (40.99,), (nan,), (inf,), (-inf,)])
def harmonic_down_from(x):
    acc = 0.0
    for k in range(int(x), 0, -1):
        acc += 1.0 / k
    return acc


@cf_case(args=[(0.0, 5.0), (5.0, 0.0), (2.5, 2.9), (-3.5, 4.2), (4.0, -4.0), (1.0, 1.0), (nan, 1.0),
               (1.0, inf)])
def walk_between(x, y):
    step = 1 if x < y else -1
    acc = 0.0
    for i in range(int(x), int(y), step):
        acc += math.sin(i)
    return acc


@cf_case(args=[(0.5, 3), (2.0, 5), (-1.0, 4), (1.0, 0)],
         argnums=0, points=[(0.5, 3), (-1.2, 4), (2.0, 5)])
def horner_range(x, n):
    acc = 0.0
    for k in range(n, -1, -1):
        acc = acc * x + 1.0 / (k + 1)
    return acc


@cf_case(args=[(0.5, 1.0, -2.0, 0.5, 3.0), (-1.5, 0.0, 0.0, 0.0, 1.0), (nan, 1.0, 1.0, 1.0, 1.0),
               (inf, 1.0, 0.0, 0.0, 0.0)],
         argnums=(0, 1, 2, 3, 4), points=[(0.5, 1.0, -2.0, 0.5, 3.0), (-1.5, 0.25, 2.0, -1.0, 1.0)])
def horner_tuple(x, c0, c1, c2, c3):
    acc = 0.0
    for c in (c3, c2, c1, c0):
        acc = acc * x + c
    return acc


@cf_case(args=[(4, 5, 1.5), (3, 3, -2.0), (0, 4, 1.0), (5, 0, 1.0), (6, 6, 0.5)],
         argnums=2, points=[(4, 5, 1.5), (3, 3, -2.0)])
def nested_grid_sum(n, m, x):
    total = 0.0
    for i in range(n):
        for j in range(m):
            if j > i:
                break
            if (i + j) % 2 == 1:
                continue
            total += x ** (i - j)
    return total


@cf_case(args=[(1.0, 3, 4), (0.3, 4, 4), (2.0, 5, 5), (0.0, 3, 3), (-1.0, 2, 6), (nan, 3, 3)],
         argnums=0, points=[(0.3, 4, 4), (1.0, 3, 4)])
def nested_capped_sum(x, n, m):
    total = 0.0
    for i in range(n):
        row = 0.0
        for j in range(m):
            row += x * (i + 1) * (j + 1)
            if row > 4.0:
                break
        total += row
        if total > 20.0:
            return total
    return -total


@cf_case(args=[(0.5, 10), (0.2, 8), (0.0, 5), (-1.0, 6), (1.0, 0), (nan, 4)],
         argnums=0, points=[(0.45, 10), (-1.0, 6)])          # the gradient is 0: x only decides branches
def weighted_count(x, n):
    acc = 0.0
    for i in range(n):
        if x * i > 3.0:
            acc += i
        else:
            acc -= 0.5
    return acc


@cf_case(args=[(10,), (1,), (0,), (7,)])
def mean_of_range(n):
    acc = 0.0
    for i in range(n):
        acc += i
    return acc / n if n > 0 else 0.0


@cf_case(args=[(1.0, 2.0, -3.0, 4.0, -5.0), (1.0, 2.0, 3.0, 4.0, 5.0), (-1.0, -0.0, 0.0, -2.0, 1.0),
               (nan, 1.0, -1.0, nan, 1.0)])
def count_sign_changes(a, b, c, d, e):
    n = 0
    prev = a
    for v in (b, c, d, e):
        if (prev < 0.0) != (v < 0.0):
            n += 1
        prev = v
    return n


@cf_case(args=[(2.0, 10), (2.0, -3), (0.5, 7), (-3.0, 5), (1.5, 0), (0.0, 3), (0.0, -2), (nan, 2),
               (inf, -1)],
         argnums=0, points=[(2.0, 10), (0.5, 7), (-3.0, 5), (1.5, -3)])
def power_by_squaring(x, n):
    if n < 0:
        x = 1.0 / x
        n = -n
    result = 1.0
    while n > 0:
        if n % 2 == 1:
            result *= x
        x *= x
        n //= 2
    return result


# ---------------------------------------------------------------- long loops: integrators, accumulators
@cf_case(args=[(0.1, 1.5, 0.01), (0.5, -0.5, 0.01), (0.0, 1.0, 0.01), (2.0, 1.0, 0.001), (nan, 1.0, 0.01)],
         argnums=(0, 1), points=[(0.1, 1.5, 0.01), (0.5, -0.5, 0.01)])
def euler_logistic_1000(y0, r, h):
    y = y0
    for _ in range(1000):
        y = y + h * r * y * (1.0 - y)
    return y


@cf_case(args=[(10.0, 0.0, 0.01), (1.0, 2.0, 0.01), (0.0, 0.0, 0.01), (5.0, -1.0, 0.005)],
         fused_rel=1e-9)     # positions near the floor lose relative accuracy; the bounce count must match
def bouncing_ball(h0, v0, dt):
    y, v, bounces = h0, v0, 0
    for _ in range(300):
        v -= 9.81 * dt
        y += v * dt
        if y < 0.0:
            y = -y
            v = -0.9 * v
            bounces += 1
    return y, v, bounces


@cf_case(args=[(1.0,), (0.5,), (3.0,), (0.0,), (-1.0,), (nan,), (inf,)],
         argnums=0, points=[(0.5,), (3.0,)])
def harmonic_wrap_10000(x):
    acc = 0.0
    for i in range(10000):
        acc += x / (i + 1)
        if acc > 10.0:
            acc -= 10.0
    return acc
