"""Part of the differential-test corpus (`corpus.py` gathers the parts into `CASES`): user objects (an affine map, a polynomial, a small MLP) and a few more mixed programs.

Every function here is plain Python, registered with `@case(kind, ...)`, one kind per parameter
(the kinds are in `corpus_kinds.py`).
"""
from __future__ import annotations

import math

from corpus_kinds import I64, B, Count, F, I, ListOf, ObjectOf, Registry, TupleOf

CASES = Registry()
case = CASES.case


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
    weigh = lambda v, k=2.0: v * k
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
