"""The public API of `tracer` (tracer/__init__.py, tracer.api) and the PEP 523 hook it leaves behind
(tracer.native): the hook is never left installed, and plain Python runs untouched after tracing.
"""
from __future__ import annotations

import pytest

import tracer
from tracer import DataDependentControlFlow, TracerError, UnsupportedError, native, trace

I64_MIN, I64_MAX = -2 ** 63, 2 ** 63 - 1


def div(x, y):
    return x / y


def uses_global(x):
    global LAST
    LAST = x
    return x


def factorial_times(x, n):
    return x if n <= 1 else n * factorial_times(x, n - 1)


def add_one(x):
    return x + 1.0


# ============================================================================ the PEP 523 hook
def test_hook_is_not_left_installed():
    assert not native.installed()
    compiled = trace(div, fullgraph=True)
    compiled(1.0, 2.0)                         # compile
    assert not native.installed()
    compiled(3.0, 4.0)                         # native
    assert not native.installed()
    with pytest.raises(ZeroDivisionError):
        compiled(1.0, 0.0)
    assert not native.installed()
    with pytest.raises(TypeError):
        compiled(1.0)
    assert not native.installed()
    compiled(2 ** 70, 3)                       # big ints run the Python function
    assert not native.installed()
    with pytest.raises(TracerError):
        trace(uses_global, fullgraph=True)(1.0)
    assert not native.installed()
    with pytest.raises(ZeroDivisionError):
        trace(div, fullgraph=True)(1.0, 0.0)                   # an error while compiling
    assert not native.installed()


def test_plain_python_is_untouched_after_tracing():
    compiled = trace(factorial_times, fullgraph=True)
    with pytest.raises(TracerError):
        compiled(2.0, 3)
    assert factorial_times(2.0, 5) == 240.0   # recursion still works in plain Python
    assert not native.installed()


def test_public_api():
    assert tracer.trace is trace
    assert issubclass(UnsupportedError, TracerError)
    assert issubclass(DataDependentControlFlow, UnsupportedError)
    compiled = trace(add_one)
    assert compiled.py_func is add_one
    with pytest.raises(TypeError):
        trace(42)
