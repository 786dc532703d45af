"""The random-program fuzzer (`python -m tests.fuzz`, tests/support/fuzz_*.py) in CI.

`test_fuzz_fixed_seeds` (marked `fuzz`: `pytest -m fuzz` runs it alone) runs the same range of
seeds on every run, for every kind of program (scalar programs with while True/break/continue,
short-circuit tests, helper functions and raises; the classic random programs; NumPy programs),
each in a worker subprocess with a time limit, and fails on any internal error, crash, hang or
difference from CPython, printing the program, its seed and arguments (reproduce one with
`python -m tests.fuzz --kinds KIND --seed SEED --count 1`, which also shrinks it). It takes
about a minute or two. Warnings are not compared: compiled array code does not yet warn where
NumPy does; array_program_gen.OPEN_BUGS lists the other known gaps the programs leave out.

The other tests check the fuzzer itself: the same seed gives the same case, a crash and a hang
are told apart from a mismatch, and the reducer shrinks a program while its failure stays.
"""
from __future__ import annotations

import io
import time

import pytest
from fuzz_cases import KINDS, Case, make_case
from fuzz_reduce import shrink_source
from fuzz_runner import Worker, fuzz

SEEDS = range(0, 40)      # a smoke run: long fuzzing runs on demand (python -m tests.fuzz)


@pytest.mark.fuzz
def test_fuzz_fixed_seeds():
    out = io.StringIO()
    report = fuzz(SEEDS, KINDS, timeout=120.0, reduce=False, check_warnings=False, out=out)
    assert report.cases == len(SEEDS) * len(KINDS)
    assert not report.failures, f"{report.summary()}\n\n{out.getvalue()}"
    # most programs compile: the generator keeps to what the tracer supports
    assert report.passed >= report.cases // 2, report.summary()


def test_same_seed_same_case():
    for kind in KINDS:
        assert make_case(kind, 7) == make_case(kind, 7)
        assert make_case(kind, 7).source != make_case(kind, 8).source


CRASHES = '''
import os
import signal


def f(a, n):
    if n > 2:
        os.kill(os.getpid(), signal.SIGSEGV)
    return a
'''

HANGS = '''
def f(a, n):
    while n > 2:
        pass
    return a
'''


@pytest.mark.fuzz
def test_worker_tells_crashes_and_hangs_from_results():
    worker = Worker()
    try:
        crashed = worker.run(CRASHES, [["1.0", "5"]], timeout=60)
        assert crashed["key"] == "crash:SIGSEGV" and crashed["call"] == 0, crashed
        assert "Fatal Python error" in crashed["detail"]       # faulthandler's stack, from the log
        started = time.monotonic()
        hung = worker.run(HANGS, [["1.0", "5"]], timeout=3)
        assert hung["key"] == "python-hang" and hung["status"] == "skip", hung   # CPython itself hangs
        assert time.monotonic() - started < 30
        assert worker.run(HANGS, [["2.0", "0"]], timeout=60)["status"] == "pass"   # a new worker
    finally:
        worker.close()


def test_reducer_keeps_the_failure_and_drops_the_rest():
    source = make_case("scalar", 3).source + "\n\ndef g(z):\n    return z\n"
    source = source.replace("def f(", "def f(*_):\n    marker = 1\n    return marker\n\n\ndef unused(")
    small = shrink_source(source, lambda text: "marker = 1" in text and "def f(" in text,
                          time.monotonic() + 30)
    assert "marker = 1" in small and len(small) < len(source) // 2
    assert "def g(" not in small
    compile(small, "<reduced>", "exec")


def test_case_round_trips_through_json():
    case = make_case("arrays", 1)
    assert Case.from_json(case.to_json()) == case
    assert "seed 1" in case.show()
