"""The differential-test corpus: ordinary Python numeric functions, each with its argument kinds.

Every function here is plain Python; `tests/test_corpus.py` compiles each one with `trace` and
checks it against CPython (calling the function itself) on generated arguments. A function is
registered with `@case(kind, ...)`, one kind per parameter; the kinds say what to generate:

    F               a float, edge values included (0.0, -0.0, tiny, huge, inf, -inf, nan)
    I               an int: small, near the 64-bit limits, and a few past them
    I64             an int within 64 bits (items of lists: a list holding a bigger int is a TracerError)
    B               a bool
    NUM             a float, an int or a bool (mixed-type arithmetic)
    SMALL_NUM       a float, an int in [-5, 40] or a bool (exponents)
    Count(lo, hi)   a small int the trace depends on (`range(n)`, an index, an `if`)
    ListOf(kind, n) / TupleOf(kind, n)   a list / tuple of trace-time length n
    ObjectOf(make, *kinds)               a user object built by `make` from generated values

Kinds give two strategies: `exact` (every edge value; results must match CPython bit for bit)
and `fused` (floats of moderate size plus inf/-inf/nan, for the FMA-on comparison, where
overflow in a product would let one fused rounding legitimately differ by more than a tolerance).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from hypothesis import strategies as st

I64_MIN, I64_MAX = -2 ** 63, 2 ** 63 - 1

# ------------------------------------------------------------------------------------ the kinds
EDGE_FLOATS = [
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 3.0, -7.0, 0.1, 2.5, -2.5, 1e-3,
    5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, -1e-300,
    1.7976931348623157e308, -1.7976931348623157e308, 1e300, 1e16, 2.0 ** 53, 2.0 ** 63, -2.0 ** 63,
    709.0, 710.0, -745.0, math.pi, math.e,
    math.inf, -math.inf, math.nan,
]
FUSED_EDGE_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 0.1, math.pi, math.inf, -math.inf, math.nan]
EDGE_INTS = [
    0, 1, -1, 2, -2, 3, 7, -7, 10, 2 ** 31, 2 ** 32 + 1, -2 ** 40, 2 ** 53, 2 ** 53 + 1, -2 ** 53 - 1,
    2 ** 62, I64_MAX, I64_MIN, I64_MAX - 1, I64_MIN + 1, 3037000499, 3037000500, 2 ** 63, I64_MIN - 1, 10 ** 20,
]


class Kind:
    def strategy(self, fused: bool) -> st.SearchStrategy:
        raise NotImplementedError

    def edges(self, fused: bool) -> list:
        """A few hand-picked values, for the exhaustive edge grid."""
        raise NotImplementedError


class _Float(Kind):
    def strategy(self, fused):
        if fused:
            return st.one_of(st.sampled_from(FUSED_EDGE_FLOATS), st.floats(-100.0, 100.0))
        return st.one_of(st.sampled_from(EDGE_FLOATS), st.floats(allow_nan=True, allow_infinity=True))

    def edges(self, fused):
        return FUSED_EDGE_FLOATS if fused else EDGE_FLOATS

    def __repr__(self):
        return "F"


class _Int(Kind):
    def __init__(self, past_64_bits: bool = True):
        self.edge_ints = EDGE_INTS if past_64_bits else [n for n in EDGE_INTS if I64_MIN <= n <= I64_MAX]

    def strategy(self, fused):
        return st.one_of(st.sampled_from(self.edge_ints), st.integers(-100, 100), st.integers(I64_MIN, I64_MAX))

    def edges(self, fused):
        return self.edge_ints

    def __repr__(self):
        return "I" if len(self.edge_ints) == len(EDGE_INTS) else "I64"


class _Bool(Kind):
    def strategy(self, fused):
        return st.booleans()

    def edges(self, fused):
        return [False, True]

    def __repr__(self):
        return "B"


class _Number(Kind):
    def strategy(self, fused):
        return st.one_of(F.strategy(fused), I.strategy(fused), B.strategy(fused))

    def edges(self, fused):
        return [*F.edges(fused)[::3], *I.edges(fused)[::4], False, True]

    def __repr__(self):
        return "NUM"


class _SmallNumber(Kind):
    """A float, a small int or a bool: for exponents, where a huge int ** huge int never ends."""

    def strategy(self, fused):
        return st.one_of(F.strategy(fused), st.integers(-5, 40), B.strategy(fused))

    def edges(self, fused):
        return [*F.edges(fused)[::3], -5, -1, 0, 1, 2, 3, 40, False, True]

    def __repr__(self):
        return "SMALL_NUM"


F, I, I64, B, NUM, SMALL_NUM = _Float(), _Int(), _Int(past_64_bits=False), _Bool(), _Number(), _SmallNumber()


@dataclass(frozen=True)
class Count(Kind):
    """A small int the trace depends on (each value compiles its own specialization)."""
    lo: int
    hi: int

    def strategy(self, fused):
        return st.integers(self.lo, self.hi)

    def edges(self, fused):
        return list(range(self.lo, self.hi + 1))


@dataclass(frozen=True)
class ListOf(Kind):
    item: Kind
    n: int

    def strategy(self, fused):
        return st.lists(self.item.strategy(fused), min_size=self.n, max_size=self.n)

    def edges(self, fused):
        e = self.item.edges(fused)
        return [[e[(i + j) % len(e)] for j in range(self.n)] for i in range(len(e))]


@dataclass(frozen=True)
class TupleOf(Kind):
    item: Kind
    n: int

    def strategy(self, fused):
        return st.tuples(*[self.item.strategy(fused)] * self.n)

    def edges(self, fused):
        return [tuple(x) for x in ListOf(self.item, self.n).edges(fused)]


@dataclass(frozen=True)
class ObjectOf(Kind):
    """A user object `make(*values)` with one value drawn per kind."""
    make: object
    kinds: tuple

    def strategy(self, fused):
        return st.tuples(*(k.strategy(fused) for k in self.kinds)).map(lambda vs: self.make(*vs))

    def edges(self, fused):
        grids = [k.edges(fused) for k in self.kinds]
        return [self.make(*(g[(i * (j + 1)) % len(g)] for j, g in enumerate(grids)))
                for i in range(max(map(len, grids)))]


# ------------------------------------------------------------------------------------ registry
@dataclass(frozen=True)
class Case:
    fn: object
    kinds: tuple

    @property
    def name(self) -> str:
        return self.fn.__name__


CASES: list[Case] = []


def case(*kinds):
    def register(fn):
        CASES.append(Case(fn, kinds))
        return fn
    return register


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
    return -x, +x, abs(x), -(-x)


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
    unused = 1.0 / x            # still raises ZeroDivisionError at 0.0
    also_unused = math.sqrt(x)  # still raises ValueError below 0.0
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


# ---------------------------------------------------------------- calls, kwargs, closures, globals
def _square(v):
    return v * v


def _norm2(a, b):
    return math.sqrt(_square(a) + _square(b))


def _scale(v, factor=2.0, *, offset=0.0):
    return v * factor + offset


@case(F, F)
def calls_helpers(x, y):
    return _norm2(x, y) - _square(x)


@case(F)
def keyword_and_default_arguments(x):
    return _scale(x), _scale(x, 3.0), _scale(x, offset=1.0), _scale(factor=-1.0, v=x, offset=x)


def _make_affine(a, b):
    def affine(x):
        return a * x + b
    return affine


affine_closure = _make_affine(1.5, -0.25)
case(F)(affine_closure)


@case(F, F)
def inner_function_and_lambda(x, y):
    def add_x(v):
        return v + x
    twice = lambda v: 2.0 * v   # noqa: E731
    return add_x(y) * twice(x)


GAIN = 1.5
OFFSET = 3
LIMITS = (0.25, 4)
USE_ABS = True


@case(F)
def globals_holding_numbers(x):
    lo, hi = LIMITS
    y = abs(x) if USE_ABS else x
    return GAIN * y + OFFSET, y * lo + hi


# ---------------------------------------------------------------- tuples and lists
@case(F, F)
def tuple_build_index_unpack(x, y):
    t = (x, y, x * y)
    a, b, c = t
    return t[0] - t[-1], (b, (c, a)), t[1:]


@case(ListOf(F, 3), Count(-4, 3))
def index_with_int_argument(xs, i):
    return xs[i] * 2.0                  # out of range: IndexError, as in Python


@case(TupleOf(F, 3), Count(-4, 3))
def index_tuple_with_int_argument(t, i):
    return t[i] + t[0]


@case(ListOf(F, 4))
def unpack_list_argument(xs):
    a, b, c, d = xs
    first, *rest = xs
    return a * d - b * c, first, len(rest), rest[-1]


@case(TupleOf(F, 3))
def iterate_tuple_argument(t):
    acc = 0.0
    for v in t:
        acc = acc * 0.5 + v
    return acc, t


@case(ListOf(F, 3))
def list_comprehension(xs):
    squares = [v * v for v in xs]
    shifted = [v + 1.0 for v in squares if True]
    return tuple(squares), sum(shifted)


@case(ListOf(F, 3), ListOf(F, 3))
def generator_dot(xs, ys):
    return sum(a * b for a, b in zip(xs, ys)), sum(xs[i] - ys[i] for i in range(len(xs)))


@case(ListOf(F, 3), ListOf(F, 3))
def mean_squared_error(preds, targets):
    return sum((p - t) ** 2 for p, t in zip(preds, targets)) / len(preds)


@case(ListOf(ListOf(F, 3), 2), ListOf(F, 3))
def matrix_vector(rows, v):
    return tuple(sum(a * b for a, b in zip(row, v)) for row in rows)


@case(F, F)
def build_and_modify_local_list(x, y):
    acc = []
    for i in range(3):
        acc.append(x * i + y)
    acc[1] = acc[1] * 2.0
    acc += [y]
    return tuple(acc), len(acc)


@case(ListOf(F, 3))
def enumerate_with_start(xs):
    return sum(i * v for i, v in enumerate(xs, 1)), sum(v for _, v in enumerate(reversed(xs)))


# ---------------------------------------------------------------- user objects
class Affine:
    def __init__(self, scale, bias):
        self.scale = scale
        self.bias = bias

    def apply(self, x):
        return self.scale * x + self.bias


class Polynomial:
    def __init__(self, *coeffs):
        self.coeffs = list(coeffs)

    def __call__(self, x):
        acc = 0.0
        for c in reversed(self.coeffs):
            acc = acc * x + c
        return acc

    def degree(self):
        return len(self.coeffs) - 1


@case(ObjectOf(Affine, (F, F)), F)
def object_attributes(obj, x):
    return obj.scale * x + obj.bias, obj.apply(x)


@case(ObjectOf(Polynomial, (F, F, F)), F)
def object_with_list_and_methods(poly, x):
    return poly(x), poly.degree()


class Neuron:
    """micrograd-style: plain float weights, ReLU as max(0.0, x)."""

    def __init__(self, w, b, nonlin=True):
        self.w = list(w)
        self.b = b
        self.nonlin = nonlin

    def __call__(self, x):
        act = sum(wi * xi for wi, xi in zip(self.w, x)) + self.b
        return max(0.0, act) if self.nonlin else act

    def parameters(self):
        return self.w + [self.b]


class Layer:
    def __init__(self, neurons):
        self.neurons = neurons

    def __call__(self, x):
        out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def parameters(self):
        return [p for n in self.neurons for p in n.parameters()]


class MLP:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]


MLP_SIZES = (2, 3, 3, 1)


def make_mlp(*values):
    """An MLP with sizes MLP_SIZES whose weights and biases are `values`, in order."""
    values = list(values)
    layers = []
    for i, (n_in, n_out) in enumerate(zip(MLP_SIZES, MLP_SIZES[1:])):
        neurons = []
        for _ in range(n_out):
            w, b = values[:n_in], values[n_in]
            del values[:n_in + 1]
            neurons.append(Neuron(w, b, nonlin=i != len(MLP_SIZES) - 2))
        layers.append(Layer(neurons))
    return MLP(layers)


MLP_PARAMETERS = sum((n_in + 1) * n_out for n_in, n_out in zip(MLP_SIZES, MLP_SIZES[1:]))


@case(ObjectOf(make_mlp, (F,) * MLP_PARAMETERS), F, F)
def mlp_forward(model, x0, x1):
    return model([x0, x1])


@case(ObjectOf(make_mlp, (F,) * MLP_PARAMETERS), F, F, F)
def mlp_loss_and_parameter_count(model, x0, x1, target):
    out = model([x0, x1])
    return (out - target) ** 2, len(model.parameters()), sum(p * p for p in model.parameters())


@case(ObjectOf(lambda *v: Neuron(v[:3], v[3]), (F, F, F, F)), TupleOf(F, 3))
def neuron_call(neuron, x):
    return neuron(x), neuron.w[0] * x[0]


# ---------------------------------------------------------------- a few more mixed programs
@case(F, F)
def nonlocal_accumulator(x, y):
    total = 0.0

    def add(v):
        nonlocal total
        total += v
    add(x)
    add(y * 2.0)
    return total


def _sum_all(*values, scale=1.0):
    return sum(values) * scale


@case(F, F, F)
def varargs_helper(x, y, z):
    weigh = lambda v, k=2.0: v * k   # noqa: E731
    return _sum_all(x, y, z), _sum_all(x, weigh(y), scale=0.5), _sum_all(), _sum_all(*[x, z])


@case(ListOf(F, 5))
def slicing(xs):
    head, tail, odd, rev = xs[:2], xs[2:], xs[1::2], xs[::-1]
    return sum(head) - sum(tail), tuple(odd), rev[0], len(xs[5:]), sum(xs[0:0])


@case(F, F, I64)
def pow_builtin(x, y, n):
    return pow(x, y), pow(x, 2), pow(n % 5, 3), pow(2.0, n % 7 - 3)


@case(ListOf(F, 3))
def max_of_generator(xs):
    return max(v * v for v in xs), min(-v for v in xs), max(xs[0], 1.5), min(xs[1:])


@case(F, Count(0, 3))
def builtins_on_ranges(x, n):
    idx = list(range(n))
    back = tuple(reversed(range(n)))
    pairs = list(zip(idx, back, strict=True))
    return sum(a * x - b for a, b in pairs), len(idx), float("inf") > x, float("-1.5") * x


@case(B, B)
def bool_division(p, q):
    return p / q, p // q, p % q


@case(I64)
def math_log_of_ints(n):
    return math.log(n), math.log2(n), math.log10(n), math.log(n, 2), math.atan2(n, 3)


@case(F, Count(0, 3))
def while_true_with_break(x, n):
    i = 0
    while True:
        if i >= n:
            break
        x = x / 2.0 + i
        i += 1
    return x


class Vector2:
    dims = 2

    def __init__(self, x, y):
        self.x = x
        self.y = y

    @property
    def norm(self):
        return math.hypot(self.x, self.y)

    def dot(self, other):
        return self.x * other.x + self.y * other.y


@case(ObjectOf(Vector2, (F, F)), ObjectOf(Vector2, (F, F)))
def object_property_and_class_attribute(u, v):
    return u.norm, u.dot(v) * u.dims, Vector2.dims + v.dims


@case(F, F, Count(1, 4))
def newton_sqrt(a, guess, steps):
    x = guess
    for _ in range(steps):
        x = 0.5 * (x + a / x)
    return x


@case(ListOf(F, 4))
def statistics(xs):
    n = len(xs)
    mean = sum(xs) / n
    var = sum((v - mean) ** 2 for v in xs) / (n - 1)
    return mean, var, min(xs), max(xs)


@case(F, F)
def rotate(x, angle):
    c, s = math.cos(angle), math.sin(angle)
    return c * x - s * 1.0, s * x + c * 1.0


@case(F, I)
def float_times_int_repeated(x, n):
    r = x
    r *= n
    r += n // 3
    r -= -n
    return r


@case(F)
def returns_constant_and_bool(x):
    return 42, True, x != x, 1.5


@case(I, I, I)
def int_expression(a, b, c):
    return (a * b - c) // 7 + (a % 13) * (c // -3), -(a - b) ** 2


@case(ListOf(F, 4))
def sum_compensated(xs):
    # 3.12+ sums floats with Neumaier compensation (1e100 and -1e100 cancel exactly), 3.11 does not
    return sum([xs[0], 1e100, xs[1], -1e100, xs[2], xs[3]]), sum([1e16, xs[0], 1.0, -1e16])
