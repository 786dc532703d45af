"""The gradient corpus: differentiable plain-Python functions of float arguments.

Every function here is ordinary Python that CPython runs as it is; `tests/api/test_grad_corpus.py`
differentiates each one with `tracer.grad` / `value_and_grad` / `vjp` and checks the result
against central finite differences of the plain function, against CPython's own value, against
the other transforms and, where JAX is installed, against `jax.grad` of the same function.

A function is registered with `@grad_case(argnums, points)`:

    argnums   the positional arguments to differentiate (always a tuple); every other argument
              is held fixed (ints and bools are never differentiated)
    points    argument tuples to test at, chosen away from kinks (min/max/abs ties) and
              singularities so that finite differences are meaningful
    jax       compare with `jax.grad` (default True): the function is re-bound to globals where
              `math` is a jax.numpy shim (see `jax_twin` in the test), so it must only use
              operators, builtins and `math` functions
    xfail     {check: reason} for checks that fail because of a known library bug; the checks
              are "fd", "int_argnum", "value_exact", "value_fused", "vjp", "second", "jax"
              (the test marks that entry's test xfail(strict=True))

The functions use only what the tracer traces: float/int/bool arithmetic, `math` functions,
tuples and trace-time-sized lists, calls to other module-level functions (inlined), closures and
globals read as constants, `for` over `range` with int bounds, and `if` on ints/bools only
(never on a float: min/max/abs instead).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field


# ------------------------------------------------------------------------------------ registry
@dataclass(frozen=True)
class GradCase:
    fn: object
    argnums: tuple
    points: tuple
    jax: bool = True
    xfail: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.fn.__name__

    @property
    def has_int_args(self) -> bool:
        return any(type(a) is not float for p in self.points for a in p)


GRAD_CASES: list[GradCase] = []


def grad_case(argnums, points, jax=True, xfail=None):
    argnums = argnums if isinstance(argnums, tuple) else (argnums,)

    def register(fn):
        GRAD_CASES.append(GradCase(fn, argnums, tuple(tuple(p) for p in points), jax, dict(xfail or {})))
        return fn
    return register


# ============================================================================ the functions
# ---------------------------------------------------------------- polynomials and rationals
@grad_case(0, [(0.3,), (-1.7,), (2.25,)])
def horner_cubic(x):
    return ((2.0 * x - 3.0) * x + 0.5) * x - 1.0


@grad_case(0, [(0.4,), (-1.3,), (1.9,)])
def cubic_minus_linear(x):
    return x ** 3 - 2 * x + 1


@grad_case((0, 1, 2), [(2.0, 3.0, -1.0), (-0.5, 1.25, 4.0), (1e-3, 7.5, 0.25)])
def saxpy(a, x, y):
    return a * x + y


@grad_case((0, 1), [(0.7, -1.2), (1.5, 0.5), (-2.0, 1.1)])
def quartic_two_vars(x, y):
    return x ** 4 - 3.0 * x ** 2 * y + y ** 3 - x * y


@grad_case(0, [(0.5,), (-2.0,), (4.5,)])
def rational_one_pole(x):
    return (x * x + 1.0) / (x - 3.0)          # pole at 3


@grad_case((0, 1), [(0.5, -0.25), (2.0, 1.5), (-1.0, 3.0)])
def rational_two_vars(x, y):
    return (x * y - 1.0) / (x * x + y * y + 1.0)


@grad_case(0, [(0.1,), (-0.8,), (1.2,)])
def pade_exp(x):
    return (1.0 + x / 2.0 + x * x / 12.0) / (1.0 - x / 2.0 + x * x / 12.0)


@grad_case((0, 1), [(1.2, 0.8), (-0.5, 1.5), (0.3, -1.0)])
def rosenbrock(x, y):
    return (1.0 - x) ** 2 + 100.0 * (y - x * x) ** 2


@grad_case((0, 1), [(1.0, 1.5), (-2.5, 0.5), (3.5, -1.5)])
def himmelblau(x, y):
    return (x * x + y - 11.0) ** 2 + (x + y * y - 7.0) ** 2


# ---------------------------------------------------------------- nested helper calls
def _square(t):
    return t * t


def _poly(t):
    return _square(t) + 3.0 * t - 0.5


@grad_case((0, 1), [(0.5, 2.0), (-1.5, 0.75), (2.0, -0.3)])
def nested_helpers(x, y):
    return _poly(x * y) - _square(x - y) / (1.0 + _square(y))


def _wave(t):
    return math.sin(t) * math.exp(-0.1 * t)


def _wave_pair(a, b):
    return _wave(a) * b + _square(_wave(b))


@grad_case((0, 1), [(0.4, 1.3), (2.0, -0.7), (-1.1, 0.2)])
def three_level_helpers(x, y):
    return _wave_pair(x + y, x - y) + _wave(x * y)


def _polar(x, y):
    return math.hypot(x, y), math.atan2(y, x)


@grad_case((0, 1), [(1.0, 0.5), (-0.7, 1.2), (0.3, -2.0)])
def helper_returning_tuple(x, y):
    r, theta = _polar(x, y)
    return r * math.cos(2.0 * theta) + r * r * math.sin(theta)


def _mean_var(a, b, c):
    mean = (a + b + c) / 3.0
    return mean, ((a - mean) ** 2 + (b - mean) ** 2 + (c - mean) ** 2) / 3.0


@grad_case((0, 1, 2), [(1.0, 2.0, 4.0), (-0.5, 0.25, 3.0), (10.0, 9.0, 11.5)])
def variance_of_three(a, b, c):
    return _mean_var(a, b, c)[1]


# ---------------------------------------------------------------- globals and closures as constants
SCALE = 2.5
OFFSET = -0.75
WEIGHTS3 = [0.5, -1.25, 2.0]


@grad_case(0, [(0.2,), (-1.4,), (3.0,)])
def globals_as_constants(x):
    return SCALE * x * x + OFFSET * x + SCALE / (1.0 + x * x)


@grad_case((0, 1, 2), [(1.0, 2.0, 3.0), (-0.5, 0.7, -1.2), (2.5, -3.0, 0.125)])
def dot_with_global_weights(x0, x1, x2):
    return sum(w * x for w, x in zip(WEIGHTS3, [x0, x1, x2])) ** 2


def _make_quadratic(a, b, c):
    def closure_quadratic(x):
        return (a * x + b) * x + c
    return closure_quadratic


closure_quadratic = grad_case(0, [(0.5,), (-2.0,), (7.0,)])(_make_quadratic(1.5, -2.0, 0.25))


def _make_damped(omega, gamma):
    def closure_damped_oscillator(t, amplitude):
        return amplitude * math.exp(-gamma * t) * math.cos(omega * t)
    return closure_damped_oscillator


closure_damped_oscillator = grad_case((0, 1), [(0.3, 2.0), (1.7, -0.5), (4.0, 1.0)])(_make_damped(2.0, 0.35))


# ---------------------------------------------------------------- outputs ignoring arguments
@grad_case((0, 1, 2), [(1.5, 2.0, 3.0), (-0.5, 0.25, 8.0)])
def return_middle_argument(x, y, z):
    return y


@grad_case((0, 1), [(1.5, 2.0), (-0.5, 0.25)])
def ignores_second_argument(x, y):
    return x * x + 3.0


@grad_case((0, 1, 2), [(1.5, 2.0, 3.0), (-0.5, 0.25, -4.0)])
def ignores_first_argument(x, y, z):
    return y * z - z


@grad_case((0, 1), [(1.5, 2.0), (-0.5, 0.25)])
def constant_output(x, y):
    return 3.25


@grad_case((1,), [(1.5, 2.0, 3.0), (-0.5, 0.25, -4.0)])
def differentiate_one_of_three(x, y, z):
    return x * math.sin(y) + y * z * z


# ---------------------------------------------------------------- tuples built and indexed
@grad_case((0, 1), [(1.0, 2.0), (-0.5, 1.5), (2.5, -0.75)])
def tuple_built_and_indexed(x, y):
    t = (x + y, x * y, x - y)
    return t[0] * t[1] - t[2] ** 2 + t[-1]


@grad_case((0, 1), [(1.0, 2.0), (-0.5, 1.5), (2.5, -0.75)])
def tuple_swap_updates(x, y):
    a, b = y, x
    a, b = a + b, a * b
    a, b = b - a, a / (1.0 + b * b)
    return a * b


@grad_case((0, 1, 2), [(0.5, 1.0, -1.0), (2.0, -0.5, 0.25), (-1.5, 0.3, 1.2)])
def nested_tuples(x, y, z):
    pairs = ((x, y), (y, z), (z, x))
    return sum(p[0] * p[1] for p in pairs) + pairs[1][1] ** 3


# ---------------------------------------------------------------- sum() over generators and lists
@grad_case((0, 1, 2), [(1.0, 2.0, 3.0), (-0.5, 0.5, 0.25), (4.0, -3.0, 0.1)])
def sum_squares_generator(x, y, z):
    return sum(t * t for t in (x, y, z))


@grad_case((0, 1), [(0.5, 2.0), (-1.2, 0.3), (1.5, -1.0)])
def sum_list_comprehension(x, y):
    return sum([x ** k / (k + 1) for k in range(6)]) * y + sum([y * k for k in range(3)])


@grad_case((0, 1), [(0.5, 2.0), (-1.2, 0.3), (1.5, -1.0)])
def list_built_by_append(x, y):
    terms = []
    for i in range(5):
        terms.append(math.sin(x * i) * y ** i)
    return sum(terms)


# ---------------------------------------------------------------- fixed-count loops
@grad_case(0, [(0.5,), (-1.3,), (2.0,)])
def power_series_exp(x):
    term = 1.0
    total = 1.0
    for k in range(1, 15):
        term = term * x / k
        total = total + term
    return total


@grad_case(0, [(2.0,), (9.0,), (0.7,)])
def newton_sqrt(a):
    x = a
    for _ in range(8):
        x = 0.5 * (x + a / x)
    return x


@grad_case(0, [(2.0,), (27.0,), (0.5,)])
def newton_cube_root(a):
    x = 1.0 + a / 3.0
    for _ in range(12):
        x = x - (x * x * x - a) / (3.0 * x * x)
    return x


@grad_case((0, 1), [(0.5, 0.2), (1.2, -0.4), (-0.8, 1.0)])
def pendulum_verlet(theta0, omega0):
    dt = 0.05
    theta, omega = theta0, omega0
    for _ in range(20):
        omega = omega - 0.5 * dt * math.sin(theta)
        theta = theta + dt * omega
        omega = omega - 0.5 * dt * math.sin(theta)
    return theta * theta + 0.5 * omega * omega


@grad_case((0, 1), [(0.5, 0.3), (1.0, -0.2), (-0.7, 0.6)])
def fixed_point_iteration(x, y):
    z = y
    for _ in range(10):
        z = 0.5 * math.cos(x * z) + 0.25 * y
    return z


# ---------------------------------------------------------------- int arguments (not differentiated)
@grad_case(0, [(1.3, 3), (0.7, 5), (-1.2, 2), (2.0, 0)])
def int_exponent(x, n):
    return x ** n + n * x


@grad_case(0, [(1.5, 3), (-0.5, 5), (0.9, 1)])
def int_loop_count(x, n):
    acc = 0.0
    for i in range(n):
        acc = acc * x + (i + 1)
    return acc * math.cos(x)


@grad_case((0, 1), [(0.5, 1.5, 2), (-1.0, 0.25, 3), (0.1, -0.3, 4)])
def int_scale_and_power(x, y, k):
    return (x + y) ** k / k + k * x * y


@grad_case(0, [(0.3, 2), (-0.6, 5), (0.9, 7)])
def chebyshev_recurrence(x, n):
    t0, t1 = 1.0, x
    for _ in range(n - 1):
        t0, t1 = t1, 2.0 * x * t1 - t0
    return t1


@grad_case(0, [(1.5, 2), (1.5, 3), (-0.4, 4), (-0.4, 7)])
def int_branch(x, n):
    if n % 2 == 0:
        return x ** 2 * n
    return math.sin(x) * n


@grad_case((0, 1, 2), [(0.1, 0.5, -0.3, 0), (0.1, 0.5, -0.3, 2), (2.0, -1.0, 0.5, 1)])
def cross_entropy_int_label(a, b, c, label):
    logits = [a, b, c]
    return -math.log(math.exp(logits[label]) / sum(math.exp(t) for t in logits))


@grad_case(0, [(1.5, True), (1.5, False), (-0.7, True)])
def bool_flag(x, negate):
    return -x * x if negate else x * x * x


@grad_case(0, [(0.5,), (-2.0,), (5.0,)])
def mixed_int_float(x):
    k = 3
    return (x + k) * (k - x) / (2 * k) + x / k


# ---------------------------------------------------------------- math-heavy
@grad_case(0, [(0.5,), (-3.0,), (4.0,)])
def softplus(x):
    return math.log1p(math.exp(x))


@grad_case(0, [(0.5,), (-3.0,), (4.0,)])
def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def _sigmoid(t):
    return 1.0 / (1.0 + math.exp(-t))


@grad_case((0, 1), [(0.5, -0.2, 1.5, 1.0), (-1.0, 0.3, 0.7, 0.0), (2.0, 0.1, -0.4, 1.0)])
def logistic_loss(w, b, x, label):
    p = _sigmoid(w * x + b)
    return -(label * math.log(p) + (1.0 - label) * math.log(1.0 - p))


@grad_case((0, 1, 2), [(0.1, 0.5, -0.3), (2.0, -1.0, 1.9), (-4.0, -3.5, -5.0)])
def logsumexp3(a, b, c):
    m = max(a, b, c)
    return m + math.log(math.exp(a - m) + math.exp(b - m) + math.exp(c - m))


@grad_case((0, 1, 2), [(0.1, 0.5, -0.3), (2.0, -1.0, 1.9)])
def softmax_first(a, b, c):
    ea, eb, ec = math.exp(a), math.exp(b), math.exp(c)
    return ea / (ea + eb + ec)


@grad_case(0, [(0.5,), (-1.5,), (2.5,)])
def gelu_tanh(x):
    return 0.5 * x * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


@grad_case((0, 1, 2), [(0.5, 0.0, 1.0), (1.3, -0.4, 0.7), (-2.0, 1.0, 2.5)])
def gaussian_pdf(x, mu, sigma):
    z = (x - mu) / sigma
    return math.exp(-0.5 * z * z) / (sigma * math.sqrt(2.0 * math.pi))


@grad_case((0, 1, 2), [(1.0, 2.0, 2.0), (-0.5, 0.7, 1.5), (3.0, -4.0, 0.25)])
def normalized_vector_norms(x, y, z):
    r2 = math.hypot(x, y)
    r3 = math.sqrt(x * x + y * y + z * z)
    return x / r2 + z / r3 + math.hypot(r2, z) * y


@grad_case((0, 1), [(1.0, 0.5), (-0.7, 1.2), (0.3, -2.0)])
def polar_angle(x, y):
    return math.atan2(y, x) * math.hypot(x, y)


@grad_case((0, 1), [(0.4, 1.3), (2.0, -0.7), (-1.1, 0.2)])
def sin_cos_composition(x, y):
    return math.sin(math.cos(x) * y) + math.cos(math.sin(y) * x) * math.sin(x + y)


@grad_case(0, [(0.3,), (-0.9,), (1.2,)])
def hyperbolic_mix(x):
    return math.tan(x) * math.sinh(x) / math.cosh(x) + math.tanh(2.0 * x)


@grad_case(0, [(0.5,), (2.0,), (7.5,)])
def log_family(x):
    return math.log(x) + math.log2(x) + math.log10(x) + math.log1p(x) + math.expm1(x / 4.0)


@grad_case(0, [(0.3,), (-0.6,), (0.85,)])
def inverse_trig(x):
    return math.asin(x) + math.acos(x / 2.0) * math.atan(x) + math.atan(3.0 * x)


@grad_case((0, 1), [(1.5, -0.7), (0.8, 2.2), (3.0, 0.5)])
def powers_and_fabs(x, y):
    return x ** y + math.pow(x, 2.5) + math.fabs(y) * x


@grad_case(0, [(0.5,), (-2.0,), (10.0,)])
def nested_square_roots(x):
    return math.sqrt(1.0 + math.sqrt(1.0 + x * x))


@grad_case((0, 1), [(1.5, 2.0), (-0.5, 3.0), (2.0, -1.5)])
def augmented_assignments(x, y):
    acc = 0.0
    acc += x
    acc *= y
    acc -= x / y
    acc /= 2.0
    acc **= 2
    return acc


# ---------------------------------------------------------------- min / max / abs away from ties
@grad_case((0, 1), [(1.0, 2.0), (-1.5, 0.5), (3.0, -2.0)])
def min_max_abs(x, y):
    return max(x, y) * min(x, y) + abs(x - y)


@grad_case((0, 1), [(0.5, 2.0), (-0.3, 1.0), (1.7, -0.5), (-2.5, 0.25)])
def clamp_and_abs(x, y):
    return min(max(x, -1.0), 1.0) ** 2 + abs(x) * y


@grad_case((0, 1), [(0.5, -2.0), (-0.3, 1.0), (1.7, 0.5)])
def relu_mix(x, y):
    return max(0.0, x) + 2.0 * max(0.0, -y) + max(0.0, x * y)


@grad_case((0, 1), [(0.3, 1.0), (-2.5, 1.0), (4.0, 1.5)])
def huber_loss(residual, delta):
    a = abs(residual)
    q = min(a, delta)
    return q * (a - 0.5 * q)


# ---------------------------------------------------------------- a small MLP (micrograd-style, plain Python)
MLP_W1 = [[0.5, -0.3, 0.8], [-0.6, 0.2, 0.4], [0.1, 0.9, -0.7]]
MLP_B1 = [0.1, -0.2, 0.05]
MLP_W2 = [0.7, -0.5, 0.3]
MLP_B2 = -0.1
MLP_TARGET = 0.25


def _neuron(weights, bias, inputs):
    return math.tanh(sum(w * x for w, x in zip(weights, inputs)) + bias)


def _mlp(inputs):
    hidden = [_neuron(w, b, inputs) for w, b in zip(MLP_W1, MLP_B1)]
    return _neuron(MLP_W2, MLP_B2, hidden)


@grad_case((0, 1, 2), [(0.5, -1.0, 0.3), (1.2, 0.4, -0.8), (-0.3, 0.2, 2.0)])
def mlp_loss_wrt_input(x0, x1, x2):
    return (_mlp([x0, x1, x2]) - MLP_TARGET) ** 2


@grad_case((0, 1, 2, 3), [(0.5, -1.0, 0.3, 0.25), (1.2, 0.4, -0.8, -0.5)])
def mlp_loss_wrt_input_and_target(x0, x1, x2, target):
    out = _mlp([x0, x1, x2])
    return (out - target) ** 2 + 0.01 * sum(x * x for x in (x0, x1, x2))


class Neuron:
    def __init__(self, weights, bias):
        self.w = weights
        self.b = bias

    def __call__(self, xs):
        return math.tanh(sum(wi * xi for wi, xi in zip(self.w, xs)) + self.b)


class Layer:
    def __init__(self, neurons):
        self.neurons = neurons

    def __call__(self, xs):
        return [n(xs) for n in self.neurons]


class MLP:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, xs):
        for layer in self.layers:
            xs = layer(xs)
        return xs[0]


NET = MLP([Layer([Neuron(w, b) for w, b in zip(MLP_W1, MLP_B1)]), Layer([Neuron(MLP_W2, MLP_B2)])])


# the class methods read `math` from this module's globals: no JAX twin (see jax_twin in the test)
@grad_case((0, 1, 2), [(0.5, -1.0, 0.3), (1.2, 0.4, -0.8), (-0.3, 0.2, 2.0)], jax=False)
def mlp_class_loss_wrt_input(x0, x1, x2):
    return (NET([x0, x1, x2]) - MLP_TARGET) ** 2


# ---------------------------------------------------------------- misc compositions
BILINEAR_CORNERS = (1.0, 3.0, -2.0, 0.5)


@grad_case((0, 1), [(0.25, 0.5), (0.9, 0.1), (0.4, 0.75)])
def bilinear_interpolation(u, v):
    f00, f10, f01, f11 = BILINEAR_CORNERS
    return f00 * (1 - u) * (1 - v) + f10 * u * (1 - v) + f01 * (1 - u) * v + f11 * u * v


@grad_case((0, 1, 2), [(1.0, 0.5, 0.1), (2.0, -1.0, 0.3), (0.5, 2.0, -0.2)])
def exp_decay_fit_residual(amplitude, rate, shift):
    total = 0.0
    for i in range(6):
        t = 0.5 * i
        model = amplitude * math.exp(-rate * t) + shift
        total += (model - math.cos(t)) ** 2
    return total


@grad_case((0, 1, 2, 3), [(1.0, 0.0, 0.0, 1.0), (0.5, 1.5, -2.0, 3.0), (-1.0, 2.0, 0.5, 0.5)])
def segment_length_and_angle(x1, y1, x2, y2):
    dx, dy = x2 - x1, y2 - y1
    return math.sqrt(dx * dx + dy * dy) + 0.5 * math.atan2(dy, dx)
