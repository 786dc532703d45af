"""Capture through PEP 523: hand a frame's arguments to the tracer before any bytecode runs.

The C hook (`tracer.native`) is installed only while needed: while a `@trace`d function compiles
a new specialization, or inside a `capture()` region. One Python callback, `_on_frame`, receives
every intercepted frame and routes it by code object: to the `@trace`d function being compiled,
or to the innermost `capture()` region (`tracer.regions`).

The hook is process-wide, but what it hands over is per thread: the callback runs in the thread
whose frame it is, and each thread has its own handlers and regions. A frame of another thread
that the hook meets goes on as plain Python. A code object is registered with the hook while any
thread intercepts it (counted), and gets back its previous state when the last one is done.
"""
from __future__ import annotations

import threading

from tracer import native


class _ThreadState(threading.local):
    def __init__(self):
        self.handlers: dict = {}    # code object -> [handler(code, args, globals, builtins, closure)], innermost last
        self.regions: list = []     # the handlers of this thread's open capture() regions, innermost last


_thread = _ThreadState()
_lock = threading.Lock()            # guards the two counts below, across threads
_intercepted: dict = {}             # code object -> [threads intercepting it, its state before the first]
_open_regions = 0                   # capture() regions open in all threads


def _on_frame(code, args, globals, builtins, closure):
    state = _thread
    handlers = state.handlers.get(code)
    if handlers:
        return handlers[-1](code, args, globals, builtins, closure)
    if state.regions:
        return state.regions[-1](code, args, globals, builtins, closure)
    return native.SKIP


native.set_frame_callback(_on_frame)


def call_intercepted(py_func, args: tuple, kwargs: dict, handler):
    """Call `py_func`, letting `handler` take its frame (argument binding is CPython's own): the
    call's result is what `handler` returns. If the frame is not handed over (CPython declined,
    e.g. near the recursion limit), the function runs as Python and that is the result."""
    code = py_func.__code__
    handlers = _thread.handlers.setdefault(code, [])
    handlers.append(handler)
    _register(code)
    native.install()
    try:
        return py_func(*args, **kwargs)
    finally:
        native.uninstall()
        _unregister(code)
        handlers.pop()
        if not handlers:
            del _thread.handlers[code]


def _register(code) -> None:
    with _lock:
        entry = _intercepted.get(code)
        if entry is None:
            _intercepted[code] = [1, native.code_state(code)]
            native.register_code(code, True)
        else:
            entry[0] += 1


def _unregister(code) -> None:
    with _lock:
        entry = _intercepted[code]
        entry[0] -= 1
        if entry[0] == 0:
            del _intercepted[code]
            if entry[1] is None:
                native.unregister_code(code)
            else:
                native.register_code(code, entry[1])


def run_plain(py_func, *args, **kwargs):
    """Run the original Python function, never intercepted."""
    return native.run_plain(py_func, *args, **kwargs)


# ------------------------------------------------------------------------- regions (capture())
def push_region(on_frame) -> None:
    """Start intercepting every Python frame of this thread (those of registered code objects
    excepted) and hand each to `on_frame`, the innermost region's handler, until `pop_region`."""
    global _open_regions
    _thread.regions.append(on_frame)
    with _lock:
        _open_regions += 1
        native.set_capture_all(True)
    native.install()


def pop_region() -> None:
    """End this thread's innermost region."""
    global _open_regions
    native.uninstall()
    _thread.regions.pop()
    with _lock:
        _open_regions -= 1
        native.set_capture_all(_open_regions > 0)
