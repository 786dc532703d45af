"""One call of a traced function against CPython, for the targeted semantics tests: the same value
of the same type (floats by their bits, so -0.0 and NaN compare exactly), or the same exception
type and message. Where the tracer does not support something it must say so
(`UnsupportedError`), never answer differently.

    assert_like_python(trace(f), 2.0, 3)     # a traced function against its own py_func
    same(f, [1.0, 2.0])                      # traces `f` (fusion off) and compares
    unsupported(f, 1.0, match="generator")   # the tracer says it cannot compile this
"""
from __future__ import annotations

import math
import struct

import pytest

from tracer import UnsupportedError, native, trace


def outcome(fn, *args, **kwargs):
    """('return', value) or ('raise', exception type, message)."""
    try:
        return ("return", fn(*args, **kwargs))
    except Exception as exc:   # the outcome under test: any exception, compared with CPython's
        return ("raise", type(exc), str(exc))


def bits(x):
    """A value with its type, floats by their bits (so -0.0 and NaN compare exactly)."""
    if type(x) is float:
        return ("float", "nan" if math.isnan(x) else struct.pack("<d", x))
    if type(x) in (tuple, list):
        return (type(x), tuple(bits(v) for v in x))
    return (type(x), x)


def _compared(result):
    return ("return", bits(result[1])) if result[0] == "return" else result


def assert_like_python(compiled, *args, **kwargs):
    """`compiled(*args, **kwargs)` returns/raises exactly what its Python function does, and
    leaves the PEP 523 hook uninstalled."""
    expected = outcome(compiled.py_func, *args, **kwargs)
    got = outcome(compiled, *args, **kwargs)
    assert _compared(got) == _compared(expected), (args, kwargs, got, expected)
    assert not native.installed()
    return got


def same(fn, *args):
    """The traced `fn` (fusion off) returns or raises exactly what CPython does for `args`."""
    expected = outcome(fn, *args)
    got = outcome(trace(fn, fuse_fma=False, fullgraph=True), *args)
    if got[0] == "raise" and issubclass(got[1], UnsupportedError):
        pytest.fail(f"{fn.__name__}{args}: the tracer cannot compile it: {got[2]}")
    assert _compared(got) == _compared(expected), (args, got, expected)
    return _compared(got)


def unsupported(fn, *args, match: str = ""):
    with pytest.raises(UnsupportedError, match=match):
        trace(fn, fuse_fma=False, fullgraph=True)(*args)
