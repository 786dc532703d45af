"""The oracles the differential tests compare against, shared by every test module.

- CPython: `outcome(fn, args)` is what a call returns or raises; `same_outcome` compares two of
  them bit for bit (`same_value`) or within a tolerance (`close_value`); `show` prints a value
  with its float bits, for failure messages.
- Calculus: `central_difference` is the finite-difference derivative gradients are checked against.
- NumPy: `array_bits` is a result's bytes, dtype and shape, to compare arrays bit for bit.
"""
from __future__ import annotations

import math
import struct


def outcome(fn, args):
    """('return', value) or ('raise', exception type, message)."""
    try:
        return ("return", fn(*args))
    except Exception as exc:   # the outcome under test: any exception, compared with CPython's
        return ("raise", type(exc), str(exc))


def float_bits(x: float) -> bytes:
    return struct.pack("<d", x)


def same_value(a, b) -> bool:
    """Bit-for-bit equality of results: same types all the way down; NaN matches NaN."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return (math.isnan(a) and math.isnan(b)) or float_bits(a) == float_bits(b)
    if type(a) is complex:
        return same_value(a.real, b.real) and same_value(a.imag, b.imag)
    if type(a) in (tuple, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return a == b


def close_value(a, b, rel_tol: float) -> bool:
    """Equality up to a relative tolerance on floats (NaN matches NaN, inf only the same inf)."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or math.isclose(a, b, rel_tol=rel_tol, abs_tol=0.0)
    if type(a) is complex:
        return close_value(a.real, b.real, rel_tol) and close_value(a.imag, b.imag, rel_tol)
    if type(a) in (tuple, list):
        return len(a) == len(b) and all(close_value(x, y, rel_tol) for x, y in zip(a, b))
    return a == b


def same_outcome(got, expected, values=same_value, **kw) -> bool:
    """Same exception type and message, or results equal under `values`."""
    if got[0] != expected[0]:
        return False
    if got[0] == "raise":
        return got[1] is expected[1] and got[2] == expected[2]
    return values(got[1], expected[1], **kw)


def show(x) -> str:
    if type(x) is float:
        return f"{x!r} ({float_bits(x)[::-1].hex()})"
    if type(x) in (tuple, list):
        inner = ", ".join(show(v) for v in x)
        return f"({inner})" if type(x) is tuple else f"[{inner}]"
    if hasattr(x, "__dict__") and not isinstance(x, type):
        return f"{type(x).__name__}({', '.join(f'{k}={show(v)}' for k, v in vars(x).items())})"
    return repr(x)


def show_outcome(o) -> str:
    return f"returned {show(o[1])}" if o[0] == "return" else f"raised {o[1].__name__}({o[2]!r})"


def close(a: float, b: float, rel: float, abs_: float) -> bool:
    """Two floats within rel/abs tolerance (NaN matches NaN)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def central_difference(f, args: tuple, i: int) -> float:
    """d f / d args[i] by a central difference with a step relative to the argument."""
    h = 1e-6 * max(1.0, abs(args[i]))
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2.0 * h)


def array_bits(x):
    """A NumPy result (or a tuple of them) as its bytes (C order), dtypes and shapes: equal only
    bit for bit (-0.0 is not 0.0, NaN payloads count)."""
    import numpy as np
    if isinstance(x, tuple):
        return tuple(map(array_bits, x))
    return np.ascontiguousarray(x).tobytes() + str(np.asarray(x).dtype).encode() + str(np.shape(x)).encode()
