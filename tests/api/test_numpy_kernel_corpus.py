"""NumPy kernels written as scientific code is written (`tests/support/numpy_kernels.py`), traced in
the default mode, against the same function run by NumPy.

For each kernel, `trace(fn, fuse_fma=False)` is called twice (the call that compiles, then one
that goes through the dispatcher), each time on fresh example arguments, and must give what the
plain function gives on deep copies of them: results of the same kind (an array of NumPy's dtype
and shape, or a scalar where NumPy gives a scalar), float values within rtol 1e-12, integers and
booleans exactly, the same exception type and message, and the same contents in the argument
arrays afterwards (kernels may update them in place). What the tracer cannot compile runs as
Python or breaks the graph, so every mismatch is a bug (or a documented limit, such as sums added in
order): such a kernel stays in the corpus with a strict xfail saying what differs and why.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest
from numpy_kernels import KERNELS

import tracer

RTOL = 1e-12

# kernel name -> why the traced result differs from NumPy's
XFAIL: dict[str, str] = {
    "cross_correlation_lag0_complex64": "a complex64 sum: traced code sums each part in the real pairwise order, "
                                        "NumPy in its complex one (4 running sums, not 8): float32 results "
                                        "differ in the last bits",
}


def _cases():
    for fn, make_args in KERNELS:
        reason = XFAIL.get(fn.__name__)
        marks = (pytest.mark.xfail(reason=reason, strict=True),) if reason else ()
        yield pytest.param(fn, make_args, id=fn.__name__, marks=marks)


def outcome(fn, args):
    """(result, None) or (None, the exception raised)."""
    try:
        return fn(*args), None
    except Exception as exc:        # the exception is what gets compared
        return None, exc


def check_same(got, expected, where):
    """Traced vs NumPy: the same structure and kind of value, floats within RTOL, the rest exact."""
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), f"{where}: {got!r} vs {expected!r}"
        for k, (g, e) in enumerate(zip(got, expected)):
            check_same(g, e, f"{where}[{k}]")
        return
    if expected is None:
        assert got is None, f"{where}: {got!r} where NumPy gives None"
        return
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), f"{where}: {type(got).__name__} where NumPy gives an ndarray"
        assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} vs {expected.dtype}"
        assert got.shape == expected.shape, f"{where}: shape {got.shape} vs {expected.shape}"
        kind = expected.dtype.kind
    else:
        assert isinstance(expected, (bool, int, float, np.generic)), f"{where}: unexpected result {expected!r}"
        assert isinstance(got, (bool, int, float, np.generic)), \
            f"{where}: {type(got).__name__} where NumPy gives a scalar ({type(expected).__name__})"
        kind = np.asarray(expected).dtype.kind
        assert np.asarray(got).dtype.kind == kind, \
            f"{where}: {type(got).__name__} {got!r} vs {type(expected).__name__} {expected!r}"
    if kind in "fc":
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=0, err_msg=where)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=where)


def check_call(traced, fn, args, call):
    numpy_args, traced_args = copy.deepcopy(args), copy.deepcopy(args)
    expected, expected_exc = outcome(fn, numpy_args)
    got, got_exc = outcome(traced, traced_args)
    if expected_exc is not None:
        assert got_exc is not None, f"{call}: returned {got!r} where NumPy raises {expected_exc!r}"
        assert (type(got_exc), str(got_exc)) == (type(expected_exc), str(expected_exc)), \
            f"{call}: raised {got_exc!r} where NumPy raises {expected_exc!r}"
    else:
        if got_exc is not None:
            raise AssertionError(f"{call}: raised {got_exc!r} where NumPy returns {expected!r}") from got_exc
        check_same(got, expected, f"{call}: result")
    for k, (g, e) in enumerate(zip(traced_args, numpy_args)):
        if isinstance(e, np.ndarray):
            check_same(g, e, f"{call}: argument {k} after the call")


@pytest.mark.parametrize("fn, make_args", list(_cases()))
def test_traced_kernel_matches_numpy(fn, make_args):
    traced = tracer.trace(fn, fuse_fma=False)
    for call in ("first call", "second call"):
        check_call(traced, fn, make_args(), call)


def test_corpus_is_large_and_deterministic():
    assert len(KERNELS) >= 60
    for fn, make_args in KERNELS:
        first, second = make_args(), make_args()
        assert all(a is not b for a, b in zip(first, second) if isinstance(a, np.ndarray)), fn.__name__
        for a, b in zip(first, second):
            np.testing.assert_array_equal(a, b, err_msg=fn.__name__)
