"""The CPython entry of a kernel (codegen.entry) and the JIT (codegen.jit): boxing of each result
type, exact-type checks that miss without an exception, guarded trace-time constants, the errors
CPython raises, the fallback, the compiled-function handle, and the tape ops (codegen.tape).

IR is built by hand. Entries are called as real builtins made with PyCFunction_NewEx(METH_FASTCALL),
as the dispatcher does.
"""
from __future__ import annotations

import ctypes
import math
import sys

import pytest
from ir_builder import Builder
from kernel_calls import Kernel, same

from codegen import compile_function
from tracer import ir
from tracer.errors import STATUS_EXCEPTIONS, Status
from tracer.ir import BOOL, F64, I64, I64_MAX, I64_MIN, EntryArg, ops


# ---------------------------------------------------------------------------------- the entry
class PyMethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


METH_FASTCALL = 0x0080
_new_builtin = ctypes.pythonapi.PyCFunction_NewEx
_new_builtin.restype = ctypes.py_object
_new_builtin.argtypes = [ctypes.POINTER(PyMethodDef), ctypes.py_object, ctypes.c_void_p]
_keep_alive = []     # a builtin keeps its PyMethodDef* (and the code) without owning them


def builtin(fn: ir.Function, entry_args, fallback=None):
    """The compiled entry as a real METH_FASTCALL builtin whose `self` is `fallback`."""
    compiled = compile_function(fn, entry_args, fn.name)
    md = PyMethodDef(fn.name.encode(), compiled.entry_address, METH_FASTCALL, None)
    _keep_alive.append((md, compiled))
    return _new_builtin(ctypes.byref(md), fallback, None)


def assert_miss(f, *args):
    """A guard miss is NULL without an exception; CPython reports that as a SystemError."""
    with pytest.raises(SystemError, match="without (setting an )?exception"):
        f(*args)


def float_builtin(op, fallback=None):
    b = Builder(F64, F64, name=op)
    return builtin(b.function(b.op(op, *b.params)), [EntryArg(F64, 0), EntryArg(F64, 1)], fallback)


def int_builtin(op, fallback=None):
    b = Builder(I64, I64, name=op)
    return builtin(b.function(b.op(op, *b.params)), [EntryArg(I64, 0), EntryArg(I64, 1)], fallback)


def test_entry_boxes_each_scalar_type():
    f = float_builtin("mul")
    assert same(f(1.5, -2.0), -3.0) and same(f(-0.0, 1.0), -0.0)
    g = int_builtin("add")
    assert g(2, 3) == 5 and type(g(2, 3)) is int and g(I64_MIN, 0) == I64_MIN
    h = int_builtin("lt")
    assert h(1, 2) is True and h(2, 1) is False
    d = int_builtin("div")
    assert same(d(7, 2), 3.5) and same(d(0, -5), -0.0)


def test_entry_exact_type_checks_miss_without_exception():
    f = float_builtin("add")
    assert f(1.0, 2.0) == 3.0

    class MyFloat(float):
        pass
    for args in [(1, 2.0), (1.0, True), (MyFloat(1.0), 2.0), ("1", 2.0), (None, 2.0), (1.0,), (1.0, 2.0, 3.0), ()]:
        assert_miss(f, *args)
    g = int_builtin("add")
    for args in [(1.0, 2), (True, 2), (2, False), (2 ** 63, 1), (-2 ** 63 - 1, 1), (2 ** 100, 0)]:
        assert_miss(g, *args)
    assert g(2 ** 63 - 1, 0) == 2 ** 63 - 1 and g(-2 ** 63, 0) == -2 ** 63
    b = Builder(BOOL, name="negate")
    n = builtin(b.function(b.op("not", b.params[0])), [EntryArg(BOOL, 0)])
    assert n(True) is False and n(False) is True
    for arg in (0, 1, 1.0, None):
        assert_miss(n, arg)


def test_entry_trace_time_constants_are_guarded():
    b = Builder(F64, name="scaled")
    x, = b.params
    fn = b.function(b.op("mul", x, b.const(3.0)))
    f = builtin(fn, [EntryArg(F64, 0), EntryArg(I64, None, 3), EntryArg(F64, None, -0.0), EntryArg(BOOL, None, True)])
    assert f(2.0, 3, -0.0, True) == 6.0
    for args in [(2.0, 4, -0.0, True), (2.0, 3.0, -0.0, True), (2.0, 3, 0.0, True), (2.0, 3, -0.0, False),
                 (2.0, True, -0.0, True), (2.0, 3, -0.0, 1)]:
        assert_miss(f, *args)


def test_entry_boxes_nested_tuples():
    b = Builder(F64, I64, BOOL, name="nested")
    x, n, flag = b.params
    fn = b.function(b.op("tuple", x, b.op("tuple", n, b.op("tuple", flag, x)), b.op("tuple")))
    f = builtin(fn, [EntryArg(F64, 0), EntryArg(I64, 1), EntryArg(BOOL, 2)])
    assert f(1.5, -4, True) == (1.5, (-4, (True, 1.5)), ())


def test_entry_bool_results_keep_refcounts_right():
    h = int_builtin("lt")
    before = sys.getrefcount(True), sys.getrefcount(False)
    for i in range(10_000):
        h(i % 2, 1)
    after = sys.getrefcount(True), sys.getrefcount(False)
    assert after == before      # immortal on 3.12+ (and unchanged), counted on 3.11


def test_entry_result_refcount():
    f = float_builtin("add")
    r = f(1.0, 2.0)
    # `r`, the call's argument, and the entry, which keeps the float it returned last
    assert sys.getrefcount(r) == 3
    for i in range(100):
        f(float(i), 1.0)
    assert sys.getrefcount(r) == 2 and r == 3.0      # the entry let go of it for a float of its own


def test_entry_reuses_its_float_only_when_no_one_else_holds_it():
    f = float_builtin("add")
    held = f(1.0, 2.0)
    other = f(3.0, 4.0)                # `held` is still referenced: a new float
    assert other is not held and (held, other) == (3.0, 7.0)
    address = id(other)
    del other                          # now only the entry holds it: written in place
    again = f(5.0, 6.0)
    assert id(again) == address and again == 11.0 and held == 3.0
    values = [f(float(i), 0.5) for i in range(5)]     # each kept by the list: five floats
    assert values == [0.5, 1.5, 2.5, 3.5, 4.5] and len(set(map(id, values))) == 5


ERROR_CASES = [
    ("div", F64, (1.0, 0.0), Status.FLOAT_DIVISION_BY_ZERO),
    ("floordiv", F64, (1.0, -0.0), Status.FLOAT_FLOOR_DIVISION_BY_ZERO),
    ("mod", F64, (1.0, 0.0), Status.FLOAT_MODULO_BY_ZERO),
    ("div", I64, (1, 0), Status.INT_DIVISION_BY_ZERO),
    ("floordiv", I64, (1, 0), Status.INT_FLOOR_DIVISION_BY_ZERO),
    ("mod", I64, (1, 0), Status.INT_MODULO_BY_ZERO),
    ("pow", F64, (0.0, -1.0), Status.ZERO_TO_NEGATIVE_POWER),
    ("pow", F64, (10.0, 400.0), Status.POW_OVERFLOW),
    ("atan2", F64, (math.inf, math.nan), None),             # no error: NaN from a NaN input
    ("math_pow", F64, (0.0, -1.0), Status.MATH_DOMAIN),
    ("math_pow", F64, (10.0, 400.0), Status.MATH_RANGE),
]


@pytest.mark.parametrize("op, t, args, status", ERROR_CASES)
def test_entry_raises_what_cpython_raises(op, t, args, status):
    f = (float_builtin if t == F64 else int_builtin)(op)
    if status is None:
        f(*args)
        return
    exc_type, message = STATUS_EXCEPTIONS[status]
    with pytest.raises(exc_type) as info:
        f(*args)
    assert type(info.value) is exc_type and str(info.value) == message


@pytest.mark.parametrize("op, x, status", [("sqrt", -1.0, Status.MATH_DOMAIN), ("exp", 1000.0, Status.MATH_RANGE),
                                           ("log", 0.0, Status.MATH_DOMAIN), ("to_i64", math.inf, Status.FLOAT_INFINITY_TO_INT),
                                           ("to_i64", math.nan, Status.FLOAT_NAN_TO_INT)])
def test_entry_raises_unary(op, x, status):
    b = Builder(F64, name=op)
    f = builtin(b.function(b.op(op, b.params[0])), [EntryArg(F64, 0)])
    exc_type, message = STATUS_EXCEPTIONS[status]
    with pytest.raises(exc_type) as info:
        f(x)
    assert type(info.value) is exc_type and str(info.value) == message


def test_entry_fallback_calls_self():
    calls = []

    def original(a, b):
        calls.append((a, b))
        return a * b
    f = int_builtin("mul", fallback=original)
    assert f(3, 4) == 12 and calls == []
    assert f(2 ** 40, 2 ** 40) == 2 ** 80 and calls == [(2 ** 40, 2 ** 40)]
    p = int_builtin("pow", fallback=lambda a, b: a ** b)
    assert p(2, 10) == 1024 and p(2, -1) == 0.5 and p(3, 50) == 3 ** 50
    g = float_builtin("pow", fallback=lambda a, b: a ** b)
    assert g(-8.0, 1 / 3) == (-8.0) ** (1 / 3)


def test_entry_fallback_exception_propagates():
    def original(a, b):
        raise KeyError("from the original")
    f = int_builtin("add", fallback=original)
    with pytest.raises(KeyError, match="from the original"):
        f(I64_MAX, 1)


# ------------------------------------------------------------------------------------- the JIT
def test_compiled_function_handle():
    b = Builder(F64, F64, F64, name="fma")
    fn = b.function(b.op("add", b.op("mul", *b.params[:2]), b.params[2]))
    c = compile_function(fn, [EntryArg(F64, i) for i in range(3)], "fma")
    assert c.entry_address and c.kernel_address and c.entry_address != c.kernel_address
    assert c.kernel_symbol.startswith("__tracer_fma_") and c.entry_symbol == c.kernel_symbol + "_entry"
    assert "define i32 @" in c.llvm_ir and "fmul" in c.optimized_ir and c.kernel_symbol + ":" in c.assembly
    again = compile_function(fn, [EntryArg(F64, i) for i in range(3)], "fma", export_kernel=False)
    assert again.kernel_symbol != c.kernel_symbol         # one library per compile, unique names
    assert again.kernel_address is None and again.kernel_symbol + ":" not in again.assembly
    f = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object, ctypes.POINTER(ctypes.py_object),
                          ctypes.c_ssize_t)(again.entry_address)
    assert f(None, (ctypes.py_object * 3)(2.0, 3.0, 4.0), 3) == 10.0
    assert set(c.timings) == {"lower", "optimize", "codegen", "link"}


def test_entry_args_must_feed_every_parameter():
    b = Builder(F64, F64)
    fn = b.function(b.op("add", *b.params))
    with pytest.raises(ValueError):
        compile_function(fn, [EntryArg(F64, 0)])
    with pytest.raises(ValueError):
        compile_function(fn, [EntryArg(F64, 0), EntryArg(I64, 1)])


def tape_round_trip() -> ir.Function:
    """Push (x * i, i, i odd) for i in 0..n-1 in one loop, then sum what a second loop reads back
    in reverse: sum(x * i * (2 if odd else 1)), the tape's length added as an f64."""
    x, n = ir.make_param(0, "x", F64), ir.make_param(1, "n", I64)
    b = ir.Block()
    def emit(block, op, *args, **attrs):
        v = ir.Value(op, args, ops.OPS[op].result_type(tuple(a.type for a in args), attrs), attrs)
        block.values.append(v)
        return v
    fields = (F64, I64, BOOL)
    tape = emit(b, "tape_new", fields=fields)
    zero, one, two = (emit(b, "const", value=c) for c in (0, 1, 2))
    push = ir.Block()
    i, t = push.add_param(I64), push.add_param(ir.TapeType(fields))
    odd = emit(push, "eq", emit(push, "mod", i, two), one)
    pushed = emit(push, "tape_push", t, emit(push, "mul", x, emit(push, "to_f64", i)), i, odd)
    nxt = emit(push, "add", i, one)
    push.results = [emit(push, "lt", nxt, n), nxt, pushed]
    filled = ir.Value("loop", (zero, tape), ir.TupleType((I64, tape.type)))
    filled.regions = [push]
    b.values.append(filled)
    full = emit(b, "getitem", filled, index=1)
    length = emit(b, "tape_len", full)
    read = ir.Block()
    k, acc = read.add_param(I64), read.add_param(F64)
    record = emit(read, "tape_get", full, k)
    value, index, flag = (emit(read, "getitem", record, index=j) for j in range(3))
    term = emit(read, "select", flag, emit(read, "mul", value, emit(read, "const", value=2.0)), value)
    total = emit(read, "add", acc, emit(read, "add", term, emit(read, "to_f64", emit(read, "sub", index, index))))
    read.results = [emit(read, "gt", k, zero), emit(read, "sub", k, one), total]
    summed = ir.Value("loop", (emit(b, "sub", length, one), emit(b, "const", value=0.0)), ir.TupleType((I64, F64)))
    summed.regions = [read]
    b.values.append(summed)
    emit(b, "tape_free", full)
    result = emit(b, "add", emit(b, "getitem", summed, index=1), emit(b, "to_f64", length))
    b.results = [result]
    return ir.verify(ir.Function("tape_round_trip", [x, n], b))


def test_tape_round_trip():
    """Records of every field type survive the buffer's growth (past its first 64 records)."""
    fn = tape_round_trip()
    compiled = Kernel(fn)
    for x, n in [(1.5, 1), (0.25, 63), (-2.0, 64), (3.0, 65), (0.1, 1000)]:
        acc = 0.0
        for i in reversed(range(n)):
            term = x * float(i)
            acc = acc + ((term * 2.0 if i % 2 == 1 else term) + 0.0)
        assert ops.run(fn, [x, n]) == acc + n
        assert compiled(x, n) == ("ok", acc + n)
