"""Loops whose exit a short-circuit condition decides (tracer.frontend.branches, tracer.frontend.flow).

In `if k0 > 1 or (1 < n and x0): break` the jump on a traced `1 < n` goes to the test of `x0`,
inside the loop, yet only one side of the whole condition stays in the loop: the jump decides
whether the loop ends (`FlowGraph.loops_left`), so a `while` being unrolled becomes a `loop` op
there. These programs once stopped the tracer with an internal error (a KeyError in its unroll
bookkeeping); each must now return or raise what CPython does, on every Python version.
"""
from __future__ import annotations

import math

import pytest
from like_python import same

from tracer import trace


def or_break(n, m):                      # the program the random-program fuzzer found
    x0 = 1e-200
    k0 = 0
    while True:
        k0 += 1
        if k0 > 1 or (1 < n and x0):
            break
        x0 = 0.001 ** 2.0
    return -(m / k0)


def and_break(a, n):
    k0 = 0
    x = a
    while True:
        k0 += 1
        if k0 > n and x > 1.0:
            break
        x = x * 0.5 + 1.0
        if k0 > 50:
            break
    return x, k0


def not_or_break(a, n):
    k0 = 0
    x = a
    while True:
        k0 += 1
        if not (k0 < n or x < 0.0):
            break
        x -= 1.0
        if k0 > 30:
            break
    return x + k0


def or_continue(a, n):
    k0 = 0
    s = 0.0
    while True:
        k0 += 1
        if k0 > n + 3:
            break
        if k0 % 2 == 0 or (a > 0.0 and k0 > 2):
            continue
        s += a * k0
    return s


def nested_breaks(a, n):
    s = 0.0
    k0 = 0
    while True:
        k0 += 1
        if k0 > 4:
            break
        k1 = 0
        while True:
            k1 += 1
            if k1 > n or (a > 1.0 and k1 > 2):
                break
            if a < 0.0 and k1 > 1:
                continue
            s += a + k1
        if s > 10.0 or k0 > n:
            break
    return s, k0


def while_else(a, n):
    k0 = 0
    s = 0.0
    while k0 < n:
        k0 += 1
        if a > 1.0 and k0 > 2:
            break
        s += a
    else:
        s = -s
    return s


def return_from_inner_for(a, n):
    k0 = 0
    s = 0.0
    while True:
        k0 += 1
        if k0 > 5:
            break
        for i in range(n):
            if a > i or s > 100.0:
                return s + i
            s += 1.0
    return -s


def or_break_in_constant_for(a, n):
    s = 0.0
    for i in range(4):
        if i > 2 or (a > 0.0 and i > n):
            break
        s += a
    return s


def or_return(a, n):
    k0 = 0
    while True:
        k0 += 1
        if k0 > n or a > k0:
            return k0 * 2.0
        a = a - 0.5


def return_from_inner_while(a, n):
    """The outer `while True` ends only by the inner loop's return: the outer loop is built."""
    k = 0
    while True:
        k += 1
        j = 0
        while j < n:
            if a > j + k:
                return j + k
            j += 1


def peeled_or_break(x, n):
    """`acc` is an int before the first iteration and a float after it: that iteration is
    peeled off, and both tests of its exit condition fork in it."""
    acc = 0
    i = 0.0
    while True:
        if i >= x or n < 0:
            break
        acc = acc + 1.5
        i += 1.0
    return i


def or_break_raises(a, n):
    k0 = 0
    while True:
        k0 += 1
        if k0 > n or a > 2.0:
            break
    return a / (k0 - 1)


def exit_test_met_again_next_iteration(a, b, m):
    """The sides of the jump on `k0 >= m` meet at the test of `k0 > m or ...` only in the next
    iteration: that jump decides to leave the loop too (once an ever deeper trace that never
    ended)."""
    x0 = a + 0.5
    k0 = 0
    while True:
        k0 += 1
        if ((not (b < b == x0) and 3.0 > b) or k0 >= m) and (k0 > m or 0.001 <= b):
            break
        b *= 2.0
        k1 = 0
        while True:
            k1 += 1
            if x0 >= a or k1 > k0:
                break
    return b


CASES = [
    (or_break, [(3, 5), (0, 5), (1, 2), (-4, 7), (2, 0)]),
    (and_break, [(3.0, 5), (0.5, 2), (-1.0, 3), (2.0, 0), (math.nan, 4), (0.0, 40)]),
    (not_or_break, [(3.0, 5), (0.5, 2), (-1.0, 3), (2.0, 0), (math.nan, 4), (100.0, 40)]),
    (or_continue, [(3.0, 5), (0.5, 2), (-1.0, 3), (2.0, 0), (math.nan, 4), (-2.0, 40)]),
    (nested_breaks, [(3.0, 5), (0.5, 2), (-1.0, 3), (2.0, 0), (math.nan, 4), (0.25, 30)]),
    (while_else, [(3.0, 5), (0.5, 2), (-1.0, 3), (2.0, 0), (math.nan, 4), (1.0, 40)]),
    (return_from_inner_for, [(3.0, 5), (0.5, 2), (-1.0, 3), (2.0, 0), (math.nan, 4), (-5.0, 30)]),
    (or_break_in_constant_for, [(3.0, 5), (0.5, 2), (-1.0, 3), (2.0, 0), (math.nan, 4)]),
    (or_return, [(3.0, 5), (0.5, 2), (-1.0, 3), (2.0, 0), (math.nan, 4), (-30.0, 50)]),
    (return_from_inner_while, [(3.0, 5), (2.5, 2), (7.5, 3), (20.0, 1)]),
    (peeled_or_break, [(3.0, 5), (0.5, 2), (-1.0, 3), (2.0, 0), (2.0, -1), (30.0, 1)]),
    (or_break_raises, [(3.0, 5), (0.5, 2), (1.0, 0), (math.nan, 4)]),
    (exit_test_met_again_next_iteration, [(0.0, 0.75, 2), (-math.inf, 632966.3, 2), (-0.75, 805703.7, 10),
                                          (990465.1, 7.8, -2), (1.0, 0.5, 40)]),
]


@pytest.mark.parametrize("fn, calls", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_short_circuit_loop_exit_matches_cpython(fn, calls):
    for args in calls:
        same(fn, *args)


def test_or_break_is_one_compiled_loop():
    """The `while True` of `or_break` compiles once, to a `loop` op, for every trip count."""
    compiled = trace(or_break, fuse_fma=False)
    for n in (3, 0, 1, -4, 2, 9):
        assert compiled(n, 5) == or_break(n, 5)
    assert len(compiled.specializations) == 1
    assert "loop" in {v.op for v in compiled.specializations[0].trace.function.walk()}
