"""A call that writes into its arguments and then fails leaves them as CPython would.

When compiled code cannot finish a call (an int past 64 bits, a division by zero, an index out of
range), the exact answer comes from CPython: the exception, or the Python function run again.
Either way each write of the call happens once: arguments written before the failure hold what
CPython leaves there, and writes are never applied twice.
"""
import copy
import math

import numpy as np
import pytest

from tracer import trace


def rows_doubled(x, n):
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            x[i, j] *= 2
    return n * n


def bumped_then_indexed(x, n):
    x += 1
    return x[n]


def through_a_view(x, n):
    y = x[1:]
    y[0] = 9.0
    return 1 // n


def while_true_loop(x, n):
    i = 0
    while True:
        x[i] += 1
        i += 1
        if i == len(x):
            break
    return 10 % n


def two_arrays(x, y, n):
    for i in range(len(x)):
        x[i] = y[i] * 2
        y[i] = 0
    return math.sqrt(n)


def running_sum(x, n):
    s = 0
    for i in range(len(x)):
        x[i] = x[i] + n
        s += x[i] * n
    return s


def list_and_array(x, values, n):
    for i in range(len(values)):
        values[i] += 1.0
        x[i] = values[i]
    return 1 / n


def element_then_index(x, n):
    x[0] = 5.0
    return x[n]


CASES = [
    (rows_doubled, (np.ones((2, 3)), 2), (np.ones((2, 3)), 2**40)),
    (bumped_then_indexed, (np.ones(3), 1), (np.ones(3), 5)),
    (through_a_view, (np.ones(3), 1), (np.ones(3), 0)),
    (while_true_loop, (np.arange(3), 2), (np.arange(3), 0)),
    (two_arrays, (np.zeros(3), np.ones(3), 1.0), (np.zeros(3), np.ones(3), -1.0)),
    (running_sum, (np.arange(3), 2), (np.arange(3), 2**61)),
    (list_and_array, (np.zeros(2), [1.0, 2.0], 1), (np.zeros(2), [1.0, 2.0], 0)),
    (element_then_index, (np.ones(2), 1), (np.ones(2), 7)),
]


def outcome(fn, args):
    try:
        return "returned", repr(fn(*args))
    except Exception as e:
        return type(e).__name__, str(e)


def assert_same_arguments(got, want):
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w)
        else:
            assert g == w


@pytest.mark.parametrize("first_call", ["failing", "after a good call"])
@pytest.mark.parametrize("fn, good, failing", CASES, ids=[c[0].__name__ for c in CASES])
def test_arguments_hold_what_cpython_leaves(fn, good, failing, first_call):
    traced = trace(fn)
    if first_call == "after a good call":
        traced(*copy.deepcopy(good))
    want_args, got_args = copy.deepcopy(failing), copy.deepcopy(failing)
    with np.errstate(all="ignore"):
        want = outcome(fn, want_args)
        got = outcome(traced, got_args)
    assert got == want
    assert_same_arguments(got_args, want_args)
