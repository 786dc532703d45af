"""Loops that poll for Ctrl-C give Python's results wherever their polls fall.

A loop that counts up to a bound runs in strips (codegen.lower.lower_counted_loop): the strip
that ends early starts its stopped iteration again (a `for` over a range) or goes on with its
results (a `while` that tests last). A short loop whose trip count is not known runs its body in
copies between two counts of its work (codegen.lower._copies), leaving from any copy. These run
each kind across many strips and leave from every position, against plain Python.
"""
from __future__ import annotations

import numpy as np
import pytest

from codegen.kernel import POLL_BUDGET
from tracer import trace

STRIPS = 3 * POLL_BUDGET // 16 + 7          # iterations of a small body: several strips and a part


def range_sum(start, n, step):
    s = 0
    for i in range(start, n, step):
        s += i
    return s


def range_sum_by_3(start, n):
    s = 0
    for i in range(start, n, 3):
        s += i
    return s


def while_count_by_2(i, n):
    total = 0.0
    while i < n:
        total = total * 0.5 + i
        i += 2
    return total, i


def while_count(i, n, step):
    total = 0.0
    while i < n:
        total = total * 0.5 + i
        i += step
    return total, i


def with_break(n, stop):
    s = 0
    for i in range(n):
        if i == stop:
            break
        s += i * i
    return s


def indices(a, out):
    for i in range(a.shape[0]):
        out[i] = a[i] * 2.0 + 1.0
    return out


def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def halvings(x, floor):
    k = 0
    while x > floor:
        x *= 0.5
        k += 1
    return k, x


def nested(n, m):
    s = 0
    for i in range(n):
        j = 0
        while j < m:
            s += i * j - j
            j += 1
    return s


@pytest.mark.parametrize("start, n, step", [(0, STRIPS, 1), (-5, STRIPS, 3), (7, 7, 1), (10, 3, 1), (0, 1, 5),
                                            (-STRIPS, STRIPS, 2), (2**62, 2**62 + 100, 7)])
def test_a_range_over_many_strips(start, n, step):
    assert trace(range_sum, fullgraph=True)(start, n, step) == range_sum(start, n, step)
    assert trace(range_sum_by_3, fullgraph=True)(start, n) == range_sum_by_3(start, n)


@pytest.mark.parametrize("i, n, step", [(0, STRIPS, 1), (3, STRIPS, 4), (5, 5, 1), (9, 2, 1), (-STRIPS, 10, 3)])
def test_a_while_that_counts_over_many_strips(i, n, step):
    assert trace(while_count, fullgraph=True)(i, n, step) == while_count(i, n, step)
    assert trace(while_count_by_2, fullgraph=True)(i, n) == while_count_by_2(i, n)


def test_the_loops_here_run_in_strips_and_in_copies():
    """(What the other tests exercise: strips where the step is a constant, copies where not.)"""
    for fn, args, label in [(range_sum_by_3, (0, 10), "strip:"), (while_count_by_2, (0, 10), "strip:"),
                            (range_sum, (0, 10, 1), "loop_again.1:"), (collatz, (27,), "loop_again.1:")]:
        f = trace(fn, fullgraph=True)
        f(*args)
        assert label in f.specializations[0].compiled.llvm_ir, fn.__name__


@pytest.mark.parametrize("stop", [0, 1, 65535, 65536, 65537, STRIPS - 1, STRIPS + 5])
def test_a_break_in_a_counted_loop(stop):
    assert trace(with_break, fullgraph=True)(STRIPS, stop) == with_break(STRIPS, stop)


@pytest.mark.parametrize("size", [0, 1, 7, 100_003, 300_001])
def test_an_array_loop_over_many_strips(size):
    a = np.linspace(-1.0, 1.0, size)
    got, want = trace(indices, fullgraph=True)(a, np.zeros(size)), indices(a, np.zeros(size))
    assert np.array_equal(got, want)


def test_a_loop_run_in_copies_leaves_from_each_copy():
    f = trace(collatz, fullgraph=True)
    assert [f(n) for n in range(1, 3000)] == [collatz(n) for n in range(1, 3000)]
    g = trace(halvings, fullgraph=True)
    for floor in [1.0, 0.3, 1e-5, 1e-300, 0.0]:
        for x in [0.5, 1.0, 3.0, 1e10, 7.5e300]:
            assert g(x, floor) == halvings(x, floor)


def test_an_outer_loop_around_a_counted_loop():
    f = trace(nested, fullgraph=True)
    for n, m in [(0, 5), (3, 0), (40, 7), (3, STRIPS)]:
        assert f(n, m) == nested(n, m)
