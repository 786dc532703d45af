"""Arguments and items of list or tuple arguments that a trace used as constants (`op == "add"`,
`lines[0] == "1 +"`, `xs[cfg[0]]`): the native entry checks them itself (codegen.entry_pins,
tracer.ir.PinnedStr, ListArg.pins), a call with another value or type is a guard miss, and a str,
bytes or None returned as a constant is made by the entry. Every result is CPython's."""
from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap

import pytest

import tracer
from tracer.explanation import explain
from tracer.specialize import Specialization


def apply(op, x):
    if op == "add":
        return x + 1.0
    if op == "neg":
        return -x
    raise ValueError(f"unknown op {op!r}")


def run_ops(ops, x):
    for o in ops:
        if o == "neg":
            x = -x
        elif o == "dbl":
            x = x * 2.0
        else:
            raise ValueError(f"unknown op {o!r}")
    return x


def program(code, x):
    for op, k in code:
        if op == "add":
            x += k
        elif op == "mul":
            x *= k
    return x


def accent(word, x):
    return x * 3.0 if word == "été→✓" else x - 1.0


def echo(op):
    return op


def labelled(op, x):
    return [op, x * 2.0, None]


def as_bytes(op):
    return b"yes" if op == "y" else b"no"


def pick(cfg, xs):
    return xs[cfg[0]] * 2.0


def outcome(f, *args):
    """What a call gives: ("ok", value, its type) or ("raises", type, message)."""
    try:
        value = f(*args)
    except Exception as exc:        # (any exception CPython raises is compared)
        return ("raises", type(exc), str(exc))
    return ("ok", value, type(value))


def compiled_kinds(traced) -> list:
    return [(type(s).__name__, getattr(s, "fast", None)) for s in traced.specializations]


class Unequal(str):
    """A str subclass equal to nothing: a call that took it for the pinned str would be wrong."""

    def __eq__(self, other):
        return False

    __hash__ = str.__hash__


# ------------------------------------------------------------------------ a str argument
def test_a_str_argument_is_checked_by_the_native_entry(python_runs):
    traced = tracer.trace(apply)
    for _ in range(3):
        assert outcome(traced, "add", 2.5) == outcome(apply, "add", 2.5)
    (spec,) = traced.specializations
    assert isinstance(spec, Specialization) and spec.fast
    assert "[native entry]" in repr(spec) and "op == 'add'" in repr(spec)
    assert python_runs == []


def test_another_string_is_a_miss_that_compiles_its_own_entry():
    traced = tracer.trace(apply)
    for op in ("add", "neg", "add", "mul", "neg", "ad", "addd", "", "Add"):
        assert outcome(traced, op, 2.5) == outcome(apply, op, 2.5), op
    assert compiled_kinds(traced) == [("Specialization", True)] * 7     # one per distinct string


@pytest.mark.parametrize("odd", [Unequal("add"), b"add", 5, None, 2.5, ["add"]],
                         ids=["str-subclass", "bytes", "int", "None", "float", "list"])
def test_a_value_of_another_type_at_a_pinned_position_runs_as_cpython(odd):
    traced = tracer.trace(apply)
    assert outcome(traced, "add", 1.0) == outcome(apply, "add", 1.0)
    assert outcome(traced, odd, 1.0) == outcome(apply, odd, 1.0)
    assert outcome(traced, "add", 1.0) == outcome(apply, "add", 1.0)     # the first entry still answers


@pytest.mark.parametrize("word", ["été→✓", "日本語", "🙂x", "a\0b", "", "ÿ"])
def test_non_ascii_and_odd_strings_pin_and_miss_exactly(word):
    traced = tracer.trace(accent)
    close = ["été→✓", "été→✗", "ete->v", "日本", "日本語", "🙂x", "🙃x", "a\0b", "a\0c", "", "ÿ", "y", "\ud800"]
    assert outcome(traced, word, 2.0) == outcome(accent, word, 2.0)
    assert traced.specializations[0].fast
    for other in close:          # the same length in code points, or in UTF-8 bytes, but another text
        assert outcome(traced, other, 2.0) == outcome(accent, other, 2.0), other
    others = [other for other in dict.fromkeys(close) if other != word]
    assert [s.fast for s in traced.specializations] == [True] + [other != "\ud800" for other in others]


def test_a_pinned_string_with_no_utf8_form_stays_on_the_loaded_path():
    traced = tracer.trace(accent)
    assert outcome(traced, "\ud800", 2.0) == outcome(accent, "\ud800", 2.0)
    assert compiled_kinds(traced) == [("Specialization", False)]
    assert outcome(traced, "\udc00", 2.0) == outcome(accent, "\udc00", 2.0)
    assert outcome(traced, "été→✓", 2.0) == outcome(accent, "été→✓", 2.0)
    assert traced.specializations[-1].fast


# ------------------------------------------------------------------------ str items of lists and tuples
@pytest.mark.parametrize("make", [list, tuple], ids=["list", "tuple"])
def test_str_items_of_a_list_or_tuple_are_checked_by_the_native_entry(make, python_runs):
    traced = tracer.trace(run_ops)
    ops = make(["neg", "dbl", "dbl"])
    for _ in range(3):
        assert outcome(traced, ops, 1.5) == outcome(run_ops, ops, 1.5)
    (spec,) = traced.specializations
    assert spec.fast and "ops[0] == 'neg'" in repr(spec)
    assert python_runs == []
    for other in (make(["dbl", "dbl", "neg"]), make(["neg", "dbl", "dbx"]), make(["neg", "dbl"]), make(["neg", "dbl", "dbl"])):
        assert outcome(traced, other, 1.5) == outcome(run_ops, other, 1.5)
    assert compiled_kinds(traced) == [("Specialization", True)] * 4


@pytest.mark.parametrize("odd", [Unequal("dbl"), b"dbl", 3, None], ids=["str-subclass", "bytes", "int", "None"])
def test_an_item_of_another_type_runs_as_cpython(odd):
    traced = tracer.trace(run_ops)
    assert outcome(traced, ["neg", "dbl"], 1.5) == outcome(run_ops, ["neg", "dbl"], 1.5)
    assert outcome(traced, ["neg", odd], 1.5) == outcome(run_ops, ["neg", odd], 1.5)
    assert outcome(traced, ("neg", odd), 1.5) == outcome(run_ops, ("neg", odd), 1.5)
    assert outcome(traced, ["neg", "dbl"], 1.5) == outcome(run_ops, ["neg", "dbl"], 1.5)


def test_str_items_of_tuples_inside_a_list(python_runs):
    traced = tracer.trace(program)
    code = [("add", 2.0), ("mul", 3.0), ("add", -0.5)]
    assert outcome(traced, code, 1.0) == outcome(program, code, 1.0)
    assert traced.specializations[0].fast
    code[1] = ("mul", 4.0)                       # a number read per call: the same entry
    assert outcome(traced, code, 1.0) == outcome(program, code, 1.0)
    assert len(traced.specializations) == 1 and python_runs == []
    code[1] = ("add", 4.0)                       # a pinned string changed: another entry
    assert outcome(traced, code, 1.0) == outcome(program, code, 1.0)
    code[1] = (Unequal("add"), 4.0)
    assert outcome(traced, code, 1.0) == outcome(program, code, 1.0)
    assert [s.fast for s in traced.specializations[:2]] == [True, True]


def test_number_items_pinned_by_the_trace(python_runs):
    traced = tracer.trace(pick)
    xs = [1.0, 2.0, 3.0]
    assert outcome(traced, (1,), xs) == outcome(pick, (1,), xs)
    assert traced.specializations[0].fast and python_runs == []
    for cfg in [(2,), (1,), (True,), (-1,), (1.0,)]:     # another value or type: CPython's answer
        assert outcome(traced, cfg, xs) == outcome(pick, cfg, xs), cfg


# ------------------------------------------------------------------------ constant results
@pytest.mark.parametrize("f, args", [(echo, ("add",)), (echo, ("été→✓",)), (labelled, ("x", 1.5)),
                                     (as_bytes, ("y",)), (as_bytes, ("n",))],
                         ids=["str", "non-ascii", "list-with-str-and-None", "bytes", "bytes-other"])
def test_a_constant_result_is_made_by_the_native_entry(f, args, python_runs):
    traced = tracer.trace(f)
    first = outcome(traced, *args)
    assert first == outcome(f, *args)
    assert outcome(traced, *args) == first
    (spec,) = traced.specializations
    assert spec.fast and python_runs == []


def test_a_constant_str_result_is_one_object_call_after_call():
    traced = tracer.trace(echo)
    assert traced("op") == "op"
    assert traced("op") is traced("op")
    assert traced("ox") == "ox" and traced("op") == "op"


# ------------------------------------------------------------------------ explain, dump
def test_explain_names_the_string_guards():
    text = str(explain(apply, "neg", 2.0))
    assert "compiled" in text and "op == 'neg'" in text
    text = str(explain(program, [("add", 1.0)], 2.0))
    assert "code[0][0] == 'add'" in text


# ------------------------------------------------------------------------ the compile cache
CACHED = '''
import tracer

@tracer.trace
def apply(op, x):
    if op == "add":
        return x + 1.0
    if op == "été→✓":
        return -x
    raise ValueError(f"unknown op {op!r}")

@tracer.trace
def program(code, x):
    for op, k in code:
        if op == "add":
            x += k
        elif op == "mul":
            x *= k
    return x

@tracer.trace
def echo(op):
    return op

print("apply", apply("add", 2.0), apply("été→✓", 2.0))
print("program", program([("add", 2.0), ("mul", 3.0)], 1.0), program([("mul", 2.0), ("add", 3.0)], 1.0))
print("echo", echo("日本"))
FUNCTIONS = (apply, program, echo)
print("fast", all(s.fast for f in FUNCTIONS for s in f.specializations))
print("specializations", sum(len(f.specializations) for f in FUNCTIONS))
print("cached", sum(getattr(s, "from_cache", False) for f in FUNCTIONS for s in f.specializations))
'''


def _run(folder, cache):
    env = {**os.environ, "TRACER_CACHE": "1", "TRACER_CACHE_DIR": str(cache), "TRACER_LOG": "cache",
           "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "main.py"], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return dict(line.split(" ", 1) for line in done.stdout.splitlines())


@pytest.mark.skipif(not (sys.platform.startswith("linux") and platform.machine() == "x86_64"),
                    reason="cached code is linked by tracer.native.load_object: Linux x86-64")
def test_pinned_strings_survive_the_compile_cache(tmp_path):
    (tmp_path / "main.py").write_text(textwrap.dedent(CACHED), encoding="utf-8")
    cache = tmp_path / "cache"
    first = _run(tmp_path, cache)
    assert first["apply"] == "3.0 -2.0" and first["program"] == "9.0 5.0" and first["echo"] == "日本"
    assert first["fast"] == "True" and first["specializations"] == "5" and first["cached"] == "0"
    second = _run(tmp_path, cache)
    assert second == {**first, "cached": "5"}          # each entry loaded (the items' pins told apart)


def test_stored_pins_name_arguments_and_items():
    from tracer.cache.entries import _at, _same, entry_pins
    traced = tracer.trace(program)
    traced([("add", 2.0), ("mul", 3.0)], 1.0)
    traced2 = tracer.trace(apply)
    traced2("neg", 1.0)
    pins = entry_pins(traced.specializations[0].entry_args)
    assert pins == [[[0, 0, 0], "add"], [[0, 1, 0], "mul"]]
    assert entry_pins(traced2.specializations[0].entry_args) == [[0, "neg"]]
    args = ([("add", 2.0), ("mul", 5.0)], 1.0)
    assert all(_same(_at(args, where), value) for where, value in pins)
    assert not _same(_at(([("add", 2.0), ("add", 5.0)], 1.0), [0, 1, 0]), "mul")
    assert _at(([("add", 2.0)], 1.0), [0, 1, 0]) is None
