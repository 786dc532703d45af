"""Kernels behind a plain C ABI, for ahead-of-time export (tracer.aot.export writes the files).

For each exported function the module holds its kernel (internal) and a C entry:

    int32_t <symbol>(<one C argument per Python argument>, <one out pointer per result leaf>)

  - a float is `double`, an int `int64_t`, a bool `bool`; an array is three arguments: its data
    pointer, `const int64_t *shape` and `const int64_t *strides` (in bytes; NULL: C order);
  - a scalar result is written through `double *` / `int64_t *` / `bool *`; an array result is
    written as {data, owner, shape[rank]} (see `array_struct_name`), and `owner` must be passed
    to `<prefix>free` when the caller is done with it;
  - the return value is one of `CODES` (0 = ok). On failure nothing is written through the out
    pointers and `<prefix>last_error()` returns a message for the calling thread;
  - an array argument the function updates in place (`w -= lr * g`; codegen.entry's
    `written_array_params`) is written through its data pointer and strides, as NumPy would.

Everything the C entry checks the CPython entry checks too (codegen.entry), but failures come
back as codes instead of guard misses: a NULL pointer, a pinned argument with another value, an
array whose size-1 axes differ from the export's example (broadcasting depends on them), and
(BAD_ARGUMENT) an array whose sizes are negative or whose size in bytes does not fit a ptrdiff_t.
"""
from __future__ import annotations

import contextlib
import functools
import os
import sys
import tempfile
from dataclasses import dataclass

from llvmlite import ir as ll

from codegen.arrays import ITEM_SIZE
from codegen.kernel import DOUBLE, I32, I64, PTR, llvm_type
from codegen.lower import lower_function, raise_sites
from codegen.target import initialize, optimize
from tracer import ir
from tracer.errors import RAISE_BASE, STATUS_EXCEPTIONS, Status
from tracer.ir.ops import OPS

# The status codes of the C ABI (the header lists them as TRACER_*), and the Python exception
# each stands for (the ctypes loader raises it)
CODES = {
    "OK": (0, None),
    "ZERO_DIVISION": (1, ZeroDivisionError),
    "DOMAIN_ERROR": (2, ValueError),         # math domain error, int(nan)
    "OVERFLOW": (3, OverflowError),          # a float result too large, int(inf)
    "SHAPE_MISMATCH": (4, ValueError),       # array shapes that do not fit, an index out of range
    "BAD_ARGUMENT": (5, TypeError),          # NULL pointers, a value other than the export's, sizes that overflow
    "RAISED": (6, None),                     # a raise/assert in the function: see last_error()
    "NO_MEMORY": (7, MemoryError),
    "NEEDS_PYTHON": (8, ArithmeticError),    # an int beyond 64 bits: only Python computes it
}
CODE = {name: code for name, (code, _) in CODES.items()}

_BY_EXCEPTION = {ZeroDivisionError: "ZERO_DIVISION", ValueError: "DOMAIN_ERROR", OverflowError: "OVERFLOW",
                 MemoryError: "NO_MEMORY"}


@dataclass(frozen=True)
class CArgument:
    """One Python argument of an exported function: its C name and how it feeds the kernel."""
    name: str
    entry: ir.EntryArg


@dataclass(frozen=True)
class ExportedFunction:
    symbol: str                  # the C entry's name (already prefixed)
    fn: ir.Function              # optimized IR
    args: tuple[CArgument, ...]
    result_names: tuple[str, ...]   # one per result leaf (the out pointers' names)


def array_struct_name(prefix: str, t: ir.ArrayType) -> str:
    """The C struct of an array result: `<prefix>f64_2d` = {double *data; void *owner; int64_t shape[2];}."""
    return f"{prefix}{t.dtype}_{t.rank}d"


def kernel_status_code(status: Status) -> tuple[str, str]:
    """(C code name, message) for a failing kernel status (not a raise site)."""
    if status == Status.FALLBACK:
        return "NEEDS_PYTHON", "the exact result needs Python (an int beyond 64 bits or a complex number)"
    if status == Status.SHAPE_MISMATCH:
        return "SHAPE_MISMATCH", "array shapes do not fit (or an index is out of range), where NumPy raises"
    exc_type, message = STATUS_EXCEPTIONS[status]
    return _BY_EXCEPTION.get(exc_type, "RAISED"), f"{exc_type.__name__}: {message}"


def lower_library(functions: list[ExportedFunction], prefix: str, triple: str, data_layout: str) -> ll.Module:
    """One module: every function's kernel and C entry, `<prefix>last_error` and `<prefix>free`."""
    module = ll.Module(name=prefix.rstrip("_") or "tracer_export")
    module.triple, module.data_layout = triple, data_layout
    last_error = ll.GlobalVariable(module, PTR, f"{prefix}error_message")
    last_error.linkage, last_error.storage_class = "internal", "thread_local"
    last_error.initializer = ll.Constant(PTR, None)
    strings = _Strings(module, prefix)
    entries = []
    for f in functions:
        kernel = lower_function(f.fn, module, f"__tracer_{f.symbol}")
        kernel.linkage = "internal"
        entries.append(_lower_c_entry(f, module, kernel, last_error, strings))

    get = ll.Function(module, ll.FunctionType(PTR, []), f"{prefix}last_error")
    b = ll.IRBuilder(get.append_basic_block("entry"))
    message = b.load(last_error, typ=PTR)
    b.ret(b.select(b.icmp_unsigned("==", message, ll.Constant(PTR, None)), strings.get(""), message))

    free = ll.Function(module, ll.FunctionType(ll.VoidType(), [PTR]), f"{prefix}free")
    b = ll.IRBuilder(free.append_basic_block("entry"))
    libc_free = module.globals.get("free") or ll.Function(module, ll.FunctionType(ll.VoidType(), [PTR]), "free")
    b.call(libc_free, [free.args[0]])
    b.ret_void()
    if "-windows" in triple:     # a DLL exports only what is marked (llvmlite prints it where the linkage goes)
        for function in [*entries, get, free]:
            function.linkage = "dllexport"
    return module


class _Strings:
    """Constant C strings, one global per distinct text."""

    def __init__(self, module: ll.Module, prefix: str):
        self.module, self.prefix, self.made = module, prefix, {}

    def get(self, text: str) -> ll.GlobalVariable:
        if text not in self.made:
            data = bytearray(text.encode("utf-8")) + b"\0"
            typ = ll.ArrayType(ll.IntType(8), len(data))
            g = ll.GlobalVariable(self.module, typ, f"{self.prefix}message_{len(self.made)}")
            g.linkage, g.global_constant, g.unnamed_addr = "private", True, True
            g.initializer = ll.Constant(typ, data)
            self.made[text] = g
        return self.made[text]


def _c_param_types(t: ir.Type) -> list[ll.Type]:
    return [PTR, PTR, PTR] if isinstance(t, ir.ArrayType) else [llvm_type(t)]


def _lower_c_entry(f: ExportedFunction, module: ll.Module, kernel: ll.Function, last_error, strings: _Strings):
    fn = f.fn
    leaves = ir.leaf_types(fn.result_type)
    params = [t for a in f.args for t in _c_param_types(a.entry.type)]
    function = ll.Function(module, ll.FunctionType(I32, params + [PTR] * len(leaves)), f.symbol)
    function.attributes.add("nounwind")
    c_args = list(function.args)
    b = ll.IRBuilder(function.append_basic_block("entry"))

    def fail_if(cond, code: str, message: str):
        bad = function.append_basic_block("bad_argument")
        ok = function.append_basic_block("checked")
        b.cbranch(cond, bad, ok)
        with b.goto_block(bad):
            b.store(strings.get(f"{fn.name}: {message}"), last_error)
            b.ret(ll.Constant(I32, CODE[code]))
        b.position_at_end(ok)

    def is_null(p):
        return b.icmp_unsigned("==", p, ll.Constant(PTR, None))

    kernel_params: list = [None] * len(fn.params)
    for a in f.args:
        t = a.entry.type
        if isinstance(t, ir.ArrayType):
            data, shape, strides = c_args[:3]
            del c_args[:3]
            data.name, shape.name, strides.name = a.name, f"{a.name}_shape", f"{a.name}_strides"
            fields = _array_argument(b, fail_if, is_null, a.name, t, data, shape, strides)
            kernel_params[a.entry.param] = fields
            continue
        value = c_args.pop(0)
        value.name = a.name
        if t == ir.BOOL:
            value.add_attribute("zeroext")
        if a.entry.param is not None:
            kernel_params[a.entry.param] = [value]
            continue
        pinned = a.entry.equals
        if t == ir.F64:   # by bits, as the CPython entry compares it (-0.0 is not 0.0)
            differs = b.icmp_unsigned("!=", b.bitcast(value, I64), b.bitcast(ll.Constant(DOUBLE, pinned), I64))
        else:
            differs = b.icmp_unsigned("!=", value, ll.Constant(llvm_type(t), int(pinned)))
        fail_if(differs, "BAD_ARGUMENT", f"argument {a.name} must be {pinned!r}: the function was exported "
                                         f"for that value (it is used at compile time)")
    outs = c_args
    for out, name in zip(outs, f.result_names):
        out.name = name
        fail_if(is_null(out), "BAD_ARGUMENT", f"the output pointer {name} is NULL")
    status = b.call(kernel, [x for p in kernel_params for x in p] + outs, name="status")

    ok = function.append_basic_block("ok")
    unknown = function.append_basic_block("unknown_status")
    switch = b.switch(status, unknown)
    switch.add_case(ll.Constant(I32, int(Status.OK)), ok)
    with b.goto_block(ok):
        b.store(ll.Constant(PTR, None), last_error)
        b.ret(ll.Constant(I32, 0))
    cases = {st for v in fn.walk() if OPS[v.op].may_fail(v) for st in OPS[v.op].statuses}
    cases |= {Status.FALLBACK, Status.SHAPE_MISMATCH, Status.NO_MEMORY}
    for st in sorted(cases - {Status.RAISE}):     # RAISE: the raise sites' own statuses, below
        code, message = kernel_status_code(st)
        _status_case(function, switch, b, int(st), code, strings.get(f"{fn.name}: {message}"), last_error)
    for i, site in enumerate(raise_sites(fn)):
        exc = site.attrs["exception"]
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        where = f" ({site.loc})" if site.loc is not None else ""
        _status_case(function, switch, b, RAISE_BASE + i, "RAISED", strings.get(f"{fn.name}{where}: {text}"), last_error)
    with b.goto_block(unknown):
        b.store(strings.get(f"{fn.name}: unexpected status from the compiled code"), last_error)
        b.ret(ll.Constant(I32, CODE["NEEDS_PYTHON"]))
    return function


def _status_case(function, switch, b, status: int, code: str, message, last_error):
    block = function.append_basic_block(f"status_{status}")
    switch.add_case(ll.Constant(I32, status), block)
    with b.goto_block(block):
        b.store(message, last_error)
        b.ret(ll.Constant(I32, CODE[code]))


def _array_argument(b, fail_if, is_null, name: str, t: ir.ArrayType, data, shape, strides) -> list:
    """The kernel's fields (data, sizes, byte strides) of an array argument, checked."""
    fail_if(is_null(shape), "BAD_ARGUMENT", f"{name}_shape is NULL")
    sizes = []
    for axis, n in enumerate(t.shape):
        size = b.load(b.gep(shape, [ll.Constant(I64, axis)], source_etype=I64), typ=I64, name=f"{name}.size{axis}")
        fail_if(b.icmp_signed("<", size, ll.Constant(I64, 0)), "BAD_ARGUMENT", f"{name}_shape[{axis}] is negative")
        one = b.icmp_signed("==", size, ll.Constant(I64, 1))
        if n == 1:
            fail_if(b.not_(one), "SHAPE_MISMATCH", f"{name}_shape[{axis}] must be 1, as in the export's example")
        else:   # broadcasting treats a size of 1 differently: part of the exported specialization
            fail_if(one, "SHAPE_MISMATCH", f"{name}_shape[{axis}] is 1; the function was exported for other "
                                           f"sizes (export it with an example of size 1 for this)")
        sizes.append(size)
    # its size in bytes must be an address difference (ptrdiff_t), as NumPy's arrays are: the
    # product of the sizes other than 0 (NumPy's rule too) times the item size, checked by
    # division (wasm32 has no 128-bit multiply for llvm.smul.with.overflow)
    limit = ll.Constant(I64, 2**31 - 1 if "-p:32" in b.module.data_layout else 2**63 - 1)
    itemsize = ll.Constant(I64, ITEM_SIZE[t.dtype])
    nbytes, too_big = itemsize, ll.Constant(ll.IntType(1), 0)
    for size in sizes:
        factor = b.select(b.icmp_signed("==", size, ll.Constant(I64, 0)), ll.Constant(I64, 1), size)
        too_big = b.or_(too_big, b.icmp_unsigned(">", nbytes, b.udiv(limit, factor)))
        nbytes = b.mul(nbytes, factor)
    fail_if(too_big, "BAD_ARGUMENT", f"{name}_shape: the array's size in bytes overflows the address space")
    count = ll.Constant(I64, 1)
    for size in sizes:
        count = b.mul(count, size)
    fail_if(b.and_(is_null(data), b.icmp_signed("!=", count, ll.Constant(I64, 0))), "BAD_ARGUMENT", f"{name} is NULL")
    # NULL strides: C order
    contiguous, step = [None] * t.rank, itemsize
    for axis in reversed(range(t.rank)):
        contiguous[axis] = step
        step = b.mul(step, sizes[axis])
    given = is_null(strides)
    out = []
    for axis in range(t.rank):
        with b.if_else(given) as (use_contiguous, use_given):
            with use_contiguous:
                block_a = b.block
            with use_given:
                loaded = b.load(b.gep(strides, [ll.Constant(I64, axis)], source_etype=I64), typ=I64)
                block_b = b.block
        stride = b.phi(I64, name=f"{name}.stride{axis}")
        stride.add_incoming(contiguous[axis], block_a)
        stride.add_incoming(loaded, block_b)
        out.append(stride)
    return [data, *sizes, *out]


# ------------------------------------------------------------------------------ object code
BASELINE_CPUS = {"x86_64": "x86-64-v2", "aarch64": "generic", "riscv64": "generic-rv64", "armv7": "generic",
                 "wasm32": "mvp"}   # what an export assumes by default
# the baseline's instruction set where its CPU's name does not say it: RV64GC, and ARMv7-A with
# VFPv3-D16 (Debian armhf's baseline: no NEON)
BASELINE_FEATURES = {"riscv64": "+m,+a,+f,+d,+c", "armv7": "+armv7-a,+vfp3d16,-neon,-d32"}
# the C ABI's name, and what it needs of any CPU: lp64d and gnueabihf pass doubles in float registers
ABIS = {"riscv64": ("lp64d", "+d"), "armv7": ("", "+vfp2")}


@functools.cache
def _initialize_all_targets() -> None:
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


def _cpu_and_features(arch: str, cpu: str | None) -> tuple[str, str]:
    import llvmlite.binding as llvm
    if cpu == "native":
        return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()
    if cpu is None:
        return BASELINE_CPUS.get(arch, "generic"), BASELINE_FEATURES.get(arch, "")
    return cpu, ABIS.get(arch, ("", ""))[1]


def export_target_machine(triple: str | None = None, cpu: str | None = None):
    """A target machine for position-independent code: this machine's triple by default, the
    baseline CPU of its architecture unless `cpu` names one ("native": this machine's)."""
    import llvmlite.binding as llvm
    initialize()
    if triple is not None:
        _initialize_all_targets()
    triple = triple or llvm.get_process_triple()
    arch = {"arm64": "aarch64"}.get(triple.split("-")[0], triple.split("-")[0])     # Apple's name for it
    cpu, features = _cpu_and_features(arch, cpu)
    target = llvm.Target.from_triple(triple)
    with _stderr_captured() as said:     # LLVM warns of an unknown CPU on stderr, then aborts at codegen
        tm = target.create_target_machine(cpu=cpu, features=features, opt=3, reloc="pic", codemodel="default",
                                          abiname=ABIS.get(arch, ("", ""))[0])
    if "is not a recognized processor" in said():
        raise ValueError(f"export: unknown CPU {cpu!r} for {triple} (e.g. {BASELINE_CPUS.get(arch, 'generic')}, or native)")
    sys.stderr.write(said())
    return tm


@contextlib.contextmanager
def _stderr_captured():
    """What native code writes to file descriptor 2 inside the block (a function returns it after)."""
    sys.stderr.flush()
    with tempfile.TemporaryFile() as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        text: list[str] = []
        try:
            yield lambda: "".join(text)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            text.append(sink.read().decode(errors="replace"))


def emit_object(functions: list[ExportedFunction], prefix: str, cpu: str | None = None,
                triple: str | None = None) -> bytes:
    """The optimized object file of `lower_library` for the target."""
    tm = export_target_machine(triple, cpu)
    module = lower_library(functions, prefix, tm.triple, str(tm.target_data))
    return tm.emit_object(optimize(str(module), tm))
