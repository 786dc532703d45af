"""Recursive functions: the recursion unrolls in the trace on arguments known when the function is
compiled (int arguments it depends on are pinned: another value compiles again), checked
against CPython; recursion on values known only at run time is reported, not miscompiled."""
import pytest

from tests.support.oracle import outcome, same_outcome
from tracer import trace
from tracer.errors import UnsupportedError


def fib_pair(n, x):
    def fib(k):
        return k if k < 2 else fib(k - 1) + fib(k - 2)
    return fib(n) * x


def hanoi(n, x):
    moves = []

    def move(k, a, b, c):
        if k == 0:
            return
        move(k - 1, a, c, b)
        moves.append((a, c))
        move(k - 1, b, a, c)
    move(n, 0, 1, 2)
    return len(moves), moves[:3], x * len(moves)


def queens(n):
    full = (1 << n) - 1

    def solve(cols, left, right):
        if cols == full:
            return 1
        count = 0
        free = full & ~(cols | left | right)
        while free:
            bit = free & -free
            free ^= bit
            count += solve(cols | bit, ((left | bit) << 1) & full, (right | bit) >> 1)
        return count
    return solve(0, 0, 0)


def power_sum(xs, depth):
    """Recursion over a list's structure: the float items stay traced."""
    if depth == 0 or len(xs) == 1:
        return sum(xs)
    mid = len(xs) // 2
    return power_sum(xs[:mid], depth - 1) + 2.0 * power_sum(xs[mid:], depth - 1)


def on_a_float(x):
    def halve(y):
        return y if y < 1.0 else halve(y / 2.0)
    return halve(x)


@pytest.mark.parametrize("fn, args", [
    (fib_pair, (10, 1.5)), (fib_pair, (0, 2.0)), (hanoi, (5, 0.5)), (queens, (6,)), (queens, (1,)),
    (power_sum, ([1.0, 2.0, 3.0, 4.0, 5.0], 3)),
], ids=lambda x: getattr(x, "__name__", ""))
def test_recursion_unrolls_like_cpython(fn, args):
    expected = outcome(fn, args)
    got = outcome(trace(fullgraph=True)(fn), args)
    assert same_outcome(got, expected), (got, expected)


def test_pinned_argument_compiles_again():
    compiled = trace(fullgraph=True)(fib_pair)
    assert compiled(10, 1.0) == 55.0
    assert compiled(11, 1.0) == 89.0
    assert len(compiled.specializations) == 2


def test_recursion_on_a_run_time_value_is_reported():
    with pytest.raises(UnsupportedError, match="recursive call to .*halve.* known only at run time"):
        trace(fullgraph=True)(on_a_float)(100.0)
    assert trace(on_a_float)(100.0) == on_a_float(100.0)
