"""The control-flow corpus: plain Python functions that branch and loop on the values they compute.

Every function here is ordinary Python that CPython runs as it is; `tests/test_control_flow.py`
compiles each one with `trace` and checks it against CPython on every argument tuple listed with it
(and, for the differentiable ones, `grad` against central finite differences). The functions are
written the way people write them: `if`/`elif`/`else` on floats, conditional expressions,
`and`/`or`/`not` (short-circuit included), early `return` from nested `if`s and from inside loops,
`while` loops that run to a tolerance, `for` over `range` with bounds and steps computed at run
time, `break`/`continue`, `for ... else` / `while ... else`, `raise ValueError(...)`, `assert`,
and variables assigned on only some paths (`UnboundLocalError` on the others).

A function is registered with `@cf_case(args, argnums=None, points=(), fused_rel=1e-12)`:

    args       argument tuples (floats and ints) that, together, take every branch: each side of
               every comparison, the boundaries where a comparison is equal, 0.0 and -0.0,
               negatives, nan and +-inf where they mean something, and the paths that raise
    argnums    None when the function is not differentiable in a way finite differences can check
               (int results, comparisons only, bisection, ...); else the positions of the float
               arguments to differentiate (a tuple)
    points     argument tuples for the gradient check, away from kinks and singularities
    fused_rel  relative tolerance for the FMA-on comparison (default 1e-12)

Each function's result type is the same on every path for the argument types listed (an int on
one path and a float on another is tested separately in `test_control_flow.py`), and every loop
has a bounded trip count for its arguments.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

nan, inf = math.nan, math.inf


# ------------------------------------------------------------------------------------ registry
@dataclass(frozen=True)
class CFCase:
    fn: object
    args: tuple
    argnums: tuple | None = None
    points: tuple = ()
    fused_rel: float = 1e-12

    @property
    def name(self) -> str:
        return self.fn.__name__

    @property
    def differentiable(self) -> bool:
        return self.argnums is not None


CASES: list[CFCase] = []


def cf_case(args, argnums=None, points=(), fused_rel=1e-12):
    if isinstance(argnums, int):
        argnums = (argnums,)

    def register(fn):
        CASES.append(CFCase(fn, tuple(tuple(a) for a in args), argnums,
                            tuple(tuple(p) for p in points), fused_rel))
        return fn
    return register


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
    for i in range(n):
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
    for i, v in enumerate((a, b, c)):
        if v >= target:
            break
    else:
        return -1
    return i
