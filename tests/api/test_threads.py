"""Traced functions, gradients, vectorize and capture() regions called from several threads at
once: every call answers like plain Python, and a function compiles exactly the specializations
it would in one thread (compiles are serialized, and a thread that waited uses what the other
compiled instead of compiling it again)."""
import random
import threading

import numpy as np

import tracer
from tracer import grad, native, trace, vectorize

THREADS = 8


def run_together(work, threads: int = THREADS) -> list[str]:
    """Run work(i) in `threads` threads started together; the errors they raised, as text."""
    errors = []
    barrier = threading.Barrier(threads)

    def run(i):
        try:
            barrier.wait()
            work(i)
        except Exception as exc:     # reported by the test
            errors.append(f"thread {i}: {exc!r}")
    workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return errors


def test_first_calls_from_several_threads_compile_once():
    for _ in range(10):
        @trace
        def f(x):
            return x * 2 + 1
        results = []
        errors = run_together(lambda i: results.append(f(1.0)), threads=4)
        assert errors == []
        assert results == [3.0] * 4
        assert len(f.specializations) == 1


def make_scalar(k):
    c = float(k) + 0.5

    def scaled(x):
        return x * c + 1
    return scaled


def make_summing(k):
    c = float(k) + 0.25

    def summed(xs):
        s = 0.0
        for x in xs:
            s += x * c
        return s
    return summed


ARGUMENTS = [
    ("scalar", 1.5), ("scalar", 3), ("scalar", True), ("scalar", -2.25), ("scalar", 7),
    ("scalar", np.linspace(0.0, 1.0, 5)), ("scalar", np.arange(6.0).reshape(2, 3)),
    ("scalar", np.full(4, 2.5)), ("list", [1.0, 2.5, -3.0]), ("list", [0.5] * 40),
]


def same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return type(a) is type(b) and a.shape == b.shape and np.array_equal(a, b)
    return type(a) is type(b) and a == b


def test_threads_calling_fresh_functions_with_mixed_arguments():
    def counts_in_one_thread(k):
        scalar = trace(make_scalar(k), fuse_fma=False)
        summing = trace(make_summing(k), fuse_fma=False)
        for kind, a in ARGUMENTS:
            (scalar if kind == "scalar" else summing)(a)
        return len(scalar.specializations), len(summing.specializations)
    expected_counts = counts_in_one_thread(-1)

    for round_ in range(100):
        plain = {"scalar": make_scalar(round_), "list": make_summing(round_)}
        traced = {kind: trace(f, fuse_fma=False) for kind, f in plain.items()}

        def work(i):
            calls = list(ARGUMENTS)
            random.Random(round_ * THREADS + i).shuffle(calls)
            for kind, a in calls:
                got, want = traced[kind](a), plain[kind](a)
                assert same(got, want), f"{kind}({a!r}) gave {got!r}, Python {want!r}"
        assert run_together(work) == []
        counts = len(traced["scalar"].specializations), len(traced["list"].specializations)
        assert counts == expected_counts, f"round {round_}"


def test_one_function_compiled_and_vectorized_and_differentiated_in_threads():
    def f(x):
        return x * x * 0.5

    traced, dfdx, vf = trace(f, fuse_fma=False), grad(f), vectorize(f, fuse_fma=False)
    a = np.linspace(-1.0, 1.0, 7)

    def work(i):
        for _ in range(20):
            assert traced(1.5 + i) == f(1.5 + i)
            assert dfdx(1.5 + i) == 1.5 + i
            assert np.array_equal(vf(a), a * a * 0.5)
    assert run_together(work) == []
    assert len(traced.specializations) == 1 and len(dfdx.specializations) == 1


def captured_polynomial(x):
    return 3.0 * x * x + 1.0


def captured_factory(k):
    def scaled(x):
        return x * k
    return scaled


def test_capture_regions_in_several_threads():
    def work(i):
        with tracer.capture(modules=__name__):
            for j in range(30):
                assert captured_polynomial(float(j)) == 3.0 * j * j + 1.0
                assert captured_factory(float(i))(float(j)) == float(i) * j
    assert run_together(work) == []
    assert not native.installed()
    assert tracer.stats().compiled["captured_polynomial"] == 1


def called_by_another_thread(x):
    return x + 1.0


def test_a_region_captures_its_own_thread_only():
    inside, done = threading.Event(), threading.Event()
    seen = {}

    def other_thread():
        inside.wait()
        seen["other"] = called_by_another_thread(2.0)    # while the main thread's region is open
        done.set()
    worker = threading.Thread(target=other_thread)
    worker.start()
    with tracer.capture(modules=__name__) as stats:
        inside.set()
        done.wait()
        seen["own"] = captured_polynomial(4.0)
    worker.join()
    assert seen == {"other": 3.0, "own": 49.0}
    assert "called_by_another_thread" not in stats.compiled
    assert not native.installed()
