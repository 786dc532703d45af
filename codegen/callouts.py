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

from codegen.kernel import DOUBLE, I64, PTR, KernelBuilder
from codegen.lowerings import lowers
from tracer import ir

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
    raised = b.icmp_unsigned("==", result, ll.Constant(PTR, None))
    k.call_c_api("Py_DecRef", ll.VoidType(), [PTR], result)
    go_on = k.function.append_basic_block("after_call_out")
    b.cbranch(raised, k.python_error_exit(), go_on).set_weights([1, 1 << 20])
    b.position_at_end(go_on)
    b.store(ll.Constant(ll.IntType(1), 1), k.called_out)    # from now on no FALLBACK: it ran once
    return ()


def _slot(k: KernelBuilder):
    with k.builder.goto_entry_block():
        return k.builder.alloca(PTR, name="call_result")

