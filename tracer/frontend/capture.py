"""Capture through PEP 523: hand a frame's arguments to the tracer before any bytecode runs.

The C hook (`tracer.native`) is installed only while needed: while a `@trace`d function compiles
a new specialization, or inside a `capture()` region. One Python callback, `_on_frame`, receives
every intercepted frame and routes it by code object: to the `@trace`d function being compiled,
or to the innermost `capture()` region (`tracer.regions`).
"""
from __future__ import annotations

import warnings

from tracer import native

_handlers: dict = {}            # code object -> callable(code, args, globals, builtins, closure)
_regions: list = []             # the handlers of the open capture() regions, innermost last


def _on_frame(code, args, globals, builtins, closure):
    handler = _handlers.get(code)
    if handler is None and _regions:
        handler = _regions[-1]
    if handler is None:
        return native.SKIP
    return handler(code, args, globals, builtins, closure)


native.set_frame_callback(_on_frame)


def call_intercepted(py_func, args: tuple, kwargs: dict, handler):
    """Call `py_func`, letting `handler` take its frame (argument binding is CPython's own)."""
    code = py_func.__code__
    previous_state = native.code_state(code)
    _handlers[code] = handler
    native.register_code(code, True)
    native.install()
    try:
        return py_func(*args, **kwargs)
    finally:
        native.uninstall()
        del _handlers[code]
        if previous_state is None:
            native.unregister_code(code)
        else:
            native.register_code(code, previous_state)


def run_plain(py_func, *args, **kwargs):
    """Run the original Python function, never intercepted."""
    return native.run_plain(py_func, *args, **kwargs)


# ------------------------------------------------------------------------- regions (capture())
def push_region(on_frame) -> None:
    """Start intercepting every Python frame (those of registered code objects excepted) and
    hand each to `on_frame`, the innermost region's handler, until `pop_region`."""
    _regions.append(on_frame)
    native.set_capture_all(True)
    native.install()


def pop_region() -> None:
    native.uninstall()
    _regions.pop()
    native.set_capture_all(bool(_regions))


def warn_storm(name: str, limit: int):
    warnings.warn(f"{name}: more than {limit} specializations were compiled; further argument "
                  f"types/values run as plain Python (raise max_specializations to allow more)",
                  RuntimeWarning, stacklevel=4)
