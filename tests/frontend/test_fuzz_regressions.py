"""Programs the random-program fuzzer (`python -m tests.fuzz`) found the front end getting wrong,
reduced: each must return or raise what CPython and NumPy do, leave the argument arrays as they
do, or be rejected with a clear UnsupportedError (never an internal error or an IR that does not
verify).
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from like_python import bits, outcome

from tracer import UnsupportedError, trace


def check(fn, *args):
    """`trace(fn)` against `fn` on copies of `args`: the outcome and the arrays afterwards."""
    expected_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    expected = outcome(fn, *expected_args)
    got = outcome(trace(fn, fuse_fma=False), *got_args)
    if got[0] == "raise" and issubclass(got[1], UnsupportedError):
        pytest.fail(f"{fn.__name__}{args}: the tracer cannot compile it: {got[2]}")
    if expected[0] == "return":
        assert got[0] == "return" and _same(got[1], expected[1]), (got, expected)
    else:
        assert got == expected
    for g, e in zip(got_args, expected_args):
        if isinstance(e, np.ndarray):
            assert np.array_equal(g, e, equal_nan=True), (g, e)


def _same(g, e) -> bool:
    if isinstance(e, np.ndarray):
        return isinstance(g, np.ndarray) and g.dtype == e.dtype and np.array_equal(g, e, equal_nan=True)
    if isinstance(e, tuple):
        return isinstance(g, tuple) and len(g) == len(e) and all(_same(a, b) for a, b in zip(g, e))
    return bits(float(g)) == bits(float(e))


def for_that_always_breaks(x, n):
    """No way back to the loop's header: once an internal KeyError (a loop op was built for it)."""
    s = 0.0
    for i0 in range(0, len(x)):
        s += x[i0]
        break
    return s + n


def array_after_loop(x):
    """The code after a compiled loop runs after the loop op, so an array it makes need not
    leave the loop's body (once an IR that did not verify)."""
    acc = 0.0
    for i in range(len(x)):
        acc += x[i]
    return x * acc


def rolled_back_with_writable_copy(x, s, n):
    """`x *= ...` in the first, unrolled, iterations inserts the argument's copy at the top of the
    function; rolling back to build the loop once dropped the value before the loop instead."""
    t0 = np.zeros_like(x, dtype=np.float64)
    r0 = math.pi * s
    k0 = 0
    while True:
        k0 += 1
        if (r0 > float(t0.sum()) or k0 >= 8) and (k0 > 8 or r0 < 1.0):
            break
        x *= 2
    return k0 + n


def restart_from_a_settled_branch(x, y, s, n):
    """The loop's exit turns out traced while a branch's outcome is being settled (once a
    RestartLoop that escaped to the top)."""
    t0 = np.zeros_like(x, dtype=np.float64)
    k0 = 0
    while k0 < 8 and s != float(y.max()):
        k0 += 1
        for _i0 in range(k0 - 1, n):
            t0[n] = 1.0
            if math.isinf(3.0):
                pass
            else:
                break
    return t0


def update_in_branch(x, s):
    """In place in a data-dependent branch: the caller's array and the result see the update."""
    if s > 0:
        x += 1
    return x


def update_in_unrolled_loop(x, s):
    k = 0
    while k < 30:
        k += 1
        x += 1.0
        if s < k:
            break
    return x


def unused_comparison(x, y):
    """Dead, but its operands' sizes may not match: NumPy's ValueError must still come."""
    t0 = x
    m0 = y <= t0.astype(np.float64)     # noqa: F841
    return 0.5


CASES = [
    (unused_comparison, [(np.array([False, False]), np.array([-np.inf, -2.0, 0.75])),
                         (np.array([True, False]), np.array([1.0, 2.0]))]),
    (for_that_always_breaks, [(np.array([1.0, 2.0]), 3), (np.array([]), 3)]),
    (array_after_loop, [(np.array([1.0, 2.0]),), (np.array([]),), (np.array([np.nan, -0.0, 3.0]),)]),
    (rolled_back_with_writable_copy, [(np.array([0, 3, 2, 0, -4]), -1.0, 19), (np.array([1, 2]), 5.0, 1)]),
    (restart_from_a_settled_branch, [(np.array([1.0, 0.5]), np.array([5.49, 3.63]), 1.0, 1),
                                     (np.array([1.0, 0.5]), np.array([1.0, 3.0]), 3.0, 0)]),
    (update_in_branch, [(np.array([8, 7]), 2.0), (np.array([8, 7]), -6.5), (np.array([8.0, 7.0]), 2.0)]),
    (update_in_unrolled_loop, [(np.array([1.0, 2.0]), 3.5), (np.array([1.0]), 50.0), (np.array([1.0]), -1.0)]),
]


@pytest.mark.parametrize("fn, calls", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_fuzzer_finding_matches_numpy(fn, calls):
    for args in calls:
        check(fn, *args)


def break_then_more_loops(x, y, s):
    """The inner loop's two exits (its break and its end) meet right after it: what follows runs
    once for both, not once for each (it was traced 2**10 times: an IR of 200,000 values)."""
    t0 = np.zeros_like(x)
    r1 = 1.0
    for i0 in range(10):
        for i1 in range(len(y)):
            r1 += float(y[i1])
            if r1 > s:
                break
        for _i2 in range(len(x)):
            t0 += y / (i0 + 1.0)
    return t0, r1


def test_loop_exits_meet_before_what_follows():
    args = (np.array([5.0, np.nan, 1.0]), np.array([1.0, 2.0, 1.0]), 3.0)
    check(break_then_more_loops, *args)
    compiled = trace(break_then_more_loops, fuse_fma=False)
    compiled(*args)
    assert sum(1 for _ in compiled.specializations[0].trace.function.walk()) < 5000


def test_array_made_in_a_loop_and_returned():
    """An array made inside a loop's body leaves it (returned from inside two loops)."""
    def early_array_return(x, n):
        for i in range(len(x)):
            for j in range(n):
                if x[i] > j:
                    return x * j
        return x

    for args in [(np.array([1.0, -2.0]), 3), (np.array([-1.0, -2.0]), 3), (np.array([5.0]), 0)]:
        check(early_array_return, *args)


def update_then_fail_in_a_loop(x, s):
    """x *= ... in a `while True` whose first trace is cut, then a float // 0: the update went
    into x's copy (not into x itself), so running the Python function again writes x once."""
    t1 = np.zeros_like(x)
    while True:
        x *= np.abs(x - t1)
        if math.cos(s) // 0.0 > s:
            pass


def test_update_in_a_cut_loop_is_written_once():
    check(update_then_fail_in_a_loop, np.array([5]), 2.0)


def assign_to_itself(x):
    x[:] = x            # writes nothing, but NumPy refuses it on a read-only array
    return 1.0


def test_assigning_an_array_to_itself_is_a_write():
    x = np.array([1, 2])
    x.flags.writeable = False
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        trace(assign_to_itself)(x)
    check(assign_to_itself, np.array([3.0, 4.0]))


def float32_array_out_of_a_loop_that_may_break(x, s, n):
    """A loop with a raise and a break carries a float32 array out (its placeholder on the way
    out that computes nothing must be a float32 array too)."""
    t0 = np.zeros_like(x, dtype=np.float64)
    m0 = np.zeros_like(x, dtype=np.bool_)
    r1 = 10.0
    k0 = 0
    while s != 3.0 or n <= 1:
        k0 += 1
        if k0 > len(x):
            break
        for _ in range(len(x)):
            if r1 < float(np.mean(t0)):
                raise ZeroDivisionError("out of range")
            r1 += s
            x[-1] = 0.001 // s
    return m0.astype(np.float32)


def test_float32_arrays_leave_loops():
    for x in (np.array([], dtype=np.float32), np.array([1.0, 2.0], dtype=np.float32)):
        check(float32_array_out_of_a_loop_that_may_break, x, -3.0, 1)


def many_late_meeting_conditions(x, s, n):
    """Conditions whose paths meet only at the end of a `while True` loop fork into tens of
    thousands of paths: past MAX_FORKS the call runs as Python (here: its IndexError)."""
    t0 = np.zeros_like(x, dtype=np.float64)
    m0 = np.zeros_like(x, dtype=np.bool_)
    r0 = float(t0[0])
    k0 = 0
    while True:
        k0 += 1
        s = 1 / n
        for _ in range(len(x)):
            if math.isinf(s / math.atan2(s, 10.0)):
                x[:] = s == (-r0)
                continue
        if ((r0 >= r0 and (t0.sum() <= 0.5 > t0.sum() and float(t0.sum()) > np.mean(t0))) or k0 >= 7) and (
                k0 > 7 or k0 != n):
            break
    return np.where(m0, t0, t0), math.atan2(r0, float(t0[8]))


def test_too_many_paths_run_as_python():
    check(many_late_meeting_conditions, np.array([False, False, False]), 7.13, 5)


@pytest.mark.parametrize("fn", [
    lambda x: np.clip(x, 1e300, 1e300),
    lambda x: x + 1e300,
    lambda x: np.maximum(x, 1e300),
    lambda x: np.full_like(x, 1e300),
    lambda x: x[0] * 1e300,
])
def test_python_float_cast_to_float32_warns_when_it_overflows(fn):
    """A Python float too large for float32 becomes inf in a float32 operation, and NumPy warns
    "overflow encountered in cast" (once the fuzzer's np.clip(x, 1e300, 1e300))."""
    x = np.ones(3, np.float32)
    with pytest.warns(RuntimeWarning, match="overflow encountered in cast"):
        got = trace(fn)(x)
    with pytest.warns(RuntimeWarning, match="overflow encountered in cast"):
        want = fn(x)
    assert _same(got, want)


def test_float32_rounding_of_a_python_float_in_range_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = np.ones(3, np.float32)
        assert _same(trace(lambda x: np.clip(x, 0.1, 3e38) * 1e30)(x), np.clip(x, 0.1, 3e38) * 1e30)


def test_dot_and_matmul_sums_start_at_positive_zero():
    """NumPy's dot and matmul (and BLAS) start each sum at +0.0: products that are all -0.0 sum
    to 0.0, where np.sum gives -0.0."""
    x = np.array([-1.0, -1e300])
    check(lambda x: np.dot(x, np.zeros_like(x)), x)
    check(lambda x: x @ np.zeros((2, 3)), x)
    check(lambda x: np.zeros((7, 2)) @ np.stack([x] * 9, axis=1), x)


def test_where_of_scalars_is_a_0d_array():
    check(lambda x: np.where(x[0] > 1.0, 2.0, 3.0), np.ones(2))
    check(lambda x: np.where(x == 1.0, x, x + x), np.array(-4.75))


def test_dot_of_two_single_elements_is_their_product():
    """NumPy's dot multiplies arrays of one element each (no sum from +0.0: -0.0 stays)."""
    for shapes in [((1,), (1,)), ((1, 1), (1,)), ((1, 1), (1, 1)), ((1,), (1, 3)), ((2, 1), (1,))]:
        x, y = np.zeros(shapes[0]), -0.5 * np.ones(shapes[1])
        check(lambda x, y: np.dot(x, y), x, y)


def test_an_unused_numpy_scalar_result_still_warns():
    def f(x, s):
        t0 = np.zeros_like(x, dtype=np.float64)
        r1 = np.dot(t0, t0) * s          # noqa: F841 (0.0 * inf: NumPy warns, though r1 is never used)
        return 1.0
    with pytest.warns(RuntimeWarning, match="invalid value encountered in scalar multiply"):
        assert trace(f)(np.zeros(3), math.inf) == 1.0


def test_float32_raised_past_a_branch_returns_a_float32_scalar():
    def f(x, s):
        t1 = x
        if s:
            raise ValueError
        return t1 - t1
    check(f, np.array(0.5, dtype=np.float32), 0.0)
    with pytest.raises(ValueError):
        trace(f)(np.array(0.5, dtype=np.float32), 1.0)


def test_a_python_float_or_a_numpy_scalar_chosen_by_a_branch_is_not_taken_for_weak():
    """`(r if r else t[0]) + x32`: float32 with a Python float, float64 with t[0] (NumPy's
    scalar): the trace cannot give both, so it refuses rather than pick float32."""
    def f(x, t, s):
        r = float(s)
        return (r if r else t[0]) + x
    with pytest.raises(UnsupportedError):
        trace(f, fullgraph=True)(np.ones(3, np.float32), np.zeros(2), 0.0)
    got = trace(f)(np.ones(3, np.float32), np.zeros(2), 0.0)
    assert got.dtype == np.float64
