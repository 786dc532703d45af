"""Part of the differential-test corpus (`corpus.py` gathers the parts into `CASES`): `math` functions and builtins.

Every function here is plain Python, registered with `@case(kind, ...)`, one kind per parameter
(the kinds are in `corpus_kinds.py`).
"""
from __future__ import annotations

import math

from corpus_kinds import I64, B, Count, F, I, ListOf, Registry

CASES = Registry()
case = CASES.case


# ---------------------------------------------------------------- math
@case(F)
def math_exp_log(x):
    return math.exp(x), math.log(x)


@case(F, F)
def math_log_base(x, base):
    return math.log(x, base)


@case(F)
def math_log_family(x):
    return math.log2(x), math.log10(x), math.log1p(x), math.expm1(x)


@case(F)
def math_sqrt(x):
    return math.sqrt(x)


@case(F)
def math_trig(x):
    return math.sin(x), math.cos(x), math.tan(x)


@case(F)
def math_inverse_trig(x):
    return math.asin(x), math.acos(x), math.atan(x)


@case(F, F)
def math_atan2(y, x):
    return math.atan2(y, x)


@case(F)
def math_hyperbolic(x):
    return math.sinh(x), math.cosh(x), math.tanh(x)


@case(F, F)
def math_pow(x, y):
    return math.pow(x, y)


@case(F, F)
def math_fabs_copysign(x, y):
    return math.fabs(x), math.copysign(x, y), math.copysign(1.0, y)


@case(F)
def math_rounding(x):
    return math.floor(x), math.ceil(x), math.trunc(x)   # ints: exact past 64 bits


@case(F, F)
def math_hypot_fmod(x, y):
    return math.hypot(x, y), math.fmod(x, y)


@case(F)
def math_predicates(x):
    return math.isnan(x), math.isinf(x), math.isfinite(x)


@case(F)
def math_constants(x):
    return x * math.pi + math.e, x < math.inf, x > -math.inf, math.isnan(math.nan + x), math.tau - x


@case(I)
def math_on_ints(n):
    return math.sqrt(n), math.floor(n), math.ceil(n), math.isnan(n), math.isinf(n), math.exp(n), math.fabs(n)


@case(F, F)
def sqrt_of_sum_of_squares(x, y):
    return math.sqrt(x * x + y * y)


@case(F)
def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


@case(F)
def softplus(x):
    return math.log1p(math.exp(-abs(x))) + max(x, 0.0)


@case(F, F)
def gelu_like(x, scale):
    return 0.5 * x * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3))) * scale


# ---------------------------------------------------------------- builtins
@case(F)
def float_conversions(x):
    return int(x), float(x), bool(x), round(x)


@case(I)
def int_conversions(n):
    return float(n), int(n), bool(n), round(n), abs(n)


@case(B)
def bool_conversions(p):
    return float(p), int(p), bool(p), round(p), abs(p)


@case(F, F, F)
def min_max_floats(x, y, z):
    return min(x, y), max(x, y), min(x, y, z), max(z, y, x), min([x, y, z]), max((y, x))


@case(I, I)
def min_max_ints(a, b):
    return min(a, b), max(a, b), max(a, b, 0), min(b, 5, a)


@case(F)
def relu(x):
    return max(0.0, x)


@case(ListOf(F, 4))
def sum_floats(xs):
    return sum(xs)


@case(ListOf(F, 3))
def sum_with_start(xs):
    return sum(xs, 10), sum(xs, 0.5), sum(xs, True)


@case(ListOf(I64, 3))
def sum_ints(ns):
    return sum(ns)


@case(F, I, F, B)
def sum_mixed(x, n, y, p):
    return sum([x, n, y, p]), sum([n, x, p, y]), sum([n, p, n])


@case(ListOf(F, 3), ListOf(F, 3))
def len_range_zip_enumerate(xs, ys):
    total = 0.0
    for i, (a, b) in enumerate(zip(xs, ys)):
        total += i * a - b
    return total, len(xs) + len(ys), sum(range(len(xs)))


@case(F, Count(0, 6))
def range_argument(x, n):
    acc = 1.0
    for i in range(n):
        acc = acc * x + i
    return acc


@case(Count(0, 5), Count(1, 2))
def range_with_step(n, step):
    return sum(range(0, n, step)), len(range(n)), sum(i * i for i in range(n, -1, -step))


@case(F, Count(0, 5))
def while_known_condition(x, n):
    i = 0
    while i < n:
        x = x * 0.5 + 1.0
        i += 1
    return x, i


@case(F, Count(0, 4))
def for_with_if(x, n):
    acc = 0.0
    for i in range(n + 2):
        if i % 2 == 0:
            acc += x * i
        elif i == 3:
            acc -= x
        else:
            continue
    return acc


@case(F, B)
def if_on_bool_argument(x, flag):
    if flag:
        return x * 2.0
    return -x


@case(F, Count(-2, 2))
def if_on_int_argument(x, n):
    if n > 0:
        y = x ** n
    elif n == 0:
        y = 1.0
    else:
        y = 1.0 / (x * -n)
    return y
