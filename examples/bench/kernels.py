"""Kernel benchmark suite: the NumPy kernel corpus, the plain-Python program corpus and op-by-op
workloads, each timed compiled with `tracer.trace`, as plain NumPy/CPython, and with numba's `njit`
of the same function, in one process, on one thread; with --parallel, at the large size, also on
every core.

    python examples/bench/kernels.py [--quick] [--filter SUBSTR] [--group ops|numpy|python] [--json PATH] [--repeat 3]
        [--min-sample 0.02] [--max-call 0.05] [--large-elements 1000000] [--no-numba] [--parallel]

What runs:
  - each kernel of `tests/support/numpy_kernels.py`, at two sizes: "small", the corpus's own
    arguments (tens to hundreds of elements), and "large", its arrays scaled (`find_large`): tiled
    along the first axis (all arrays, else those of the longest first axis), or square matrices
    made block-diagonal, or tiled along every axis, whichever the plain function accepts without
    an error, a new floating-point warning or another kind of result (a kernel without arrays
    scales its int arguments: steps, grid sizes), grown until the arrays hold --large-elements
    elements or a plain call would pass --max-call seconds. "one" size where nothing fits;
  - each program of `tests/support/py_programs.py`, at the corpus's arguments only (counts, lists,
    strings whose meaning differs from program to program);
  - op-by-op workloads as in `numpy_ops.py`, at 1e3 and 1e6 elements (--quick: small sizes only).

Checked before timed: after the warm-up call that compiles, the compiled call must give what the
plain function gives on a copy of the arguments, and leave the arguments as it does: floats within
rtol 1e-12 of the largest value of their array (FMA fusion on, the default), all else exactly; a
mismatch is printed instead of a ratio. numba: values only, floats within 1e-9 (16 ulps in float32).
A kernel that updates its arguments is timed on fresh copies made outside the timed region.

Timing: calls per sample calibrated to --min-sample seconds, then --repeat samples of each method
in alternation, the best kept. tr/np = tracer time / NumPy time (below 1: the tracer is faster),
speedup = CPython time / tracer time, tr/nb = tracer time / numba time. mode: blank, compiled
whole; "brk", compiled with a graph break or calls into CPython; "py", run as Python (the
fallback). "compiled for n == 8": the tracer specialized the call on an argument's value.
Geomeans follow. numba is optional ("numba not installed": no numba columns).

--parallel (not with --quick): the large rows of the NumPy kernels and op-by-op workloads also
time `tracer.trace(fn, parallel=True)` (array maps and float sums on the runtime's thread pool:
TRACER_NUM_THREADS threads, default the CPUs) and numba's `njit(fn, parallel=True)` (NUMBA_NUM_THREADS
is then the CPU count, and numba runs as many threads as the tracer's pool), each checked as
above, then timed in alternation with each other after the one-thread figures. tr par, nb par:
their times; tr x = one-thread tracer time / parallel tracer time (the speedup from threads; the
one-thread `trace` never uses the pool), nb x = numba's `njit` time / its parallel time. Their
geomeans over the large rows follow the others, with tracer parallel / numba parallel time, and
numba's threading layer. BLAS stays on one thread (numba's OpenMP layer sets its own count).
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")        # --parallel sets NUMBA_NUM_THREADS again, before numba's import

import argparse  # noqa: E402  (after the thread settings above)
import copy  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import math  # noqa: E402
import pathlib  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from array import array  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from numpy_kernels import KERNELS  # noqa: E402
from py_programs import PROGRAMS  # noqa: E402

import tracer  # noqa: E402
import tracer.native  # noqa: E402

TRACER_RTOL, NUMBA_RTOL = 1e-12, 1e-9
POOL_BYTES = 256 << 20            # fresh copies for in-place kernels, per sample, at most


# ----------------------------------------------------------------------------- op-by-op workloads
# name, function, (small arguments, large arguments), as in numpy_ops.py
VECTORS = tuple((lambda n=n: (np.random.default_rng(0).random(n),)) for n in (1000, 1_000_000))
MATRICES = tuple((lambda n=n: (np.random.default_rng(1).random((n, n)),)) for n in (32, 1000))
OPS = [
    ("a ** 2", lambda a: a ** 2, VECTORS),
    ("a ** 3", lambda a: a ** 3, VECTORS),
    ("np.sqrt(np.sum(x ** 2, axis=1))", lambda x: np.sqrt(np.sum(x ** 2, axis=1)), MATRICES),
    ("np.sum(x * x, axis=1)", lambda x: np.sum(x * x, axis=1), MATRICES),
    ("np.exp(a)", lambda a: np.exp(a), VECTORS),
    ("np.log(a)", lambda a: np.log(a), VECTORS),
    ("np.tanh(a)", lambda a: np.tanh(a), VECTORS),
    ("a.sum()", lambda a: a.sum(), VECTORS),
    ("np.sum(a * a + a)", lambda a: np.sum(a * a + a), VECTORS),
    ("(a - a.mean()) / a.std()", lambda a: (a - a.mean()) / a.std(), VECTORS),
    ("np.where(a > 0.5, a, 0.0).sum()", lambda a: np.where(a > 0.5, a, 0.0).sum(), VECTORS),
]


# ----------------------------------------------------------------------------- checking results
def outcome(fn, args):
    """(result, None) or (None, the exception raised)."""
    try:
        return fn(*args), None
    except Exception as exc:        # the exception is what gets compared
        return None, exc


def _equal(got, want) -> bool:
    try:
        return bool(np.all(got == want)) if isinstance(got, np.ndarray) else bool(got == want)
    except Exception:               # values that do not compare: not equal
        return False


def differs(got, want, rtol: float, strict, where: str = "result") -> str | None:
    """None when `got` matches `want`, else what differs. `strict` (the tracer): the same kinds of value
    as the plain call, NumPy's dtypes, and with strict="types" (Python programs) the same Python
    types; not strict (numba): values only. Floats within `rtol`, the rest exactly."""
    if (isinstance(want, (list, array)) and want and all(type(x) is float for x in want)
            and isinstance(got, type(want) if strict else (list, tuple, array, np.ndarray))):
        if strict and (len(got) != len(want) or not all(type(x) is float for x in got)
                       or isinstance(got, array) and got.typecode != want.typecode):
            return f"{where}: {type(got).__name__} of other items or length"
        # a list of floats is compared as one array: its largest value sets the scale
        return differs(np.array(got, dtype=float), np.array(want, dtype=float), rtol, False, where)
    sequences = (tuple, list) if strict else (tuple, list, np.ndarray)
    if isinstance(want, (tuple, list)) and isinstance(got, sequences) and (not strict or type(got) is type(want)):
        if len(got) != len(want):
            return f"{where}: length {len(got)} vs {len(want)}"
        return next((d for k, (g, w) in enumerate(zip(got, want))
                     if (d := differs(g, w, rtol, strict, f"{where}[{k}]"))), None)
    if isinstance(want, dict) and isinstance(got, dict):
        if list(got) != list(want):
            return f"{where}: keys differ"
        return next((d for k in want if (d := differs(got[k], want[k], rtol, strict, f"{where}[{k!r}]"))), None)
    if isinstance(want, array) and isinstance(got, array) and got.typecode == want.typecode:
        return differs(got.tolist(), want.tolist(), rtol, strict, where)
    numeric = (int, float, complex, np.generic, np.ndarray)
    kinds = f"{type(got).__name__} vs {type(want).__name__}"
    if not isinstance(want, numeric) or (isinstance(want, bool) and not strict):
        if strict and type(got) is not type(want):
            return f"{where}: {kinds}"
        return None if _equal(got, want) else f"{where}: {got!r} vs {want!r}"[:100]
    if strict and (not isinstance(got, numeric) or isinstance(want, np.ndarray) != isinstance(got, np.ndarray)
                   or (strict == "types" and type(got) is not type(want))):
        return f"{where}: {kinds}"
    g, w = np.asarray(got), np.asarray(want)
    if strict and (g.dtype != w.dtype if isinstance(want, np.ndarray) else g.dtype.kind != w.dtype.kind):
        return f"{where}: {kinds}, dtype {g.dtype} vs {w.dtype}"
    if g.shape != w.shape:
        return f"{where}: shape {g.shape} vs {w.shape}"
    if w.dtype.kind in "fc" or g.dtype.kind in "fc":
        if g.dtype.kind not in "biufc":
            return f"{where}: dtype {g.dtype} vs {w.dtype}"
        if not strict and w.dtype.kind in "fc":
            rtol = max(rtol, 16 * float(np.finfo(w.dtype).eps))     # numba, in float32: float32's rounding
        scale = float(np.max(np.abs(w[np.isfinite(w)]), initial=0.0))
        if np.allclose(g, w, rtol=rtol, atol=rtol * scale, equal_nan=True):
            return None
        with np.errstate(all="ignore"):
            worst = np.nanmax(np.abs(g - w)) / scale if scale else math.inf
        return f"{where}: differs by {worst:.1e} of its largest value (> {rtol:g})"
    return None if np.array_equal(g, w) else f"{where}: values differ"


def same_exception(got: BaseException | None, want: BaseException | None, strict: bool) -> bool:
    return (type(got) is type(want) and (str(got) == str(want) or not strict)) if want else got is None


def check(fn, args, want, want_exc, plain_after, rtol, strict) -> str | None:
    """Runs `fn` on a copy of `args`: None if it does what the plain call did, else what differs."""
    mine = copy.deepcopy(args)
    got, exc = outcome(fn, mine)
    if not same_exception(exc, want_exc, strict):
        return f"raised {type(exc).__name__}: {exc}" if exc else f"returned where the plain call raises {want_exc!r}"
    problem = None if want_exc else differs(got, want, rtol, strict)
    for k, (g, w) in enumerate(zip(mine, plain_after)):
        problem = problem or differs(g, w, rtol, strict, f"argument {k} after the call")
    return problem


def numba_reason(exc: BaseException) -> str:
    """The short reason numba gives for not compiling (or running) a function."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith(
        ("Failed in ", "During:", "- Resolution failure", ">>>", "File \"", "^"))]
    reason = lines[0] if lines else ""
    reason = re.sub(r"Function\(<(?:built-in )?(?:function|intrinsic) (\w+)[^>]*>\)", r"\1()", reason)
    reason = re.sub(r"\. Raised from .*", "", reason).rstrip(":")
    reason = re.sub(r"<module '([\w.]+)' from [^>]*>?", r"<module \1>", reason)
    return f"{type(exc).__name__}: {reason}"[:90] if reason else type(exc).__name__


# ----------------------------------------------------------------------------- larger arguments
def arrays_of(args):
    return [a for a in args if isinstance(a, np.ndarray) and a.ndim >= 1]


PERTURB = 2.0 ** -30     # copy i of a float64 array is scaled by 1 - i * PERTURB: no exact ties between copies


def _perturbed(tiled, reps):
    """`tiled` (np.tile of an array by `reps`) with copy number i (all axes counted) of a float64 or
    complex128 array scaled by 1 - i * PERTURB, so that sorts and ranks meet no ties the corpus's
    data does not have; other dtypes as they are."""
    if tiled.dtype not in (np.float64, np.complex128):
        return tiled
    copy_index, weight = np.zeros(()), 1
    for axis, k in enumerate(reps):
        n = tiled.shape[axis] // k
        shape = [1] * tiled.ndim
        shape[axis] = -1
        copy_index = copy_index + (np.arange(tiled.shape[axis]) // n * weight).reshape(shape)
        weight *= k
    return tiled * (1.0 - PERTURB * copy_index)


def tile_rows(a, k):
    reps = (k,) + (1,) * (a.ndim - 1)
    return _perturbed(np.tile(a, reps), reps)


def tile_all(a, k):
    return _perturbed(np.tile(a, (k,) * a.ndim), (k,) * a.ndim)


def block_diagonal(a, k):
    """k copies of a square float matrix along the diagonal (each scaled as in `_perturbed`): keeps
    what a solver needs (nonsingular, dominant diagonal, symmetric positive definite)."""
    if a.ndim == 2 and a.shape[0] == a.shape[1] and a.dtype.kind in "fc":
        return np.kron(np.diag(1.0 - PERTURB * np.arange(k)).astype(a.dtype), a)
    return tile_all(a, k)


def _longest_rows(args, k):
    n = max(a.shape[0] for a in arrays_of(args))
    return [tile_rows(a, k) if isinstance(a, np.ndarray) and a.ndim >= 1 and a.shape[0] == n else a for a in args]


def _each_array(scale):
    return lambda args, k: [scale(a, k) if isinstance(a, np.ndarray) and a.ndim >= 1 else a for a in args]


def _ints(args, k):
    return [a * k if type(a) is int and a >= 2 else a for a in args]


# name, applies to the arguments, scale(args, k), the factors k tried in turn
STRATEGIES = [
    ("rows", arrays_of, _each_array(tile_rows), (4, 16, 64, 256, 1024, 4096, 16384)),
    ("rows of the longest", arrays_of, _longest_rows, (4, 16, 64, 256, 1024, 4096, 16384)),
    ("block-diagonal", lambda args: any(a.ndim == 2 and a.shape[0] == a.shape[1] for a in arrays_of(args)),
     _each_array(block_diagonal), (2, 4, 8, 16, 32, 64, 128)),
    ("all axes", arrays_of, _each_array(tile_all), (2, 4, 8, 16, 32, 64, 128)),
    ("ints", lambda args: not arrays_of(args) and any(type(a) is int and a >= 2 for a in args), _ints,
     (4, 16, 64, 256, 1024)),
]


def elements(args) -> int:
    return sum(a.size for a in arrays_of(args))


def kind_of(value):
    """What a result is, without its values or shapes: kept by a valid scaling."""
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(kind_of(v) for v in value))
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.ndim)
    return type(value).__name__


def finite(value) -> bool:
    if isinstance(value, (tuple, list)):
        return all(finite(v) for v in value)
    try:
        return bool(np.all(np.isfinite(value)))
    except TypeError:
        return True


def strict_call(fn, args):
    """(result, seconds), calling `fn` with floating-point warnings raised as errors; raises on an error."""
    with warnings.catch_warnings(), np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
        warnings.simplefilter("error")
        start = time.perf_counter()
        result = fn(*args)
        return result, time.perf_counter() - start


def find_large(fn, make_args, target: int, max_call: float):
    """(strategy name, make_large) for the kernel's large size, or None: see the module docstring."""
    try:
        small, small_seconds = strict_call(fn, make_args())
    except Exception:
        return None                 # the corpus's own call warns or raises: no scaling can be checked
    if small_seconds > max_call:
        return None
    for name, applies, scale, factors in STRATEGIES:
        if not applies(make_args()):
            continue
        chosen, before = None, None
        for k in factors:
            args = scale(make_args(), k)
            if chosen and elements(args) > 8 * target:
                break
            try:
                result, seconds = strict_call(fn, args)
            except Exception:
                break
            if kind_of(result) != kind_of(small) or (finite(small) and not finite(result)) or seconds > 4 * max_call:
                break
            chosen = k
            growth = elements(args) / before if before else k
            before = elements(args)
            if (before and before >= target) or seconds * growth > max_call:
                break
        if chosen:
            return name, (lambda scale=scale, k=chosen: scale(make_args(), k))
    return None


def size_label(args) -> str:
    """The shape of the largest array argument (+ how many others), else the sizes of the arguments."""
    arrays = arrays_of(args)
    if arrays:
        biggest = max(arrays, key=lambda a: a.size)
        return "x".join(map(str, biggest.shape)) + (f" +{len(arrays) - 1}" if len(arrays) > 1 else "")
    sized = [f"{type(a).__name__}[{len(a)}]" for a in args if isinstance(a, (list, tuple, dict, set, str, array))]
    ints = [str(a) for a in args if type(a) is int]
    return ",".join(sized + (["n=" + ",".join(ints)] if ints else [])) or "scalars"


# ----------------------------------------------------------------------------- timing
def nbytes(args) -> int:
    return sum(a.nbytes if isinstance(a, np.ndarray) else sys.getsizeof(a) * 8 for a in args) or 1


def make_runner(fn, args, fresh: bool, raises: bool):
    """run(n): seconds for n calls of fn on `args` (on n fresh copies of them when `fresh`)."""
    def call(*a):
        try:
            fn(*a)
        except Exception:       # the plain call raises too (checked): a call that raises is timed
            pass

    def run(n):
        pool = [copy.deepcopy(args) for _ in range(n)] if fresh else [args] * n
        target, start = call if raises else fn, time.perf_counter()
        for a in pool:
            target(*a)
        return time.perf_counter() - start
    return run


def best_times(runners: dict, repeat: int, min_sample: float, max_calls: int) -> dict:
    """Seconds per call of each runner: calls per sample calibrated to at least `min_sample` seconds
    (at most `max_calls`), then `repeat` samples of each, in alternation; the best kept."""
    calls = {}
    for name, run in runners.items():
        n = 1
        while run(n) < min_sample and n < max_calls:
            n *= 2
        calls[name] = n
    best = dict.fromkeys(runners, math.inf)
    for _ in range(repeat):
        for name, run in runners.items():
            best[name] = min(best[name], run(calls[name]) / calls[name])
    return best


# ----------------------------------------------------------------------------- the tracer's mode
def tracer_mode(traced, args) -> tuple[str, list[str]]:
    """('' compiled whole, 'brk' compiled with a graph break or calls into CPython, 'py' run as Python;
    the guards on argument values, such as `n == 8`: the call was compiled for those values, often
    folded to its result), read from the specialization the last call made (else from
    `tracer.explain`, which compiles again)."""
    specs = getattr(traced, "specializations", None) or [None]
    spec, kind = specs[-1], type(specs[-1]).__name__
    code = traced.py_func.__code__
    names = "|".join(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]) or "$^"
    try:
        guards = [g for g in (spec.prefix if kind == "BreakRun" else spec).guards() if re.match(f"({names}) == ", g)]
    except AttributeError:
        guards = []
    if kind == "PythonRun":
        return "py", []
    if kind == "BreakRun":
        return "brk", guards
    walk = getattr(getattr(spec, "optimized", None), "walk", None)
    if kind == "Specialization" and walk is not None:
        return ("brk" if any(v.op == "python_call" for v in walk()) else ""), guards
    explanation = tracer.explain(traced, *args)
    return ("" if explanation.compiled and not explanation.breaks else "brk" if explanation.compiled else "py"), []


# ----------------------------------------------------------------------------- one case, one size
class Case:
    def __init__(self, group: str, name: str, fn, make_small, make_large=None):
        self.group, self.name, self.fn, self.make_small, self.make_large = group, name, fn, make_small, make_large
        self.traced = tracer.trace(fn)
        self.traced_parallel = None     # tracer.trace(fn, parallel=True), made for the first large row
        self.jitted = None          # numba's dispatcher, or the reason there is none (a str)
        self.jitted_parallel = None     # the same for njit(parallel=True)
        self.scaling = None         # how the large size was made (see STRATEGIES)


def numba_check(case: Case, attr: str, njit, args, expected, row: dict, key: str) -> str | None:
    """numba's check (see `check`), or "n/a: why" where it does not compile or run the function: the
    dispatcher `njit(case.fn)`, made on first use, or the reason, is kept in case.<attr>; the
    warm-up call's seconds go to row[key + "_first_call_s"]."""
    want, want_exc, plain_after = expected
    jitted = getattr(case, attr) or njit(case.fn)
    if not isinstance(jitted, str):
        start = time.perf_counter()
        _, exc = outcome(jitted, copy.deepcopy(args))
        row[f"{key}_first_call_s"] = time.perf_counter() - start
        if exc is not None and not same_exception(exc, want_exc, False):
            jitted = numba_reason(exc)
    setattr(case, attr, jitted)
    if isinstance(jitted, str):
        return "n/a: " + jitted
    return check(jitted, args, want, want_exc, plain_after, NUMBA_RTOL, False)


def measure(case: Case, size: str, make_args, options, numba) -> dict:
    """One row: the case at one size, checked, then timed."""
    args = make_args()
    row = {"group": case.group, "kernel": case.name, "size": size, "shape": size_label(args), "mode": "",
           "value_guards": [], "notes": []}
    plain_args = copy.deepcopy(args)
    want, want_exc = outcome(case.fn, plain_args)
    fresh = differs(plain_args, make_args(), 0.0, True) is not None
    if fresh:
        row["notes"].append("in-place")
    if want_exc:
        row["notes"].append(f"raises {type(want_exc).__name__}")
    start = time.perf_counter()
    outcome(case.traced, copy.deepcopy(args))      # the warm-up call: compiles
    row["tracer_first_call_s"] = time.perf_counter() - start
    row["mode"], row["value_guards"] = tracer_mode(case.traced, args)
    if row["value_guards"]:
        row["notes"].append("compiled for " + ", ".join(g if len(g) < 30 else g[:27] + "..."
                                                        for g in row["value_guards"]))
    strict = "types" if case.group == "python" else True
    row["tracer_check"] = check(case.traced, args, want, want_exc, plain_args, TRACER_RTOL, strict)
    runners = {"plain": make_runner(case.fn, args, fresh, bool(want_exc))}
    if row["tracer_check"] is None:
        runners["tracer"] = make_runner(case.traced, args, fresh, bool(want_exc))
    expected = (want, want_exc, plain_args)
    if numba is not None:
        row["numba_check"] = numba_check(case, "jitted", numba.njit, args, expected, row, "numba")
        if row["numba_check"] is None:
            runners["numba"] = make_runner(case.jitted, args, fresh, bool(want_exc))
    max_calls = max(1, POOL_BYTES // nbytes(args)) if fresh else 1 << 30
    times = best_times(runners, options.repeat, options.min_sample, max_calls)
    if options.parallel and size == "large" and case.group != "python":
        # on every core: checked like the above, then timed apart from the one-thread runners
        parallel = {}
        case.traced_parallel = case.traced_parallel or tracer.trace(case.fn, parallel=True)
        outcome(case.traced_parallel, copy.deepcopy(args))      # the warm-up call: compiles
        row["tracer_par_check"] = check(case.traced_parallel, args, want, want_exc, plain_args, TRACER_RTOL, strict)
        if row["tracer_par_check"] is None:
            parallel["tracer_par"] = make_runner(case.traced_parallel, args, fresh, bool(want_exc))
        if numba is not None:
            njit = lambda fn: numba.njit(fn, parallel=True)
            row["numba_par_check"] = numba_check(case, "jitted_parallel", njit, args, expected, row, "numba_par")
            if row["numba_par_check"] is None:
                parallel["numba_par"] = make_runner(case.jitted_parallel, args, fresh, bool(want_exc))
        times.update(best_times(parallel, options.repeat, options.min_sample, max_calls))
    for name in ("plain", "tracer", "numba", "tracer_par", "numba_par"):
        row[f"{name}_s"] = times.get(name)
    return row


# ----------------------------------------------------------------------------- the table
def us(seconds) -> str:
    return "" if seconds is None else f"{seconds * 1e6:10.3f}" if seconds < 1e-3 else f"{seconds * 1e6:10.1f}"


def ratio(a, b) -> float | None:
    return a / b if a is not None and b is not None else None


def times_column(seconds, problem: str | None, mismatch: str) -> str:
    """A time, else what kept it out: `mismatch` where the check failed, "n/a" where numba did not compile."""
    if problem:
        return f"{'n/a' if problem.startswith('n/a') else mismatch:>10s}"
    return f"{us(seconds):>10}"


def ratio_column(value) -> str:
    return f" {value:6.2f}x" if value is not None else " " * 8


def parallel_columns(row, with_numba: bool, notes: list) -> str:
    """tr par, tr x (and nb par, nb x) of a large row, blank on the others; what failed goes to `notes`."""
    if "tracer_par_check" not in row:
        return " " * (36 if with_numba else 18)
    if row["tracer_par_check"]:
        notes.append(f"MISMATCH (tracer parallel): {row['tracer_par_check']}"[:110])
    line = f" {times_column(row['tracer_par_s'], row['tracer_par_check'], 'mismatch')}"
    line += ratio_column(ratio(row["tracer_s"], row["tracer_par_s"]))
    if with_numba:
        problem = row["numba_par_check"]
        if problem and not (row.get("numba_check") or "").startswith("n/a"):    # else noted already
            notes.append("numba parallel " + problem if problem.startswith("n/a")
                         else f"numba parallel differs: {problem}"[:110])
        line += f" {times_column(row['numba_par_s'], problem, 'differs')}"
        line += ratio_column(ratio(row.get("numba_s"), row["numba_par_s"]))
    return line


def row_line(row, with_numba: bool, name_width: int, parallel: bool = False) -> str:
    python = row["group"] == "python"
    main = ratio(row["plain_s"], row["tracer_s"]) if python else ratio(row["tracer_s"], row["plain_s"])
    vs_numba = ratio(row["tracer_s"], row.get("numba_s"))
    notes = list(row["notes"])
    if row["tracer_check"]:
        notes.insert(0, f"MISMATCH (tracer): {row['tracer_check']}"[:110])
    if with_numba and row.get("numba_check"):
        notes.append("numba " + row["numba_check"] if row["numba_check"].startswith("n/a")
                     else f"numba differs: {row['numba_check']}"[:110])
    shape = row["shape"] if len(row["shape"]) <= 14 else row["shape"][:12] + ".."
    line = f"{row['kernel']:<{name_width}} {row['size']:<5} {shape:<14} {row['mode']:<4}"
    line += f" {us(row['plain_s']):>10} {us(row['tracer_s']):>10}"
    line += f" {main:7.2f}x" if main is not None else f" {'mismatch' if row['tracer_check'] else '':>8}"
    if with_numba:
        line += f" {times_column(row.get('numba_s'), row.get('numba_check'), 'differs')}" + ratio_column(vs_numba)
    if parallel and row["group"] != "python":
        line += parallel_columns(row, with_numba, notes)
    return (line + "  " + "; ".join(notes)).rstrip()


def geomean(values) -> str:
    values = [v for v in values if v is not None and v > 0]
    if not values:
        return "n/a (no rows)"
    return f"{math.exp(sum(map(math.log, values)) / len(values)):.3f}x over {len(values)}"


def print_summary(rows, with_numba: bool, parallel: bool = False) -> None:
    kernels = [r for r in rows if r["group"] != "python"]
    programs = [r for r in rows if r["group"] == "python"]

    def line(what: str, values) -> None:
        if (text := geomean(values)) != "n/a (no rows)":
            print(f"  {what + ':':<63} {text}")

    print("\ngeomeans (rows with a mismatch left out):")
    for size in ("small", "large", "one", None):
        chosen = [r for r in kernels if size is None or r["size"] == size]
        label = f"NumPy kernels and ops, {size + ' size' if size else 'all rows'}"
        line(f"tracer/NumPy, {label}", (ratio(r["tracer_s"], r["plain_s"]) for r in chosen))
        if with_numba:
            line(f"tracer/numba, {label}", (ratio(r["tracer_s"], r.get("numba_s")) for r in chosen))
    line("tracer/NumPy, NumPy kernels and ops compiled whole, all rows",
         (ratio(r["tracer_s"], r["plain_s"]) for r in kernels if not r["mode"]))
    if parallel:
        large = [r for r in kernels if "tracer_par_check" in r]
        line("tracer speedup from threads (tr x), large rows", (ratio(r["tracer_s"], r["tracer_par_s"]) for r in large))
        if with_numba:
            line("numba speedup from threads (nb x), large rows",
                 (ratio(r.get("numba_s"), r["numba_par_s"]) for r in large))
            line("tracer parallel/numba parallel, large rows", (ratio(r["tracer_par_s"], r["numba_par_s"]) for r in large))
    line("speedup vs CPython, Python programs", (ratio(r["plain_s"], r["tracer_s"]) for r in programs))
    line("speedup vs CPython, Python programs not compiled for values",
         (ratio(r["plain_s"], r["tracer_s"]) for r in programs if not r.get("value_guards")))
    if with_numba:
        line("tracer/numba, Python programs", (ratio(r["tracer_s"], r.get("numba_s")) for r in programs))
    numba_na = [bool(r.get("numba_check")) and r["numba_check"].startswith("n/a") for r in rows]
    counts = {"rows": len(rows), "tracer mismatches": sum(bool(r["tracer_check"]) for r in rows),
              "run as Python (py)": sum(r["mode"] == "py" for r in rows),
              "with breaks (brk)": sum(r["mode"] == "brk" for r in rows),
              "compiled for argument values": sum(bool(r.get("value_guards")) for r in rows)}
    if parallel:
        counts["tracer parallel mismatches"] = sum(bool(r.get("tracer_par_check")) for r in rows)
    if with_numba:
        counts["numba n/a"] = sum(numba_na)
        counts["numba differs"] = sum(bool(r.get("numba_check")) for r in rows) - sum(numba_na)
    print("  " + ", ".join(f"{k}: {v}" for k, v in counts.items()))
    for group, label in (("numpy", "NumPy kernels"), ("ops", "op-by-op workloads"), ("python", "Python programs")):
        if failed := sorted({r["kernel"] for r, na in zip(rows, numba_na) if na and r["group"] == group}):
            print(f"numba could not compile or run {len(failed)} {label}: " + ", ".join(failed))


# ----------------------------------------------------------------------------- main
def load_numba():
    """numba, imported here (it is not a dependency of the project), or None."""
    try:
        import numba
    except ImportError:
        return print("numba not installed: no numba columns")
    warnings.filterwarnings("ignore", category=numba.core.errors.NumbaWarning)  # and NumbaPerformanceWarning:
    # "no transformation for parallel execution was possible" (njit(parallel=True) of a function without maps)
    return numba


def cases(options) -> list[Case]:
    entries = ([("ops", name, fn, small, large) for name, fn, (small, large) in OPS]
               + [("numpy", fn.__name__, fn, make, None) for fn, make in KERNELS]
               + [("python", name, fn, make, None) for name, fn, make in PROGRAMS])
    return [Case(*entry) for entry in entries if (options.filter or "").lower() in entry[1].lower()
            and options.group in (None, entry[0])]


GROUPS = {"ops": "op-by-op workloads (tr/np: tracer time / NumPy time)",
          "numpy": "NumPy kernel corpus (tr/np: tracer time / NumPy time)",
          "python": "plain-Python program corpus, one size (speedup: CPython time / tracer time)"}


def sizes_of(case: Case, options) -> list:
    """[(size name, make_args)]: small and large, or the one size."""
    if case.group == "python":
        return [("one", case.make_small)]
    if options.quick:
        return [("small", case.make_small)]
    if case.make_large is None:
        found = find_large(case.fn, case.make_small, options.large_elements, options.max_call)
        if found is None:
            return [("one", case.make_small)]
        case.scaling, case.make_large = found
    return [("small", case.make_small), ("large", case.make_large)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only, fewer and shorter samples")
    parser.add_argument("--filter", metavar="SUBSTR", help="only the kernels whose name contains SUBSTR")
    parser.add_argument("--group", choices=sorted(GROUPS), help="only this group (ops, numpy, python)")
    parser.add_argument("--json", metavar="PATH", help="write the raw figures to PATH")
    parser.add_argument("--repeat", type=int, default=3, help="samples per method (default 3)")
    parser.add_argument("--min-sample", type=float, default=0.02, help="seconds per sample at least (0.02)")
    parser.add_argument("--max-call", type=float, default=0.05,
                        help="the large size stops growing before a plain call takes longer (0.05 s)")
    parser.add_argument("--large-elements", type=int, default=1_000_000,
                        help="the large size grows to about this many array elements (1e6)")
    parser.add_argument("--no-numba", action="store_true", help="leave numba out")
    parser.add_argument("--parallel", action="store_true",
                        help="also time trace(parallel=True) and njit(parallel=True) at the large size")
    options = parser.parse_args()
    if options.parallel and options.quick:
        parser.error("--parallel times the large sizes, which --quick leaves out")
    if options.parallel:
        os.environ["NUMBA_NUM_THREADS"] = str(os.cpu_count() or 1)     # read when numba is imported
    if options.quick:
        options.repeat, options.min_sample = min(options.repeat, 2), min(options.min_sample, 0.005)
    logging.getLogger("tracer.compile").setLevel(logging.ERROR)     # slow compiles: not news here
    numba = None if options.no_numba else load_numba()
    threads = {"tracer": tracer.native.get_num_threads()} if options.parallel else {}
    if options.parallel and numba:
        threads["numba"] = min(threads["tracer"], numba.config.NUMBA_NUM_THREADS)
        numba.set_num_threads(threads["numba"])
    print(f"Python {platform.python_version()}, NumPy {np.__version__}"
          + (f", numba {numba.__version__}" if numba else "") + f", {platform.machine()}, one thread"
          + "".join(f", {name} parallel on {n}" for name, n in threads.items())
          + f"; best of {options.repeat} x >= {options.min_sample} s; times in microseconds per call")
    chosen = cases(options)
    if not chosen:
        sys.exit(f"no kernel matches {options.filter!r}")
    width = max(len(c.name) for c in chosen)
    rows, start, group = [], time.perf_counter(), None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # the corpus's own overflow and nan warnings
        for case in chosen:
            if case.group != group:
                group, python = case.group, case.group == "python"
                print(f"\n{GROUPS[group]}\n{'kernel':<{width}} {'size':<5} {'shape':<14} {'mode':<4} "
                      f"{'CPython' if python else 'NumPy':>10} {'tracer':>10} {'speedup' if python else 'tr/np':>8}"
                      + (f" {'numba':>10} {'tr/nb':>7}" if numba else "")
                      + (f" {'tr par':>10} {'tr x':>7}" if options.parallel and not python else "")
                      + (f" {'nb par':>10} {'nb x':>7}" if options.parallel and numba and not python else "")
                      + "  notes")
            for size, make in sizes_of(case, options):
                try:
                    row = measure(case, size, make, options, numba)
                except Exception as exc:        # the benchmark goes on; the row says what broke
                    row = {"group": case.group, "kernel": case.name, "size": size, "shape": "", "mode": "",
                           "notes": [], "plain_s": None, "tracer_s": None,
                           "tracer_check": f"benchmark error {type(exc).__name__}: {exc}"}
                row["scaling"] = case.scaling if size == "large" else None
                rows.append(row)
                print(row_line(row, numba is not None, width, options.parallel), flush=True)
    print_summary(rows, numba is not None, options.parallel)
    if threads.get("numba"):
        try:
            print(f"numba threading layer: {numba.threading_layer()}")
        except ValueError:          # no parallel function ran
            pass
    print(f"\n{len(rows)} rows in {time.perf_counter() - start:.0f} s")
    if options.json:
        info = {"python": platform.python_version(), "numpy": np.__version__,
                "numba": numba.__version__ if numba else None, "machine": platform.machine(),
                "options": vars(options), "threads": threads, "rows": rows}
        pathlib.Path(options.json).write_text(json.dumps(info, indent=1, default=str))
        print(f"raw figures written to {options.json}")


if __name__ == "__main__":
    main()
