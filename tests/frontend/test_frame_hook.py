"""tracer.native's PEP 523 hook, which tracer.frontend.capture installs: installing and uninstalling
it, what the frame callback sees, what replaces a frame, and a Dispatcher as a code's state.

Every test that installs the hook uninstalls it and checks that it is gone:
with a hook installed every call is slower and deep recursion costs C stack.
"""
import builtins
import gc
import sys

import pytest
from hook_harness import ADD, ECHO, RAISE, Callback, module_state

from tracer import native as F

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
    assert cb.args == [(obj, 3), (obj, 4)]


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
    assert cb.args == [(1,)]                # called back only while f was registered
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
