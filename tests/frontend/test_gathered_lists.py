"""Loops over long Python lists compile to loops over arrays the loader gathers (tracer.frontend.gathered):
the same answers as CPython bit for bit (fusion off), a small IR, weights read on every call."""
import math
import os
import random
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import outcome, same_outcome

import tracer.frontend.branches
import tracer.frontend.gathered
from tracer import grad, trace

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import mlp

N = 40          # longer than gathered.LIST_UNROLL_LIMIT: these lists are gathered


def ops(compiled) -> list:
    return [v.op for v in compiled.specializations[-1].optimized.walk()]


def floats(n, seed=0):
    rng = random.Random(seed)
    return [rng.uniform(-2.0, 2.0) for _ in range(n)]


def dot(w, x):
    return sum(wi * xi for wi, xi in zip(w, x))


def test_sum_over_zip_of_long_lists_is_one_loop():
    f = trace(dot, fuse_fma=False)
    w, x = floats(N, 1), floats(N, 2)
    assert f(w, x) == dot(w, x)
    assert ops(f).count("loop") == 1 and len(ops(f)) < 40
    assert len(f.specializations[0].optimized.params) == 2          # one array per list
    w[7] = 10.0                        # read on every call, never frozen
    assert f(w, x) == dot(w, x) and len(f.specializations) == 1


def test_compensated_sum_matches_cpython():
    # 3.12+ sum() is Neumaier-compensated: big and small terms cancel exactly like CPython's
    w = [1e16, 1.0, -1e16, 3.5, 1e-3] * 9
    x = [1.0] * len(w)
    assert trace(dot, fuse_fma=False)(w, x) == dot(w, x)


def test_an_int_in_a_float_list_recompiles_and_keeps_python_types():
    f = trace(dot, fuse_fma=False)
    w, x = floats(N, 3), floats(N, 4)
    f(w, x)
    w[5] = 2                           # an int: the loader's check fails, a new trace follows
    assert f(w, x) == dot(w, x)
    ints = list(range(N))
    assert f(ints, ints) == dot(ints, ints) and type(f(ints, ints)) is int


def test_a_new_length_recompiles():
    f = trace(dot, fuse_fma=False)
    for n in (N, N + 7, 3):
        w, x = floats(n, n), floats(n, n + 1)
        assert f(w, x) == dot(w, x)


def test_list_comprehension_over_a_long_range_fills_an_array_in_a_loop():
    def scaled(x):
        values = [float(i) * x for i in range(N)]
        return sum(values) + values[3] - values[-1]
    f = trace(scaled, fuse_fma=False)
    assert f(1.25) == scaled(1.25) and f(-3.0) == scaled(-3.0)
    assert "loop" in ops(f) and "store" in ops(f)


def test_filtering_comprehension_gives_python_answer():
    def positives(w):
        kept = [v for v in w if v > 0.0]
        return sum(kept) + len(kept)
    f = trace(positives, fuse_fma=False)
    for seed in range(3):
        w = floats(N, seed)
        assert f(w) == positives(w)


def test_indexing_with_the_loop_counter():
    def shifted(w, x):
        acc = 0.0
        for i in range(len(w) - 1):
            acc += w[i] * x[i + 1]
        return acc
    def off_the_end(w, x):
        acc = 0.0
        for i in range(len(w)):
            acc += w[i] * x[i + 1]
        return acc
    w, x = floats(N, 5), floats(N, 6)
    f = trace(shifted, fuse_fma=False)
    assert f(w, x) == shifted(w, x) and "loop" in ops(f)
    g = trace(off_the_end, fuse_fma=False)
    with pytest.raises(IndexError, match="list index out of range"):
        g(w, x)


def test_nested_lists_as_rows():
    def matvec(W, x):
        return [sum(a * b for a, b in zip(row, x)) for row in W]
    def norm(W, x):
        return math.sqrt(sum(v * v for v in matvec(W, x)))
    rng = random.Random(7)
    W = [[rng.uniform(-1, 1) for _ in range(30)] for _ in range(20)]
    x = floats(30, 8)
    f = trace(norm, fuse_fma=False)
    assert f(W, x) == norm(W, x)
    assert ops(f).count("loop") == 3 and len(f.specializations[0].optimized.params) == 2
    W[4][9] = 0.5
    assert f(W, x) == norm(W, x)


def test_micrograd_mlp_compiles_to_loops():
    rng = random.Random(0)
    model = mlp.MLP(2, [32, 32, 1], rng)
    f = trace(mlp.forward, fuse_fma=False)
    points = [(rng.uniform(-2, 2), rng.uniform(-2, 2)) for _ in range(50)]
    assert all(f(model, a, b) == mlp.forward(model, a, b) for a, b in points)
    optimized = f.specializations[0].optimized
    assert ops(f).count("loop") >= 4 and len(ops(f)) < 200      # unrolled: about 1,400 ops
    assert len(optimized.params) < 12                            # unrolled: 1,250 parameters
    model.layers[1].neurons[3].w[5] += 0.25                      # weights are read per call
    model.layers[0].neurons[0].b = -0.5
    assert all(f(model, a, b) == mlp.forward(model, a, b) for a, b in points[:5])
    assert len(f.specializations) == 1


def test_fewer_ops_than_unrolling(monkeypatch):
    rng = random.Random(0)
    model = mlp.MLP(2, [20, 20, 1], rng)
    looped = trace(mlp.forward, fuse_fma=False)
    looped(model, 0.5, -0.5)
    monkeypatch.setattr(tracer.frontend.gathered, "unroll_limit", lambda tracer: 10 ** 6)
    monkeypatch.setattr(tracer.frontend.branches, "UNROLL_LIMIT", 10 ** 6)
    unrolled = trace(mlp.forward, fuse_fma=False)
    assert unrolled(model, 0.5, -0.5) == looped(model, 0.5, -0.5) == mlp.forward(model, 0.5, -0.5)
    assert len(ops(looped)) * 5 < len(ops(unrolled))


class Unit:
    def __init__(self, w, on):
        self.w, self.on = w, on

    def __call__(self, x):
        return self.w * x if self.on else -x


def test_objects_whose_attributes_differ_in_kind_unroll_and_stay_exact():
    units = [Unit(float(i), i % 3 != 0) for i in range(N)]     # `on` differs: not one constant
    def total(us, x):
        return sum(u(x) for u in us)
    f = trace(total, fuse_fma=False)
    assert f(units, 1.5) == total(units, 1.5)
    units[4].on = False
    assert f(units, 1.5) == total(units, 1.5)


def test_objects_with_a_shared_flag_are_gathered_and_guarded():
    units = [Unit(float(i) / 7, True) for i in range(N)]
    def total(us, x):
        return sum(u(x) for u in us)
    f = trace(total, fuse_fma=False)
    assert f(units, 1.5) == total(units, 1.5) and "loop" in ops(f)
    units[9].on = False                # the guard on every item's `on` fails: a new trace
    assert f(units, 1.5) == total(units, 1.5)


WEIGHTS = [0.01 * i - 0.3 for i in range(100)]   # longer than the autodiff unroll limit


def test_gradient_through_a_loop_over_a_gathered_list():
    def energy(s):
        return sum(math.sin(w * s) for w in WEIGHTS)
    g = grad(energy)
    for s in (0.3, -1.2):
        h = 1e-6
        assert abs(g(s) - (energy(s + h) - energy(s - h)) / (2 * h)) < 1e-6
        assert abs(g(s) - sum(w * math.cos(w * s) for w in WEIGHTS)) < 1e-12


def test_gather_checks_every_item_exactly():
    import numpy as np

    from tracer.native import gather
    out = np.empty(3)
    assert gather(out, [1.0, 2.5, -3.0], None, 0) and out.tolist() == [1.0, 2.5, -3.0]
    class F(float):
        pass
    for bad in ([1.0, 2, 3.0], [1.0, True, 3.0], [1.0, F(2.0), 3.0], [1.0, None, 3.0]):
        assert not gather(out, bad, None, 0)
    rows = np.empty((2, 2))
    assert gather(rows, [[1.0, 2.0], [3.0, 4.0]], None, 2) and rows.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert not gather(rows, [[1.0, 2.0], [3.0]], None, 2)
    assert not gather(rows, [[1.0, 2.0], (3.0, 4.0)], None, 2)
    ints = np.empty(2, dtype=np.int64)
    assert gather(ints, [2 ** 63 - 1, -5], None, 0) and ints.tolist() == [2 ** 63 - 1, -5]
    assert not gather(ints, [2 ** 63, 1], None, 0) and not gather(ints, [1, 1.0], None, 0)
    units = [Unit(1.5, True), Unit(2.5, False)]
    pair = np.empty(2)
    assert gather(pair, units, "w", 0) and pair.tolist() == [1.5, 2.5]
    assert not gather(pair, units, "missing", 0)
    with pytest.raises(ValueError):
        gather(np.empty(5), units, "w", 0)


def test_enumerate_and_a_body_that_cannot_be_a_loop():
    def weighted(w):
        return sum(i * v for i, v in enumerate(w, 1))
    def labels(w):
        out, tag = 0.0, ""
        for v in w:
            tag = tag + "x"                    # a str that grows: cannot be carried, so it unrolls
            out += v * len(tag)
        return out
    w = floats(N, 9)
    f = trace(weighted, fuse_fma=False)
    assert f(w) == weighted(w) and "loop" in ops(f)
    assert trace(labels, fuse_fma=False)(w) == labels(w)


def test_a_comprehension_result_reads_like_a_list():
    def stats(w):
        squares = [v * v for v in w]
        longer = list(squares)
        longer.append(1.0)
        return (len(squares), squares[-1], max(squares), squares == longer[:-1], sum(longer),
                tuple(squares[:3]), squares + [2.0] == longer[:-1] + [2.0])
    w = floats(N, 11)
    f = trace(stats, fuse_fma=False)
    assert f(w) == stats(w)


def test_changing_a_comprehension_result_unrolls_it():
    def grow(w):
        squares = [v * v for v in w]
        squares.append(1.0)            # an array cannot grow: traced again, with the loop unrolled
        return sum(squares)
    f = trace(grow, fuse_fma=False)
    w = floats(N, 12)
    assert f(w) == grow(w) and "loop" not in ops(f)


class Scaled:
    factor = 2.0                       # a class attribute, shadowed on some instances below

    def __init__(self, w):
        self.w = w

    def value(self, x):
        return self.w * x * self.factor


def test_a_class_attribute_shadowed_on_some_items():
    items = [Scaled(float(i)) for i in range(N)]
    def total(items, x):
        return sum(s.value(x) for s in items)
    f = trace(total, fuse_fma=False)
    assert f(items, 0.5) == total(items, 0.5)
    items[3].factor = -1.0             # now item 3 has its own: guarded, traced again
    assert f(items, 0.5) == total(items, 0.5)
    g = trace(total, fuse_fma=False)   # traced with the shadowing from the start
    assert g(items, 0.5) == total(items, 0.5)


def test_tuples_are_not_gathered():
    # the loader's gather reads lists; a tuple indexed by an argument, short or long, and a
    # loop over a long tuple keep their unrolled code (and CPython's errors)
    def at(t, i):
        return t[i] + t[0]

    def total(t):
        s = 0.0
        for v in t:
            s += v
        return s

    f = trace(at)
    with pytest.raises(IndexError, match="tuple index out of range"):
        f((1.0, 2.0), -3)
    assert f((1.0, 2.0, 3.0), 2) == 4.0
    long = tuple(floats(N, 3))
    assert f(long, 5) == at(long, 5)
    assert trace(total)(long) == total(long)


# ----------------------------------------------------------------- differential: lists of any mix
def _scaled_sum(xs):
    return sum(x * 2.0 for x in xs)


def _signed_total(xs):
    s = 0.0
    for x in xs:
        if x > 0.5:
            s += x
        else:
            s -= 1.0
    return s


def _dot(xs, ys):
    return sum(a * b for a, b in zip(xs, ys))


def _indexed_dot(xs, ys):
    t = 0.0
    for i in range(len(xs)):
        t += xs[i] * ys[i]
    return t


def _weighted(xs):
    t = 0.0
    for i, x in enumerate(xs):
        t += i * x
    return t


def _reciprocals(xs):
    return sum([1.0 / x for x in xs])


FLOATS = st.floats(allow_nan=True, allow_infinity=True)
NUMBERS = st.one_of(st.floats(-2.0, 2.0), FLOATS, st.sampled_from([0.0, -0.0, 0, 1, True, False, 10 ** 30, -3]))
# lists of floats only (gathered when long), of ints only, or of any mix (unrolled or run by Python)
LISTS = st.one_of(st.lists(st.one_of(st.floats(-2.0, 2.0), FLOATS), max_size=3 * N // 2),
                  st.lists(st.integers(-5, 5), max_size=3 * N // 2),
                  st.lists(NUMBERS, max_size=3 * N // 2))


@pytest.mark.parametrize("fn", [_scaled_sum, _signed_total, _weighted, _reciprocals])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(xs=LISTS)
def test_one_list_of_any_mix_matches_cpython(fn, xs):
    # gathered (long, one kind of number), unrolled (short or mixed), or run by Python: the
    # result and the exception are CPython's, bit for bit with fusion off
    got, want = outcome(trace(fn, fuse_fma=False), (xs,)), outcome(fn, (xs,))
    assert same_outcome(got, want), (fn.__name__, xs, got, want)


@pytest.mark.parametrize("fn", [_dot, _indexed_dot])
@settings(max_examples=25, deadline=None)
@given(xs=LISTS, ys=LISTS)
def test_two_lists_of_any_mix_match_cpython(fn, xs, ys):
    got, want = outcome(trace(fn, fuse_fma=False), (xs, ys)), outcome(fn, (xs, ys))
    assert same_outcome(got, want), (fn.__name__, xs, ys, got, want)
