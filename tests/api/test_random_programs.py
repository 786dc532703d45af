"""Random programs: `trace(fn, fuse_fma=False)` against CPython, on generated functions.

`tests/support/program_gen.py` generates small plain-Python functions with data-dependent control flow
(if/elif/else on traced floats, `while` loops with traced conditions, `for` over `range`, break,
continue, early returns, conditional expressions, `and`/`or`/`not`), float and int arithmetic and
`math` calls. Each is written to a real `.py` file, compiled once with `trace(fn, fuse_fma=False)`
and called on several argument tuples (floats with 0.0, -0.0, huge, tiny, inf and nan; small
ints), each tuple twice (the first call may be the one that compiles). Every call must return
what CPython returns bit for bit (same types all the way down, floats by their bytes, any NaN
matching any NaN) or raise the same exception type with the same message.

The programs use only constructs the tracer supports: a `TracerError` (what `trace` raises for an
unsupported construct) is a failure, as is a function that ends up with no specialization.

Run thousands of programs locally (150 by default, for CI; `tests.fuzz` runs more kinds):

    TRACER_RANDOM_PROGRAMS=5000 python -m pytest -q tests/api/test_random_programs.py

The examples are derandomized (the same programs on every run, like `test_corpus.py`);
TRACER_RANDOM=1 draws fresh ones. A failure prints the program's source, the arguments and
both outcomes; hypothesis shrinks it to a short program first.
"""
from __future__ import annotations

import math
import os

from hypothesis import HealthCheck, given, settings
from oracle import outcome, same_outcome
from program_gen import load_function, program_cases

from tracer import TracerError, native, trace

PROGRAMS = int(os.environ.get("TRACER_RANDOM_PROGRAMS", "150"))
SETTINGS = settings(
    max_examples=PROGRAMS,
    deadline=None,
    derandomize=os.environ.get("TRACER_RANDOM") != "1",
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much, HealthCheck.large_base_example],
    print_blob=True,
)


def show(x) -> str:
    if type(x) is float:
        return f"{x!r} ({x.hex()})" if math.isfinite(x) else repr(x)
    if type(x) is tuple:
        return "(" + ", ".join(show(v) for v in x) + ("," if len(x) == 1 else "") + ")"
    return f"{x!r} ({type(x).__name__})"


def show_outcome(result) -> str:
    if result[0] == "return":
        return f"returned {show(result[1])}"
    return f"raised {result[1].__name__}: {result[2]}"


def report(what: str, source: str, args: tuple, got, expected) -> str:
    return (f"{what}\nprogram:\n{source}\narguments: {args!r}\n"
            f"  CPython: {show_outcome(expected)}\n  traced:  {show_outcome(got)}")


@SETTINGS
@given(program_cases())
def test_random_program_matches_cpython(case):
    program, calls = case
    fn = load_function(program.source)
    compiled = trace(fn, fuse_fma=False)
    checked = 0
    for args in calls + calls:     # twice: the first call of a specialization compiles it
        expected = outcome(fn, args)
        got = outcome(compiled, args)
        if got[0] == "raise" and issubclass(got[1], TracerError):
            raise AssertionError(report("the tracer rejected a program it should compile",
                                        program.source, args, got, expected))
        assert same_outcome(got, expected), report("traced result differs from CPython's",
                                                   program.source, args, got, expected)
        assert not native.installed(), "the frame hook was left installed"
        checked += 1
    assert checked == 2 * len(calls) > 0
    assert compiled.specializations, report("nothing was compiled", program.source, calls[0],
                                            got, expected)
