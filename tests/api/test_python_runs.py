"""Calls that run as Python cost what the plain call costs: the C dispatcher runs them.

Two ways a call runs as Python: the tracer could not compile the function for its arguments' kinds
(a PythonRun), or the compiled code gives most of its calls to Python (FALLBACK: a raise that an
except clause catches), and the specialization then gives way to a PythonRun. The oracle is
CPython: results, exceptions and their tracebacks, side effects once.
"""
import logging
import traceback

import pytest

import tracer
from tracer import native, trace
from tracer.specialize import MOSTLY_PYTHON_CALLS, Specialization


def kinds(compiled):
    return [type(s).__name__ for s in compiled.specializations]


class Box:
    def __init__(self, v):
        self.v = v


def not_compiled(x, y):
    global LAST                     # a global store runs as Python
    LAST = x
    return [x * y, str(y)]


def plain_entries(compiled):
    return [e for e in compiled.entries if e[0] == native.plain_entry_address]


def test_a_python_run_is_an_entry_of_the_c_dispatcher():
    compiled = trace(not_compiled)
    assert compiled(2.0, 3) == [6.0, "3"]
    assert kinds(compiled) == ["PythonRun"]
    (entry,) = plain_entries(compiled)
    assert entry[1] == (not_compiled, (float, int))
    assert compiled(4.0, 5) == [20.0, "5"] and LAST == 4.0
    assert compiled(y=5, x=1.5) == [7.5, "5"]            # keywords: the miss path, same answer
    assert kinds(compiled) == ["PythonRun"]


def test_other_kinds_of_arguments_still_compile_or_run_as_python():
    compiled = trace(not_compiled)
    assert compiled(2.0, 3) == [6.0, "3"]
    assert compiled(2, 3) == [6, "3"]                  # (int, int): a PythonRun of its own
    assert kinds(compiled) == ["PythonRun", "PythonRun"]
    assert len(plain_entries(compiled)) == 2
    assert compiled(True, 3) == [3, "3"]               # bool is not int: not taken by (int, int)
    assert len(compiled.specializations) == 3


def raises_inside(x):
    global LAST
    LAST = x
    return 1.0 / x


def test_an_exception_from_a_python_run_has_the_users_traceback():
    compiled = trace(raises_inside)
    assert compiled(2.0) == 0.5
    with pytest.raises(ZeroDivisionError) as info:
        compiled(0.0)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].name == "raises_inside" and frames[-1].line == "return 1.0 / x"
    assert not any("tracer" in f.filename.split("/")[-2:-1] for f in frames)


def inner(x):
    return x * x + 1.0


def test_traced_functions_called_from_a_python_run_compile():
    traced_inner = trace(inner)

    def outer(x):
        global LAST
        LAST = x
        return traced_inner(x)
    compiled = trace(outer)
    assert compiled(3.0) == 10.0 and compiled(4.0) == 17.0
    assert kinds(compiled) == ["PythonRun"]
    assert kinds(traced_inner) == ["Specialization"]
    (spec,) = traced_inner.specializations
    assert spec.fast


def checked_ratios(pairs):
    out = []
    for a, b in pairs:
        try:
            if b == 0:
                raise ZeroDivisionError(f"no ratio for {a}")
            out.append(a / b)
        except ZeroDivisionError as e:
            out.append(str(e))
    return out, Box(len(out))


def ratios(compiled, pairs):
    out, box = compiled(pairs)
    return out, box.v


def test_compiled_code_that_gives_most_calls_to_python_gives_way(caplog):
    compiled = trace(checked_ratios)
    pairs = [(1.0, 2.0), (3.0, 0.0)]
    want = ratios(checked_ratios, pairs)
    assert ratios(compiled, pairs) == want
    (spec,) = compiled.specializations
    assert isinstance(spec, Specialization) and not spec.fast
    with caplog.at_level(logging.INFO, logger="tracer"):
        for _ in range(MOSTLY_PYTHON_CALLS + 1):
            assert ratios(compiled, pairs) == want
    assert kinds(compiled) == ["PythonRun"]
    assert "gave" in compiled.specializations[0].reason.message
    assert any("runs as Python" in r.getMessage() and "calls to Python" in r.getMessage() for r in caplog.records)
    assert ratios(compiled, [(1.0, 4.0), (6.0, 3.0)]) == ([0.25, 2.0], 2)   # now as Python, still right


def test_compiled_code_that_seldom_gives_calls_to_python_stays():
    compiled = trace(checked_ratios)
    good, bad = [(1.0, 2.0), (3.0, 4.0)], [(1.0, 0.0), (3.0, 4.0)]
    for i in range(3 * MOSTLY_PYTHON_CALLS):
        pairs = bad if i % 4 == 0 else good
        assert ratios(compiled, pairs) == ratios(checked_ratios, pairs)
    (spec,) = compiled.specializations
    assert isinstance(spec, Specialization)
    assert spec.fell_back == 3 * MOSTLY_PYTHON_CALLS // 4


def test_a_python_run_made_from_compiled_code_sits_after_the_compiled_entries():
    compiled = trace(checked_ratios)
    good3, bad = [(1.0, 2.0), (3.0, 4.0), (5.0, 8.0)], [(3.0, 0.0), (1.0, 2.0)]
    assert ratios(compiled, good3) == ratios(checked_ratios, good3)      # list[3]: compiled
    for _ in range(MOSTLY_PYTHON_CALLS + 1):
        assert ratios(compiled, bad) == ratios(checked_ratios, bad)     # list[2]: gives way
    assert kinds(compiled) == ["Specialization", "PythonRun"]
    kept = compiled.specializations[0]
    calls = kept.calls
    assert ratios(compiled, good3) == ratios(checked_ratios, good3)
    assert kept.calls == calls + 1                                       # still the compiled code
    assert compiled.entries[0][1] == kept.run and compiled.entries[-1][0] == native.plain_entry_address


def table_total(n, m, x):
    rows = []
    for i in range(n):
        row = []
        for j in range(m):
            row.append(i * j * x + 1.0)
        rows.append(row)
    return sum(map(sum, rows)), len(rows)


def test_a_trace_past_the_size_bound_runs_as_python(monkeypatch):
    import tracer.frontend.builder as builder
    monkeypatch.setattr(builder, "MAX_TRACE_OPS", 400)
    compiled = trace(table_total)
    assert compiled(30, 30, 0.5) == table_total(30, 30, 0.5)
    assert kinds(compiled) == ["PythonRun"]
    assert "grew past 400 operations" in compiled.specializations[0].reason.message
    assert compiled(3, 4, 0.5) == table_total(3, 4, 0.5)          # (int, int, float): the same PythonRun
    strict = trace(table_total, fullgraph=True)
    with pytest.raises(tracer.UnsupportedError, match="grew past 400 operations"):
        strict(30, 30, 0.5)


def test_a_small_trace_of_the_same_function_compiles(monkeypatch):
    import tracer.frontend.builder as builder
    monkeypatch.setattr(builder, "MAX_TRACE_OPS", 400)
    compiled = trace(table_total)
    assert compiled(3, 4, 0.5) == table_total(3, 4, 0.5)
    assert kinds(compiled) == ["Specialization"]


def test_gradient_traces_have_no_size_bound(monkeypatch):
    import tracer.frontend.builder as builder
    monkeypatch.setattr(builder, "MAX_TRACE_OPS", 50)

    def poly(x):
        total = 0.0
        for k in range(40):
            total = total * x + k
        return total
    h = 1e-6
    slope = tracer.grad(poly)(0.5)
    assert abs(slope - (poly(0.5 + h) - poly(0.5 - h)) / (2 * h)) < 1e-4 * abs(slope)
