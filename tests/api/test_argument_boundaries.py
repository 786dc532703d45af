"""Arguments at the edges of what compiled code takes: the answer is CPython's (and NumPy's) for
each, with the same result type, exception and warnings; never an internal error."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from tracer import grad, trace


def _outcome(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(*args)
        except Exception as exc:
            return ("raises", type(exc), str(exc)), [str(w.message) for w in caught]
    return ("returns", type(result), repr(result)), [str(w.message) for w in caught]


def _like_python(f, *args):
    assert _outcome(trace(f), *args) == _outcome(f, *args)


NUMPY_SCALARS = [np.float64(1.5), np.float64(0.0), np.float32(2.5), np.int64(3), np.int32(2 ** 31 - 1),
                 np.int8(-128), np.uint8(255), np.bool_(True), np.float64("nan")]


def scale(x):
    return x * 2.0 + 1


def reciprocal(x):
    return 1 / x


def wrap(x):
    return x + x


def through_math(x):
    return math.sqrt(abs(x)) + math.floor(x)


@pytest.mark.parametrize("f", [scale, reciprocal, wrap, through_math])
@pytest.mark.parametrize("x", NUMPY_SCALARS, ids=repr)
def test_numpy_scalars_behave_as_in_numpy(f, x):
    _like_python(f, x)


def test_numpy_scalars_after_a_float_specialization():
    f = trace(reciprocal)
    assert f(2.0) == 0.5
    _like_python(reciprocal, np.float64(0.0))     # NumPy: inf and a RuntimeWarning, not ZeroDivisionError
    assert f(4.0) == 0.25


def test_gradient_at_numpy_scalars():
    g = grad(lambda x, y: x * x * y)
    assert g(np.float64(3.0), np.float32(2.0)) == 12.0
    with pytest.raises(TypeError, match="argument 0 \\('x'\\) is int"):
        g(np.int64(3), 2.0)             # as for a Python int: only floats are differentiated


@pytest.mark.parametrize("f", [lambda x: x * 2.0, lambda x: 2 * x, lambda x: x + 1, lambda x: -x])
def test_none_gets_pythons_type_error(f):
    _like_python(f, None)


def _depth() -> int:
    import sys
    frame, depth = sys._getframe(), 0
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


def _at_depth(n: int, fn, x):
    return fn(x) if n <= 0 else _at_depth(n - 1, fn, x)


def test_the_first_call_compiles_near_the_recursion_limit():
    import sys

    def body(x):
        s = 0.0
        for i in range(10):
            s += x * i
        return math.sqrt(s)
    f = trace(body)
    limit = sys.getrecursionlimit()
    room = limit - _depth() - 30
    assert _at_depth(room, f, 2.0) == _at_depth(room, body, 2.0)
    assert len(f.specializations) == 1
    assert sys.getrecursionlimit() == limit


def write_sum(x, out):
    out[0] = x.sum()
    return x * 2


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
def test_unpickled_arrays_compile_like_any_other(dtype):
    """An unpickled array (what multiprocessing passes) has a copy of its builtin dtype, not the
    dtype itself: it is read, and written, as the array it equals."""
    import pickle
    compiled = trace(write_sum, fullgraph=True)
    x = pickle.loads(pickle.dumps(np.arange(5).astype(dtype)))
    out, want_out = pickle.loads(pickle.dumps(np.zeros(2))), np.zeros(2)
    for _ in range(2):
        got, want = compiled(x, out), write_sum(x.copy(), want_out)
        assert got.dtype == want.dtype and np.array_equal(got, want) and np.array_equal(out, want_out)
    assert len(compiled.specializations) == 1
