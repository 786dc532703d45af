"""Traced code that writes into the caller's Python lists, and `grad` with respect to lists.

A list the compiled code writes into is held in an array (tracer.frontend.gathered): the loader
gathers it before the call and scatters the array back into the list after (tracer/csrc/gather.c, in tracer.native).
Every test compares the lists and the result with CPython running the same function on a copy.
"""
import copy
import math
import random

import pytest

from tracer import grad, trace
from tracer.errors import UnsupportedError


def same_as_python(fn, *args):
    """Run the compiled `fn` and its Python original on deep copies of `args`: same result,
    same lists afterwards (bit for bit, fusion off), and the compiled one is not a fallback."""
    mine, theirs = copy.deepcopy(args), copy.deepcopy(args)
    got = fn(*mine)
    want = fn.py_func(*theirs)
    assert repr(got) == repr(want)
    assert snapshot(mine) == snapshot(theirs)
    return mine


def snapshot(x) -> str:
    """repr of lists, tuples and numbers, with objects shown by their attributes."""
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(snapshot(v) for v in x) + "]"
    if hasattr(x, "__dict__"):
        return f"{type(x).__name__}({snapshot(list(vars(x).items()))})"
    return repr(x)


def floats(n, seed=0):
    rng = random.Random(seed)
    return [rng.uniform(-2.0, 2.0) for _ in range(n)]


@trace(fuse_fma=False)
def scale(xs, v):
    for i in range(len(xs)):
        xs[i] = xs[i] * v
    return xs[-1]


@pytest.mark.parametrize("n", [1, 3, 8, 9, 40])
def test_writes_into_a_list_of_floats(n):
    same_as_python(scale, floats(n), 1.5)
    same_as_python(scale, floats(n, seed=1), -0.25)      # the same specialization, new numbers
    assert len(scale.specializations) <= 5


@trace(fuse_fma=False)
def running(xs):
    a = xs[0]
    xs[0] = xs[1] * 2.0
    xs[1] = xs[0] + a              # reads what was just written
    total = 0.0
    for v in xs:                   # ... and so does iterating
        total += v
    return total


def test_reads_after_a_write_see_it():
    same_as_python(running, [1.5, 2.5, 3.5])
    same_as_python(running, floats(20))


@trace(fuse_fma=False)
def scale_rows(W, v):
    for row in W:
        for j in range(len(row)):
            row[j] *= v
    return W[0][0] + W[-1][-1]


def test_writes_into_rows():
    W = [floats(30, seed=i) for i in range(12)]
    same_as_python(scale_rows, W, 3.0)
    same_as_python(scale_rows, [floats(3, seed=i) for i in range(2)], 3.0)


def test_rows_that_are_one_list_run_in_python():
    # [[1.0] * 30] * 12 is one row twelve times: every write is seen by all of them
    shared = [[1.0] * 30] * 12
    scale_rows(shared, 3.0)
    assert shared[0] is shared[5] and shared[0][0] == 3.0 ** 12
    unshared = [[1.0] * 30 for _ in range(12)]
    scale_rows(unshared, 3.0)
    assert all(v == 3.0 for row in unshared for v in row)


@trace(fuse_fma=False)
def copy_into(a, b):
    for i in range(len(a)):
        a[i] = b[i] + 1.0
    return b[0]


def test_a_list_passed_twice_runs_in_python():
    xs = floats(12)
    want = [v + 1.0 for v in xs]
    assert copy_into(xs, xs) == want[0] and xs == want
    ys, zs = floats(12), floats(12, seed=5)
    same_as_python(copy_into, ys, zs)


class Neuron:
    def __init__(self, n, seed):
        self.w = floats(n, seed)
        self.b = 0.5


@trace(fuse_fma=False)
def decay(neurons, lr):
    for n in neurons:
        for j in range(len(n.w)):
            n.w[j] -= lr * n.w[j]
    return neurons[0].w[0]


def test_writes_into_an_attribute_of_each_object():
    neurons = [Neuron(12, seed) for seed in range(10)]
    mine = same_as_python(decay, neurons, 0.5)
    assert isinstance(mine[0][0], Neuron)


@trace
def ints(ks):
    for i in range(len(ks)):
        ks[i] = ks[i] * 3 + 1


def test_writes_into_a_list_of_ints():
    same_as_python(ints, list(range(-5, 20)))


@trace
def divide_down(xs, d):
    for i in range(len(xs)):
        xs[i] = xs[i] / d
        d -= 1.0


def test_an_error_midway_leaves_the_lists_as_python_does():
    mine, theirs = floats(12), floats(12)
    with pytest.raises(ZeroDivisionError):
        divide_down(mine, 5.0)
    with pytest.raises(ZeroDivisionError):
        divide_down.py_func(theirs, 5.0)
    assert mine == theirs and mine != floats(12)


def test_storing_another_type_is_a_clear_error():
    @trace(fullgraph=True)
    def store_int(xs):
        xs[0] = 1

    with pytest.raises(UnsupportedError, match=r"test_list_writes.py:\d+.*only a float"):
        store_int([1.0, 2.0])

    @trace(fullgraph=True)
    def into_tuple(t):
        t[0] = 1.0

    with pytest.raises(TypeError):
        into_tuple((1.0, 2.0))


def test_an_unchanged_float_keeps_its_object_and_a_shared_one_is_replaced():
    first = 2.5
    xs = [first, 1.0, 1.0]          # `first` is referenced here too: never changed in place
    scale(xs, 1.0)
    assert xs[0] is first
    scale(xs, 2.0)
    assert first == 2.5 and xs[0] == 5.0


# ------------------------------------------------------------------------- grad w.r.t. lists
def loss(W, b, x):
    h = [math.tanh(sum(w * xi for w, xi in zip(row, x)) + bi) for row, bi in zip(W, b)]
    return sum(v * v for v in h)


@trace
def loss_grad_into(W, b, x, gW, gb):
    dW, db = grad(loss, argnums=(0, 1))(W, b, x)
    for row, g in zip(gW, dW):
        for j in range(len(row)):
            row[j] = g[j]
    for i in range(len(gb)):
        gb[i] = db[i]


@pytest.mark.parametrize("n_in, n_out", [(3, 2), (20, 12), (70, 3)])
def test_grad_with_respect_to_lists_matches_finite_differences(n_in, n_out):
    W = [floats(n_in, seed=i) for i in range(n_out)]
    b, x = floats(n_out, seed=99), floats(n_in, seed=100)
    gW, gb = [[0.0] * n_in for _ in range(n_out)], [0.0] * n_out
    loss_grad_into(W, b, x, gW, gb)
    eps = 1e-6
    for i, j in [(0, 0), (n_out - 1, n_in - 1), (n_out // 2, n_in // 2)]:
        up, down = copy.deepcopy(W), copy.deepcopy(W)
        up[i][j] += eps
        down[i][j] -= eps
        assert gW[i][j] == pytest.approx((loss(up, b, x) - loss(down, b, x)) / (2 * eps), rel=1e-6, abs=1e-8)
    for i in range(n_out):
        up, down = list(b), list(b)
        up[i] += eps
        down[i] -= eps
        assert gb[i] == pytest.approx((loss(W, up, x) - loss(W, down, x)) / (2 * eps), rel=1e-6, abs=1e-8)


def mlp_loss(W1, b1, W2, b2, x, label):
    h = [max(0.0, sum(w * xi for w, xi in zip(row, x)) + b) for row, b in zip(W1, b1)]
    o = [sum(w * hi for w, hi in zip(row, h)) + b for row, b in zip(W2, b2)]
    m = max(o)
    return m + math.log(sum(math.exp(v - m) for v in o)) - o[label]


def sgd(rows, grads, lr):
    for row, g in zip(rows, grads):
        for j in range(len(row)):
            row[j] -= lr * g[j]


@trace
def mlp_step(W1, b1, W2, b2, x, label, lr):
    gW1, gb1, gW2, gb2 = grad(mlp_loss, argnums=(0, 1, 2, 3))(W1, b1, W2, b2, x, label)
    sgd(W1, gW1, lr)
    sgd([b1], [gb1], lr)
    sgd(W2, gW2, lr)
    sgd([b2], [gb2], lr)


def python_mlp_step(W1, b1, W2, b2, x, label, lr):
    """The same step with the backward written by hand, in plain Python."""
    z = [sum(w * xi for w, xi in zip(row, x)) + b for row, b in zip(W1, b1)]
    h = [max(0.0, v) for v in z]
    o = [sum(w * hi for w, hi in zip(row, h)) + b for row, b in zip(W2, b2)]
    m = max(o)
    e = [math.exp(v - m) for v in o]
    p = [v / sum(e) for v in e]
    p[label] -= 1.0
    gh = [sum(W2[k][j] * p[k] for k in range(len(p))) if z[j] > 0.0 else 0.0 for j in range(len(h))]
    for k, row in enumerate(W2):
        for j in range(len(row)):
            row[j] -= lr * p[k] * h[j]
        b2[k] -= lr * p[k]
    for j, row in enumerate(W1):
        for i in range(len(row)):
            row[i] -= lr * gh[j] * x[i]
        b1[j] -= lr * gh[j]


def test_a_list_mlp_trains_like_its_python_backward():
    rng = random.Random(3)
    n_in, n_hidden, n_out = 12, 10, 4
    params = ([[rng.gauss(0.0, 0.5) for _ in range(n_in)] for _ in range(n_hidden)], [0.1] * n_hidden,
              [[rng.gauss(0.0, 0.5) for _ in range(n_hidden)] for _ in range(n_out)], [0.0] * n_out)
    mine, theirs = copy.deepcopy(params), copy.deepcopy(params)
    data = [([rng.random() for _ in range(n_in)], rng.randrange(n_out)) for _ in range(100)]
    before = sum(mlp_loss(*params, x, y) for x, y in data)
    for x, y in data:
        mlp_step(*mine, x, y, 0.05)
        python_mlp_step(*theirs, x, y, 0.05)
    assert len(mlp_step.specializations) <= n_out      # (under grad, `o[label]` pins the label)
    for a, b in zip(mine, theirs):
        flat_a = [v for row in a for v in (row if isinstance(row, list) else [row])]
        flat_b = [v for row in b for v in (row if isinstance(row, list) else [row])]
        assert flat_a == pytest.approx(flat_b, rel=1e-12, abs=1e-12)
    assert sum(mlp_loss(*mine, x, y) for x, y in data) < before
