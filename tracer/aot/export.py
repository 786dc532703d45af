"""Ahead-of-time export: Python functions compiled once into a shared library with a C header and
a ctypes loader, for programs that have no Python in them.

    tracer.export(fma, 3.0, -1.0, 2.0, out_dir="out", grad=True)
    # out/libfma.so   int32_t fma_fma(double x, double y, double z, double *out)
    #                 int32_t fma_fma_grad(double x, ..., double *out, double *d_x, ...)
    # out/fma.h       the prototypes, status codes and array structs, documented
    # out/fma.py      ctypes bindings: fma.fma(3.0, -1.0, 2.0) from Python, through the library

Each function is traced with example arguments exactly as `@trace` traces its first call (so
the library holds that specialization: argument types, array ranks and which axes have size 1),
then lowered behind a C ABI (codegen.export) and linked by zig (from pip) or a C compiler
(tracer.aot.toolchain). The library needs only libc and libm. Values the function reads from
module globals are frozen at export time; its inputs must be its arguments (numbers and NumPy
arrays).
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import codegen.export as cexport
from codegen.entry import written_array_params
from tracer.aot.toolchain import ExportError, library_files, link_shared
from tracer.aot.wasm import js_loader_text, link_wasm, write_module_loader
from tracer.api import make_dispatcher, unwrap
from tracer.frontend.arrays import is_ndarray
from tracer.frontend.sources import ArgSource
from tracer.gradients import Grad
from tracer.ir import (
    BITS,
    BOOL,
    COMPLEX,
    F16,
    F32,
    F64,
    I64,
    INTEGERS,
    NARROW,
    NUMPY_DTYPE_NAMES,
    UNSIGNED,
    ArrayType,
    leaf_types,
)
from tracer.ir.linalg_ops import LINALG_OPS
from tracer.specialize import entry_args_for_arguments

C_TYPES = {F64: "double", F32: "float", I64: "int64_t", BOOL: "bool",
           **{t: f"{'u' if t in UNSIGNED else ''}int{BITS[t]}_t" for t in INTEGERS},
           F16: "uint16_t"}     # a float16: its IEEE binary16 bits
# target -> (LLVM triple, None for this machine's; what links the library without zig, None: only
# zig, see tracer.aot.toolchain)
TARGETS = {
    "host": (None, "cc"),
    "x86_64-linux": ("x86_64-unknown-linux-gnu", "x86_64-linux-gnu-gcc"),
    "aarch64-linux": ("aarch64-unknown-linux-gnu", "aarch64-linux-gnu-gcc"),
    "riscv64-linux": ("riscv64-unknown-linux-gnu", None),           # RV64GC, lp64d
    "armv7-linux": ("armv7-unknown-linux-gnueabihf", None),         # ARMv7-A, VFPv3-D32, hard-float ABI
    "x86_64-windows": ("x86_64-pc-windows-gnu", None),              # <name>.dll and its import library <name>.lib
    "aarch64-windows": ("aarch64-pc-windows-gnu", None),
    "x86_64-macos": ("x86_64-apple-macosx11.0.0", None),            # lib<name>.dylib, macOS 11 or later
    "aarch64-macos": ("arm64-apple-macosx11.0.0", None),
    "wasm32": ("wasm32-unknown-unknown", "wasm-ld"),
}

@dataclass
class Exported:
    """What `export` wrote: the library, the header, the ctypes loader, and the C symbols (and
    for Windows the import library that C programs link against)."""
    library: str
    header: str
    loader: str
    symbols: list[str]
    import_library: str | None = None


def export(functions: Callable[..., Any] | list, *example_args: Any, out_dir: str, target: str = "host", name: str | None = None,
           grad: bool = False, fuse_fma: bool = True, cpu: str | None = None) -> Exported:
    """Compile `functions` (a function, or a list of functions and `(function, example_args)`
    pairs) into `out_dir/lib<name>.so` with `<name>.h` and `<name>.py` (for Windows targets
    `<name>.dll` and its import library `<name>.lib`, for macOS `lib<name>.dylib`).

    Each function is specialized for its example arguments (its own, or `example_args`). With
    `grad=True` each also gets `<name>_<fn>_grad`: its value and its gradient with respect to
    every float argument, from the compiled backward (`grad` may also list the functions that
    get one). `cpu` is the CPU the code may assume:
    a portable baseline by default (x86-64-v2), "native" for this machine's.

    A function that updates an argument array in place (`w -= lr * g`, `x[i] = v`) writes into
    the caller's memory, as under NumPy (so a whole training step exports: `grad` of a loss, then
    `W1 -= lr * g1`, ...); the header says which arguments it writes (the arrays it only reads
    are `const`), and the ctypes loader refuses a read-only array (`flags.writeable` False) for
    one of them with NumPy's `ValueError: assignment destination is read-only`, before anything
    is written. (C callers must pass writable memory for those arguments.)"""

    check_options(target, name, cpu)
    triple, linker = TARGETS[target]
    items = functions if isinstance(functions, (list, tuple)) else [functions]
    pairs = [item if isinstance(item, tuple) else (item, example_args) for item in items]
    name = name or _c_name(unwrap(pairs[0][0], "export")[0].__name__)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f"export: the library name {name!r} is not a C identifier")
    prefix = name + "_"
    exported: list[cexport.ExportedFunction] = []
    docs: list[str] = []
    for fn, args in pairs:
        py_func, transform = unwrap(fn, "export")
        base = prefix + _c_name(py_func.__name__)
        entries = [(base, transform)]
        if grad is True or (grad and (fn in grad or py_func in grad)):
            entries.append((base + "_grad", _gradient_of(py_func, args)))
        for symbol, tr in entries:
            f, doc = _specialize(py_func, tr, args, symbol, fuse_fma)
            exported.append(f)
            docs.append(doc)
    symbols = [f.symbol for f in exported]
    if len(set(symbols)) != len(symbols):
        raise ExportError(f"export: two functions have the same C name ({', '.join(symbols)})")

    obj = cexport.emit_object(exported, prefix, cpu=cpu, triple=triple)
    os.makedirs(out_dir, exist_ok=True)
    import_library = None
    if target == "wasm32":
        library = os.path.join(out_dir, f"{name}.wasm")
        link_wasm(obj, library, [*symbols, f"{prefix}last_error", f"{prefix}free"])
        write_module_loader(out_dir, name, prefix, exported)      # <name>.mjs: browsers, Node.js
        loader, loader_text = os.path.join(out_dir, f"{name}.js"), js_loader_text(name, prefix, exported)
    else:
        library, import_library = library_files(out_dir, name, triple)
        link_shared(obj, library, linker, triple, import_library)
        loader = os.path.join(out_dir, f"{name}.py")
        loader_text = _loader_text(name, prefix, exported, os.path.basename(library))
    header = os.path.join(out_dir, f"{name}.h")
    with open(header, "w") as out:
        out.write(_header_text(name, prefix, exported, docs))
    with open(loader, "w") as out:
        out.write(loader_text)
    return Exported(library, header, loader, symbols, import_library)


def check_options(target: str = "host", name: str | None = None, cpu: str | None = None) -> None:
    """A ValueError that names the option, for an unknown target, a library name that is not a
    C identifier, or a CPU the target does not know; else nothing."""
    if target not in TARGETS:
        raise ValueError(f"export: unknown target {target!r} (known: {', '.join(TARGETS)})")
    if name is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f"export: the library name {name!r} is not a C identifier")
    if cpu is not None and cpu != "native":
        cexport.export_target_machine(TARGETS[target][0], cpu)


# ------------------------------------------------------------------------------ tracing
def _c_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


def _on_argument(source) -> bool:
    while hasattr(source, "base"):
        source = source.base
    return isinstance(source, ArgSource)


def _gradient_of(py_func, args):
    """value_and_grad over every float argument (a number or a float64 array)."""
    floats = tuple(i for i, a in enumerate(args) if type(a) is float or
                   (type(a).__module__ == "numpy" and getattr(a, "dtype", None) is not None and a.dtype.name == "float64"))
    if not floats:
        raise ExportError(f"export: {py_func.__qualname__} has no float argument to differentiate")
    return Grad(py_func, None, floats, with_value=True)


def _specialize(py_func, transform, args, symbol: str, fuse_fma: bool):
    """Trace and compile one function for `args`: its ExportedFunction and a doc line."""
    dispatcher = make_dispatcher(py_func, transform, fuse_fma, max_specializations=1, plain_python=False)
    # the first call traces and compiles, as under @trace (on copies: it may update arrays in place)
    dispatcher(*(a.copy() if is_ndarray(a) else a for a in args))
    if not dispatcher.specializations:
        raise ExportError(f"export: {py_func.__qualname__}{tuple(args)!r} runs as plain Python "
                          f"(an int beyond 64 bits?); nothing was compiled to export")
    spec = dispatcher.specializations[-1]
    trace = spec.trace
    # module globals (and NumPy's functions) are frozen as they are now; inputs are arguments
    outside = [str(s) for s, _ in trace.leaves if not isinstance(s, ArgSource)]
    guards = [*trace.structure_guards, *trace.identity_guards, *trace.missing_attr_guards]
    if outside or any(_on_argument(g.source) for g in guards):
        what = f" (it reads {', '.join(outside[:3])})" if outside else ""
        raise ExportError(f"export: {py_func.__qualname__} must take its inputs as arguments: numbers and "
                          f"NumPy arrays, not lists or objects{what}")
    if any(v.op in LINALG_OPS for v in spec.optimized.walk()):
        raise ExportError(f"export: {py_func.__qualname__} calls np.linalg, which runs NumPy's own LAPACK: "
                          f"exported libraries cannot call it yet")
    if any(isinstance(t, ArrayType) and t.dtype in COMPLEX for t in [*(e.type for e in entry_args_for_arguments(trace)),
                                                                    *leaf_types(spec.optimized.result_type)]):
        raise ExportError(f"export: {py_func.__qualname__} takes or returns complex arrays: exported functions "
                          f"take and return real ones (pass the parts, z.real and z.imag)")
    if any(e.numpy or e.type in NARROW for e in entry_args_for_arguments(trace)):
        raise ExportError(f"export: {py_func.__qualname__} takes NumPy scalars (np.float64(...), np.uint8(...)): "
                          f"exported functions take Python numbers")
    names = py_func.__code__.co_varnames[:trace.nargs]
    c_args = tuple(cexport.CArgument(_c_name(n), e) for n, e in zip(names, entry_args_for_arguments(trace)))
    leaves = leaf_types(spec.optimized.result_type)
    if transform is not None and isinstance(transform, Grad) and transform.with_value:
        value = len(leaves) - len(transform.argnums if isinstance(transform.argnums, tuple) else (0,))
        result_names = ["out" if value == 1 else f"out{i}" for i in range(value)]
        argnums = transform.argnums if isinstance(transform.argnums, tuple) else (transform.argnums,)
        result_names += [f"d_{c_args[i].name}" for i in argnums]
    else:
        result_names = ["out"] if len(leaves) == 1 else [f"out{i}" for i in range(len(leaves))]
    code = py_func.__code__
    doc = f"{py_func.__qualname__}({', '.join(names)}) from {code.co_filename}:{code.co_firstlineno}"
    if transform is not None:
        doc = f"{transform.describe(py_func.__qualname__)}: {doc}"
    return cexport.ExportedFunction(symbol, spec.optimized, c_args, tuple(result_names)), doc


# ------------------------------------------------------------------------------ the header
def _array_structs(prefix: str, exported) -> dict[str, ArrayType]:
    return {cexport.array_struct_name(prefix, t): t for f in exported
            for t in leaf_types(f.fn.result_type) if isinstance(t, ArrayType)}


def _c_params(f) -> list[str]:
    """The C parameters of `f`: an array it only reads is `const`; one it updates in place is not."""
    params = []
    written = written_array_params(f.fn)
    for a in f.args:
        t = a.entry.type
        if isinstance(t, ArrayType):
            const = "" if a.entry.param in written else "const "
            params += [f"{const}{C_TYPES[t.dtype]} *{a.name}", f"const int64_t *{a.name}_shape",
                       f"const int64_t *{a.name}_strides"]
        else:
            params.append(f"{C_TYPES[t]} {a.name}")
    return params


def _c_outs(prefix: str, f) -> list[str]:
    outs = []
    for t, n in zip(leaf_types(f.fn.result_type), f.result_names):
        c_type = cexport.array_struct_name(prefix, t) if isinstance(t, ArrayType) else C_TYPES[t]
        outs.append(f"{c_type} *{n}")
    return outs


def _describe_argument(a, written: set[int]) -> str:
    t = a.entry.type
    if isinstance(t, ArrayType):
        axes = ", ".join("1" if n == 1 else "n != 1" for n in t.shape)
        text = (f"{a.name}: a {t.rank}-d {C_TYPES[t.dtype]} array, shape ({axes}) in {a.name}_shape, byte "
                f"strides in {a.name}_strides (NULL: C order)")
        return text + ("; updated in place" if a.entry.param in written else "")
    if a.entry.param is None:
        return f"{a.name}: must be {a.entry.equals!r} (used at compile time)"
    return f"{a.name}: {C_TYPES[t]}"


def _header_text(name: str, prefix: str, exported, docs) -> str:
    guard = f"{name.upper()}_H"
    lines = [f"/* {name}.h: functions compiled ahead of time by tracer (generated; do not edit).",
             "",
             f"   Every function returns {name.upper()}_OK (0) and writes its results through the out",
             "   pointers, or returns one of the other codes below and writes nothing; then",
             f"   {prefix}last_error() returns a message for the calling thread. An array result is a",
             f"   struct whose `owner` the caller passes to {prefix}free() when done with `data`.",
             "   An array argument a function updates in place (its comment says which: `w -= lr * g`",
             "   in Python) is written through its data pointer and strides, so it must be writable",
             "   memory that no other argument overlaps; such an array may hold part of the update",
             "   when the function fails. Arrays it only reads are `const`.",
             "   The library needs only libc and libm. */",
             f"#ifndef {guard}", f"#define {guard}", "", "#include <stdbool.h>", "#include <stdint.h>", "",
             "#ifdef __cplusplus", 'extern "C" {', "#endif", ""]
    lines.append("enum {")
    for code_name, (code, exc) in cexport.CODES.items():
        meaning = {"RAISED": "the function raised (or an assert failed): see last_error()"}.get(
            code_name, exc.__name__ if exc else "success")
        lines.append(f"    {name.upper()}_{code_name} = {code},   /* {meaning} */")
    lines += ["};", ""]
    for struct, t in _array_structs(prefix, exported).items():
        lines.append(f"typedef struct {{ {C_TYPES[t.dtype]} *data; void *owner; int64_t shape[{t.rank}]; }} {struct};")
    lines.append("")
    for f, doc in zip(exported, docs):
        lines.append(f"/* {doc}")
        written_params = written_array_params(f.fn)
        for a in f.args:
            lines.append(f"     {_describe_argument(a, written_params)}")
        written = [a.name for a in f.args if a.entry.param in written_params]
        if written:
            lines.append(f"     writes into {', '.join(written)} in place: the caller's memory holds the new values "
                         f"when it returns")
        for t, n in zip(leaf_types(f.fn.result_type), f.result_names):
            if isinstance(t, ArrayType):
                lines.append(f"     -> *{n}: a {t.rank}-d array of {C_TYPES[t.dtype]} (pass {n}->owner to {prefix}free)")
            else:
                lines.append(f"     -> *{n}: {C_TYPES[t]}")
        lines.append("*/")
        lines.append(f"int32_t {f.symbol}({', '.join(_c_params(f) + _c_outs(prefix, f))});")
        lines.append("")
    lines += ["/* The message of the calling thread's last failure (\"\" after success). */",
              f"const char *{prefix}last_error(void);", "",
              "/* Frees an array result (pass its `owner`). */",
              f"void {prefix}free(void *owner);", "",
              "#ifdef __cplusplus", "}", "#endif", f"#endif /* {guard} */", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------ the loader
_CTYPES = {F64: "ctypes.c_double", F32: "ctypes.c_float", I64: "ctypes.c_int64", BOOL: "ctypes.c_bool",
           **{t: f"ctypes.c_{'u' if t in UNSIGNED else ''}int{BITS[t]}" for t in INTEGERS}, F16: "ctypes.c_uint16"}
_PY = {F64: "float", I64: "int", BOOL: "bool"}
_NUMPY = dict(NUMPY_DTYPE_NAMES)

_LOADER_HEAD = '''"""ctypes bindings of {library} (generated by tracer.export; do not edit).

    import {name}
    {name}.{first}(...)          # runs the exported native code; errors raise Python exceptions
"""
import builtins
import ctypes
import os

_lib = ctypes.CDLL(os.path.join(os.path.dirname(os.path.abspath(__file__)), "{library}"))
_lib.{prefix}last_error.restype = ctypes.c_char_p
_lib.{prefix}free.argtypes = [ctypes.c_void_p]
_ERRORS = {errors}


def _check(status):
    if status == 0:
        return
    message = _lib.{prefix}last_error().decode()
    kind = _ERRORS.get(status)
    if kind is None:                      # a raise in the function: "ValueError: ..." names its type
        found = getattr(builtins, message.split(": ", 1)[1].split(":")[0] if ": " in message else "", None)
        kind = found if isinstance(found, type) and issubclass(found, Exception) else RuntimeError
    raise kind(message)


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_NUMPY_KINDS = {{float: "f", int: "iu", bool: "b"}}


def _scalar(x, kind, where):
    """x as a `kind` (float, int or bool), as the C parameter takes it: the Python type itself, or
    a NumPy scalar of that kind (its exact value); an int must fit int64_t."""
    if type(x) is not kind:
        numpy_scalar = type(x).__module__ == "numpy" and type(x).__name__ != "ndarray" and hasattr(x, "dtype")
        if not numpy_scalar or x.dtype.kind not in _NUMPY_KINDS[kind] or x.dtype.itemsize > 8:
            raise TypeError(f"{{where}} must be {{'an' if kind is int else 'a'}} {{kind.__name__}}, not {{type(x).__name__}}")
        x = kind(x)
    if kind is int and not _INT64_MIN <= x <= _INT64_MAX:
        raise OverflowError(f"{{where}}: Python int too large to convert to C int64_t")
    return x


def _array(x, dtype, rank, name):
    import numpy
    if type(x) is not numpy.ndarray or x.dtype != numpy.dtype(dtype) or x.ndim != rank:
        got = f"a {{x.ndim}}-d array of {{x.dtype}}" if type(x) is numpy.ndarray else type(x).__name__
        raise TypeError(f"{{name}} must be a {{rank}}-d numpy.ndarray of {{dtype}}, not {{got}}")
    return x, (ctypes.c_int64 * rank)(*x.shape), (ctypes.c_int64 * rank)(*x.strides)


def _result(struct, dtype, rank):
    import numpy
    shape = tuple(struct.shape[:rank])
    try:
        if 0 in shape:
            return numpy.empty(shape, dtype)
        size = int(numpy.prod(shape)) if rank else 1
        bits = numpy.dtype(dtype) if dtype != "float16" else numpy.dtype(numpy.uint16)   # (ctypes has no float16)
        pointer = ctypes.cast(struct.data, ctypes.POINTER(numpy.ctypeslib.as_ctypes_type(bits)))
        return numpy.ctypeslib.as_array(pointer, (size,)).view(dtype).reshape(shape).copy()
    finally:
        _lib.{prefix}free(struct.owner)
'''


def _loader_text(name: str, prefix: str, exported, library: str) -> str:
    errors = {code: exc.__name__ for code_name, (code, exc) in cexport.CODES.items() if exc is not None}
    first = exported[0].symbol[len(prefix):]
    parts = [_LOADER_HEAD.format(name=name, library=library, prefix=prefix, first=first,
                                 errors="{" + ", ".join(f"{c}: {e}" for c, e in errors.items()) + "}")]
    for struct, t in _array_structs(prefix, exported).items():
        parts.append(f"\n\nclass _{struct}(ctypes.Structure):\n"
                     f"    _fields_ = [(\"data\", ctypes.c_void_p), (\"owner\", ctypes.c_void_p), "
                     f"(\"shape\", ctypes.c_int64 * {max(t.rank, 1)})]\n")
    for f in exported:
        py_name = f.symbol[len(prefix):]
        arg_names = [a.name for a in f.args]
        body, call, argtypes = [], [], []
        for a in f.args:
            t = a.entry.type
            if isinstance(t, ArrayType):
                body.append(f"    {a.name}, {a.name}_shape, {a.name}_strides = _array({a.name}, {_NUMPY[t.dtype]!r}, {t.rank}, {py_name + '() argument ' + a.name!r})")
                if a.entry.param in written_array_params(f.fn):     # NumPy's refusal, before any write
                    body.append(f"    if not {a.name}.flags.writeable:\n"
                                f"        raise ValueError(\"assignment destination is read-only\")")
                call += [f"{a.name}.ctypes.data_as(ctypes.c_void_p)", f"{a.name}_shape", f"{a.name}_strides"]
                argtypes += ["ctypes.c_void_p", "ctypes.c_void_p", "ctypes.c_void_p"]
            else:
                body.append(f"    {a.name} = _scalar({a.name}, {_PY[t]}, {py_name + '() argument ' + a.name!r})")
                call.append(a.name)
                argtypes.append(_CTYPES[t])
        results = []
        for t, n in zip(leaf_types(f.fn.result_type), f.result_names):
            if isinstance(t, ArrayType):
                body.append(f"    {n} = _{cexport.array_struct_name(prefix, t)}()")
                results.append(f"_result({n}, {_NUMPY[t.dtype]!r}, {t.rank})")
            else:
                body.append(f"    {n} = {_CTYPES[t]}()")
                results.append(f"{n}.value")
            call.append(f"ctypes.byref({n})")
            argtypes.append("ctypes.c_void_p")
        written = [a.name for a in f.args if a.entry.param in written_array_params(f.fn)]
        if written:
            body.insert(0, f'    """Updates {", ".join(written)} in place (as the Python function does)."""')
        body.append(f"    _check(_lib.{f.symbol}({', '.join(call)}))")
        body.append(f"    return {_shape_results(f, results)}")
        parts.append(f"\n\n_lib.{f.symbol}.argtypes = [{', '.join(argtypes)}]\n"
                     f"_lib.{f.symbol}.restype = ctypes.c_int32\n\n\n"
                     f"def {py_name}({', '.join(arg_names)}):\n" + "\n".join(body) + "\n")
    return "".join(parts)


def _shape_results(f, results: list[str]) -> str:
    """The Python value of the result leaves: one value, a flat tuple, or (value, grads)."""
    if not results:
        return "None"
    if len(results) == 1:
        return results[0]
    grads = [r for r, n in zip(results, f.result_names) if n.startswith("d_")]
    values = [r for r, n in zip(results, f.result_names) if not n.startswith("d_")]
    if grads:
        value = values[0] if len(values) == 1 else "(" + ", ".join(values) + ",)"
        return f"{value}, ({', '.join(grads)},)"
    return "(" + ", ".join(results) + ",)"
