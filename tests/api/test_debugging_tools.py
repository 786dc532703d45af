"""Debuggers, profilers and coverage tools see traced functions run.

While `sys.settrace` / `sys.setprofile` (pdb, cProfile on 3.11, coverage) or a `sys.monitoring` tool
(3.12+) is active, a traced function runs as its plain Python function, on the native fast path
and on the compiling path alike; with TRACER_DISABLE=1 in the environment, always. Gradients have
no plain Python version: they stay compiled.
"""
import cProfile
import io
import os
import pdb
import pstats
import subprocess
import sys
import textwrap
import threading

import pytest
from native_entries import entry_address

import tracer
from tracer import native


def body(x, y):
    z = x * y
    w = z + 1.0
    return w


FIRST = body.__code__.co_firstlineno        # the `def` line; the body is the next three


def traced_body():
    t = tracer.trace(body)
    assert t(2.0, 3.0) == 7.0               # compiled
    assert len(t.specializations) == 1
    return t


class Recorder:
    """A trace function recording (event, line) of `body`'s frames."""

    def __init__(self, code=body.__code__):
        self.code = code
        self.events = []

    def __call__(self, frame, event, arg):
        if frame.f_code is self.code:
            self.events.append((event, frame.f_lineno))
        return self


def traced_events(call):
    recorder = Recorder()
    sys.settrace(recorder)
    try:
        result = call()
    finally:
        sys.settrace(None)
    return result, recorder.events


EXPECTED_EVENTS = [("call", FIRST), ("line", FIRST + 1), ("line", FIRST + 2), ("line", FIRST + 3),
                   ("return", FIRST + 3)]


def test_settrace_sees_the_compiled_function_run_line_by_line():
    t = traced_body()
    result, events = traced_events(lambda: t(2.0, 3.0))
    assert result == 7.0
    assert events == EXPECTED_EVENTS
    assert not native.run_as_python()
    assert t(2.0, 3.0) == 7.0 and len(t.specializations) == 1      # native again


def test_settrace_on_the_first_call_runs_python_and_compiles_nothing():
    t = tracer.trace(body)
    result, events = traced_events(lambda: t(2.0, 3.0))
    assert result == 7.0
    assert events == EXPECTED_EVENTS
    assert t.specializations == []
    assert t(2.0, 3.0) == 7.0 and len(t.specializations) == 1      # compiled once the tool is gone


def test_setprofile_sees_call_and_return():
    t = traced_body()
    seen = []

    def profile(frame, event, arg):
        if frame.f_code is body.__code__:
            seen.append(event)
    sys.setprofile(profile)
    try:
        assert t(2.0, 3.0) == 7.0
    finally:
        sys.setprofile(None)
    assert seen == ["call", "return"]


def test_threading_settrace_reaches_calls_in_new_threads():
    t = traced_body()
    recorder = Recorder()
    results = []
    threading.settrace(recorder)
    try:
        thread = threading.Thread(target=lambda: results.append(t(2.0, 3.0)))
        thread.start()
        thread.join()
    finally:
        threading.settrace(None)
    assert results == [7.0]
    assert recorder.events == EXPECTED_EVENTS


def test_a_thread_without_a_trace_function_stays_native():
    t = traced_body()
    flags = []
    sys.settrace(Recorder())
    try:
        thread = threading.Thread(target=lambda: flags.append((native.run_as_python(), t(2.0, 3.0))))
        thread.start()
        thread.join()
    finally:
        sys.settrace(None)
    assert flags == [(False, 7.0)]


def test_cprofile_lists_the_traced_function():
    t = traced_body()
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        t(2.0, 3.0)
    finally:
        profiler.disable()
    stats = pstats.Stats(profiler).stats
    assert any(code == (__file__, FIRST, "body") for code in stats), sorted(stats)


def caller():
    result = T(2.0, 3.0)
    return result


T = None


def test_pdb_steps_into_the_traced_function():
    global T
    T = traced_body()
    commands = io.StringIO("step\nstep\nstep\np z\ncontinue\n")
    out = io.StringIO()
    debugger = pdb.Pdb(stdin=commands, stdout=out, readrc=False, nosigint=True)
    try:
        assert debugger.runcall(caller) == 7.0
    finally:
        sys.settrace(None)
        T = None
    text = out.getvalue()
    # "step" into the call (--Call--), onto the first line, onto the second, where z is 6.0
    assert f"({FIRST + 2})body()" in text, text
    assert "(Pdb) 6.0" in text, text


def test_coverage_sees_the_body_executed():
    coverage = pytest.importorskip("coverage")

    def covered(x):
        y = x + 1.0
        return y * 2.0
    t = tracer.trace(covered)
    assert t(1.0) == 4.0
    first = covered.__code__.co_firstlineno
    cov = coverage.Coverage(data_file=None, include=[__file__])
    cov.start()
    try:
        assert t(1.0) == 4.0
    finally:
        cov.stop()
    executed = set(cov.get_data().lines(os.path.abspath(__file__)) or ())
    assert {first + 1, first + 2} <= executed


@pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring is new in 3.12")
def test_sys_monitoring_tool_sees_the_function_start():
    mon = sys.monitoring
    tool = next(i for i in range(6) if mon.get_tool(i) is None)
    t = traced_body()
    started = []
    mon.use_tool_id(tool, "tracer-test")
    try:
        mon.register_callback(tool, mon.events.PY_START, lambda code, offset: started.append(code))
        mon.set_events(tool, mon.events.PY_START)
        assert native.run_as_python()
        assert t(2.0, 3.0) == 7.0
        mon.set_events(tool, 0)
        assert not native.run_as_python()
    finally:
        mon.set_events(tool, 0)
        mon.register_callback(tool, mon.events.PY_START, None)
        mon.free_tool_id(tool)
    assert body.__code__ in started


def test_capture_regions_intercept_nothing_under_a_trace_function():
    def in_region(x):
        y = x * 2.0
        return y
    recorder = Recorder(in_region.__code__)
    with tracer.capture():
        sys.settrace(recorder)
        try:
            assert in_region(2.0) == 4.0
        finally:
            sys.settrace(None)
    first = in_region.__code__.co_firstlineno
    assert recorder.events == [("call", first), ("line", first + 1), ("line", first + 2), ("return", first + 2)]
    assert in_region.__qualname__ not in tracer.stats().compiled


def test_gradients_stay_compiled_under_a_trace_function():
    def f(x, y):
        return x * x * y
    g = tracer.grad(f)
    recorder = Recorder(f.__code__)
    sys.settrace(recorder)
    try:
        first = g(3.0, 2.0)          # compiled while tracing: a gradient has no Python version
        second = g(3.0, 2.0)
    finally:
        sys.settrace(None)
    assert first == second == 12.0
    assert recorder.events == []


def test_export_compiles_under_a_trace_function(tmp_path):
    sys.settrace(lambda *a: None)
    try:
        exported = tracer.export(body, 2.0, 3.0, out_dir=str(tmp_path))
    finally:
        sys.settrace(None)
    assert os.path.exists(exported.library)


def test_a_dispatcher_calls_plain_while_tracing():
    calls = []

    def plain(x, y):
        calls.append((x, y))
        return "plain"
    d = native.Dispatcher(lambda *a: "miss", "f", plain=plain)
    d.add_native(entry_address(), None, ())
    assert d.plain is plain
    assert d(1.0, 2.0) == 3.0
    sys.settrace(lambda *a: None)
    try:
        assert d(1.0, 2.0) == "plain"
    finally:
        sys.settrace(None)
    assert calls == [(1.0, 2.0)]
    assert native.Dispatcher(lambda: 0, "g").plain is None
    with pytest.raises(TypeError):
        native.Dispatcher(lambda: 0, "g", plain=42)


def test_tracer_disable_runs_plain_python():
    program = textwrap.dedent("""
        import sys
        import tracer
        from tracer import native

        def f(x, y):
            return x * y + 1.0

        t = tracer.trace(f)
        assert t(2.0, 3.0) == 7.0
        assert t.specializations == [], t.specializations
        assert native.run_as_python()
        events = []
        sys.settrace(lambda frame, event, arg: events.append(event) if frame.f_code is f.__code__ else None)
        t(2.0, 3.0)
        sys.settrace(None)
        assert events == ["call"], events
        g = tracer.grad(f)           # a gradient has no Python version: still compiled
        assert g(2.0, 3.0) == 3.0
        assert len(g.specializations) == 1
        with tracer.capture():
            assert f(1.0, 2.0) == 3.0
        assert str(tracer.stats()) == "nothing was called"
        print("ok")
    """)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, TRACER_DISABLE="1", PYTHONPATH=root)
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, cwd=root)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
    env["TRACER_DISABLE"] = "0"
    check = "import tracer\nfrom tracer import native\nassert not native.run_as_python()\nprint('ok')"
    done = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True, cwd=root)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
