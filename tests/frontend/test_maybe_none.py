"""A variable that is None on some paths and a number on others (`best = None`, then `best = x`):
merged as a flag and a number (tracer.frontend.objects.MaybeNone), tested by `is None`, used as
a number where the flag says it is one (else Python runs the call), returned as None or the
number. Checked against CPython."""
import math

import pytest

from tests.support.oracle import outcome, same_outcome
from tracer import trace


def best_of(xs):
    best = None
    for x in xs:
        if best is None or x > best:
            best = x
    return best


def spare_gauss(n):
    spare = None
    total = 0.0
    for i in range(n):
        if spare is None:
            u = (i * 0.37) % 1.0 + 1e-9
            z, spare = math.sqrt(-2 * math.log(u)), math.sin(u)
        else:
            z, spare = spare, None
        total += z
    return total


def last_negative(xs):
    found = None
    for x in xs:
        if x < 0:
            found = x
    return found


def maybe_then_used(x, c):
    s = None
    if c > 0:
        s = x
    if s is not None:
        return s * 2
    return -1.0


def used_without_a_test(x, c):
    s = None
    if c > 0:
        s = x
    return s + 1.0          # a TypeError where s is None: Python's


@pytest.mark.parametrize("fn, args", [
    (best_of, ([3.0, 1.0, 4.0, 1.5] * 5,)), (best_of, ([],)), (best_of, ([2, 7, 1],)),
    (spare_gauss, (25,)), (spare_gauss, (0,)),
    (last_negative, ([1.0, -2.0, 3.0] * 7,)), (last_negative, ([1.0] * 20,)),
    (maybe_then_used, (1.5, 1)), (maybe_then_used, (1.5, -1)),
    (used_without_a_test, (1.5, 1)), (used_without_a_test, (1.5, -1)),
], ids=lambda x: getattr(x, "__name__", ""))
def test_like_cpython(fn, args):
    expected = outcome(fn, args)
    got = outcome(trace(fullgraph=True)(fn), args)
    assert same_outcome(got, expected), (got, expected)
