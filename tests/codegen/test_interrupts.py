"""Ctrl-C reaches compiled code: a compiled loop polls for signals every so many iterations
(codegen.kernel.KernelBuilder.poll_signals), so SIGINT raises KeyboardInterrupt out of the traced
function soon after it arrives, with what the function wrote so far kept, and the function is
not run again in Python. Each case runs in a child process: it compiles its function, says
"ready", starts a call that would run for minutes (or forever), and the test sends SIGINT.

Exported libraries (no Python) do not poll, and the loops that poll still vectorize.
"""
from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from codegen.export import CArgument, ExportedFunction, lower_library
from tracer import trace
from tracer.ir import F64, I64, EntryArg

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

CHILD = r'''
import ctypes, math, signal, sys, time
import numpy as np
# a shell's background job starts with SIGINT ignored, and so would this child: Ctrl-C it is
signal.signal(signal.SIGINT, signal.default_int_handler)
from codegen import compile_function
from tracer import grad, trace


def spin(a, n):                      # a while loop that never ends for n = -1
    i = 0
    a[0] = 0.0
    while True:
        i += 1
        a[0] = i
        if i == n:
            break
    return i


def count(y, n):                     # the same without arrays (no re-run on failure)
    i = 0
    while True:
        i += 1
        y = y * 0.5 + 1.0
        if y < 0.0 or i == n:
            break
    return i


def sum_1d(x, n):                    # one loop over n elements (a view: no memory)
    return np.broadcast_to(x, (n,)).sum()


def sum_2d(x, rows):                 # rows of x.shape[0] elements
    return np.broadcast_to(x, (rows, x.shape[0])).sum()


def product(a, b, m, depth):         # an (m, depth) @ (depth,) matrix product of views
    return np.broadcast_to(a, (m, depth)) @ np.broadcast_to(b, (depth,))


def rounds(x, done, n):              # in-place updates of argument arrays, in a loop
    for i in range(n):
        x += 1e-3 * np.sin(np.cos(x))
        done[0] = i + 1


def chain(y, n):                     # its gradient saves every iteration on a tape
    for i in range(n):
        y = math.sin(y) + 0.5 * math.cos(y)
    return y


def counted(a, n):                   # a `for` over a range: it polls between strips of iterations
    s = 0.0
    for i in range(n):
        s += 0.5
        a[0] = i
    return s


def counted_while(y, n):             # the same as a `while` that tests its counter last
    i = 0
    while i < n:
        y = y * 0.5 + 1.0
        i += 1
    return y


def decay(y, n):
    for i in range(n):
        y = y * 0.999999 + 1e-6
    return y


class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]


def live_bytes():
    """What C's malloc has handed out and not had back (glibc)."""
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallInfo2
    info = libc.mallinfo2()
    return info.uordblks + info.hblkhd


def ready():
    print("ready", flush=True)


case = sys.argv[1]
try:
    if case == "while_loop":
        f, a = trace(spin), np.zeros(3)
        assert f(a, 5) == 5 and a[0] == 5.0
        ready()
        f(a, -1)
    elif case == "scalar_loop":
        f = trace(count)
        assert f(0.0, 5) == 5
        ready()
        f(0.0, -1)
    elif case == "counted":
        f, a = trace(counted), np.zeros(1)
        assert f(a, 5) == 2.5 and a[0] == 4.0
        ready()
        f(a, 2**62)
    elif case == "counted_while":
        f = trace(counted_while)
        assert f(0.0, 1) == 1.0
        ready()
        f(0.0, 2**62)
    elif case == "sum_1d":
        f, x = trace(sum_1d), np.full(1, 0.5)
        assert f(x, 4) == 2.0
        ready()
        f(x, 10**13)
    elif case == "sum_2d":
        f, x = trace(sum_2d), np.full(1000, 0.5)
        assert f(x, 4) == 2000.0
        ready()
        f(x, 10**10)
    elif case == "matmul":
        f, a, b = trace(product), np.ones(1), np.full(1, 0.5)
        assert list(f(a, b, 2, 4)) == [2.0, 2.0]
        ready()
        f(a, b, 10**6, 10**6)
    elif case == "rounds":
        f, x0 = trace(rounds), np.linspace(0.0, 1.0, 200_000)
        x, done = x0.copy(), np.zeros(1)
        f(x[:10], done, 2)
        x, done = x0.copy(), np.zeros(1)
        ready()
        f(x, done, 10**9)
    elif case == "grad_tape":
        g = grad(chain)
        small = g(0.3, 5)
        before = live_bytes()
        ready()
        try:
            g(0.3, 10**10)
        except KeyboardInterrupt:
            print("KeyboardInterrupt", "leaked", live_bytes() - before, "again", g(0.3, 5) == small, flush=True)
            sys.exit(0)
    elif case == "ctypes":
        # the kernel called without the GIL (ctypes releases it): it must not run Python's
        # signal handlers; it finishes, and the KeyboardInterrupt comes after it, in Python
        f = trace(decay)
        f(0.5, 10)
        t = time.perf_counter()
        f(0.5, 10**7)
        n = max(10**7, int(10**7 * 1.5 / (time.perf_counter() - t)))
        spec = f.specializations[0]
        compiled = compile_function(spec.optimized, spec.entry_args)      # (its kernel exported)
        kernel = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_double, ctypes.c_int64, ctypes.POINTER(ctypes.c_double))(
            compiled.kernel_address)
        out = ctypes.c_double(0.0)
        polls = "__tracer_check_signals" in compiled.llvm_ir
        ready()
        try:
            kernel(0.5, n, ctypes.byref(out))
            time.sleep(5)
        except KeyboardInterrupt:
            print("KeyboardInterrupt", "polls", polls, "finished", out.value == f(0.5, n), flush=True)
            sys.exit(0)
    print("finished without an interrupt", flush=True)
    sys.exit(1)
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)      # (the parent times this line; what follows may compile)
    if case == "while_loop":
        print("KeyboardInterrupt", "state", a[0], a[1], a[2], "again", f(a, 7), a[0], flush=True)
    elif case == "scalar_loop":
        print("KeyboardInterrupt", "again", f(0.0, 12), flush=True)
    elif case == "counted":
        print("KeyboardInterrupt", "state", a[0], "again", f(a, 3), a[0], flush=True)
    elif case == "rounds":
        k = int(done[0])
        reference = x0.copy()
        for _ in range(k):
            reference += 1e-3 * np.sin(np.cos(reference))
        following = reference + 1e-3 * np.sin(np.cos(reference))
        each = np.isclose(x, reference, rtol=1e-9, atol=0) | np.isclose(x, following, rtol=1e-9, atol=0)
        print("KeyboardInterrupt", "rounds", k, "consistent", bool(each.all()), flush=True)
    else:
        print("KeyboardInterrupt", flush=True)
'''

BOUND = 5.0         # seconds from SIGINT to the child's exit: generous (it takes milliseconds)


def interrupt(case: str, tmp_path, bound: float = BOUND) -> str:
    """Run CHILD's `case`, send SIGINT 0.5 s after it is ready; its output once it exits."""
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = subprocess.Popen([sys.executable, str(script), case], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:
        readable, _, _ = select.select([child.stdout], [], [], 120)
        line = child.stdout.readline() if readable else ""
        if line.strip() != "ready":
            child.kill()
            out, err = child.communicate()
            pytest.fail(f"{case}: the child did not get ready: {line}{out}\n{err}")
        time.sleep(0.5)
        child.send_signal(signal.SIGINT)
        readable, _, _ = select.select([child.stdout], [], [], bound)
        if not readable:
            raise subprocess.TimeoutExpired(case, bound)
        first = child.stdout.readline()
        child.wait(timeout=120)
        out, err = child.stdout.read(), child.stderr.read()    # (read through the line's buffer)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        pytest.fail(f"{case}: no KeyboardInterrupt within {bound} s of SIGINT")
    assert child.returncode == 0, f"{case}: exit status {child.returncode}\n{first}{out}\n{err}"
    assert first.startswith("KeyboardInterrupt"), f"{case}: {first}{out}\n{err}"
    return first + out


def test_ctrl_c_stops_a_while_loop_that_never_ends_and_keeps_its_writes(tmp_path):
    out = interrupt("while_loop", tmp_path)
    counter, second, third, again, counter_again = re.search(r"state (\S+) (\S+) (\S+) again (\S+) (\S+)", out).groups()
    assert float(counter) >= 1000 and float(second) == 0.0 and float(third) == 0.0   # written so far, kept
    assert (again, counter_again) == ("7", "7.0")          # the function works again afterwards


def test_ctrl_c_stops_a_loop_without_arrays(tmp_path):
    assert "again 12" in interrupt("scalar_loop", tmp_path)


def test_ctrl_c_stops_a_counted_loop_between_strips_and_keeps_its_writes(tmp_path):
    out = interrupt("counted", tmp_path)
    written, again, written_again = re.search(r"state (\S+) again (\S+) (\S+)", out).groups()
    assert float(written) >= 1000 and (again, written_again) == ("1.5", "2.0")


def test_ctrl_c_stops_a_while_loop_that_counts_to_a_bound(tmp_path):
    interrupt("counted_while", tmp_path)


@pytest.mark.parametrize("case", ["sum_1d", "sum_2d", "matmul"])
def test_ctrl_c_stops_a_long_array_kernel(tmp_path, case):
    interrupt(case, tmp_path)


def test_ctrl_c_in_a_loop_of_in_place_updates_keeps_the_rounds_done(tmp_path):
    out = interrupt("rounds", tmp_path)
    rounds, consistent = re.search(r"rounds (\d+) consistent (\w+)", out).groups()
    assert int(rounds) >= 1 and consistent == "True"      # every element after `rounds` rounds (or the next)


def test_ctrl_c_in_a_gradient_frees_its_tape(tmp_path):
    out = interrupt("grad_tape", tmp_path)
    leaked, again = re.search(r"leaked (-?\d+) again (\w+)", out).groups()
    assert int(leaked) < 1 << 20 and again == "True"


def test_a_kernel_called_without_the_gil_runs_no_signal_handler(tmp_path):
    """The kernel polls, but not without the GIL: it finishes, then Python raises."""
    assert "polls True finished True" in interrupt("ctypes", tmp_path, bound=60.0)


# --------------------------------------------------------------------------- what the code is
def spin(y, n):
    i = 0
    while True:
        i += 1
        y = y * 0.5 + 1.0
        if y < 0.0 or i == n:
            break
    return i


def scaled(x):
    return x * 2.0 + 1.0


def test_exported_code_does_not_poll_for_signals():
    f = trace(spin)
    assert f(0.0, 3) == 3
    fn = f.specializations[0].optimized
    assert "__tracer_check_signals" in f.specializations[0].compiled.llvm_ir
    arguments = (CArgument("y", EntryArg(F64, 0)), CArgument("n", EntryArg(I64, 1)))
    exported = ExportedFunction("t_spin", fn, arguments, ("out",))
    text = str(lower_library([exported], "t_", "x86_64-unknown-linux-gnu", ""))
    assert "check_signals" not in text and "poll" not in text


def over_a_constant_range(x):
    total = 0.0
    for i in range(100):
        total += x * i
    return total


def over_a_range(x, n):
    total = 0.0
    for i in range(n):
        total += x * i
    return total


def test_a_loop_of_a_few_iterations_known_at_compile_time_does_not_poll():
    """Its work is bounded (and counted before it starts): with no call in it LLVM unrolls it."""
    bounded, unbounded = trace(over_a_constant_range), trace(over_a_range)
    assert bounded(2.0) == over_a_constant_range(2.0) and unbounded(2.0, 100) == over_a_range(2.0, 100)
    assert "@__tracer_check_signals()" not in bounded.specializations[0].compiled.optimized_ir
    assert "@__tracer_check_signals()" in unbounded.specializations[0].compiled.optimized_ir


def test_a_polled_array_loop_still_vectorizes():
    f = trace(scaled)
    x = np.arange(8.0)
    assert (f(x) == x * 2.0 + 1.0).all()
    text = f.specializations[0].compiled.optimized_ir
    assert re.search(r"fmul <\d+ x double>|fma\.v\d+f64", text)
    assert "@__tracer_check_signals()" in text
