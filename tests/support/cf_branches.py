"""Part of the control-flow corpus (`cf_corpus.py` gathers the parts into `CASES`): piecewise `if`/`elif`/`else`, ReLU and friends, `and`/`or`/`not`, early returns.

Every function here is ordinary Python that CPython runs as it is, registered with
`@cf_case(args, argnums=None, points=(), fused_rel=1e-12)` (`cf_case.py`).
"""
from __future__ import annotations

import math

from cf_case import Registry

nan, inf = math.nan, math.inf


CASES = Registry()
cf_case = CASES.cf_case


# ============================================================================ the functions
# ---------------------------------------------------------------- piecewise: if / elif / else
@cf_case(args=[(-2.0,), (-1.0,), (-0.5,), (-0.0,), (0.0,), (0.5,), (1.0,), (1.5,), (2.0,), (7.0,),
               (nan,), (inf,), (-inf,)],
         argnums=0, points=[(-3.0,), (-0.25,), (0.75,), (1.5,), (4.0,)])
def piecewise_linear(x):
    if x < -1.0:
        return -1.0
    elif x < 1.0:
        return x
    elif x < 2.0:
        return 2.0 * x - 1.0
    else:
        return 3.0


@cf_case(args=[(-5.0,), (0.0,), (-0.0,), (5000.0,), (10000.0,), (10000.5,), (25000.0,), (40000.0,),
               (40000.01,), (1e6,), (nan,), (inf,)],
         argnums=0, points=[(5000.0,), (20000.0,), (50000.0,)])
def income_tax(income):
    if income <= 0.0:
        return 0.0
    if income <= 10000.0:
        tax = income * 0.1
    elif income <= 40000.0:
        tax = 1000.0 + (income - 10000.0) * 0.2
    else:
        tax = 7000.0 + (income - 40000.0) * 0.35
    return tax


@cf_case(args=[(-3.5,), (-0.0,), (0.0,), (2.0,), (nan,), (inf,), (-inf,), (5e-324,)])
def classify(x):
    if math.isnan(x):
        return -2
    if x < 0.0:
        return -1
    elif x == 0.0:
        return 0
    else:
        return 1


@cf_case(args=[(2.0,), (-3.0,), (0.0,), (-0.0,), (nan,), (inf,), (-inf,), (-5e-324,)],
         argnums=0, points=[(2.0,), (-3.0,)])
def sign(x):
    if x > 0.0:
        return 1.0
    elif x < 0.0:
        return -1.0
    return x          # 0.0, -0.0 and nan come back as they are


@cf_case(args=[(2.0,), (-3.0,), (0.0,), (-0.0,), (nan,), (inf,), (-inf,)])
def sign_branchless(x):
    return float(x > 0.0) - float(x < 0.0)


@cf_case(args=[(-2.0,), (-0.5,), (0.0,), (-0.0,), (0.5,), (1.0,), (3.0,), (nan,), (-inf,), (inf,), (800.0,)],
         argnums=0, points=[(-1.5,), (0.25,), (0.9,), (2.0,)])
def piecewise_math(x):
    if x < 0.0:
        return math.exp(x) - 1.0
    elif x < 1.0:
        return math.log1p(x)
    else:
        return math.sqrt(x) + math.log(2.0) - 1.0


@cf_case(args=[(0.0, 1.0, -0.5), (0.0, 1.0, 0.0), (0.0, 1.0, 0.25), (0.0, 1.0, 0.5), (0.0, 1.0, 1.0),
               (0.0, 1.0, 2.0), (-1.0, 3.0, 0.7), (2.0, 2.0, 2.0), (0.0, 1.0, nan), (0.0, 1.0, inf),
               (1.0, 0.0, 0.5)],
         argnums=(0, 1, 2), points=[(0.0, 1.0, 0.25), (-1.0, 3.0, 0.7), (0.5, 2.0, 1.1)])
def smoothstep(edge0, edge1, x):
    t = (x - edge0) / (edge1 - edge0)
    if t < 0.0:
        t = 0.0
    elif t > 1.0:
        t = 1.0
    return t * t * (3.0 - 2.0 * t)


@cf_case(args=[(-1.0,), (0.0,), (-0.0,), (0.5,), (1.0,), (1.75,), (2.5,), (3.0,), (4.0,), (9.0,), (nan,), (inf,)],
         argnums=0, points=[(0.5,), (1.75,), (3.25,), (6.0,)])
def interpolate_table(x):
    knots = (0.0, 1.0, 2.5, 4.0)
    values = (0.0, 2.0, 3.0, 2.0)
    if x <= knots[0]:
        return values[0]
    for i in range(1, len(knots)):
        if x <= knots[i]:
            t = (x - knots[i - 1]) / (knots[i] - knots[i - 1])
            return values[i - 1] + t * (values[i] - values[i - 1])
    return values[-1]


@cf_case(args=[(50.0, 1.8), (70.0, 1.75), (90.0, 1.75), (120.0, 1.7), (57.0, 1.75), (60.0, 0.0),
               (60.0, -1.7), (nan, 1.7)])
def bmi_category(weight, height):
    if height <= 0.0:
        raise ValueError("height must be positive")
    bmi = weight / (height * height)
    if bmi < 18.5:
        return 0
    elif bmi < 25.0:
        return 1
    elif bmi < 30.0:
        return 2
    return 3


# ---------------------------------------------------------------- ReLU and friends
@cf_case(args=[(1.5,), (-2.0,), (0.0,), (-0.0,), (nan,), (inf,), (-inf,), (5e-324,)],
         argnums=0, points=[(1.5,), (-2.0,)])
def relu_ternary(x):
    return x if x > 0 else 0.0


@cf_case(args=[(1.5,), (-2.0,), (0.0,), (-0.0,), (nan,), (inf,), (-inf,)],
         argnums=0, points=[(1.5,), (-2.0,)])
def relu_inplace(x):
    if x < 0.0:
        x = 0.0
    return x


@cf_case(args=[(1.5,), (-2.0,), (0.0,), (-0.0,), (nan,), (inf,), (-inf,)],
         argnums=0, points=[(1.5,), (-2.0,)])
def relu_max_free(x):
    return 0.5 * (x + abs(x))


@cf_case(args=[(1.5, 0.01), (-2.0, 0.01), (0.0, 0.1), (-0.0, 0.1), (-3.0, 0.0), (nan, 0.1), (-inf, 0.1),
               (inf, 0.1), (-inf, 0.0)],
         argnums=(0, 1), points=[(1.5, 0.01), (-2.0, 0.2)])
def leaky_relu(x, alpha):
    return x if x >= 0.0 else alpha * x


@cf_case(args=[(0.5, 0.0, 1.0), (-1.0, 0.0, 1.0), (2.0, 0.0, 1.0), (0.0, 0.0, 1.0), (1.0, 0.0, 1.0),
               (-0.0, 0.0, 1.0), (nan, 0.0, 1.0), (inf, -1.0, 1.0), (-inf, -1.0, 1.0), (0.5, 1.0, 0.0)],
         argnums=(0, 1, 2), points=[(0.5, 0.0, 1.0), (-1.0, 0.0, 1.0), (2.0, 0.0, 1.0)])
def clip(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@cf_case(args=[(0.5, 0.0, 1.0), (-1.0, 0.0, 1.0), (2.0, 0.0, 1.0), (0.0, 0.0, 1.0), (1.0, 0.0, 1.0),
               (-0.0, 0.0, 1.0), (nan, 0.0, 1.0), (inf, -1.0, 1.0), (0.5, nan, 1.0)],
         argnums=(0, 1, 2), points=[(0.5, 0.0, 1.0), (-1.0, 0.0, 1.0), (2.0, 0.0, 1.0)])
def clip_ternary(x, lo, hi):
    return lo if x < lo else (hi if x > hi else x)


@cf_case(args=[(1.5, 1.0), (-2.0, 1.0), (0.0, 1.0), (-0.0, 1.0), (-800.0, 0.5), (nan, 1.0), (-inf, 1.0),
               (inf, 1.0)],
         argnums=(0, 1), points=[(1.5, 1.0), (-2.0, 1.0), (-0.3, 0.7)])
def elu(x, a):
    return x if x > 0.0 else a * (math.exp(x) - 1.0)


@cf_case(args=[(0.5, 1.0), (-0.5, 1.0), (1.0, 1.0), (-1.0, 1.0), (3.0, 1.0), (-3.0, 1.0), (0.0, 1.0),
               (nan, 1.0), (inf, 1.0), (2.0, 0.0)],
         argnums=(0, 1), points=[(0.5, 1.0), (-0.5, 1.0), (3.0, 1.0), (-3.0, 1.5)])
def huber(r, delta):
    if abs(r) <= delta:
        return 0.5 * r * r
    else:
        return delta * (abs(r) - 0.5 * delta)


@cf_case(args=[(2.0, 0.5), (-2.0, 0.5), (0.25, 0.5), (-0.25, 0.5), (0.5, 0.5), (-0.5, 0.5), (0.0, 0.5),
               (nan, 0.5), (inf, 0.5), (1.0, -0.5)],
         argnums=(0, 1), points=[(2.0, 0.5), (-2.0, 0.5), (0.25, 0.5)])
def soft_threshold(x, lam):
    if x > lam:
        return x - lam
    elif x < -lam:
        return x + lam
    else:
        return 0.0


@cf_case(args=[(2.0,), (-3.0,), (0.0,), (-0.0,), (40.0,), (-800.0,), (800.0,), (nan,), (inf,), (-inf,)],
         argnums=0, points=[(2.0,), (-3.0,), (0.1,)])
def stable_sigmoid(x):
    if x >= 0.0:
        z = math.exp(-x)
        return 1.0 / (1.0 + z)
    z = math.exp(x)
    return z / (1.0 + z)


@cf_case(args=[(2.0,), (-3.0,), (0.0,), (20.0,), (25.0,), (nan,), (inf,), (-inf,), (800.0,)],
         argnums=0, points=[(2.0,), (-3.0,), (30.0,)])
def softplus(x):
    if x > 20.0:
        return x
    return math.log1p(math.exp(x))


@cf_case(args=[(1.0, 2.0), (2.0, 1.0), (3.0, 3.0), (-1000.0, -1001.0), (inf, 1.0), (-inf, -inf),
               (nan, 1.0), (1.0, nan)],
         argnums=(0, 1), points=[(1.0, 2.0), (2.0, -1.0), (-3.5, -3.0)])
def log_sum_exp2(a, b):
    m = a if a > b else b
    return m + math.log(math.exp(a - m) + math.exp(b - m))


@cf_case(args=[(-3.0,), (2.0,), (0.0,), (-0.0,), (nan,), (-inf,), (-7,), (0,), (5,)],
         argnums=0, points=[(-3.0,), (2.0,)])
def abs_manual(x):
    if x < 0:
        return -x
    return x


@cf_case(args=[(3.0, 2.0), (2.0, 3.0), (2.0, 2.0), (-0.0, 0.0), (0.0, -0.0), (nan, 1.0), (1.0, nan),
               (-inf, inf)],
         argnums=(0, 1), points=[(3.0, 2.0), (2.0, 3.0)])
def max_ternary(x, y):
    return x if x >= y else y


@cf_case(args=[(1.0, 2.0, 3.0), (2.0, 1.0, 3.0), (3.0, 2.0, 1.0), (1.0, 1.0, 1.0), (2.0, 1.0, 1.0),
               (nan, 1.0, 2.0), (1.0, nan, 2.0), (1.0, 2.0, nan), (-0.0, 0.0, 1.0), (0.0, -0.0, 1.0)],
         argnums=(0, 1, 2), points=[(1.0, 2.0, 3.0), (2.0, 1.0, 3.0), (3.0, 2.0, 1.0)])
def min3(a, b, c):
    if a <= b and a <= c:
        return a
    elif b <= c:
        return b
    else:
        return c


@cf_case(args=[(3.0, 5.0), (5.0, 3.0), (2.0, 2.0), (0.0, -0.0), (nan, 1.0), (inf, inf)],
         argnums=(0, 1), points=[(3.0, 5.0), (5.0, 3.0)])
def abs_difference(x, y):
    d = x - y
    if d < 0.0:
        d = -d
    return d


# ---------------------------------------------------------------- and / or / not
@cf_case(args=[(0.5, 0.5), (-0.5, 0.5), (1.5, 0.5), (0.5, -0.5), (0.5, 1.5), (0.0, 0.0), (1.0, 1.0),
               (-0.0, 1.0), (nan, 0.5), (0.5, nan), (inf, 0.5)])
def in_unit_square(x, y):
    return 0.0 <= x <= 1.0 and 0.0 <= y <= 1.0


@cf_case(args=[(3.0, 2.0), (1.0, 2.0), (2.0, 2.0), (5.0, 0.0), (5.0, -0.0), (-3.0, -2.0), (nan, 1.0),
               (1.0, nan), (inf, 1.0), (1.0, inf), (0.0, 0.0)],
         argnums=(0, 1), points=[(3.0, 2.0), (-6.0, -1.5), (0.5, 2.0)])
def ratio_above_one(x, y):
    if y != 0.0 and x / y > 1.0:
        return x / y
    return 1.0


@cf_case(args=[(0.0, 1.0), (-0.0, 5.0), (2.0, 8.0), (-2.0, 8.0), (2.0, -8.0), (-2.0, -8.0), (nan, 1.0),
               (inf, 1.0), (1.0, -0.0), (0.0, nan)],
         argnums=(0, 1), points=[(2.0, 8.0), (-3.0, -12.0)])
def sqrt_of_ratio(x, y):
    if x == 0.0 or y / x < 0.0:
        return 0.0
    return math.sqrt(y / x)


@cf_case(args=[(2.0, 3.0), (0.0, 3.0), (-0.0, 3.0), (nan, 3.0), (0.0, -0.0), (0.0, nan), (-inf, 1.0)],
         argnums=(0, 1), points=[(2.0, 3.0), (-1.5, 0.5)])
def first_truthy(x, y):
    return x or y


@cf_case(args=[(2.0, 3.0), (0.0, 3.0), (-0.0, 3.0), (nan, 3.0), (2.0, -0.0), (inf, nan)],
         argnums=(0, 1), points=[(2.0, 3.0), (-1.5, 0.5)])
def both_or_falsy(x, y):
    return x and y


@cf_case(args=[(2.0,), (-3.0,), (0.0,), (-0.0,), (nan,), (inf,), (-inf,)],
         argnums=0, points=[(2.0,), (-3.0,)])
def negate_unless_positive(x):
    if not x > 0.0:
        return -x
    return x


@cf_case(args=[(4.0, 9.0), (-1.0, 4.0), (4.0, -1.0), (0.0, 0.0), (6.0, 5.0), (5.0, 5.0), (nan, 1.0),
               (1.0, nan), (inf, 0.0)],
         argnums=(0, 1), points=[(4.0, 2.25), (1.0, 3.0)])
def guarded_sqrt_sum(x, y):
    if not (x >= 0.0 and y >= 0.0) or x + y > 10.0:
        return -1.0
    return math.sqrt(x) + math.sqrt(y)


@cf_case(args=[(2000,), (1900,), (2024,), (2023,), (2400,), (0,), (-4,), (1,)])
def is_leap_year(year):
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


@cf_case(args=[(0.5, 0.0, 1.0), (-0.5, 0.0, 1.0), (1.5, 0.0, 1.0), (0.0, 0.0, 1.0), (1.0, 0.0, 1.0),
               (nan, 0.0, 1.0)])
def is_outside(x, lo, hi):
    return not (lo <= x <= hi)


# ---------------------------------------------------------------- early returns
@cf_case(args=[(3.0, 1.0), (1.0, 3.0), (2.0, 2.0), (2.0, -1.0), (-2.0, 1.0), (-3.0, -1.0), (-1.0, -3.0),
               (-2.0, -2.0), (0.0, 0.0), (-0.0, -0.0), (nan, 1.0), (1.0, nan), (nan, nan), (-1.0, nan)],
         argnums=(0, 1), points=[(3.0, 1.0), (1.0, 3.0), (2.0, -1.0), (-2.0, 1.0), (-3.0, -1.0), (-1.0, -3.0)])
def quadrant_measure(x, y):
    if x >= 0.0:
        if y >= 0.0:
            if x > y:
                return x - y
            return y - x
        else:
            return x * y
    else:
        if y >= 0.0:
            return y - x
        if x < y:
            return math.hypot(x, y)
    return x + y


@cf_case(args=[(1.0, 2.0, 3.0, 4.0), (-1.0, 2.0, 3.0, 4.0), (1.0, 2.0, -3.0, 4.0), (1.0, 2.0, 3.0, -4.0),
               (-0.0, 0.0, nan, -1.0), (nan, nan, nan, nan), (-inf, -1.0, -1.0, -1.0)])
def first_negative_index(a, b, c, d):
    for i, v in enumerate((a, b, c, d)):
        if v < 0.0:
            return i
    return -1


@cf_case(args=[(1.0, 2.0, 100.0), (1.0, 2.0, 127.0), (1.0, 0.5, 1.9), (1.0, 0.5, 3.0), (1.0, 1.1, 50.0),
               (200.0, 2.0, 100.0), (nan, 2.0, 10.0), (1.0, 2.0, inf), (1.0, 2.0, -inf)])
def steps_to_exceed(x, rate, limit):
    for i in range(100):
        if x > limit:
            return i
        x = x * rate + 1.0
    return -1


@cf_case(args=[(1.0, 2.0, 3.0, 4.0), (1.0, 0.0, 3.0, 4.0), (-0.0, 2.0, 3.0, 4.0), (2.0, -3.0, 0.5, 4.0),
               (nan, 0.0, 1.0, 1.0), (inf, 0.0, 1.0, 1.0), (inf, 2.0, 1.0, 1.0)],
         argnums=(0, 1, 2, 3), points=[(1.0, 2.0, 3.0, 4.0), (2.0, -3.0, 0.5, 4.0)])
def product_or_zero(a, b, c, d):
    p = 1.0
    for v in (a, b, c, d):
        if v == 0.0:
            return 0.0
        p *= v
    return p


@cf_case(args=[(0.5, 0.25, 2.0), (0.5, 0.25, 0.0), (1.0, 1.0, 9.5), (1.0, 1.0, 10.0), (0.25, 0.5, 100.0),
               (-1.0, 2.0, 3.0), (nan, 1.0, 1.0), (inf, 1.0, 1.0), (1.0, 1.0, -inf)])
def first_pair_exceeding(x, y, target):
    for i in range(6):
        for j in range(6):
            if i * x + j * y > target:
                return i, j
    return -1, -1
