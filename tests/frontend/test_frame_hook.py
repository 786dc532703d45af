"""tracer.native PEP 523 hook: what the callback sees, what replaces a frame.

Every test that installs the hook uninstalls it and checks that it is gone:
with a hook installed every call is slower and deep recursion costs C stack.
"""
import asyncio
import builtins
import contextlib
import gc
import os
import subprocess
import sys
import textwrap
import threading
import tracemalloc

import pytest

from native_entries import entry_address
from tracer import native as F

ADD = entry_address()
ECHO = entry_address("echo")
RAISE = entry_address("raise")


class Callback:
    """A frame callback that records what it sees and answers `result`
    (or calls it with the arguments when `result` is callable).  With
    `only` (functions), other frames get SKIP: capture_all tests must not
    replace pytest's own functions."""

    def __init__(self, result=None, only=None):
        self.calls = []
        self.result = result
        self.only = None if only is None else {fn.__code__ for fn in only}

    def __call__(self, code, args, globals, builtins, closure):
        if self.only is not None and code not in self.only:
            return F.SKIP
        self.calls.append((code, args, globals, builtins, closure))
        if callable(self.result):
            return self.result(*args)
        return self.result

    @property
    def args(self):
        return [c[1] for c in self.calls]


@contextlib.contextmanager
def module_state():
    """Saves and restores the callback and capture_all: the tracer itself
    (tracer.frontend.capture) sets its callback at import, and other tests use it."""
    saved_cb = F.set_frame_callback(None)
    saved_all = F.set_capture_all(False)
    try:
        yield
    finally:
        F.set_frame_callback(saved_cb)
        F.set_capture_all(saved_all)


@pytest.fixture
def hook():
    """Installs the hook around a test; yields a function that registers a
    callback and code objects.  Leaves no state behind."""
    registered = []

    def use(cb, *functions, state=True):
        F.set_frame_callback(cb)
        for fn in functions:
            F.register_code(fn.__code__, state)
            registered.append(fn.__code__)
        return cb

    assert not F.installed()
    with module_state():
        F.install()
        try:
            yield use
        finally:
            F.uninstall()
            for code in registered:
                F.unregister_code(code)
    assert not F.installed()


def run_python(source, timeout=300):
    """Runs source in a fresh interpreter that imports the same tracer."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(F.__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(source)],
                          capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=root)


# --- install / uninstall ------------------------------------------------------

def test_install_nests():
    assert not F.installed()
    F.install()
    F.install()
    try:
        assert F.installed()
        F.uninstall()
        assert F.installed()
    finally:
        F.uninstall()
    assert not F.installed()
    with pytest.raises(RuntimeError):
        F.uninstall()
    assert not F.installed()


def test_nothing_is_intercepted_when_not_installed():
    def f(x):
        return x + 1
    cb = Callback(result="intercepted")
    with module_state():
        F.set_frame_callback(cb)
        F.register_code(f.__code__, True)
        try:
            assert f(1) == 2
            assert cb.calls == []
        finally:
            F.unregister_code(f.__code__)


def test_setters_return_previous_values():
    cb = Callback()
    with module_state():
        assert F.set_frame_callback(cb) is None
        assert F.set_frame_callback(None) is cb
        assert F.set_capture_all(True) is False
        assert F.set_capture_all(False) is True
        with pytest.raises(TypeError):
            F.set_frame_callback(42)


# --- what the callback sees -----------------------------------------------------

def all_kinds(a, b=2, *args, c, d=4, **kw):
    return ("ran", a, b, args, c, d, kw)


@pytest.mark.parametrize("call, expected", [
    (lambda: all_kinds(1, c=3), (1, 2, 3, 4, (), {})),
    (lambda: all_kinds(1, 5, 6, 7, c=3, d=8, e=9), (1, 5, 3, 8, (6, 7), {"e": 9})),
    (lambda: all_kinds(b=1, a=0, c=2), (0, 1, 2, 4, (), {})),
    (lambda: all_kinds(*[1, 2, 3], **{"c": 4, "z": 5}), (1, 2, 4, 4, (3,), {"z": 5})),
])
def test_callback_sees_arguments(hook, call, expected):
    cb = hook(Callback(result="replaced"), all_kinds)
    assert call() == "replaced"
    (code, args, globals_, builtins_, closure), = cb.calls
    assert code is all_kinds.__code__
    assert args == expected
    assert globals_ is all_kinds.__globals__ is globals()
    assert builtins_ is all_kinds.__builtins__
    assert builtins_["len"] is builtins.len
    assert closure is None


def test_callback_sees_positional_and_defaults(hook):
    def f(x, y=10):
        return x + y
    cb = hook(Callback(result=lambda x, y: ("cb", x, y)), f)
    assert f(1) == ("cb", 1, 10)
    assert f(1, 2) == ("cb", 1, 2)
    assert f(y=3, x=4) == ("cb", 4, 3)
    assert cb.args == [(1, 10), (1, 2), (4, 3)]


def test_callback_sees_closure(hook):
    def outer():
        offset = 5
        def inner(x):
            return x + offset
        return inner
    inner = outer()
    cb = hook(Callback(result="replaced"), inner)
    assert inner(1) == "replaced"
    closure = cb.calls[0][4]
    assert closure is inner.__closure__
    assert closure[0].cell_contents == 5


def test_argument_that_is_a_cell_is_seen_raw(hook):
    # `x` is captured by the lambda, so the frame turns it into a cell with
    # MAKE_CELL: the callback runs before that, and sees the plain value.
    def f(x):
        return lambda: x
    cb = hook(Callback(result=F.SKIP), f)
    assert f(7)() == 7
    assert cb.args == [(7,)]


def test_methods_get_self(hook):
    class C:
        def m(self, x):
            return x
    obj = C()
    cb = hook(Callback(result=lambda self, x: (self, x)), C.m)
    assert obj.m(3) == (obj, 3)
    assert C.m(obj, 4) == (obj, 4)


# --- what the callback answers ---------------------------------------------------

def test_result_replaces_the_frame(hook):
    ran = []
    def f(x):
        ran.append(x)
        return x
    marker = object()
    hook(Callback(result=marker), f)
    assert f(1) is marker
    assert ran == []


def test_skip_evaluates_normally(hook):
    ran = []
    def f(x, y=1):
        ran.append(x)
        return x * 2 + y
    cb = hook(Callback(result=F.SKIP), f)
    assert f(3) == 7
    assert f(4, y=0) == 8
    assert ran == [3, 4]
    assert len(cb.calls) == 2


def test_exception_propagates_like_the_functions_own(hook):
    def f(x):
        return x
    def caller():
        try:
            return f(1)
        except ValueError as e:
            return "caught " + str(e)
    def cb(code, args, globals_, builtins_, closure):
        raise ValueError("boom")
    hook(cb, f)
    with pytest.raises(ValueError, match="boom"):
        f(1)
    assert caller() == "caught boom"
    # still usable after the error
    F.set_frame_callback(Callback(result=F.SKIP))
    assert f(5) == 5


def test_no_callback_evaluates_normally(hook):
    def f(x):
        return x + 1
    hook(None, f)
    assert f(1) == 2


def test_register_skip_never_calls_back(hook):
    def f(x):
        return x + 1
    cb = hook(Callback(result="replaced", only=[f]), f, state=F.SKIP)
    assert F.code_state(f.__code__) is F.SKIP
    assert f(1) == 2
    F.set_capture_all(True)
    assert f(1) == 2
    F.set_capture_all(False)
    assert cb.calls == []


def test_register_and_unregister(hook):
    def f(x):
        return x + 1
    cb = hook(Callback(result="replaced"))
    assert F.code_state(f.__code__) is None
    state = object()
    F.register_code(f.__code__, state)
    assert F.code_state(f.__code__) is state
    assert f(1) == "replaced"
    F.unregister_code(f.__code__)
    assert F.code_state(f.__code__) is None
    assert f(1) == 2
    F.register_code(f.__code__, state)
    F.register_code(f.__code__, None)       # None also removes
    assert F.code_state(f.__code__) is None
    with pytest.raises(TypeError):
        F.register_code(f, True)
    with pytest.raises(TypeError):
        F.code_state(f)


def test_code_state_reference_is_released():
    def f():
        pass
    state = object()
    before = sys.getrefcount(state)
    F.register_code(f.__code__, state)
    assert sys.getrefcount(state) == before + 1
    F.register_code(f.__code__, True)         # replacing frees the old value
    assert sys.getrefcount(state) == before
    F.unregister_code(f.__code__)
    assert sys.getrefcount(state) == before
    code = f.__code__.replace(co_name="fresh")   # only referenced here
    F.register_code(code, state)
    assert sys.getrefcount(state) == before + 1
    del code
    gc.collect()
    assert sys.getrefcount(state) == before   # the code object died


# --- Dispatcher as code state --------------------------------------------------

def test_dispatcher_state_hits_natively(hook):
    def g(x, y):
        return x + y
    d = F.Dispatcher(lambda *a: "dispatcher miss", "g")
    d.add_native(ADD, None, ())
    cb = hook(Callback(result=F.SKIP), g, state=d)
    assert g(1.5, 2.0) == 3.5
    assert cb.calls == []
    assert g(1, 2) == 3                 # entry misses -> callback -> SKIP
    assert cb.args == [(1, 2)]


def test_dispatcher_entry_sees_frame_arguments(hook):
    def h(a, b=2, *args, k=1, **kw):
        return "ran"
    marker = object()
    d = F.Dispatcher(print, "h")
    d.add_native(ECHO, marker, ())
    cb = hook(Callback(), h, state=d)
    assert h(0) == (marker, (0, 2, 1, (), {}))
    assert h(0, 5, 6, k=3, z=4) == (marker, (0, 5, 3, (6,), {"z": 4}))
    assert cb.calls == []


def test_dispatcher_state_error_propagates(hook):
    def g(x):
        return x
    d = F.Dispatcher(print, "g")
    d.add_native(RAISE, None, ())
    cb = hook(Callback(result=F.SKIP), g, state=d)
    with pytest.raises(ValueError, match="raised by the test entry"):
        g(1)
    assert cb.calls == []


def test_callback_can_register_dispatcher_for_next_calls(hook):
    def g(x, y):
        return x + y

    def compile_and_answer(code, args, globals_, builtins_, closure):
        d = F.Dispatcher(print, "g")
        d.add_native(ADD, None, ())
        F.register_code(code, d)          # replaces the state we came in with
        return F.run_plain(g, *args)

    cb = hook(Callback(result=None), g)
    F.set_frame_callback(compile_and_answer)
    assert g(1.0, 2.0) == 3.0
    assert isinstance(F.code_state(g.__code__), F.Dispatcher)
    assert g(2.0, 2.0) == 4.0
    assert cb.calls == []


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
