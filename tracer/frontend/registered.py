"""The table of library functions the front end gives a meaning in traces (builtins, math,
tracer's own grad and value_and_grad), and the decorator that fills it.

Kept apart from `library.py`, which fills most of it, so that a module the front end does not
import (tracer.gradients, which registers grad) can register without loading the front end.
"""
from __future__ import annotations

TABLE: dict = {}      # function -> implementation(tracer, *args, **kwargs)


def implements(*functions):
    def register(impl):
        for f in functions:
            TABLE[f] = impl
        return impl
    return register
