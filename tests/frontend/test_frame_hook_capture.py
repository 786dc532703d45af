"""tracer.native's PEP 523 hook, which tracer.frontend.capture installs, at scale: capture_all, the
frames it must not intercept (module and class bodies, generators, coroutines), re-entrancy and
run_plain, threads, frame disposal and leaks, and deep recursion.

Every test that installs the hook uninstalls it and checks that it is gone:
with a hook installed every call is slower and deep recursion costs C stack.
"""
import asyncio
import sys
import threading
import tracemalloc

import pytest
from hook_harness import ECHO, Callback, module_state, run_python

from tracer import native as F

# --- capture_all ---------------------------------------------------------------

def test_capture_all(hook):
    def f(x):
        return x + 1

    seen = []
    def cb(code, args, globals_, builtins_, closure):
        seen.append(code)
        F.register_code(code, F.SKIP)    # decided: never ask again
        return F.SKIP

    hook(cb)
    assert f(1) == 2
    assert seen == []                     # capture_all is off
    F.set_capture_all(True)
    try:
        assert f(1) == 2
        assert f(2) == 3
    finally:
        F.set_capture_all(False)
        F.unregister_code(f.__code__)
    assert seen.count(f.__code__) == 1


def test_module_and_class_bodies_are_not_intercepted(hook):
    seen = []
    def cb(code, args, globals_, builtins_, closure):
        seen.append(code.co_name)
        return F.SKIP
    hook(cb)
    F.set_capture_all(True)
    ns = {}
    exec("class K:\n    a = 1\nb = K.a + 1\n", ns)
    F.set_capture_all(False)
    assert ns["b"] == 2
    assert "<module>" not in seen and "K" not in seen


def test_generators_and_coroutines_are_not_intercepted(hook):
    def gen(n):
        yield from range(n)

    async def coro(x):
        return x * 2

    async def agen():
        yield 1

    async def collect():
        return [v async for v in agen()]

    cb = hook(Callback(result="replaced"), gen, coro, agen)
    assert list(gen(3)) == [0, 1, 2]
    F.install()      # asyncio's own machinery runs with the hook too
    try:
        assert asyncio.run(coro(21)) == 42
        assert asyncio.run(collect()) == [1]
    finally:
        F.uninstall()
    assert cb.calls == []


def test_generator_throw_and_close_pass_through(hook):
    def gen():
        try:
            yield 1
        except KeyError:
            yield "caught"
    cb = hook(Callback(result="replaced", only=[gen]))
    F.set_capture_all(True)
    try:
        g = gen()
        assert next(g) == 1
        assert g.throw(KeyError) == "caught"
        g.close()
    finally:
        F.set_capture_all(False)
    assert cb.calls == []


# --- re-entrancy and run_plain -------------------------------------------------

def test_callback_is_not_intercepted(hook):
    def f(x):
        return x + 1

    seen = []
    def cb(code, args, globals_, builtins_, closure):
        seen.append(args)
        assert F.interception_disabled()
        return f(*args) * 10           # runs f normally, not through cb

    hook(cb, f)
    assert not F.interception_disabled()
    assert f(1) == 20
    assert seen == [(1,)]
    assert not F.interception_disabled()


def test_run_plain(hook):
    def f(x, y=1, *, z=0):
        return x + y + z
    cb = hook(Callback(result="replaced"), f)
    assert F.run_plain(f, 1) == 2
    assert F.run_plain(f, 1, 2, z=3) == 6
    assert F.run_plain(lambda: F.interception_disabled())
    assert not F.interception_disabled()
    assert cb.calls == []
    assert f(1) == "replaced"
    with pytest.raises(TypeError):
        F.run_plain()
    with pytest.raises(ZeroDivisionError):
        F.run_plain(lambda: 1 / 0)
    assert not F.interception_disabled()


def test_nested_captured_calls(hook):
    def leaf(x):
        return x + 1

    def middle(x):
        return leaf(x) * 2

    def cb(code, args, globals_, builtins_, closure):
        if code is middle.__code__:
            # interception is off inside the callback: leaf runs plainly
            return F.run_plain(middle, *args) + 1000
        return "leaf replaced"

    hook(cb, leaf, middle)
    assert middle(1) == 1004
    assert leaf(1) == "leaf replaced"


def test_specialized_call_sites_are_intercepted():
    # Warm a call site up (CPython specializes it to an inlined Python call)
    # before installing: the hook must still see the call.
    def target(x):
        return x

    def caller(n):
        total = 0
        for i in range(n):
            total += target(i)
        return total

    assert caller(10_000) == sum(range(10_000))
    cb = Callback(result=0)
    with module_state():
        F.set_frame_callback(cb)
        F.register_code(target.__code__, True)
        F.install()
        try:
            assert caller(100) == 0
        finally:
            F.uninstall()
            F.unregister_code(target.__code__)
    assert len(cb.calls) == 100
    assert not F.installed()


def test_threads(hook):
    # Interception is disabled per thread: while one thread is inside the
    # callback, the others are still intercepted.
    def f(x):
        return ("ran", x)

    inside = threading.Barrier(4, timeout=30)
    errors = []

    def cb(code, args, globals_, builtins_, closure):
        assert F.interception_disabled()
        assert f(args[0]) == ("ran", args[0])      # not intercepted here
        if args[0] == 0:
            inside.wait()     # all four threads are in the callback at once
        return ("cb", args[0])

    def worker():
        try:
            for i in range(2000):
                assert f(i) == ("cb", i)
            assert F.run_plain(f, 1) == ("ran", 1)
            assert not F.interception_disabled()
        except BaseException as e:       # reported by the main thread
            errors.append(e)

    hook(cb, f)
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


# --- frame disposal, leaks -----------------------------------------------------

def test_frames_at_data_stack_chunk_boundaries(hook):
    # The intercepted frame is pushed at every depth from 0 to 300, so on
    # some calls it opens a new chunk of the thread's frame stack, which the
    # hook must free again when it disposes of the frame (3.12).
    def leaf(a, b, c, d, e, f, g, h):
        return "ran"

    def descend(n):
        if n == 0:
            return leaf(1, 2, 3, 4, 5, 6, 7, 8)
        return descend(n - 1)

    hook(Callback(result="replaced"), leaf)
    for depth in range(300):
        assert descend(depth) == "replaced"


def test_no_leaks(hook):
    result = object()
    arg = object()

    def f(x, *args, **kwargs):
        return x

    def g(x, y):
        return x

    d = F.Dispatcher(print, "g")
    d.add_native(ECHO, None, ())

    def cb(code, args, globals_, builtins_, closure):
        if args[0] == "skip":
            return F.SKIP
        if args[0] == "raise":
            raise KeyError("raise")
        return result

    hook(cb, f)
    F.register_code(g.__code__, d)

    def run(n):
        for _ in range(n):
            f(arg)
            f(arg, arg, k=arg)
            f("skip", arg)
            try:
                f("raise", arg)
            except KeyError:
                pass
            g(arg, result)

    run(1000)
    refs = sys.getrefcount(result), sys.getrefcount(arg)
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        run(100_000 // 5)
        run(100_000 // 5)
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
        F.unregister_code(g.__code__)
    assert (sys.getrefcount(result), sys.getrefcount(arg)) == refs
    assert grown < 64 * 1024, grown


def test_intercepted_calls_at_scale(hook):
    def f(x, y):
        return x + y
    result = object()
    hook(Callback(result=result), f)
    F.set_frame_callback(lambda *a: result)
    before = sys.getrefcount(result)
    for i in range(100_000):
        assert f(i, i) is result
    assert sys.getrefcount(result) == before


# --- deep recursion (in a subprocess: a crash must fail the test, not pytest) --

DEEP = """
    import sys, threading
    from tracer import native as F
    sys.setrecursionlimit(30000)

    def down(n):
        return 0 if n == 0 else 1 + down(n - 1)

    def captured(n):
        return 0 if n == 0 else 1 + captured(n - 1)

    def attempt(fn, n):
        try:
            return fn(n)
        except RecursionError:
            return "RecursionError"

    F.set_frame_callback(lambda *a: F.SKIP)
    F.register_code(captured.__code__, True)
    F.install()
    try:
        print("down", attempt(down, 5000))
        print("captured", attempt(captured, 5000))
        print("deeper", attempt(down, 29000))
        # a small thread stack, where 3.12/3.13's own C recursion limit is too late
        threading.stack_size(512 * 1024)
        t = threading.Thread(target=lambda: print("thread", attempt(down, 20000)))
        t.start()
        t.join()
    finally:
        F.uninstall()
    print("installed", F.installed())
    print("after", down(5000))
"""


def test_deep_recursion_does_not_crash():
    proc = run_python(DEEP)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    # 5000 frames work, or (3.12: ~750 frames with a hook; 3.13: ~5000) raise
    # RecursionError; they never crash.
    for key in ("down", "captured", "deeper", "thread"):
        assert out[key] in ("5000", "29000", "20000", "RecursionError"), out
    if sys.version_info < (3, 12):
        assert out["down"] == "5000" and out["captured"] == "5000"
    assert out["installed"] == "False"
    assert out["after"] == "5000"
