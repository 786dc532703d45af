"""`array.array` objects made in traced code (tracer.frontend.made_arrays), against CPython: the
typecode's rules for stored items (conversion, float32 rounding, TypeError, OverflowError), the
methods, and the array returned as an `array.array` of the same typecode.
"""
from __future__ import annotations

from array import array

import pytest

import tracer


def running_totals(values):
    sums = array("l", [0] * (len(values) + 1))
    for i, v in enumerate(values):
        sums[i + 1] = sums[i] + v
    return sums


def csr_rows(entries, n):
    data, cols, starts = array("d"), array("l"), array("l", [0] * (n + 1))
    for (i, j) in sorted(entries):
        data.append(entries[i, j])
        cols.append(j)
        starts[i + 1] += 1
    for i in range(n):
        starts[i + 1] += starts[i]
    return data, cols, starts, data.typecode, cols.itemsize


def single_precision(xs):
    out = array("f")
    for x in xs:
        out.append(x * 3.0)
    out.extend([1, 2])
    return out, out.tolist(), isinstance(out, array)


def methods(x):
    a = array("d", [1.0, 2.0, 3.0, 2.0])
    a.insert(1, x)
    a.reverse()
    last = a.pop()
    first = a.pop(0)
    return a, last, first, a.count(2.0), a.index(3.0), len(a), list(a), sum(a)


def zeros(n, x):
    y = array("d", bytes(8 * n))
    y[n - 1] = x
    return y


def float_into_ints(x):
    a = array("l", [1, 2])
    a.append(x)
    return a


def narrow(k):
    a = array("b", [0])
    a[0] = k
    return a


CASES = [
    (running_totals, [([3, -1, 4, 1, -5],), ([],)]),
    (csr_rows, [({(0, 0): 2.0, (1, 1): 3.0, (2, 0): 1.5, (2, 2): -4.0}, 3)]),
    (single_precision, [([0.1, 1.0 / 3.0],)]),
    (methods, [(7.5,), (2.0,)]),
    (zeros, [(3, 2.5)]),
    (float_into_ints, [(1.5,)]),
    (narrow, [(5,), (300,), (-129,)]),
]


def outcome(fn, args):
    try:
        return fn(*args), None
    except Exception as exc:      # (the oracle's exception is compared)
        return None, exc


@pytest.mark.parametrize("fn, calls", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_arrays_made_in_traced_code_answer_as_cpython(fn, calls):
    traced = tracer.trace(fn)
    for args in calls + calls:
        (got, got_exc), (expected, expected_exc) = outcome(traced, args), outcome(fn, args)
        assert (type(got_exc), str(got_exc)) == (type(expected_exc), str(expected_exc))
        assert repr(got) == repr(expected), (got, expected)
    assert tracer.explain(fn, *calls[0]).compiled


def sliced(n):
    a = array("d", [1.0] * n)
    return a[1:]


def compared(x):
    return array("d", [x]) == array("d", [x])


@pytest.mark.parametrize("fn, what", [(sliced, "slicing"), (compared, "comparing")])
def test_what_an_array_made_in_traced_code_does_not_support_is_said(fn, what):
    with pytest.raises(tracer.UnsupportedError, match=what):
        tracer.trace(fn, fullgraph=True)(3)
    assert tracer.trace(fn)(3) == fn(3)
