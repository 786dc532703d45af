"""tracer: compile plain Python numeric functions to native code.

    from tracer import trace

    @trace
    def fma(x, y, z):
        return x * y + z

    fma(3.0, -1.0, 2.0)   # first call: capture (PEP 523), trace, optimize, compile; then native

The pipeline, one folder per stage (docs/architecture.md walks it):

    tracer/frontend/    PEP 523 capture, the symbolic bytecode interpreter, traced values
    tracer/ir/          the typed IR and its op registry: the contract between the stages
    tracer/transforms/  IR -> IR: optimization passes, reverse-mode autodiff
    codegen/            IR -> LLVM -> native code (the only part that imports llvmlite)
    tracer/aot/         ahead-of-time export: shared libraries, C headers, loaders
    tracer/*.py         the public API below, which glues the stages together

The public names are loaded on first use, so `import tracer` is cheap and `codegen`, which
imports `tracer.ir`, never waits on the API that imports `codegen`. TRACER_LOG=compile,guards,fallback
(or all) shows what the tracer does on stderr (`tracer.logs`).
"""
from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING

from tracer import pickling  # noqa: F401  (how a traced function pickles, registered with copyreg)

_PUBLIC = {   # name -> the module that defines it
    "trace": "tracer.api",
    "grad": "tracer.gradients",
    "value_and_grad": "tracer.gradients",
    "vjp": "tracer.gradients",
    "vectorize": "tracer.vectorized",
    "prange": "tracer.frontend.iteration",
    "export": "tracer.aot.export",
    "explain": "tracer.explanation",
    "capture": "tracer.regions",
    "stats": "tracer.regions",
    "TracerError": "tracer.errors",
    "UnsupportedError": "tracer.errors",
    "DataDependentControlFlow": "tracer.errors",
}
__all__ = ["DataDependentControlFlow", "TracerError", "UnsupportedError", "capture", "explain", "export", "grad", "prange",
           "stats", "trace", "value_and_grad", "vectorize", "vjp"]
__version__ = "0.1.0"

if os.environ.get("TRACER_LOG", "").strip():    # e.g. compile,guards,fallback or all: tracer.logs
    from tracer.logs import configure
    configure(os.environ["TRACER_LOG"])


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'tracer' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])


if TYPE_CHECKING:
    from tracer.aot.export import export
    from tracer.api import trace
    from tracer.errors import DataDependentControlFlow, TracerError, UnsupportedError
    from tracer.explanation import explain
    from tracer.frontend.iteration import prange
    from tracer.gradients import grad, value_and_grad, vjp
    from tracer.regions import capture, stats
    from tracer.vectorized import vectorize
