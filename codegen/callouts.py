"""The lowering of `python_call`: compiled code calling into CPython (tracer.frontend.callouts).

The operands are boxed (PyFloat_FromDouble, PyLong_FromLongLong, PyBool_FromLong) into an array
on the stack and the callee, a Python object the IR holds (so it lives as long as the code), is
called with PyObject_Vectorcall. Its result is dropped. Once it has run, the kernel returns
CALLED_OUT_FALLBACK (an OverflowError) instead of FALLBACK: running the Python function again
would make the call twice (tracer.specialize refuses call-outs where other failures would). If boxing or the call fails, the
Python exception is set: the kernel returns PYTHON_ERROR through the same exit as an
interrupted loop, keeping what it wrote so far. Only JIT code calls out: it runs holding the GIL
(its CPython entry is called by the dispatcher). An exported library has no Python to call:
export refuses functions with a `python_call`.
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen.kernel import DOUBLE, I64, PTR, KernelBuilder, note_failed_site
from codegen.lowerings import lowers
from tracer import ir
from tracer.errors import Status

BOXES = {ir.F64: ("PyFloat_FromDouble", DOUBLE), ir.I64: ("PyLong_FromLongLong", I64), ir.BOOL: ("PyBool_FromLong", I64)}


@lowers("python_call")
def python_call(k: KernelBuilder, v: ir.Value, *operands):
    if k.deferred is not None:
        raise AssertionError("a python_call inside a map region (its elements may run twice)")
    b = k.builder
    n = len(operands)
    with b.goto_entry_block():
        vector = b.alloca(PTR, size=max(n, 1), name="call_args")
    failed = ll.Constant(ll.IntType(1), 0)
    boxes = []
    for i, (x, arg) in enumerate(zip(operands, v.args)):
        name, param = BOXES[arg.type]
        if arg.type == ir.BOOL:
            x = b.zext(x, I64)
        box = k.call_c_api(name, PTR, [param], x)
        b.store(box, b.gep(vector, [ll.Constant(I64, i)], source_etype=PTR))
        failed = b.or_(failed, b.icmp_unsigned("==", box, ll.Constant(PTR, None)))
        boxes.append(box)
    call, done = k.function.append_basic_block("call_out"), k.function.append_basic_block("called_out")
    result_slot = _slot(k)
    b.store(ll.Constant(PTR, None), result_slot)
    b.cbranch(failed, done, call)
    b.position_at_end(call)
    callee = ll.Constant(I64, id(v.attrs["callee"])).inttoptr(PTR)
    b.store(k.call_c_api("PyObject_Vectorcall", PTR, [PTR, PTR, I64, PTR], callee, vector, ll.Constant(I64, n),
                         ll.Constant(PTR, None)), result_slot)
    b.branch(done)
    b.position_at_end(done)
    result = b.load(result_slot, typ=PTR)
    for box in boxes:
        k.call_c_api("Py_DecRef", ll.VoidType(), [PTR], box)     # (NULL is skipped)
    go_on, failed = k.function.append_basic_block("after_call_out"), k.function.append_basic_block("call_out_failed")
    b.cbranch(b.icmp_unsigned("==", result, ll.Constant(PTR, None)), failed, go_on).set_weights([1, 1 << 20])
    b.position_at_end(failed)           # its line, for the traceback (codegen.tracebacks)
    note_failed_site(b, k.memory, k.site)
    b.branch(k.python_error_exit())
    b.position_at_end(go_on)
    if not v.attrs.get("harmless"):      # from now on no FALLBACK: the call would run twice
        b.store(ll.Constant(ll.IntType(1), 1), k.called_out)
    if v.type == ir.TupleType(()):
        k.call_c_api("Py_DecRef", ll.VoidType(), [PTR], result)
        return ()
    value, bad = _unbox(k, result, v.type)
    k.call_c_api("Py_DecRef", ll.VoidType(), [PTR], result)
    k.fail_if(bad, Status.FALLBACK)      # not a number of that type (or an int past 64 bits): Python answers
    return value


def _unbox(k: KernelBuilder, obj, t: ir.Type):
    """(the number `obj` holds, whether it is not exactly of t's Python type or does not fit)."""
    b = k.builder
    py_type = b.load(b.gep(obj, [ll.Constant(I64, 8)], source_etype=ll.IntType(8)), typ=PTR)
    name = {ir.F64: "PyFloat_Type", ir.I64: "PyLong_Type", ir.BOOL: "PyBool_Type"}[t]
    bad = b.icmp_unsigned("!=", py_type, _global(k, name))
    if t == ir.BOOL:
        return b.icmp_unsigned("==", obj, _global(k, "_Py_TrueStruct")), bad
    with b.goto_entry_block():
        slot = b.alloca(DOUBLE if t == ir.F64 else I64, name="call_value")
        overflow = b.alloca(ll.IntType(32), name="call_overflow")
    b.store(ll.Constant(DOUBLE, 0.0) if t == ir.F64 else ll.Constant(I64, 0), slot)
    b.store(ll.Constant(ll.IntType(32), 0), overflow)
    with b.if_then(b.not_(bad)):
        if t == ir.F64:
            b.store(k.call_c_api("PyFloat_AsDouble", DOUBLE, [PTR], obj), slot)
        else:
            b.store(k.call_c_api("PyLong_AsLongLongAndOverflow", I64, [PTR, PTR], obj, overflow), slot)
    value = b.load(slot, typ=DOUBLE if t == ir.F64 else I64)
    if t == ir.I64:
        bad = b.or_(bad, b.icmp_signed("!=", b.load(overflow, typ=ll.IntType(32)), ll.Constant(ll.IntType(32), 0)))
    return value, bad


def _global(k: KernelBuilder, name: str):
    """The address of CPython's global object `name` (a type or a singleton)."""
    return k.module.globals.get(name) or ll.GlobalVariable(k.module, ll.IntType(8), name)


def _slot(k: KernelBuilder):
    with k.builder.goto_entry_block():
        return k.builder.alloca(PTR, name="call_result")
