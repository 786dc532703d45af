"""Read-only arrays stay read-only: a compiled function that writes into an argument array whose
`flags.writeable` is False raises NumPy's own ValueError, as the Python function does, and changes
nothing; a writeable array (or a read-only one the function only reads) keeps the native path.

The oracle is the plain function run by NumPy: the same result or the same exception type and
message, and the same contents left in every argument, on the call that compiles and on a
specialization compiled before for writeable arrays.
"""
from __future__ import annotations

import numpy as np
import pytest

import tracer.api
from tracer import trace


def read_only(a):
    a.flags.writeable = False
    return a


def sgd(w, g):
    w -= 0.1 * g
    return w


def set_element(x, v):
    x[0] = v
    return x.sum()


def set_slice(x, y):
    x[1:3] = y
    return x


def add_into(x, y):
    x += y
    return x


def write_a_view(x):
    v = x[::2]
    v[0] = 7.0
    return x


def _helper(a):
    a[1] = 5.0


def write_in_a_callee(x):
    _helper(x)
    return x.sum()


def write_if(x, flag):
    if flag > 0:
        x[0] = 1.0
    return x.sum()


def write_if_large(x, level):
    if x.sum() > level:
        x[0] = 1.0
    return x.sum()


def write_both(x, y):
    x[0] = 1.0
    y[0] = 2.0
    return x.sum() + y.sum()


def only_read(x):
    return x.sum() * 2.0


class Box:
    def __init__(self, w):
        self.w = w


def write_an_attribute(box, g):
    w = box.w
    w -= g
    return w.sum()


def write_a_list_item(ws, g):
    ws[0][0] = g
    return ws[1].sum()


def _immutable():
    return np.frombuffer(b"\0" * 32)           # over an immutable bytes object


CASES = {
    "sgd": (sgd, lambda: (read_only(np.arange(4.0)), np.ones(4))),
    "sgd_bytes": (sgd, lambda: (_immutable(), np.ones(4))),
    "sgd_broadcast": (sgd, lambda: (np.broadcast_to(np.ones(1), (4,)), np.ones(4))),
    "set_element": (set_element, lambda: (read_only(np.arange(4.0)), 3.0)),
    "set_element_view": (set_element, lambda: (read_only(np.ones(8)[::2]), 3.0)),
    "set_slice": (set_slice, lambda: (read_only(np.arange(4.0)), np.ones(2))),
    "add_into": (add_into, lambda: (read_only(np.arange(4.0)), np.ones(4))),
    "write_a_view": (write_a_view, lambda: (read_only(np.arange(4.0)),)),
    "write_in_a_callee": (write_in_a_callee, lambda: (read_only(np.arange(4.0)),)),
    "write_if_not_taken": (write_if, lambda: (read_only(np.arange(4.0)), 0)),
    "write_if_taken": (write_if, lambda: (read_only(np.arange(4.0)), 1)),
    "write_if_large_not_taken": (write_if_large, lambda: (read_only(np.arange(4.0)), 100.0)),
    "write_if_large_taken": (write_if_large, lambda: (read_only(np.arange(4.0)), 0.0)),
    "write_both": (write_both, lambda: (np.zeros(3), read_only(np.zeros(3)))),
    "only_read": (only_read, lambda: (read_only(np.arange(4.0)),)),
    "attribute": (write_an_attribute, lambda: (Box(read_only(np.arange(4.0))), np.ones(4))),
    "list_item": (write_a_list_item, lambda: ([read_only(np.arange(3.0)), np.ones(3)], 4.0)),
}


def writeable_copy(x):
    if isinstance(x, np.ndarray):
        return np.array(x)
    if isinstance(x, Box):
        return Box(np.array(x.w))
    if isinstance(x, list):
        return [writeable_copy(e) for e in x]
    return x


def contents(x):
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, Box):
        return contents(x.w)
    if isinstance(x, list):
        return [contents(e) for e in x]
    return x


def outcome(fn, args):
    try:
        result = fn(*args)
        result = result.tolist() if isinstance(result, np.ndarray) else float(result)
        got = ("return", result)
    except ValueError as exc:            # the outcome under test: NumPy's refusal
        got = ("raise", type(exc), str(exc))
    return got, [contents(a) for a in args]


@pytest.mark.parametrize("case", CASES)
def test_read_only_arrays_as_numpy(case):
    fn, make = CASES[case]
    expected = outcome(fn, make())
    compiled = trace(fn)
    assert outcome(compiled, make()) == expected       # the call that compiles
    assert outcome(compiled, make()) == expected       # the specialization it made


@pytest.mark.parametrize("case", CASES)
def test_read_only_arrays_meet_a_specialization_made_for_writeable_ones(case):
    fn, make = CASES[case]
    compiled = trace(fn)
    warm = tuple(writeable_copy(a) for a in make())
    assert outcome(compiled, warm) == outcome(fn, tuple(writeable_copy(a) for a in make()))
    assert outcome(compiled, make()) == outcome(fn, make())


def test_an_immutable_buffer_is_never_written():
    data = b"\0" * 32
    w = np.frombuffer(data)
    compiled = trace(sgd)
    compiled(np.zeros(4), np.ones(4))
    with pytest.raises(ValueError, match="read-only"):
        compiled(w, np.ones(4))
    assert data == b"\0" * 32 and not w.any()


def test_writeable_arrays_and_read_only_ones_that_are_only_read_stay_native(monkeypatch):
    runs = []
    run_plain = tracer.api.run_plain

    def counting(py_func, *args, **kwargs):     # what a specialization runs to answer in Python
        runs.append(py_func.__name__)
        return run_plain(py_func, *args, **kwargs)
    monkeypatch.setattr(tracer.api, "run_plain", counting)
    compiled_sgd, compiled_read = trace(sgd), trace(only_read)
    w = np.arange(4.0)
    compiled_sgd(w.copy(), np.ones(4))
    compiled_read(w)
    compiled_sgd(w, np.ones(4))
    assert np.array_equal(w, np.arange(4.0) - 0.1)
    assert compiled_read(read_only(np.arange(4.0))) == 12.0
    assert runs == []
    with pytest.raises(ValueError, match="read-only"):
        compiled_sgd(read_only(np.arange(4.0)), np.ones(4))
    assert runs == ["sgd"]                 # the Python function raised NumPy's error
