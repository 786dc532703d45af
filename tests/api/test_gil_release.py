"""Compiled code that touches no Python object runs with the GIL released (codegen.entry.releases_gil),
as NumPy's loops do: other Python threads run meanwhile. The check does not time anything: it
measures the longest pause of a Python loop in the main thread while a compiled call runs in
another thread, which holds the GIL for the whole call where the GIL is not released."""
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from codegen.entry import releases_gil
from tracer import trace


def spin(n):
    s = 0.0
    for i in range(n):
        s += (i * 0.5) % 3.0
    return s


def norm_sum(a):
    return np.sum(np.tanh(np.sqrt(a)) * a)


def calls_python(n):
    s = 0.0
    for i in range(n):
        if i % 1000 == 0:
            print(end="")     # a call out to Python (tracer.frontend.callouts)
        s += i * 0.5
    return s


def optimized_ir(compiled):
    """The optimized IR of a traced function's one specialization."""
    [spec] = compiled.specializations
    return spec.optimized


def longest_pause_of_python(call, seconds: float) -> tuple[float, float]:
    """(the longest pause of a Python loop in this thread while `call()` runs in another, the
    call's duration) in seconds; the call is repeated for about `seconds`."""
    done = threading.Event()
    duration = []

    def work():
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            t = time.perf_counter()
            call()
            duration.append(time.perf_counter() - t)
        done.set()
    worker = threading.Thread(target=work)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)     # the worker's Python between calls holds the GIL that long
    try:
        last = time.perf_counter()
        longest = 0.0
        worker.start()
        while not done.is_set():
            now = time.perf_counter()
            longest = max(longest, now - last)
            last = now
        worker.join()
    finally:
        sys.setswitchinterval(interval)
    return longest, min(duration)


@pytest.mark.parametrize("fn, args", [(spin, (3_000_000,)), (norm_sum, (np.random.default_rng(0).random(8_000_000),))])
def test_other_threads_run_python_while_compiled_code_runs(fn, args):
    compiled = trace(fn)
    assert compiled(*args) == fn(*args)
    assert releases_gil(optimized_ir(compiled))
    pause, duration = longest_pause_of_python(lambda: compiled(*args), 0.5)
    # holding the GIL, the main thread would wait for whole calls (and more: the switch interval)
    assert pause < duration / 2, (pause, duration)


def test_code_that_calls_python_keeps_the_gil():
    compiled = trace(calls_python)
    assert compiled(100) == calls_python(100)
    assert not releases_gil(optimized_ir(compiled))


def test_failures_in_threads_without_the_gil_name_their_own_lines():
    @trace
    def divide_all(a, d):
        s = 0.0
        for x in a:
            s += x / d          # ZeroDivisionError where d == 0
        return s

    @trace
    def root_all(a):
        s = 0.0
        for x in a:
            if x > 5.0:
                s += 1 // 0 if x > 1e9 else x   # never: another failure site, before the one below
            s += pow(x, 0.5) + [1.0][int(x)]    # IndexError where x >= 1
        return s
    xs = [0.5] * 200_000
    errors = {}

    def run(i):
        try:
            for _ in range(20):
                divide_all(xs, 0.0) if i % 2 else root_all(xs + [3.0])
        except Exception as exc:
            errors[i] = exc
    assert divide_all(xs, 2.0) == sum(x / 2.0 for x in xs)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(type(e).__name__ for e in errors.values()) == ["IndexError", "IndexError", "ZeroDivisionError", "ZeroDivisionError"]
    for i, exc in errors.items():
        lines = []
        tb = exc.__traceback__
        while tb is not None:
            lines.append(tb.tb_frame.f_code.co_name)
            tb = tb.tb_next
        assert ("divide_all" if i % 2 else "root_all") in lines


HANDLER_CALLS_COMPILED_CODE = r'''
import signal, sys
from tracer import trace

@trace
def spin(n):
    s = 0.0
    for i in range(n):
        s += (i * 0.5) % 3.0
    return s

handled = []
def on_alarm(signum, frame):          # runs at a poll of the kernel below, which released the GIL
    handled.append(spin(200_000))
spin(10)
signal.signal(signal.SIGALRM, on_alarm)
signal.setitimer(signal.ITIMER_REAL, 0.02, 0.02)
total = spin(30_000_000)
signal.setitimer(signal.ITIMER_REAL, 0, 0)
print(len(handled) > 0, total == spin.py_func(30_000_000), set(handled) == {spin.py_func(200_000)})
'''


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_signal_handler_may_call_compiled_code_while_a_kernel_runs_without_the_gil():
    out = subprocess.run([sys.executable, "-c", HANDLER_CALLS_COMPILED_CODE], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "True"]
