"""Part of the differential-test corpus (`corpus.py` gathers the parts into `CASES`): operators on floats; ints, bools and mixed-type arithmetic.

Every function here is plain Python, registered with `@case(kind, ...)`, one kind per parameter
(the kinds are in `corpus_kinds.py`).
"""
from __future__ import annotations

import math

from corpus_kinds import I64, NUM, SMALL_NUM, B, Count, F, I, Registry

CASES = Registry()
case = CASES.case


# ============================================================================ the functions
# ---------------------------------------------------------------- operators on floats
@case(F, F)
def add_sub_mul(x, y):
    return x + y, x - y, x * y


@case(F, F)
def true_divide(x, y):
    return x / y


@case(F, F)
def floor_divide(x, y):
    return x // y


@case(F, F)
def remainder(x, y):
    return x % y


@case(F, F)
def power(x, y):
    return x ** y          # a negative base with a fractional exponent gives a complex in Python


@case(F)
def unary_ops(x):
    return -x, +x, abs(x), -(-x)   # noqa: B002


@case(F, F)
def comparisons(x, y):
    return x < y, x <= y, x > y, x >= y, x == y, x != y


@case(F, F)
def logical_not(x, y):
    return not x, not (x < y), not not y


@case(F, F)
def augmented_assignment(x, y):
    a = x
    a += y
    a *= 2.0
    a -= x
    a /= 3.0
    b = y
    b //= 0.75
    b %= 5.0
    b **= 2.0
    return a, b


@case(F)
def horner_polynomial(x):
    return ((2.0 * x - 3.0) * x + 0.5) * x - 1.0


@case(F, F, F)
def locals_chain(x, y, z):
    t = x * y
    u = t + z
    v = u * u
    w = v - t
    return w / (1.0 + abs(u))


@case(F, F, F)
def fma_shape(x, y, z):
    return x * y + z, z - x * y, x * x + y * y + z * z


@case(F)
def float_constant_arith(x):
    return x * 0.0, x + 0.0, x - 0.0, x * 1.0, 0.0 - x, x / 1.0, x * -1.0


@case(F)
def identity_traps(x):
    # none of these is an identity in IEEE arithmetic (inf, nan, -0.0): simplification must not apply
    return x - x, x / x, x + -0.0, -0.0 - x, (x + 1.0) - 1.0, x * 2.0 * 0.5, abs(-x), 0.0 * x + x


@case(F)
def power_traps(x):
    # x ** 0.5 is not sqrt(x) (-0.0, -inf); x ** 1.0, x ** 0.0 and x ** 2.0 have their own rules
    return x ** 0.5, x ** 2.0, x ** 1.0, x ** 0.0, x ** -1.0, x ** 2, x ** -2, x ** 3, math.pow(x, 0.5)


@case(I64)
def int_identity_traps(n):
    return n - n, n * 0, n * 1, n // 1, n % 1, 0 - n, n // -1, n * -1, n + 0, n ** 1


@case(F, F)
def first_error_wins(x, y):
    # both may fail: Python raises the first one, in evaluation order
    return math.sqrt(y), 1.0 / x, x % y, math.log(x)


@case(F)
def unused_failing_operations(x):
    _unused = 1.0 / x            # still raises ZeroDivisionError at 0.0
    _also_unused = math.sqrt(x)  # still raises ValueError below 0.0
    return 2.0


# ---------------------------------------------------------------- ints, bools, mixing
@case(I, I)
def int_arith(a, b):
    return a + b, a - b, a * b          # exact big-int results past 64 bits


@case(I, I)
def int_floor_div_mod(a, b):
    return a // b, a % b


@case(I, I)
def int_true_divide(a, b):
    return a / b


@case(I, Count(-3, 12))
def int_power(a, n):
    return a ** n                       # a negative exponent gives a float, 0 ** -1 raises


@case(I)
def int_power_constants(a):
    return a ** 2, a ** 3, a ** 0, a ** -1, 2 ** -1


@case(I)
def int_unary(a):
    return -a, +a, abs(a), not a


@case(I, I)
def int_comparisons(a, b):
    return a < b, a <= b, a > b, a >= b, a == b, a != b


@case(I, F)
def mixed_int_float(n, x):
    return n + x, x - n, n * x, x / n, n / x, x // n, n % x, x ** n


@case(I, F)
def mixed_int_float_compare(n, x):
    return n < x, n <= x, n > x, n >= x, n == x, n != x, x < n, x == n


@case(B, B)
def bool_arith(p, q):
    return p + q, p - q, p * q, -p, +p, abs(p), p == q, p < q, not p


@case(B, F)
def bool_float(p, x):
    return p * x + p, x / (p + 1), p - x, True + p


@case(B, I)
def bool_int(p, n):
    return p + n, n * p, n // (p + 1), n % (True + p), p ** 2


@case(I, F)
def python_number_facts(n, x):
    # True + 1 == 2, 7 // -2 == -4, -7 % 3 == 2, 2 ** -1 == 0.5, with traced operands
    return True + n, n // -2, -n % 3, 2 ** -1 * x, (n + 7) // -2, -(n % 5) % 3, x // -2, x % -3


@case(NUM, NUM)
def mixed_number_ops(a, b):
    return a + b, a - b, a * b, a == b, a < b


@case(NUM, NUM)
def mixed_number_division(a, b):
    return a / b, a // b, a % b


@case(NUM, SMALL_NUM)
def mixed_number_power(a, b):
    return a ** b
