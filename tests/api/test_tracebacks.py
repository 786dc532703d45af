"""Errors raised in compiled code: the traceback names the user's function, file and line.

An exception raised by a traced function's compiled code (a `raise`, a failed `assert`, `1 / 0`,
`math.sqrt(-1)`, an error in an inlined callee) has a traceback entry for the line of the traced
function where it was raised, and, for an inlined callee, one for the callee's line below the
caller's call line, as CPython's own traceback would. The tracer's own frames are left out, on the
call that compiles as on the calls after it.
"""
import inspect
import os
import traceback

import pytest
from traceback_cases import (
    Weights,
    asserts,
    divides,
    in_a_loop,
    inner,
    outer,
    raises_value_error,
    raises_with_two_args,
    reads_an_attribute,
    square_root,
    two_divisions,
)

import codegen
import tracer

CASES_FILE = inspect.getsourcefile(outer)

TRACER_DIRS = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (tracer, codegen))


def failing_entries(exc_type, fn, *args):
    """The traceback of the exception `fn(*args)` raises, as (file, function, line, source) rows
    after this helper's own entry."""
    with pytest.raises(exc_type) as info:
        fn(*args)
    rows = [(f.filename, f.name, f.lineno, f.line) for f in traceback.extract_tb(info.value.__traceback__)]
    assert rows[0][1] == "failing_entries"
    return info.value, rows[1:]


def line_of(fn, text: str) -> int:
    """The line number of the line of `fn` holding `text`."""
    lines, start = inspect.getsourcelines(fn)
    (offset,) = [i for i, line in enumerate(lines) if text in line]
    return start + offset


def assert_user_lines(rows, *expected):
    """The traceback's rows are exactly `expected`: (function, line) in traceback_cases.py."""
    assert [(name, lineno) for _, name, lineno, _ in rows] == list(expected), rows
    assert all(filename == CASES_FILE for filename, *_ in rows), rows
    assert not any(filename.startswith(TRACER_DIRS) for filename, *_ in rows), rows


CASES = [
    (raises_value_error, (20.0, 30.0), (2.0, 3.0), ValueError, "too big", ["raise ValueError"]),
    (divides, (2.0, 3.0), (1.0, 1.0), ZeroDivisionError, "float division by zero", ["w = 1.0 /"]),
    (square_root, (-2.0,), (3.0,), ValueError, "math domain error", ["math.sqrt(y)"]),
    (asserts, (-1.0,), (1.0,), AssertionError, "x must be positive", ["assert x > 0.0"]),
    (two_divisions, (1.0, 0.0), (1.0, 2.0), ZeroDivisionError, "float division by zero", ["second = 1.0 / b"]),
    (in_a_loop, (5, 3.0), (2, 9.5), ZeroDivisionError, "float division by zero", ["total += 1.0 /"]),
]


@pytest.mark.parametrize("fn, bad, good, exc_type, message, lines", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("compiled_first", [False, True], ids=["compiling call", "compiled call"])
def test_the_traceback_ends_at_the_users_line(fn, bad, good, exc_type, message, lines, compiled_first):
    t = tracer.trace(fn)
    if compiled_first:
        t(*good)
        assert len(t.specializations) == 1
    for _ in range(2):
        exc, rows = failing_entries(exc_type, t, *bad)
        assert str(exc) == message
        assert_user_lines(rows, *((fn.__name__, line_of(fn, text)) for text in lines))
        assert len(t.specializations) == 1          # raised by compiled code, not by Python


def test_an_inlined_callee_gets_its_own_entry_below_the_call():
    t = tracer.trace(outer)
    for _ in range(2):
        exc, rows = failing_entries(ValueError, t, 1.0)
        assert str(exc) == "math domain error"
        assert_user_lines(rows, ("outer", line_of(outer, "return inner(y)")), ("inner", line_of(inner, "math.sqrt(t)")))
    assert len(t.specializations) == 1


def test_gradients_name_the_users_line():
    g = tracer.grad(square_root)
    for _ in range(2):
        _, rows = failing_entries(ValueError, g, -2.0)
        assert_user_lines(rows, ("square_root", line_of(square_root, "math.sqrt(y)")))


def test_the_loaded_path_names_the_users_line():
    t = tracer.trace(reads_an_attribute)
    for _ in range(2):
        _, rows = failing_entries(ZeroDivisionError, t, Weights(0.0), 1.0)
        assert_user_lines(rows, ("reads_an_attribute", line_of(reads_an_attribute, "return x / p.w")))


def test_an_exception_python_raises_again_has_no_tracer_frames():
    t = tracer.trace(raises_with_two_args)
    for _ in range(2):
        exc, rows = failing_entries(ValueError, t, -1.0)
        assert exc.args == ("negative", 3)
        assert_user_lines(rows, ("raises_with_two_args", line_of(raises_with_two_args, "raise ValueError")))


def test_the_printed_traceback_quotes_the_line_without_markers():
    t = tracer.trace(divides)
    with pytest.raises(ZeroDivisionError) as info:
        t(2.0, 3.0)
    text = "".join(traceback.format_exception(info.value))
    assert f'File "{CASES_FILE}", line {line_of(divides, "w = 1.0 /")}, in divides\n    w = 1.0 / (z - 6.0)\n' in text
    assert "^" not in text.split("in divides")[1]
    assert "tracer" + os.sep + "api.py" not in text


def test_the_tracers_own_errors_keep_their_frames():
    def unsupported(x):
        try:
            for _ in range(int(x)):    # (a loop inside try/finally: unsupported)
                x = x + 1.0
            return x
        finally:
            x = 0.0
    t = tracer.trace(unsupported, fullgraph=True)
    with pytest.raises(tracer.UnsupportedError) as info:
        t(1.0)
    files = [f.filename for f in traceback.extract_tb(info.value.__traceback__)]
    assert any(name.startswith(TRACER_DIRS) for name in files), files
