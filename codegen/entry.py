"""The CPython entry point of a kernel, generated in LLVM IR.

    ptr @<symbol>(ptr %self, ptr %args, i64 %nargs)        ; METH_FASTCALL

called by the dispatcher (not by CPython's call machinery), so its protocol is:
  - a guard miss (wrong argument count, an argument of another exact type, an int past 64 bits,
    a trace-time constant argument or list item with another value or type, codegen.entry_pins)
    returns NULL with NO exception set;
  - Status.OK returns the boxed result (a new reference);
  - Status.FALLBACK (and SHAPE_MISMATCH) returns PyObject_Vectorcall(self, args, nargs, NULL):
    `self` runs the original Python function, which gives the exact (big int, complex) answer
    or raises NumPy's exact error;
  - PYTHON_ERROR returns NULL: the exception is already set (a signal handler raised it, as
    KeyboardInterrupt, while a loop ran; codegen.kernel.KernelBuilder.poll_signals);
  - any other status sets the exception CPython raises (tracer.errors.STATUS_EXCEPTIONS), with
    traceback entries for the user's line that failed (codegen.tracebacks), and returns NULL;
  - an array argument the function may write into (`written_array_params`) whose
    flags.writeable is False runs the Python function before the kernel writes anything:
    NumPy raises its own "ValueError: assignment destination is read-only" where the write
    happens (and nothing at all when the write is on a path this call does not take).
Arguments are borrowed. Object layouts used (GIL builds of 3.11-3.13): PyObject is
{ob_refcnt: i64, ob_type: ptr} and PyFloatObject adds ob_fval: double.
"""
from __future__ import annotations

import struct
import sysconfig

from llvmlite import ir as ll

from codegen.arrays import VIEWS, result_struct
from codegen.casts import to_double
from codegen.entry_lists import (
    BUFFER_VIEW_WORDS,
    LIST_OF_NUMBERS,
    NUMBER_KINDS,
    ListReader,
    buffer_count,
    view_count,
)
from codegen.entry_lists import SIGNATURES as LIST_SIGNATURES
from codegen.entry_pins import SIGNATURES as PIN_SIGNATURES
from codegen.entry_pins import box_constant, guard_str
from codegen.kernel import DOUBLE, I1, I32, I64, PTR, ArrayValue, llvm_type
from codegen.lower import raise_sites
from codegen.raises import raise_exception, raised_natively
from codegen.runtime import FREE_CAPSULE, JIT_MEMORY, RELEASE_BEGIN, RELEASE_END
from codegen.tracebacks import CALL_OUT_FAILED, TracebackSites, traceback_symbols
from tracer import ir
from tracer.errors import RAISE_BASE, STATUS_EXCEPTIONS, Status
from tracer.ir.ops import OPS, sets_fp_flags
from tracer.numpy_capi import numpy_api_function

I8 = ll.IntType(8)
PY_OBJECT = ll.LiteralStructType([I64, PTR])            # ob_refcnt, ob_type
PY_FLOAT = ll.LiteralStructType([I64, PTR, DOUBLE])     # ..., ob_fval
NULL = ll.Constant(PTR, None)
# A float is (ob_refcnt, ob_type, ob_fval) in the builds with a GIL: EntryBuilder.box_result may
# write into one it holds alone (not in free-threaded builds, whose reference counts differ).
FLOAT_VALUE_OFFSET = 16
REUSABLE_FLOATS = float.__basicsize__ == FLOAT_VALUE_OFFSET + 8 and not sysconfig.get_config_var("Py_GIL_DISABLED")

EXACT_TYPES = {ir.F64: "PyFloat_Type", ir.I64: "PyLong_Type", ir.BOOL: "PyBool_Type"}

# NumPy's PyArrayObject_fields (public and unchanged from NumPy 1.7 to 2.x): the header, then
# data, nd, dimensions, strides, base, descr, flags. tests/test_arrays.py checks it on a real array.
PY_ARRAY = ll.LiteralStructType([I64, PTR, PTR, I32, PTR, PTR, PTR, PTR, I32])
ARRAY_DATA, ARRAY_ND, ARRAY_DIMENSIONS, ARRAY_STRIDES, ARRAY_DESCR, ARRAY_FLAGS = 2, 3, 4, 5, 7, 8
NPY_ARRAY_WRITEABLE = 0x0400


def written_array_params(fn: ir.Function) -> set[int]:
    """The indices of the array parameters `fn` may write into: the targets of `writeback`, the
    arrays a map writes in place (its first attrs['into'] operands) and the arrays `store`
    writes into, directly or through views."""
    index = {p: i for i, p in enumerate(fn.params)}
    written = set()
    for v in fn.walk():
        if v.op == "writeback":
            targets = v.args[::2]
        elif v.op == "store":
            targets = v.args[:1]
        else:
            targets = v.args[:v.attrs.get("into", 0)]
        for x in targets:
            while x.op in VIEWS:
                x = x.args[0]
            if x in index:
                written.add(index[x])
    return written


def object_symbols(fn: ir.Function, entry_args: list[ir.EntryArg]) -> dict[str, int]:
    """The Python objects and functions an entry uses by address, as symbols for the JIT to
    define: numpy.ndarray, the builtin dtype descriptors of the array arguments and results,
    and NumPy's PyArray_NewFromDescr (which makes the result arrays); what makes tracebacks."""
    symbols = traceback_symbols(fn)
    results = [t for t in ir.leaf_types(fn.result_type) if isinstance(t, ir.ArrayType)]
    entry_args = [a for a in entry_args if isinstance(a, ir.EntryArg)]     # (lists: entry_lists)
    for t in [a.type for a in entry_args if isinstance(a.type, ir.ArrayType)] + results:
        import numpy
        symbols["__tracer_numpy_ndarray"] = id(numpy.ndarray)
        name = ir.ARRAY_DTYPE_NAMES[t.dtype]
        symbols[f"__tracer_numpy_dtype_{name}"] = id(numpy.dtype(name))
    if results:
        symbols[NEW_ARRAY] = numpy_api_function(NEW_ARRAY_INDEX)
        symbols[SET_BASE] = numpy_api_function(SET_BASE_INDEX)
    scalars = set(ir.leaf_types(fn.result_type)) & set(ir.NARROW)            # np.float32(...), np.uint8(...)
    scalars |= {a.type for a in entry_args if a.numpy or a.type in ir.NARROW}   # NumPy scalar arguments
    scalars |= {t for t, numpy in zip(ir.leaf_types(fn.result_type), fn.numpy_results) if numpy}
    for t in scalars:
        import numpy
        symbols[numpy_scalar_type(t)] = id(numpy.dtype(ir.NUMPY_DTYPE_NAMES[t]).type)
    return symbols


def numpy_scalar_type(t: ir.ScalarType) -> str:
    """The symbol of NumPy's scalar type for narrow dtype `t` (numpy.float32, numpy.uint8...)."""
    return f"__tracer_numpy_{ir.NUMPY_DTYPE_NAMES[t]}"


NEW_ARRAY, NEW_ARRAY_INDEX = "__tracer_PyArray_NewFromDescr", 94   # slots in NumPy's C API table
SET_BASE, SET_BASE_INDEX = "__tracer_PyArray_SetBaseObject", 282
NPY_ARRAY_CARRAY = 0x0001 | 0x0100 | 0x0400       # C-contiguous, aligned, writeable


class CApi:
    """Declarations of the C API symbols a module uses (resolved in process by the JIT)."""

    SIGNATURES = {
        "PyLong_AsLongLongAndOverflow": (I64, [PTR, PTR]),
        "PyFloat_FromDouble": (PTR, [DOUBLE]),
        "PyLong_FromLongLong": (PTR, [I64]),
        "PyLong_FromUnsignedLongLong": (PTR, [I64]),
        "PyTuple_New": (PTR, [I64]),
        "PyTuple_SetItem": (I32, [PTR, I64, PTR]),
        "PyList_New": (PTR, [I64]),
        "PyList_SetItem": (I32, [PTR, I64, PTR]),
        "Py_IncRef": (ll.VoidType(), [PTR]),      # a function, so immortal objects (3.12+) are right
        "Py_DecRef": (ll.VoidType(), [PTR]),
        "PyErr_SetString": (ll.VoidType(), [PTR, PTR]),
        "PyErr_SetNone": (ll.VoidType(), [PTR]),
        "PyObject_Vectorcall": (PTR, [PTR, PTR, I64, PTR]),
        # PyArray_NewFromDescr(subtype, descr (stolen), nd, dims, strides, data, flags, obj)
        NEW_ARRAY: (PTR, [PTR, PTR, I32, PTR, PTR, PTR, I32, PTR]),
        SET_BASE: (I32, [PTR, PTR]),             # PyArray_SetBaseObject(array, obj (stolen))
        "PyCapsule_New": (PTR, [PTR, PTR, PTR]),
        "PyCapsule_GetPointer": (PTR, [PTR, PTR]),
        "memcpy": (PTR, [PTR, PTR, I64]),
        "free": (ll.VoidType(), [PTR]),
        RELEASE_BEGIN: (I32, [I32]),              # tracer/csrc/released.c
        RELEASE_END: (ll.VoidType(), [I32]),
        "PyErr_NoMemory": (PTR, []),
        JIT_MEMORY.alloc: (PTR, [I64]),           # the runtime's allocator (tracer/csrc/runtime.c)
        JIT_MEMORY.free: (ll.VoidType(), [PTR]),
        **LIST_SIGNATURES,                        # list arguments' numbers (tracer/csrc/gather.c)
        **PIN_SIGNATURES,                         # pinned strings (codegen.entry_pins)
    }

    def __init__(self, module: ll.Module, builder: ll.IRBuilder):
        self.module = module
        self.builder = builder

    def call(self, name: str, *args: ll.Value) -> ll.Value:
        fn = self.module.globals.get(name)
        if fn is None:
            ret, params = self.SIGNATURES[name]
            fn = ll.Function(self.module, ll.FunctionType(ret, params), name)
        return self.builder.call(fn, args)

    def address(self, name: str) -> ll.GlobalVariable:
        """The address of a data symbol (a type object, Py_True): only the address is used."""
        g = self.module.globals.get(name)
        if g is None:
            g = ll.GlobalVariable(self.module, I8, name)
        return g

    def exception(self, exc_type: type) -> ll.Value:
        """The class object PyExc_<Name> (a `PyObject *` variable)."""
        if exc_type.__module__ != "builtins":
            raise NotImplementedError(f"codegen: no PyExc_ global for {exc_type!r}")
        return self.builder.load(self.address(f"PyExc_{exc_type.__name__}"), typ=PTR)

    def string(self, text: str) -> ll.GlobalVariable:
        data = text.encode("utf-8") + b"\0"
        name = f"__tracer_str_{len(self.module.globals)}"
        g = ll.GlobalVariable(self.module, ll.ArrayType(I8, len(data)), name)
        g.initializer = ll.Constant(ll.ArrayType(I8, len(data)), bytearray(data))
        g.global_constant = True
        g.linkage = "private"
        g.unnamed_addr = True
        return g


class EntryBuilder:
    def __init__(self, module: ll.Module, function: ll.Function):
        self.function = function
        self.builder = ll.IRBuilder(function.append_basic_block("entry"))
        self.api = CApi(module, self.builder)
        self.numpy_leaves: list[bool] = []   # per result leaf: box it as a NumPy scalar (box)
        self.containers: list[str] = []      # per result tuple and array (pre-order): Function.result_containers
        self.owned: list[ll.Value] = []      # slots of the buffers the entry frees on its way out
        self.views: list[ll.Value] = []      # array.array exports (Py_buffer) it releases on its way out
        self.miss = function.append_basic_block("guard_miss")

    def ret(self, value: ll.Value) -> None:
        """Return `value`, freeing the entry's buffers and releasing its exports (entry_lists) first."""
        self.release_views()
        for slot in self.owned:
            self.api.call(JIT_MEMORY.free, self.builder.load(slot, typ=PTR))
        self.builder.ret(value)

    def release_views(self) -> None:
        """Release the array.array exports the entry holds (none is released twice: a released
        Py_buffer holds no object)."""
        for view in self.views:
            self.api.call("PyBuffer_Release", view)

    def run_python(self, self_: ll.Value, args: ll.Value, nargs: ll.Value) -> None:
        """Return what the Python function returns for the call (NULL with its exception set):
        with the arrays' exports released first, so that it may resize them."""
        self.release_views()
        self.ret(self.api.call("PyObject_Vectorcall", self_, args, nargs, NULL))

    def finish(self) -> None:
        """The guard miss: NULL without an exception (after the buffers are freed)."""
        with self.builder.goto_block(self.miss):
            self.ret(NULL)

    def guard(self, cond: ll.Value) -> None:
        """Go on if `cond`, else return NULL without an exception."""
        ok = self.function.append_basic_block("guard_ok")
        self.builder.cbranch(cond, ok, self.miss)
        self.builder.position_at_end(ok)

    def unbox_array(self, obj: ll.Value, t: ir.ArrayType):
        """An exact numpy.ndarray of t's rank whose dtype is the builtin (native byte order)
        descriptor of t's dtype, as the kernel's ArrayValue (its memory, not a copy)."""
        b, api = self.builder, self.api

        def field(index, typ):
            return b.load(b.gep(obj, [ll.Constant(I32, 0), ll.Constant(I32, index)], source_etype=PY_ARRAY), typ=typ)
        ob_type = b.load(b.gep(obj, [ll.Constant(I32, 0), ll.Constant(I32, 1)], source_etype=PY_OBJECT), typ=PTR)
        self.guard(b.icmp_unsigned("==", ob_type, api.address("__tracer_numpy_ndarray")))
        self.guard(b.icmp_signed("==", field(ARRAY_ND, I32), ll.Constant(I32, t.rank)))
        descr = api.address(f"__tracer_numpy_dtype_{ir.ARRAY_DTYPE_NAMES[t.dtype]}")
        self.guard(b.icmp_unsigned("==", field(ARRAY_DESCR, PTR), descr))
        dims, strides = field(ARRAY_DIMENSIONS, PTR), field(ARRAY_STRIDES, PTR)
        def axis(pointer, k):
            return b.load(b.gep(pointer, [ll.Constant(I64, k)], source_etype=I64), typ=I64)
        sizes = tuple(axis(dims, k) for k in range(t.rank))
        for size, n in zip(sizes, t.shape):     # a size of 1 is part of the type (broadcasting)
            one = b.icmp_signed("==", size, ll.Constant(I64, 1))
            self.guard(one if n == 1 else b.not_(one))
        return ArrayValue(field(ARRAY_DATA, PTR), sizes, tuple(axis(strides, k) for k in range(t.rank)))

    def is_read_only(self, obj: ll.Value) -> ll.Value:
        """Whether ndarray `obj` has flags.writeable False (a view of bytes, np.broadcast_to...)."""
        b = self.builder
        flags = b.load(b.gep(obj, [ll.Constant(I32, 0), ll.Constant(I32, ARRAY_FLAGS)], source_etype=PY_ARRAY), typ=I32)
        return b.icmp_unsigned("==", b.and_(flags, ll.Constant(I32, NPY_ARRAY_WRITEABLE)), ll.Constant(I32, 0))

    def run_python_if(self, cond: ll.Value, self_: ll.Value, args: ll.Value, nargs: ll.Value) -> None:
        """If `cond`, return what the Python function returns for the call (or NULL with its
        exception set), before the kernel runs."""
        b = self.builder
        with b.if_then(cond, likely=False):
            self.run_python(self_, args, nargs)

    def unbox(self, obj: ll.Value, arg: ir.EntryArg, overflow: ll.Value) -> ll.Value:
        b, api = self.builder, self.api
        if isinstance(arg.type, ir.ArrayType):
            return self.unbox_array(obj, arg.type)
        if arg.numpy or arg.type in ir.NARROW:
            return self.unbox_numpy_scalar(obj, arg.type)
        if arg.type == ir.BOOL:       # the only bools are the two singletons
            is_true = b.icmp_unsigned("==", obj, api.address("_Py_TrueStruct"))
            self.guard(b.or_(is_true, b.icmp_unsigned("==", obj, api.address("_Py_FalseStruct"))))
            return is_true
        ob_type = b.load(b.gep(obj, [ll.Constant(I32, 0), ll.Constant(I32, 1)], source_etype=PY_OBJECT), typ=PTR)
        self.guard(b.icmp_unsigned("==", ob_type, api.address(EXACT_TYPES[arg.type])))
        if arg.type == ir.F64:
            fval = b.gep(obj, [ll.Constant(I32, 0), ll.Constant(I32, 2)], source_etype=PY_FLOAT)
            return b.load(fval, typ=DOUBLE)
        value = api.call("PyLong_AsLongLongAndOverflow", obj, overflow)
        self.guard(b.icmp_signed("==", b.load(overflow, typ=I32), ll.Constant(I32, 0)))
        return value

    def unbox_numpy_scalar(self, obj: ll.Value, t: ir.ScalarType) -> ll.Value:
        """The value of a NumPy scalar of exactly t's type: its C value, right after the object
        header (NumPy's Py<Type>ScalarObject: PyObject_HEAD, then obval)."""
        b, api = self.builder, self.api
        ob_type = b.load(b.gep(obj, [ll.Constant(I32, 0), ll.Constant(I32, 1)], source_etype=PY_OBJECT), typ=PTR)
        self.guard(b.icmp_unsigned("==", ob_type, api.address(numpy_scalar_type(t))))
        obval = b.gep(obj, [ll.Constant(I32, 1)], source_etype=PY_OBJECT)
        if t == ir.BOOL:
            return b.icmp_unsigned("!=", b.load(obval, typ=ll.IntType(8)), ll.Constant(ll.IntType(8), 0))
        return b.load(obval, typ=llvm_type(t))

    def box_array(self, t: ir.ArrayType, result: ll.Value) -> ll.Value:
        """A new ndarray over a kernel's array result, without a copy (`result` points at
        {data, base, sizes...}, codegen.arrays): its base object is a capsule that frees `base`
        when the array dies. NULL with an exception set (and `base` freed) if that fails."""
        b, api = self.builder, self.api
        struct = result_struct(t)

        def word(i):
            return b.gep(result, [ll.Constant(I32, 0), ll.Constant(I32, i)], source_etype=struct)
        data, base = b.load(word(0), typ=PTR), b.load(word(1), typ=PTR)
        descr = api.address(f"__tracer_numpy_dtype_{ir.ARRAY_DTYPE_NAMES[t.dtype]}")
        api.call("Py_IncRef", descr)                               # NewFromDescr steals it
        dims = word(2) if t.rank else NULL       # a 0-d array has no sizes
        array = api.call(NEW_ARRAY, api.address("__tracer_numpy_ndarray"), descr, ll.Constant(I32, t.rank),
                         dims, NULL, data, ll.Constant(I32, NPY_ARRAY_CARRAY), NULL)
        fn = self.function
        made, wrap, owned, failed, done = (fn.append_basic_block(n) for n in
                                           ("array_made", "array_wrap", "array_owned", "array_failed", "array_done"))
        no_array = b.block
        b.cbranch(b.icmp_unsigned("==", array, NULL), failed, made)
        b.position_at_end(made)
        capsule = api.call("PyCapsule_New", base, NULL, self.free_capsule())
        b.cbranch(b.icmp_unsigned("==", capsule, NULL), failed, wrap)
        b.position_at_end(wrap)                  # SetBaseObject steals the capsule, also when it fails
        status = api.call(SET_BASE, array, capsule)
        b.cbranch(b.icmp_signed("==", status, ll.Constant(I32, 0)), owned, failed)
        b.position_at_end(failed)
        reason = b.phi(I32)                      # 0: no array, 1: no capsule, 2: SetBaseObject failed
        reason.add_incoming(ll.Constant(I32, 0), no_array)
        reason.add_incoming(ll.Constant(I32, 1), made)
        reason.add_incoming(ll.Constant(I32, 2), wrap)
        with b.if_then(b.icmp_unsigned("<", reason, ll.Constant(I32, 2))):
            api.call("free", base)               # (after SetBaseObject, the capsule freed it)
        with b.if_then(b.icmp_unsigned(">", reason, ll.Constant(I32, 0))):
            api.call("Py_DecRef", array)
        failed_exit = b.block
        b.branch(done)
        b.position_at_end(owned)
        b.branch(done)
        b.position_at_end(done)
        out = b.phi(PTR)
        out.add_incoming(NULL, failed_exit)
        out.add_incoming(array, owned)
        return out

    def list_of_numbers(self, t: ir.ArrayType, result: ll.Value) -> ll.Value:
        """A new list of the numbers of a kernel's 1-d array result (a list of run-time length the
        function returns), the array's block freed; NULL with an exception set if that fails."""
        b, struct = self.builder, result_struct(t)

        def word(i):
            return b.load(b.gep(result, [ll.Constant(I32, 0), ll.Constant(I32, i)], source_etype=struct),
                          typ=I64 if i > 1 else PTR)
        made = self.api.call(LIST_OF_NUMBERS, word(0), word(2), ll.Constant(I32, NUMBER_KINDS[t.dtype]))
        self.api.call(JIT_MEMORY.free, word(1))
        return made

    def free_capsule(self) -> ll.Function:
        """The capsule destructor that frees a result's memory. It lives in the JIT's runtime
        library (codegen.jit.RUNTIME), loaded for the whole process: an array can outlive the
        compiled function that made it."""
        module = self.api.module
        fn = module.globals.get(FREE_CAPSULE)
        if fn is None:
            fn = ll.Function(module, ll.FunctionType(ll.VoidType(), [PTR]), FREE_CAPSULE)
        return fn

    def guard_equals(self, value: ll.Value, arg: ir.EntryArg) -> None:
        """A trace-time constant: the same value, floats compared bit for bit (-0.0 is not 0.0)."""
        b, t, expected = self.builder, arg.type, arg.equals
        if type(expected) is not {ir.F64: float, ir.I64: int, ir.BOOL: bool}[t]:
            raise ValueError(f"codegen: EntryArg {arg} expects a value of another type")
        if t == ir.F64:
            bits = struct.unpack("<q", struct.pack("<d", expected))[0]
            self.guard(b.icmp_signed("==", b.bitcast(value, I64), ll.Constant(I64, bits)))
        elif t == ir.I64:
            if not ir.I64_MIN <= expected <= ir.I64_MAX:
                raise ValueError(f"codegen: EntryArg {arg} expects an int past 64 bits")
            self.guard(b.icmp_signed("==", value, ll.Constant(I64, expected)))
        else:
            self.guard(b.icmp_unsigned("==", value, ll.Constant(I1, int(expected))))

    def box_numpy(self, t: ir.ScalarType, x: ll.Value) -> ll.Value:
        """numpy.<dtype>(x as a Python int, float or bool) (exact), or NULL with an exception set."""
        b, api = self.builder, self.api
        if t in ir.FLOATS:
            number = api.call("PyFloat_FromDouble", to_double(b, t, x))
        elif t == ir.BOOL:
            number = b.select(x, api.address("_Py_TrueStruct"), api.address("_Py_FalseStruct"))
            api.call("Py_IncRef", number)
        elif t in ir.UNSIGNED:
            number = api.call("PyLong_FromUnsignedLongLong", b.zext(x, I64) if ir.BITS[t] < 64 else x)
        else:
            number = api.call("PyLong_FromLongLong", b.sext(x, I64) if ir.BITS[t] < 64 else x)
        call, done = self.function.append_basic_block("numpy_box"), self.function.append_basic_block("numpy_done")
        start = b.block
        b.cbranch(b.icmp_unsigned("==", number, NULL), done, call)
        b.position_at_end(call)
        slot = b.alloca(PTR)
        b.store(number, slot)
        obj = api.call("PyObject_Vectorcall", api.address(numpy_scalar_type(t)), slot, ll.Constant(I64, 1), NULL)
        api.call("Py_DecRef", number)
        b.branch(done)
        b.position_at_end(done)
        result = b.phi(PTR)
        result.add_incoming(NULL, start)
        result.add_incoming(obj, call)
        return result

    def box_result(self, t: ir.Type, leaves: list[ll.Value]) -> ll.Value:
        """The call's result, boxed as `box` boxes it, except a float: the entry keeps the float it
        returned last and, when nothing else holds it any more (its reference count is back to the
        entry's one, so no one can see the change), writes the new value into it instead of
        allocating, as CPython's free list would hand the same memory back."""
        if t != ir.F64 or (self.numpy_leaves and self.numpy_leaves[0]) or not REUSABLE_FLOATS:
            return self.box(t, leaves)
        b, api, value = self.builder, self.api, leaves.pop(0)
        slot = ll.GlobalVariable(api.module, PTR, f"__tracer_last_float_{len(api.module.globals)}")
        slot.initializer, slot.linkage = NULL, "internal"
        check, reuse, fresh, keep, done = (self.function.append_basic_block(name) for name in
                                           ("last_float", "reuse_float", "new_float", "keep_float", "float_done"))
        last = b.load(slot, typ=PTR)
        b.cbranch(b.icmp_unsigned("==", last, NULL), fresh, check)
        b.position_at_end(check)
        only_ours = b.icmp_signed("==", b.load(last, typ=I64), ll.Constant(I64, 1))   # ob_refcnt
        b.cbranch(only_ours, reuse, fresh)
        b.position_at_end(reuse)
        b.store(value, b.gep(last, [ll.Constant(I64, FLOAT_VALUE_OFFSET)], source_etype=I8))   # ob_fval
        b.store(ll.Constant(I64, 2), last)
        b.branch(done)
        b.position_at_end(fresh)
        new = api.call("PyFloat_FromDouble", value)
        failed = b.block
        b.cbranch(b.icmp_unsigned("==", new, NULL), done, keep)
        b.position_at_end(keep)
        api.call("Py_IncRef", new)
        api.call("Py_DecRef", last)          # (NULL is allowed) held by others too: never freed here
        b.store(new, slot)
        b.branch(done)
        b.position_at_end(done)
        result = b.phi(PTR)
        result.add_incoming(last, reuse)
        result.add_incoming(NULL, failed)
        result.add_incoming(new, keep)
        return result

    def box(self, t: ir.Type, leaves: list[ll.Value]) -> ll.Value:
        """A new reference to the Python value of `t` from its leaves (consumed from the front),
        or NULL with an exception set (and nothing leaked) if an allocation fails."""
        b, api = self.builder, self.api
        if not isinstance(t, ir.TupleType) and (self.numpy_leaves.pop(0) if self.numpy_leaves else False) \
                or t in ir.NARROW:
            return self.box_numpy(t, leaves.pop(0))
        if t == ir.F64:
            return api.call("PyFloat_FromDouble", leaves.pop(0))
        if t == ir.I64:
            return api.call("PyLong_FromLongLong", leaves.pop(0))
        if t == ir.BOOL:
            obj = b.select(leaves.pop(0), api.address("_Py_TrueStruct"), api.address("_Py_FalseStruct"))
            api.call("Py_IncRef", obj)
            return obj
        if isinstance(t, ir.ArrayType):        # a list held in an array is returned as a list
            if (self.containers.pop(0) if self.containers else "array") == "tolist":
                return self.list_of_numbers(t, leaves.pop(0))
            return self.box_array(t, leaves.pop(0))
        assert isinstance(t, ir.TupleType), t
        container = self.containers.pop(0) if self.containers else "tuple"     # (pre-order)
        if type(container) is tuple:               # ("constant", value)
            return box_constant(self, container[1])
        if container == "numbers":
            return self.list_of_numbers(t.elements[0], leaves.pop(0))
        kind = "List" if container == "list" else "Tuple"
        fill = self.function.append_basic_block("tuple_fill")
        cleanup = self.function.append_basic_block("tuple_cleanup")
        done = self.function.append_basic_block("tuple_done")
        tup = api.call(f"Py{kind}_New", ll.Constant(I64, len(t.elements)))
        allocation = b.block
        b.cbranch(b.icmp_unsigned("==", tup, NULL), done, fill)
        b.position_at_end(fill)
        for i, element in enumerate(t.elements):
            item = self.box(element, leaves)
            store = self.function.append_basic_block("tuple_store")
            b.cbranch(b.icmp_unsigned("==", item, NULL), cleanup, store)
            b.position_at_end(store)
            api.call(f"Py{kind}_SetItem", tup, ll.Constant(I64, i), item)   # steals item
        filled = b.block
        b.branch(done)
        with b.goto_block(cleanup):                 # a tuple (list) with NULL slots deallocates fine
            api.call("Py_DecRef", tup)
            b.branch(done)
        b.position_at_end(done)
        result = b.phi(PTR)
        result.add_incoming(NULL, allocation)
        result.add_incoming(NULL, cleanup)
        result.add_incoming(tup, filled)
        return result


def raised_itself(fn: ir.Function, site: ir.Value) -> bool:
    """Whether a `raise` op of a function whose failures run the Python function is raised by the
    entry all the same: no handler of the user's catches it (tracer.frontend.opcodes.exceptions),
    and no array argument (NumPy's semantics) makes the Python function answer."""
    return bool(site.attrs.get("uncaught")) and not any(isinstance(p.type, ir.ArrayType) for p in fn.params)


def lower_entry(fn: ir.Function, entry_args: list[ir.EntryArg], module: ll.Module,
                kernel: ll.Function, symbol: str) -> ll.Function:
    """Emit the METH_FASTCALL entry `symbol` that unboxes, calls `kernel` and boxes."""
    fed = sorted(p for a in entry_args for p in (a.params if isinstance(a, ir.ListArg) else [a.param]) if p is not None)
    if fed != list(range(len(fn.params))):
        raise ValueError(f"codegen: entry args {entry_args} must feed each of the {len(fn.params)} "
                         f"parameters of {fn.name} exactly once")
    for a in entry_args:
        if isinstance(a, ir.EntryArg) and a.param is not None and fn.params[a.param].type != a.type:
            raise ValueError(f"codegen: {a} feeds parameter {fn.params[a.param].name} of type "
                             f"{fn.params[a.param].type}")

    function = ll.Function(module, ll.FunctionType(PTR, [PTR, PTR, I64]), symbol)
    function.attributes.add("nounwind")     # no unwind tables: CPython code never unwinds through C
    self_, args, nargs = function.args
    self_.name, args.name, nargs.name = "self", "args", "nargs"
    e = EntryBuilder(module, function)
    b = e.builder
    leaves = ir.leaf_types(fn.result_type)
    outs = [b.alloca(result_struct(t) if isinstance(t, ir.ArrayType) else llvm_type(t), name=f"out{i}")
            for i, t in enumerate(leaves)]
    overflow = b.alloca(I32, name="overflow")
    e.owned = [b.alloca(PTR, name=f"buffer{k}") for k in range(buffer_count(entry_args))]
    for slot in e.owned:
        b.store(NULL, slot)
    e.views = [b.alloca(PTR, BUFFER_VIEW_WORDS, name=f"view{k}") for k in range(view_count(entry_args))]
    for view in e.views:                     # (holding no export: its `obj` NULL)
        b.store(NULL, b.gep(view, [ll.Constant(I64, 1)], source_etype=PTR))
    lists = ListReader(e, JIT_MEMORY.alloc, e.owned, e.views)

    e.guard(b.icmp_signed("==", nargs, ll.Constant(I64, len(entry_args))))
    params: list[ll.Value | None] = [None] * len(fn.params)
    written = written_array_params(fn)
    read_only = ll.Constant(I1, 0)
    for i, arg in enumerate(entry_args):
        obj = b.load(b.gep(args, [ll.Constant(I64, i)], source_etype=PTR), typ=PTR, name=f"arg{i}")
        if isinstance(arg, ir.ListArg):
            lists.read_argument(obj, arg, fn, params, overflow)
            continue
        if isinstance(arg, ir.PinnedStr):
            guard_str(e, obj, arg.equals)
            continue
        value = e.unbox(obj, arg, overflow)
        if arg.param is None:
            e.guard_equals(value, arg)
        else:
            params[arg.param] = value
        if arg.param in written:
            read_only = b.or_(read_only, e.is_read_only(obj))
    if written:      # every guard passed: a read-only array the function writes is Python's to refuse
        e.run_python_if(read_only, self_, args, nargs)
    if lists.writes:
        e.run_python_if(lists.aliased(), self_, args, nargs)
    flat = [x for p in params for x in ((p.data, *p.sizes, *p.strides) if isinstance(p, tuple) else (p,))]
    polls = may_poll(fn)
    if polls:                 # the kernel may release the GIL at a poll, or must not
        previous = e.api.call(RELEASE_BEGIN, ll.Constant(I32, int(releases_gil(fn))))
    status = b.call(kernel, flat + outs, name="status")
    if polls:
        e.api.call(RELEASE_END, previous)

    # only the statuses this kernel can return get a case: a smaller module compiles faster
    possible = {st for v in fn.walk() if OPS[v.op].may_fail(v) for st in OPS[v.op].statuses}
    if Status.FALLBACK in possible and any(v.op == "python_call" for v in fn.walk()):
        possible.add(Status.CALLED_OUT_FALLBACK)     # (codegen.callouts)
    boxing = function.append_basic_block("ok")
    unknown = function.append_basic_block("unknown_status")
    switch = b.switch(status, unknown)
    switch.add_case(ll.Constant(I32, int(Status.OK)), boxing)
    # with array arguments every failure re-runs the Python function: where Python's float and
    # int ops raise, NumPy's scalars give inf, nan or a wrapped int (tracer.frontend.arrays)
    rerun_on_failure = reruns_on_failure(fn)
    # FALLBACK, and array sizes NumPy rejects (its exact ValueError/IndexError): run Python
    fallback = function.append_basic_block("fallback")
    switch.add_case(ll.Constant(I32, int(Status.SHAPE_MISMATCH)), fallback)
    if Status.FALLBACK in possible or rerun_on_failure:
        switch.add_case(ll.Constant(I32, int(Status.FALLBACK)), fallback)
    with b.goto_block(fallback):
        e.run_python(self_, args, nargs)
    # a signal handler raised while a loop ran (KeyboardInterrupt): its exception propagates,
    # and the function is not run again (what it wrote so far stays written)
    interrupted = function.append_basic_block("python_error")
    switch.add_case(ll.Constant(I32, int(Status.PYTHON_ERROR)), interrupted)
    sites = TracebackSites(module, fn)         # the user's lines, for the tracebacks
    with b.goto_block(interrupted):
        if any(v.op == "python_call" for v in fn.walk()):    # a call into CPython raised: its line
            sites.add_failed(b, CALL_OUT_FAILED)
        e.ret(NULL)
    failed = function.append_basic_block("failed")
    with b.goto_block(failed):
        if rerun_on_failure or not possible & STATUS_EXCEPTIONS.keys():
            b.unreachable()
        else:
            sites.add_failed(b)
            e.ret(NULL)
    for st, (exc_type, message) in STATUS_EXCEPTIONS.items():
        if st in possible:
            block = function.append_basic_block(f"raise_{st.name.lower()}")
            switch.add_case(ll.Constant(I32, int(st)), block)
            with b.goto_block(block):
                if rerun_on_failure:
                    e.run_python(self_, args, nargs)
                else:
                    e.api.call("PyErr_SetString", e.api.exception(exc_type), e.api.string(message))
                    b.branch(failed)
    for i, site in enumerate(raise_sites(fn)):
        block = function.append_basic_block(f"raise_site_{i}")
        switch.add_case(ll.Constant(I32, RAISE_BASE + i), block)
        with b.goto_block(block):
            if (rerun_on_failure and not raised_itself(fn, site)) or not raised_natively(site):
                e.run_python(self_, args, nargs)   # Python raises it exactly
            else:
                raise_exception(e, site)
                sites.add(b, sites.site(site.loc))
                e.ret(NULL)
    with b.goto_block(unknown):   # a status the op table did not declare: an error, not a crash
        e.api.call("PyErr_SetString", e.api.exception(SystemError), e.api.string("tracer: unexpected status"))
        e.ret(NULL)
    b.position_at_end(boxing)
    lists.write_back()
    values = [out if isinstance(t, ir.ArrayType) else b.load(out, typ=llvm_type(t)) for out, t in zip(outs, leaves)]
    e.finish()
    if fn.returns_none:
        none = e.api.address("_Py_NoneStruct")
        e.api.call("Py_IncRef", none)
        e.ret(none)
        return function
    e.numpy_leaves, e.containers = list(fn.numpy_results), list(fn.result_containers)
    e.ret(e.box_result(fn.result_type, values))
    return function


def may_poll(fn: ir.Function) -> bool:
    """Whether fn's kernel may poll for signals (KernelBuilder.poll_signals): it has a loop or arrays."""
    return (any(v.op == "loop" or isinstance(v.type, ir.ArrayType) for v in fn.walk())
            or any(isinstance(p.type, ir.ArrayType) for p in fn.params))


def releases_gil(fn: ir.Function) -> bool:
    """Whether fn's kernel runs with the GIL released, as NumPy runs its loops: where it touches no
    Python object (no call into Python) and polls. It releases the GIL at its first poll (after
    about a millisecond of work: a short call pays nothing for the release) and its entry takes
    the GIL back (tracer/csrc/released.h)."""
    return may_poll(fn) and not any(v.op == "python_call" for v in fn.walk())


def reruns_on_failure(fn: ir.Function) -> bool:
    """Whether every failure of fn's kernel runs the Python function again (NumPy semantics)."""
    return fn.python_on_failure or any(isinstance(p.type, ir.ArrayType) for p in fn.params)


def may_run_python_again(fn: ir.Function) -> bool:
    """Whether a call of fn's entry can end by running the Python function again, from the start,
    other than for an int past 64 bits (FALLBACK from a scalar op, which a kernel that called
    into Python turns into CALLED_OUT_FALLBACK). Code that calls into Python (`python_call`)
    must not: what it called would run twice."""
    failing = [v for v in fn.walk() if v.op != "python_call" and OPS[v.op].may_fail(v)]
    sites = raise_sites(fn)
    if reruns_on_failure(fn):
        return bool(failing or sites) or (fn.python_on_failure and any(map(sets_fp_flags, fn.walk())))
    for v in failing:
        statuses = OPS[v.op].statuses
        scalar = isinstance(v.type, ir.ScalarType) and all(isinstance(a.type, ir.ScalarType) for a in v.args)
        if Status.SHAPE_MISMATCH in statuses or (Status.FALLBACK in statuses and not scalar):
            return True
    return any(not raised_natively(site) for site in sites)
