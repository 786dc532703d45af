"""Compiled functions travel (tracer.pickling): `@trace`d functions, and grad, value_and_grad and
vectorize of them, pickle (by reference when module-level, by value with cloudpickle for closures
and lambdas), and are called in other processes, where they compile on their first call and give
the same results: round trips in this process, `ProcessPoolExecutor` (fork and spawn), a Python
script's `__main__`, and a `dask.distributed` cluster of worker processes.

The functions pickled by reference live in tests/support/pickled_functions.py.
"""
from __future__ import annotations

import ast
import concurrent.futures
import math
import multiprocessing
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pickled_functions as pf
import pytest

from tracer import grad, trace, value_and_grad, vectorize

X = np.linspace(0.1, 3.0, 11)


def native(fn) -> bool:
    """Whether every call made so far ran compiled code (one native specialization each)."""
    kinds = pf.compiled_kinds(fn)
    return bool(kinds) and set(kinds) <= {"Specialization", "loop"}


def make_closures():
    """A traced closure and lambda, and transforms of closures: only cloudpickle carries them."""
    k = 1.5

    def shifted(x, y):
        return k * x * y - x / (y + k)
    return {
        "trace(closure)": (trace(shifted), (2.0, 0.75)),
        "trace(lambda)": (trace(lambda x: k * x * x - 1.0), (3.0,)),
        "grad(closure)": (grad(shifted, argnums=(0, 1)), (2.0, 0.75)),
        "value_and_grad(trace(closure))": (value_and_grad(trace(shifted)), (2.0, 0.75)),
        "vectorize(grad(closure))": (vectorize(grad(shifted, 1)), (X, 0.75)),
    }


def same(a, b) -> bool:
    """Equal results, bit for bit: numbers, arrays, tuples of them."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


# ------------------------------------------------------------------------- in this process
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_a_module_level_traced_function_pickles_by_reference(protocol):
    data = pickle.dumps(pf.fma, protocol)
    assert pickle.loads(data) is pf.fma
    assert b"pickled_functions" in data and len(data) < 100     # its name, nothing else
    assert pf.fma(3.0, -1.0, 2.0) == -1.0 and native(pf.fma)


@pytest.mark.parametrize("name", ["dloss", "vloss", "dfma", "d2loss"])
def test_grad_and_value_and_grad_round_trip(name):
    original = getattr(pf, name)
    args = (1.25, 0.5, 2.0) if name == "dfma" else (1.25, 0.5)
    back = pickle.loads(pickle.dumps(original))
    assert back is not original and back.specializations == []     # nothing compiled travels
    assert back.transform.describe("f") == original.transform.describe("f")
    assert same(back(*args), original(*args)) and native(back)
    assert pickle.loads(pickle.dumps(original)) is back             # made once per process


@pytest.mark.parametrize("name, args", [("dloss_da", (X, 0.5)), ("vloss_batch", (X, 0.5)),
                                        ("fma_batch", (X, 2.0, X))])
def test_vectorize_round_trips(name, args):
    """In this process, an unpickled `vectorize(f)` is the one made for f and those options
    (`vectorize(fma)` is `fma_batch` itself); each has its own compiled loops."""
    original = getattr(pf, name)
    back = pickle.loads(pickle.dumps(original))
    assert (back is original) == (name == "fma_batch")
    assert same(back(*args), original(*args)) and native(back)
    assert pickle.loads(pickle.dumps(original)) is back


def test_transforms_pickle_as_their_function_and_options():
    from tracer.gradients import Grad, Vjp
    g = pickle.loads(pickle.dumps(Grad(pf.fma.py_func, None, (0, 2), with_value=True)))
    assert (g.fn, g.argnums, g.as_tuple, g.with_value) == (pf.fma.py_func, (0, 2), True, True)
    v = pickle.loads(pickle.dumps(Vjp(pf.loss, Grad(pf.loss, None, 1, with_value=False), False)))
    assert v.fn is pf.loss and v.fuse_fma is False and v.backwards == []
    assert v.inner.fn is pf.loss and v.inner.argnums == (1,) and not v.inner.as_tuple


def test_vectorize_takes_unpickled_arrays():
    """An unpickled array (what a pool or dask passes) has an equal copy of float64's dtype."""
    x, out = pickle.loads(pickle.dumps((X, np.empty_like(X))))
    assert x.dtype is not X.dtype
    assert same(pf.dloss_da(x, 0.5), pf.dloss_da(X, 0.5))
    assert pf.dloss_da(x, 0.5, out=out) is out and same(out, pf.dloss_da(X, 0.5))


def test_options_travel_and_compiled_code_stays_behind():
    original = trace(pf.poly, fuse_fma=False, fullgraph=True, max_specializations=3)
    assert original(1.5) == pf.poly(1.5) and native(original)
    back = pickle.loads(pickle.dumps(original))          # by value: not at a module-level name
    assert back is not original and back.specializations == []
    assert (back.fuse_fma, back.fullgraph, back.max_specializations) == (False, True, 3)
    assert back.py_func is pf.poly
    assert back(1.5) == pf.poly(1.5) and native(back)


def test_stdlib_pickle_of_a_closure_or_lambda_fails_as_for_the_plain_function():
    """pickle's own error for the Python function (for a local function, an AttributeError
    "Can't pickle local object" or "Can't get local object" before Python 3.14), never a crash."""
    for name, (fn, _) in make_closures().items():
        with pytest.raises((pickle.PicklingError, AttributeError)) as plain:
            pickle.dumps(fn.py_func)
        with pytest.raises(plain.type) as compiled:
            pickle.dumps(fn)
        assert str(compiled.value) == str(plain.value), name


def test_cloudpickle_carries_closures_and_lambdas_by_value():
    cloudpickle = pytest.importorskip("cloudpickle")
    for name, (fn, args) in make_closures().items():
        expected = fn(*args)           # compiled here first: what is made and compiled stays here
        back = pickle.loads(cloudpickle.dumps(fn))
        assert back is not fn and not pf.compiled_kinds(back), name
        assert same(back(*args), expected) and native(back), name


def test_cloudpickle_takes_module_functions_by_reference_unless_registered_by_value():
    cloudpickle = pytest.importorskip("cloudpickle")
    assert pickle.loads(cloudpickle.dumps(pf.fma)) is pf.fma
    cloudpickle.register_pickle_by_value(pf)
    try:
        back = pickle.loads(cloudpickle.dumps(pf.fma))
        assert pickle.loads(pickle.dumps(pf.fma)) is pf.fma       # the standard pickle still names it
    finally:
        cloudpickle.unregister_pickle_by_value(pf)
    assert back is not pf.fma and back.py_func is not pf.fma.py_func
    assert back(3.0, -1.0, 2.0) == pf.fma(3.0, -1.0, 2.0) and native(back)


MAIN_SCRIPT = """
    import math, pickle, sys
    import cloudpickle
    from tracer import grad, trace, vectorize

    @trace
    def bump(x):
        return x * math.exp(-x * x) + 0.5

    by_reference = pickle.dumps(bump)
    assert pickle.loads(by_reference) is bump and b"__main__" in by_reference
    sys.stdout.buffer.write(cloudpickle.dumps((bump, grad(bump), vectorize(grad(bump)))))
"""

LOAD_AND_CALL = """
    import pickle, sys
    import numpy as np
    bump, dbump, dbump_batch = pickle.load(sys.stdin.buffer)
    from tracer import vectorize        # still the function: loading left no module tracer.vectorize there
    assert callable(vectorize)
    print(repr((bump(0.75), dbump(0.75), dbump_batch(np.array([0.75, 1.5])).tolist())))
    print([type(spec).__name__ for spec in bump.specializations + dbump.specializations])
"""


def run_python(args: list[str], stdin: bytes = b"") -> bytes:
    done = subprocess.run([sys.executable, *args], input=stdin, capture_output=True,
                          env={**os.environ, "TRACER_LOG": ""})
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


def test_a_scripts_main_functions_travel_by_value_with_cloudpickle(tmp_path):
    """A script's (or a notebook's) functions are in `__main__`, which a worker process does not
    have: cloudpickle carries them by value (the standard pickle names them, right for a process
    pool's workers, which have the script's `__main__`)."""
    pytest.importorskip("cloudpickle")
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(MAIN_SCRIPT))
    payload = run_python([str(script)])
    results, kinds = run_python(["-c", textwrap.dedent(LOAD_AND_CALL)], payload).decode().splitlines()
    here = trace(lambda x: x * math.exp(-x * x) + 0.5)
    assert ast.literal_eval(results) == (here(0.75), grad(here)(0.75), vectorize(grad(here))(np.array([0.75, 1.5])).tolist())
    assert ast.literal_eval(kinds) == ["Specialization", "Specialization"]


# -------------------------------------------------------------------- in worker processes
@pytest.fixture(scope="module", params=["fork", "spawn"])
def pool(request):
    context = multiprocessing.get_context(request.param)
    with concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=context) as executor:
        yield executor


def test_a_pool_maps_module_level_traced_functions(pool):
    xs, ys, zs = [0.5, 1.5, -2.0, 3.25], [2.0, -1.0, 0.25, 4.0], [1.0, 0.0, -3.5, 2.0]
    assert list(pool.map(pf.fma, xs, ys, zs)) == [pf.fma(*args) for args in zip(xs, ys, zs)]
    result, kinds, pid = pool.submit(pf.run, pf.fma, (3.0, -1.0, 2.0)).result()
    assert result == -1.0 and kinds == ["Specialization"] and pid != os.getpid()


@pytest.mark.parametrize("name, args", [("dloss", (1.25, 0.5)), ("vloss", (1.25, 0.5)), ("d2loss", (1.25, 0.5)),
                                        ("dfma", (1.25, 0.5, 2.0)), ("dloss_da", (X, 0.5)),
                                        ("vloss_batch", (X, 0.5))])
def test_a_pool_runs_gradients_and_vectorized_gradients(pool, name, args):
    fn = getattr(pf, name)
    result, kinds, pid = pool.submit(pf.run, fn, args).result()
    assert same(result, fn(*args)) and kinds and set(kinds) <= {"Specialization", "loop"} and pid != os.getpid()


def test_a_pool_runs_cloudpickled_closures(pool):
    cloudpickle = pytest.importorskip("cloudpickle")
    for name, (fn, args) in make_closures().items():
        result, kinds, pid = pool.submit(pf.run_pickled, cloudpickle.dumps(fn), args).result()
        assert same(result, fn(*args)), name
        assert kinds and set(kinds) <= {"Specialization", "loop"} and pid != os.getpid(), name


# --------------------------------------------------------------------------------- dask
def test_dask_maps_traced_functions_over_the_chunks_of_an_array():
    """README.md's "Beyond one machine" on a cluster of two worker processes."""
    da = pytest.importorskip("dask.array", reason="dask[array] is not installed (pip install -e '.[test]')")
    distributed = pytest.importorskip("distributed", reason="distributed is not installed (pip install -e '.[test]')")
    k = 2.5
    wavy = trace(lambda v: np.tanh(v) * k)            # a lambda: dask sends it with cloudpickle
    meta = np.empty(0)
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        a = da.linspace(0.0, 3.0, 40_000, chunks=10_000)
        x, damped, slopes, waves = da.compute(a, da.map_blocks(pf.damped, a, meta=meta),
                                              da.map_blocks(pf.dloss_da, a, 0.5, meta=meta),
                                              da.map_blocks(wavy, a, meta=meta))
        compiled = client.run(pf.damped_kinds)
        pids = client.run(os.getpid)
    assert same(damped, pf.damped(x)) and same(slopes, pf.dloss_da(x, 0.5)) and same(waves, wavy(x))
    assert np.allclose(slopes, 2.0 * x * np.sin(0.5) - 0.5 * np.exp(-0.5 * x))
    assert os.getpid() not in pids.values() and ["Specialization"] in compiled.values()
