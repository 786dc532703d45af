"""Lists (and tuples) the native entry reads itself (tracer.ir.ListArg, codegen/entry_lists.py):
no Python runs between the call and the compiled loop. CPython is the oracle: results, the lists
after the call (written back in place, the same list objects), exceptions, and what happens when
the lists change between calls."""
import math

import pytest

from tracer import trace


def sum_of_squares(xs):
    s = 0.0
    for x in xs:
        s += x * x
    return s


def scale(xs, k):
    for i in range(len(xs)):
        xs[i] = xs[i] * k


def int_total(ns):
    t = 0
    for n in ns:
        t += n
    return t


def add_into(a, b):
    for i in range(len(a)):
        a[i] += b[i]


def divide_into(xs, d):
    for i in range(len(xs)):
        xs[i] = xs[i] / d[i]


def first_plus_last(t):
    return t[0] + t[-1]


def drift(bodies, dt):
    """n-body style records: [[x, y, z], [vx, vy, vz], mass], moved in place."""
    for (r, v, _mass) in bodies:
        r[0] += dt * v[0]
        r[1] += dt * v[1]
        r[2] += dt * v[2]


def energy(bodies):
    e = 0.0
    for (r, v, m) in bodies:
        e += 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + m * math.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2])
    return e


def bodies():
    return [[[1.0, 2.0, 3.0], [0.5, -0.25, 0.125], 2.0], [[-1.0, 0.5, 0.0], [0.0, 1.0, -1.0], 3.0]]


def fast_paths(traced) -> list[bool]:
    return [spec.fast for spec in traced.specializations]


def test_a_list_of_floats_is_read_by_the_entry():
    f = trace(sum_of_squares, fuse_fma=False)         # (bit for bit CPython's: no fused multiply-add)
    xs = [0.1 * i for i in range(100)]
    assert f(xs) == sum_of_squares(xs)
    assert f([3.0, -2.5, 7.25] * 10) == sum_of_squares([3.0, -2.5, 7.25] * 10)
    assert all(fast_paths(f))


def test_writes_go_back_into_the_same_list():
    f = trace(scale)
    for n in (2, 5, 64):
        a, b = [0.5 * i for i in range(n)], [0.5 * i for i in range(n)]
        same = a
        assert f(a, 3.0) is None and scale(b, 3.0) is None
        assert a == b and same is a
    assert all(fast_paths(f))


def test_ints_past_64_bits_and_other_item_types_are_cpythons():
    f = trace(int_total)
    assert f([1, 2, 3]) == 6
    assert f([2 ** 62, 2 ** 62]) == 2 ** 63 and f([2 ** 70, 1]) == 2 ** 70 + 1
    assert f([1, 2.5, 3]) == 6.5
    g = trace(sum_of_squares, fuse_fma=False)
    g([1.0, 2.0])
    with pytest.raises(TypeError, match="can't multiply sequence"):
        g([1.0, "a"])


def test_lengths_and_empty_lists():
    f = trace(sum_of_squares, fuse_fma=False)
    for xs in ([], [2.0], [2.0, 3.0], [1.0] * 1000, [], [2.0]):
        assert f(xs) == sum_of_squares(xs)


def test_a_list_written_and_also_read_through_another_argument_runs_as_python():
    f = trace(add_into)
    x, y = [1.0, 2.0], [0.5, 0.25]
    f(x, y)
    assert x == [1.5, 2.25]
    x = [1.0, 2.0]
    f(x, x)                       # a[i] += b[i] with b the same list: CPython's order of effects
    assert x == [2.0, 4.0]


def test_a_failure_after_writes_leaves_the_list_as_cpython_does():
    f = trace(divide_into)
    f([1.0, 2.0], [1.0, 1.0])
    a, b = [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]
    with pytest.raises(ZeroDivisionError):
        f(a, [2.0, 4.0, 0.0, 1.0])
    with pytest.raises(ZeroDivisionError):
        divide_into(b, [2.0, 4.0, 0.0, 1.0])
    assert a == b


def test_tuples_items_and_subclasses():
    f = trace(first_plus_last)
    assert f((1.0, 2.0, 3.0)) == 4.0 and f([1.0, 2.0, 5.0]) == 6.0

    class Floats(list):
        pass
    g = trace(scale)
    a, b = Floats([1.0, 2.0, 3.0]), Floats([1.0, 2.0, 3.0])
    g(a, 2.0)
    scale(b, 2.0)
    assert a == b and type(a) is Floats


def test_records_of_lists_move_in_place():
    f, g = trace(drift, fuse_fma=False), trace(energy, fuse_fma=False)
    a, b = bodies(), bodies()
    inner = a[0][0]
    for _ in range(3):
        f(a, 0.01)
        drift(b, 0.01)
    assert a == b and a[0][0] is inner
    assert g(a) == energy(b)
    assert all(fast_paths(f)) and all(fast_paths(g))
    shared = bodies()
    shared[1][0] = shared[0][0]           # one position list in two records: CPython's result
    other = bodies()
    other[1][0] = other[0][0]
    f(shared, 0.5)
    drift(other, 0.5)
    assert shared == other


def horner_table(coeffs, xs):
    out = []
    for x in xs:
        r = 0.0
        for c in coeffs:
            r = r * x + c
        out.append(r)
    return out


def sums_and_products(a, b):
    return [a + b, a - b], (a * b, [a])


def one_list_twice(a):
    pair = [a, a]
    return pair, pair


def test_lists_of_numbers_returned_are_made_by_the_entry():
    f = trace(horner_table, fuse_fma=False)
    coeffs, xs = [1.0, -2.0, 0.5, 3.0], [0.1 * i for i in range(6)]
    assert f(coeffs, xs) == horner_table(coeffs, xs)
    g = trace(sums_and_products)
    got = g(2.0, 3.0)
    assert got == sums_and_products(2.0, 3.0)
    assert type(got[0]) is list and type(got[1]) is tuple and type(got[1][1]) is list
    assert g(2.0, 3.0) is not g(2.0, 3.0)
    assert all(fast_paths(f)) and all(fast_paths(g))
    h = trace(one_list_twice)          # one list object twice: made in Python, the same object
    first, second = h(1.5)
    assert first == [1.5, 1.5] and first is second


def running_means(xs, window):
    means, peaks = [], []
    for i in range(len(xs) - window + 1):
        part = xs[i:i + window]
        means.append(sum(part) / window)
        peaks.append(max(part))
    return means, peaks


def increasing_run(seq):
    best = [seq[0]]
    for x in seq[1:]:
        if x > best[-1]:
            best.append(x)
    return len(best), best


def test_lists_of_run_time_length_returned_are_made_by_the_entry():
    f = trace(running_means, fuse_fma=False)
    xs = [((i * 37) % 11) * 0.5 for i in range(12)]
    for window in (3, 5):
        got = f(xs, window)
        assert got == running_means(xs, window) and type(got[0]) is list
    g = trace(increasing_run)
    for seq in ([3, 1, 4, 1, 5, 9, 2, 6], [5, 4, 3, 2, 1, 0, 0, 0], list(range(8))):
        assert g(seq) == increasing_run(seq)
    assert all(fast_paths(f)) and all(fast_paths(g))


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def norm2(self):
        return self.x * self.x + self.y * self.y


def total_norm(pairs):
    s = 0.0
    for (x, y) in pairs:
        s += Point(x, y).norm2()
    return s


def test_a_class_used_inside_is_guarded_by_the_c_dispatcher():
    f = trace(total_norm, fuse_fma=False)
    pairs = [(1.0, 2.0), (3.0, -4.0), (0.5, 0.25)]
    assert f(pairs) == total_norm(pairs)
    assert all(fast_paths(f))                 # the class's methods: guards on its own dict
    original = Point.norm2
    try:
        Point.norm2 = lambda self: self.x + self.y       # a method replaced: CPython's result
        assert f(pairs) == total_norm(pairs) == 1.0 + 2.0 + 3.0 - 4.0 + 0.5 + 0.25
    finally:
        Point.norm2 = original
    assert f(pairs) == total_norm(pairs)
