"""Lists of run-time length whose items differ in type (tracer.frontend.dynlists.Mixed), against
CPython: logs of ints, floats, strings and None appended on data-dependent paths, returned and
measured; reading an item whose type is known only at run time is a clear UnsupportedError.
"""
from __future__ import annotations

import pytest

import tracer


def event_log(xs):
    log = []
    for x in xs:
        if x > 0.0:
            log.append(x)
        elif x == 0.0:
            log.append("zero")
        else:
            log.append(None)
        if x > 10.0:
            log.append(int(x))
    return log, len(log)


def labelled(xs):
    out = []
    for i, x in enumerate(xs):
        if x >= 0.0:
            out.append((i, x))
        else:
            out.append((i, "negative"))
    return out


def flags_and_counts(ns):
    seen = []
    total = 0
    for n in ns:
        if n % 3 == 0:
            seen.append(True)
        else:
            seen.append(n)
        total += n
    seen[0] = "first"
    return seen, total


CASES = [
    (event_log, [([1.0, 0.0, -2.0, 12.5],), ([3.0],), ([-1.0, 0.0],), ([],)]),
    (labelled, [([1.5, -2.0, 0.0],), ([-1.0],)]),
    (flags_and_counts, [([3, 4, 5, 6],), ([1, 2],)]),
]


@pytest.mark.parametrize("fn, calls", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_lists_of_items_of_different_types_answer_as_cpython(fn, calls):
    traced = tracer.trace(fn, fullgraph=True)
    for args in calls + calls:
        got, expected = traced(*args), fn(*args)
        assert got == expected and repr(got) == repr(expected), (got, expected)


def first_entry(xs):
    log = []
    for x in xs:
        if x > 0.0:
            log.append(x)
        else:
            log.append(None)
    return log[0]


def test_reading_an_item_of_unknown_type_compiles():
    # a number whose type is known only at run time (tracer.frontend.mixed_numbers); where the
    # item is None, the compiled call runs the Python function
    traced = tracer.trace(first_entry, fullgraph=True)
    for xs in ([1.0, -1.0], [-1.0, 2.0], [3.0, 4.0]):
        assert repr(traced(xs)) == repr(first_entry(xs))
    assert [type(s).__name__ for s in traced.specializations] == ["Specialization"]
