"""Module-level compiled functions for tests/api/test_pickling.py, and what its worker processes run.

They pickle by reference, so worker processes import this module by its name: tests/support is
on sys.path (pyproject's pytest `pythonpath`), and a spawned process gets its parent's sys.path.
"""
from __future__ import annotations

import math
import os
import pickle

import numpy as np

from tracer import grad, trace, value_and_grad, vectorize


@trace
def fma(x, y, z):
    return x * y + z


@trace
def damped(x):
    """An array function, for the chunks of a dask array."""
    return np.exp(-x) * np.sin(3.0 * x)


def loss(a, b):
    """A plain function: its gradients are what is traced."""
    return a * a * math.sin(b) + math.exp(-a * b)


def poly(x):
    return ((2.0 * x - 3.0) * x + 0.5) * x - 1.25


dloss = grad(loss, argnums=(0, 1))
vloss = value_and_grad(loss)
dfma = grad(fma, 1)                          # the gradient of a traced function
d2loss = grad(grad(loss, 1), 1)              # second order
dloss_da = vectorize(grad(loss))             # elementwise over arrays of samples
vloss_batch = vectorize(value_and_grad(loss, argnums=(0, 1)))
fma_batch = vectorize(fma)


def compiled_kinds(fn) -> list[str]:
    """What a traced function has compiled so far: a native specialization is "Specialization"
    (a "PythonRun" would be calls left to Python); for `vectorize`, one "loop" per layout."""
    if hasattr(fn, "specializations"):
        return [type(spec).__name__ for spec in fn.specializations]
    return ["loop"] * len(fn.compiled)


def run(fn, args: tuple):
    """In a worker: the call's result, what compiled for it, and which process ran it."""
    return fn(*args), compiled_kinds(fn), os.getpid()


def run_pickled(payload: bytes, args: tuple):
    """In a worker: `run` of a function sent as bytes (cloudpickle's; plain `pickle` loads them)."""
    return run(pickle.loads(payload), args)


def damped_kinds() -> list[str]:
    """In a dask worker: what `damped` has compiled in that process."""
    return compiled_kinds(damped)
