"""The fuzzer's oracle: a case's function compiled by `trace` against the same function run by
CPython (and NumPy), call by call, in the worker process (fuzz_worker.py).

For each argument tuple, twice (the first call compiles, the second may take the native path),
on fresh copies of the arguments:
- the same result: the same types all the way down (np.float64, np.int64 and np.bool_ scalars
  count as float, int and bool: the tracer documents returning Python scalars for them), floats
  by their bits with any NaN matching any NaN, arrays of the same dtype and shape with the same
  bits (NaN matching NaN); or the same exception type with the same message;
- the argument arrays hold the same bits afterwards (in-place writes must match);
- the same warnings (category and message, as sets), unless the check is turned off; NumPy's
  floating-point warnings under its default error state (underflow ignored: compiled code does
  not watch for underflow);
- the PEP 523 hook is not left installed.

A verdict is a dict: status "pass", "skip" (the tracer said it cannot compile the program: a
`TracerError` other than `InternalError`) or "fail", with a failure `key` that says what kind of
failure it is (what the reducer keeps while it shrinks the program): `internal:KeyError` (an
InternalError and the error inside it), `error:RuntimeError` (an exception raised inside the
tracer, codegen or llvmlite where CPython did not raise it), `mismatch:value`,
`mismatch:raise:ValueError->return` (CPython's outcome -> the compiled one), `mismatch:args`,
`warnings`, `hook`; the worker's parent adds `crash:SIGSEGV` and `hang`. Results equal except
in their last bits, from a program that sums (sum, mean, prod, dot: NumPy sums pairwise, compiled
code in order), are `pass` with `rounding` set.
"""
from __future__ import annotations

import math
import os
import re
import struct
import traceback
import warnings

import numpy as np
from array_program_gen import argument_namespace
from program_gen import load_module

from tracer import TracerError, native, trace
from tracer.errors import InternalError

REDUCTIONS = re.compile(r"\b(sum|mean|prod|dot)\(")
_OURS = tuple(os.sep + name + os.sep for name in ("tracer", "codegen", "llvmlite"))


def outcome(fn, args, record_warnings: bool):
    """('return', value, warnings) or ('raise', exception, warnings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("return", fn(*args))
        except Exception as exc:   # the outcome under test: any exception, compared with CPython's
            result = ("raise", exc)
    seen = sorted({(w.category.__name__, str(w.message)) for w in caught}) if record_warnings else []
    return result + (seen,)


# ------------------------------------------------------------------------------ values
def _scalar(x):
    """NumPy's float64/int64/bool scalars as the Python ones they equal (see the docstring)."""
    if type(x) is np.float64:
        return float(x)
    if type(x) is np.int64:
        return int(x)
    if type(x) is np.bool_:
        return bool(x)
    return x


def _float_bits(x) -> bytes:
    return struct.pack("<d", x)


def _arrays_equal(a, b, close: bool) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        if not np.array_equal(nan_a, nan_b):
            return False
        a, b = a[~nan_a], b[~nan_b]
        if close:
            return bool(np.all((np.signbit(a) == np.signbit(b)) & np.isclose(a, b, rtol=1e-12, atol=0.0)))
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def same_value(a, b, close: bool = False) -> bool:
    """Bit-for-bit (with `close`: up to the last bits of a sum) equality of results."""
    a, b = _scalar(a), _scalar(b)
    if type(a) is not type(b):
        return False
    if type(a) is np.ndarray:
        return _arrays_equal(a, b, close)
    if type(a) is float:
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if close and math.copysign(1.0, a) == math.copysign(1.0, b) and math.isclose(a, b, rel_tol=1e-12):
            return True
        return _float_bits(a) == _float_bits(b)
    if type(a) is np.float32:
        return (np.isnan(a) and np.isnan(b)) or a.tobytes() == b.tobytes()
    if type(a) in (tuple, list):
        return len(a) == len(b) and all(same_value(x, y, close) for x, y in zip(a, b))
    return a == b


def show(x) -> str:
    if type(x) is np.ndarray:
        return f"np.{np.array_repr(x)}"
    if type(x) in (tuple, list):
        inner = ", ".join(show(v) for v in x)
        return f"({inner})" if type(x) is tuple else f"[{inner}]"
    if isinstance(x, float) and math.isfinite(x):
        return f"{x!r} ({float(x).hex()}, {type(x).__name__})"
    return f"{x!r} ({type(x).__name__})"


def show_outcome(o) -> str:
    if o[0] == "return":
        text = f"returned {show(o[1])}"
    else:
        text = f"raised {type(o[1]).__name__}: {o[1]}"
    return text + (f"; warnings {o[2]}" if o[2] else "")


def _name(o) -> str:
    return "return" if o[0] == "return" else type(o[1]).__name__


def _from_tracer(exc: BaseException) -> bool:
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and any(part in frames[-1].filename for part in _OURS)


# ------------------------------------------------------------------------------ a case
def compare(expected, got, close: bool) -> str | None:
    """The failure key for one call's outcomes, or None when they agree."""
    if got[0] == "raise" and isinstance(got[1], InternalError):
        inner = re.search(r"\((\w+)[:)]", str(got[1]))
        return f"internal:{inner.group(1) if inner else 'InternalError'}"
    if expected[0] != got[0] or (got[0] == "raise" and (type(got[1]) is not type(expected[1])
                                                        or str(got[1]) != str(expected[1]))):
        if got[0] == "raise" and _from_tracer(got[1]) and not (
                expected[0] == "raise" and type(expected[1]) is type(got[1])):
            return f"error:{type(got[1]).__name__}"
        return f"mismatch:raise:{_name(expected)}->{_name(got)}" if "raise" in (got[0], expected[0]) \
            or expected[0] != got[0] else "mismatch:value"
    if got[0] == "return" and not same_value(got[1], expected[1]):
        return "mismatch:value" if not (close and same_value(got[1], expected[1], close=True)) else "rounding"
    return None


def run_case(source: str, calls: list, check_warnings: bool = True, progress=lambda *a: None) -> dict:
    """The verdict on one case (see the module docstring); `progress(index, phase)` is told
    where it is, so a parent that must kill a hung worker knows which call hung."""
    namespace = argument_namespace()
    fn = load_module(source)["f"]
    compiled = trace(fn, fuse_fma=False, fullgraph=True)
    close = bool(REDUCTIONS.search(source))
    rounding = False
    for index, texts in enumerate(calls):
        for repeat in range(2):
            py_args = [eval(t, namespace) for t in texts]
            tr_args = [eval(t, namespace) for t in texts]
            progress(index, "python")
            with np.errstate(all="warn", under="ignore"):
                expected = outcome(fn, py_args, check_warnings)
            progress(index, "traced")
            with np.errstate(all="warn", under="ignore"):
                got = outcome(compiled, tr_args, check_warnings)
            where = {"call": index, "repeat": repeat, "args": texts,
                     "expected": show_outcome(expected), "got": show_outcome(got)}
            if got[0] == "raise" and isinstance(got[1], TracerError) and not isinstance(got[1], InternalError):
                reason = str(got[1]).splitlines()[0]
                return {"status": "skip", "reason": re.sub(r"^\S+:\d+: ", "", reason), **where}
            key = compare(expected, got, close)
            if key == "rounding":
                rounding, key = True, None
            if key is None and not same_value(tuple(tr_args), tuple(py_args)):
                key = "mismatch:args"
                where["got"] += f"; arguments after: {show(tuple(tr_args))}"
                where["expected"] += f"; arguments after: {show(tuple(py_args))}"
            if key is None and check_warnings and got[2] != expected[2]:
                key = "warnings"
            if key is None and native.installed():
                key = "hook"
            if key is not None:
                if got[0] == "raise" and not key.startswith("mismatch"):
                    where["traceback"] = "".join(traceback.format_exception(got[1]))[-3000:]
                return {"status": "fail", "key": key, **where}
    return {"status": "pass", "rounding": rounding}
