"""No operation kills the process: every op that takes integers (or turns a float into one) is run
with the edge values, on scalars against CPython and on int64 arrays against NumPy.

The instructions LLVM may trap on (integer division and remainder by zero and INT_MIN / -1) raise
SIGFPE, which ends the process: so the cases run in a child process, and the test fails on its
exit status as well as on any result, exception or warning that differs. The table below is
checked against the op registry: an op that gains an integer lowering must be listed here, with
the Python that exercises it or the reason it cannot trap.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from codegen.lowerings import LOWERINGS
from tracer import ir

# op -> (scalar expression, array expression) over a and b; None where Python has no spelling
INTEGER_OPS = {
    "add": ("a + b", "a + b"), "sub": ("a - b", "a - b"), "mul": ("a * b", "a * b"),
    "div": ("a / b", "a / b"), "floordiv": ("a // b", "a // b"), "mod": ("a % b", "a % b"),
    "pow": ("a ** b", "a ** b"), "neg": ("-a", "-a"), "abs": ("abs(a)", "abs(a)"),
    "min": ("min(a, b)", None), "max": ("max(a, b)", None),
    "minimum": (None, "np.minimum(a, b)"), "maximum": (None, "np.maximum(a, b)"),
    "lt": ("a < b", "a < b"), "le": ("a <= b", "a <= b"), "gt": ("a > b", "a > b"),
    "ge": ("a >= b", "a >= b"), "eq": ("a == b", "a == b"), "ne": ("a != b", "a != b"),
    "to_bool": ("bool(a)", None), "to_f64": ("float(a)", "a * 1.0"), "to_f32": (None, None),
}
# float -> int conversions: out of range, nan and inf are where fptosi gives poison
FLOAT_TO_INT = {"to_i64": ("int(a)", None)}
NOT_REACHABLE_FROM_PYTHON = {"to_f32": "float32 values come only from float32 arrays"}

INTS = [0, 1, -1, 2, -2, 7, -7, 2 ** 62, ir.I64_MAX, ir.I64_MIN, ir.I64_MIN + 1]
SMALL_EXPONENTS = [0, 1, 2, 3, -1, -2, 63, 64]
FLOATS = ["0.0", "-0.0", "0.5", "-1.5", "1e300", "-1e300", "9.223372036854776e18", "-9.223372036854776e18",
          "float('inf')", "float('-inf')", "float('nan')"]


def test_every_integer_lowering_is_exercised():
    with_int_rule = {name for name, rules in LOWERINGS.items() if ir.I64 in rules}
    assert with_int_rule == set(INTEGER_OPS), "list the op in INTEGER_OPS with the Python that runs it"
    assert set(LOWERINGS["to_i64"]) >= {ir.F64}
    for name, (scalar, array) in INTEGER_OPS.items():
        assert scalar or array or name in NOT_REACHABLE_FROM_PYTHON, name


CHILD = textwrap.dedent("""
    import json, math, sys, warnings
    import numpy as np
    from tracer import trace

    cases = json.loads(sys.argv[1])
    failures = []

    def outcome(fn, *args):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                r = fn(*args)
            except Exception as exc:
                return ("raises", type(exc).__name__, str(exc)), sorted({str(w.message) for w in caught})
        if isinstance(r, np.ndarray):
            r = (str(r.dtype), r.tolist())
        return ("returns", repr(r)), sorted({str(w.message) for w in caught})

    for expr, kind, pairs in cases:
        namespace = {"np": np, "math": math}
        exec(f"def f(a, b):\\n    return {expr}\\n", namespace)
        plain = namespace["f"]
        compiled = trace(plain)
        for a, b in pairs:
            if kind == "array":
                a, b = np.array(a, dtype=np.int64), np.array(b, dtype=np.int64)
            elif kind == "float":
                a, b = eval(a), 1.0
            want, got = outcome(plain, a, b), outcome(compiled, a, b)
            if want != got:
                failures.append([expr, kind, repr(a), repr(b), repr(want), repr(got)])
    print(json.dumps(failures))
""")


def _run_child(cases) -> list:
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cases)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, f"the child died (status {proc.returncode}):\n{proc.stderr[-2000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _int_pairs(name: str) -> list:
    exponents = SMALL_EXPONENTS if name == "pow" else INTS
    return [(a, b) for a in INTS for b in exponents]


def test_integer_ops_on_scalars_match_cpython():
    cases = [(scalar, "scalar", _int_pairs(name)) for name, (scalar, _) in INTEGER_OPS.items() if scalar]
    cases += [(scalar, "float", [(x, None) for x in FLOATS]) for scalar, _ in FLOAT_TO_INT.values()]
    assert _run_child(cases) == []


@pytest.mark.parametrize("name", sorted(n for n, (_, array) in INTEGER_OPS.items() if array))
def test_integer_ops_on_int64_arrays_match_numpy(name):
    # whole columns at once: an edge value in one element must not disturb the others
    pairs = _int_pairs(name)
    columns = [([a for a, _ in pairs], [b for _, b in pairs])]
    # and each edge pair alone, where a failure is the whole call's
    columns += [([a], [b]) for a, b in pairs if b in (0, -1)]
    if name == "pow":       # NumPy: "Integers to negative integer powers are not allowed."
        columns = [(a, b) for a, b in columns if min(b) >= 0] + [([2], [-1])]
    assert _run_child([(INTEGER_OPS[name][1], "array", columns)]) == []


SIZES_CHILD = textwrap.dedent("""
    import numpy as np
    from tracer import trace

    @trace
    def zeros(n, m):
        return np.zeros((n, m))

    for n, m in [(2 ** 62, 1), (2 ** 40, 2 ** 40), (2 ** 31, 2 ** 31), (-1, 3)]:
        try:
            np.zeros((n, m))
        except Exception as exc:
            want = (type(exc).__name__, str(exc))
        try:
            zeros(n, m)
        except Exception as exc:
            got = (type(exc).__name__, str(exc))
        assert got == want, (n, m, got, want)
    print("ok")
""")


def test_sizes_whose_byte_count_overflows_raise_numpys_error():
    proc = subprocess.run([sys.executable, "-c", SIZES_CHILD], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
