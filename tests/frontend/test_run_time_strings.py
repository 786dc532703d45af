"""Strings chosen at run time by a data-dependent branch or loop (tracer.frontend.run_time_strings),
compiled whole and checked against CPython: returned (alone, in tuples and lists, joined),
compared, measured. What compiled code cannot do with them is a clear UnsupportedError, and the
default mode answers as CPython does."""
from __future__ import annotations

import pytest
from like_python import same

from tracer import UnsupportedError, trace


def sign_label(x):
    label = "positive" if x > 0 else "negative" if x < 0 else "zero"
    return label, len(label), label == "zero", label != "negative"


def classify_all(xs, cut):
    out = []
    for x in xs:                                # (short: unrolled)
        out.append("hi" if x > cut else "lo")
    return out, tuple(out)


def row_picture(xs, cut):
    return "".join("#" if x > cut else "." for x in xs), "-".join(["<", "a" if cut > 1 else "b", ">"])


def ordered(x, y):
    a = "apple" if x > 0 else "pear"
    b = "fig" if y > 0 else "apple"
    return a < b, a <= b, a > b, a >= "banana", "zebra" > b, min(x, y) if a == b else 0.0


def chosen_in_a_loop(n, x):
    state = "start"
    i = 0
    while i < n:                                # a data-dependent loop carries the string
        x = x * 1.5
        state = "big" if x > 10.0 else "small"
        i += 1
    return state, x


def as_key(x):
    s = "ab" if x > 0 else "cd"
    return {s: 1, "cd": 2}


@pytest.mark.parametrize("fn, args", [
    (sign_label, (2.0,)), (sign_label, (-1.0,)), (sign_label, (0.0,)),
    (classify_all, ([0.5, 2.0, 1.5], 1.0)), (row_picture, ([0.5, 2.0, 1.5, 3.0], 1.0)),
    (row_picture, ([0.5], 0.0)),
    (ordered, (1.0, 1.0)), (ordered, (1.0, -1.0)), (ordered, (-1.0, 1.0)), (ordered, (-1.0, -1.0)),
    (chosen_in_a_loop, (0, 1.0)), (chosen_in_a_loop, (3, 1.0)), (chosen_in_a_loop, (9, 1.0)),
    (as_key, (1.0,)), (as_key, (-1.0,)),
])
def test_compiled_whole_as_cpython(fn, args):
    for _ in range(2):
        same(fn, *args)


def concatenated(x):
    s = "a" if x > 0 else "b"
    return s + "!"


def indexed(x):
    s = "ab" if x > 0 else "cd"
    return s[0]


def formatted(x):
    s = "ab" if x > 0 else "cd"
    return f"<{s}>"


@pytest.mark.parametrize("fn", [concatenated, indexed, formatted])
def test_other_uses_are_refused_and_run_as_python(fn):
    with pytest.raises(UnsupportedError):
        trace(fn, fullgraph=True)(1.0)
    for x in (1.0, -1.0):
        assert trace(fn)(x) == fn(x)


def moves_until(x, limit):
    """A list of run-time length of strings, joined and returned."""
    steps = []
    while x < limit:
        if x < limit / 2:
            steps.append("double")
            x = x * 2.0
        else:
            steps.append("inc")
            x = x + 1.0
    return steps, "-".join(steps), "".join(reversed(steps)), len(steps)


def ranked(records):
    """Names sorted by traced scores (strings in tuples that a sort swaps), a dict keyed by them."""
    by_score = sorted(records, key=lambda r: (-r[1], r[0]))
    ranks = {}
    for i, (name, _) in enumerate(by_score):
        ranks[name] = i + 1
    above = [name for name, score in by_score if score > 2.0]
    return [r[0] for r in by_score], ranks, above


@pytest.mark.parametrize("fn, args", [
    (moves_until, (1.0, 20.0)), (moves_until, (30.0, 20.0)), (moves_until, (0.5, 3.0)),
    (ranked, ([("ada", 3.5), ("bob", 1.0), ("cy", 3.5), ("dee", 2.5)],)),
    (ranked, ([("ada", 1.0), ("bob", 1.0)],)),
])
def test_lists_and_dicts_of_chosen_strings(fn, args):
    for _ in range(2):
        same(fn, *args)
