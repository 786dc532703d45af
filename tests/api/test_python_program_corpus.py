"""Plain-Python programs written as classic numeric Python is written (`tests/support/py_programs.py`),
traced in the default mode, against the same function run by CPython.

For each program, `trace(fn, fuse_fma=False)` is called twice (the call that compiles, then one that
goes through the dispatcher), each time on fresh example arguments, and must give what the plain
function gives on deep copies of them: a result of the same structure and types (tuples, lists,
dicts, sets, strings, `array.array`, None), equal values (floats bit for bit: with FMA fusion off
the compiled code rounds every operation as CPython does, and the programs add in the order they are
written), the same exception type and message, and the same contents in the arguments afterwards
(programs update lists, dicts and arrays in place). What the tracer cannot compile runs as Python
or breaks the graph, so every mismatch is a bug: such a program stays in the corpus with a strict
xfail saying what differs and why.
"""
from __future__ import annotations

import copy
import math
from array import array

import pytest
from py_programs import PROGRAMS

import tracer

# program name -> why the traced result differs from CPython's (none do)
XFAIL: dict[str, str] = {}


def _cases():
    for name, fn, make_args in PROGRAMS:
        reason = XFAIL.get(name)
        marks = (pytest.mark.xfail(reason=reason, strict=True),) if reason else ()
        yield pytest.param(fn, make_args, id=name, marks=marks)


def outcome(fn, args):
    """(result, None) or (None, the exception raised)."""
    try:
        return fn(*args), None
    except Exception as exc:        # the exception is what gets compared
        return None, exc


def check_same(got, expected, where):
    """Traced vs CPython: the same types all the way down, floats bit for bit, the rest equal."""
    assert type(got) is type(expected), f"{where}: {type(got).__name__} {got!r} vs {type(expected).__name__} {expected!r}"
    if isinstance(expected, float):
        same = got == expected and math.copysign(1.0, got) == math.copysign(1.0, expected)
        assert same or (math.isnan(got) and math.isnan(expected)), f"{where}: {got!r} vs {expected!r}"
    elif isinstance(expected, complex):
        check_same(got.real, expected.real, f"{where}.real")
        check_same(got.imag, expected.imag, f"{where}.imag")
    elif isinstance(expected, (tuple, list)):
        assert len(got) == len(expected), f"{where}: length {len(got)} vs {len(expected)}: {got!r} vs {expected!r}"
        for k, (g, e) in enumerate(zip(got, expected)):
            check_same(g, e, f"{where}[{k}]")
    elif isinstance(expected, array):
        assert got.typecode == expected.typecode, f"{where}: typecode {got.typecode} vs {expected.typecode}"
        check_same(got.tolist(), expected.tolist(), where)
    elif isinstance(expected, dict):
        assert list(got) == list(expected), f"{where}: keys {list(got)!r} vs {list(expected)!r}"
        for key in expected:
            check_same(got[key], expected[key], f"{where}[{key!r}]")
    else:
        assert isinstance(expected, (bool, int, str, set, frozenset, type(None))), f"{where}: unexpected {expected!r}"
        assert got == expected, f"{where}: {got!r} vs {expected!r}"


def check_call(traced, fn, args, call):
    plain_args, traced_args = copy.deepcopy(args), copy.deepcopy(args)
    expected, expected_exc = outcome(fn, plain_args)
    got, got_exc = outcome(traced, traced_args)
    if expected_exc is not None:
        assert got_exc is not None, f"{call}: returned {got!r} where CPython raises {expected_exc!r}"
        assert (type(got_exc), str(got_exc)) == (type(expected_exc), str(expected_exc)), \
            f"{call}: raised {got_exc!r} where CPython raises {expected_exc!r}"
    else:
        if got_exc is not None:
            raise AssertionError(f"{call}: raised {got_exc!r} where CPython returns {expected!r}") from got_exc
        check_same(got, expected, f"{call}: result")
    for k, (g, e) in enumerate(zip(traced_args, plain_args)):
        check_same(g, e, f"{call}: argument {k} after the call")


@pytest.mark.parametrize("fn, make_args", list(_cases()))
def test_traced_program_matches_python(fn, make_args):
    traced = tracer.trace(fn, fuse_fma=False)
    for call in ("first call", "second call"):
        check_call(traced, fn, make_args(), call)


def test_corpus_is_large_and_deterministic():
    assert len({fn for _, fn, _ in PROGRAMS}) >= 40
    for name, fn, make_args in PROGRAMS:
        first, second = make_args(), make_args()
        assert all(a is not b for a, b in zip(first, second) if isinstance(a, (list, dict, set, array))), name
        check_same(first, second, name)
        check_same(outcome(fn, first)[0], outcome(fn, second)[0], name)
