"""Calling compiled IR from the back-end tests (tests/codegen): a one-op IR function built by hand,
its kernel (codegen.jit) called through its plain C ABI with ctypes, the op's evaluator
(tracer.ir.ops) as the reference, and `same`, bit for bit for floats.
"""
from __future__ import annotations

import ctypes
import functools
import struct

from ir_builder import Builder

from codegen import compile_function
from tracer import ir
from tracer.errors import OpFailure, Status
from tracer.ir import BOOL, F32, F64, I64, EntryArg, ops


# ------------------------------------------------------------------------------------ building IR
def single_op(op: str, types, **attrs) -> ir.Function:
    b = Builder(*types, name=op)
    return b.function(b.op(op, *b.params, **attrs))


# -------------------------------------------------------------------------------- calling kernels
CTYPES = {F64: ctypes.c_double, F32: ctypes.c_float, I64: ctypes.c_int64, BOOL: ctypes.c_bool}


class Kernel:
    """A compiled function called through its kernel ABI: ("ok", value) or ("fail", status)."""

    def __init__(self, fn: ir.Function):
        self.compiled = compile_function(fn, [EntryArg(p.type, i) for i, p in enumerate(fn.params)])
        self.leaves = ir.leaf_types(fn.result_type)
        self.result_type = fn.result_type
        argtypes = [CTYPES[p.type] for p in fn.params] + [ctypes.POINTER(CTYPES[t]) for t in self.leaves]
        self.call = ctypes.CFUNCTYPE(ctypes.c_int32, *argtypes)(self.compiled.kernel_address)

    def __call__(self, *args):
        outs = [CTYPES[t]() for t in self.leaves]
        status = self.call(*args, *[ctypes.byref(o) for o in outs])
        if status != Status.OK:
            return ("fail", Status(status))
        values = iter([o.value for o in outs])

        def rebuild(t):
            if isinstance(t, ir.TupleType):
                return tuple(rebuild(e) for e in t.elements)
            return next(values)
        return ("ok", rebuild(self.result_type))


@functools.cache
def kernel(op: str, types: tuple, attrs: tuple = ()) -> Kernel:
    return Kernel(single_op(op, types, **dict(attrs)))


def reference(fn_or_op, args, attrs=()):
    try:
        if isinstance(fn_or_op, str):
            return ("ok", ops.OPS[fn_or_op].evaluate(*args, **dict(attrs)))
        return ("ok", ops.run(fn_or_op, args))
    except OpFailure as exc:
        return ("fail", exc.status)


def same(a, b) -> bool:
    """Bit for bit for floats (0.0 is not -0.0), any NaN equal to any NaN; exact type otherwise."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, float):
        return isinstance(b, float) and (struct.pack("<d", a) == struct.pack("<d", b) or (a != a and b != b))
    return type(a) is type(b) and a == b


def check(op, types, args, attrs=()):
    got = kernel(op, tuple(types), tuple(attrs))(*args)
    want = reference(op, args, attrs)
    assert got[0] == want[0] and same(got[1], want[1]), f"{op}{tuple(args)}: got {got}, want {want}"
