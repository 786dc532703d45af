"""What a cached specialization depends on, as text that is the same in every process.

- `environment()`: the tracer's own files, Python, llvmlite (its LLVM), NumPy, `bytecode` (which
  the front end reads bytecode with) and the CPU. Read
  from file metadata (`os.stat`), never by importing llvmlite or NumPy, so that a process that
  loads everything from the cache imports neither.
- `code_fingerprint(code)`: a code object's bytecode, constants (nested code included), names,
  file, lines: everything the trace read from it, and what the compiled tracebacks say.
- `value_fingerprint(obj)`: a value a global, builtin or closure cell held at compile time, as
  text that an equal value has in another process (numbers by repr, modules and library
  functions by name, Python functions by code); None where there is no such text (then nothing
  is cached: when in doubt, miss).
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import platform
import sys
import types
from importlib.machinery import EXTENSION_SUFFIXES

FORMAT = 2       # of the cache files and of these keys: a change makes every earlier file a miss

_SCALARS = (bool, int, float, complex, str, bytes, type(None))


def digest(*parts) -> str:
    """The sha256 of `parts` written as text (hex)."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()


@functools.cache
def environment() -> str:
    """Everything outside the function that the compiled code depends on, hashed once per process."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))        # tracer/
    parts = [FORMAT, sys.version, sys.implementation.cache_tag, platform.machine(), sys.platform,
             _files_stamp(here), _files_stamp(os.path.join(os.path.dirname(here), "codegen")),
             _package_stamp("llvmlite", os.path.join("binding", "libllvmlite")),
             _package_stamp("numpy", "version.py"), _package_stamp("bytecode", "version.py"), cpu_identity()]
    return digest(*parts)


def _files_stamp(folder: str) -> list:
    """(name, size, mtime) of the package's Python sources and of this interpreter's extension
    modules: an edit or a reinstall changes it."""
    stamp = []
    suffixes = (".py", *EXTENSION_SUFFIXES)
    for entry in os.scandir(folder):
        if entry.is_dir():
            if entry.name != "__pycache__":
                stamp.append((entry.name, _files_stamp(entry.path)))
        elif entry.name.endswith(suffixes):
            st = entry.stat()
            stamp.append((entry.name, st.st_size, st.st_mtime_ns))
    return sorted(stamp)


def _package_stamp(package: str, member: str) -> tuple:
    """(path, size, mtime) of the files of `package` that start with `member` (its version file,
    its shared library), found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return (package, None)
    folder = list(spec.submodule_search_locations)[0]
    where = os.path.join(folder, os.path.dirname(member))
    prefix = os.path.basename(member)
    try:
        names = sorted(n for n in os.listdir(where) if n.startswith(prefix))
    except OSError:
        return (package, None)
    stamp = []
    for name in names:
        st = os.stat(os.path.join(where, name))
        stamp.append((os.path.join(where, name), st.st_size, st.st_mtime_ns))
    return (package, stamp)


def cpu_identity() -> str:
    """The CPU's model and features as the OS reports them (compiled code uses its every feature)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            text = f.read(1 << 16)
    except OSError:
        return f"{platform.machine()} {platform.processor()}"
    first = text.split("\n\n", 1)[0]             # the first processor: they are alike
    keep = ("vendor_id", "cpu family", "model", "model name", "stepping", "flags", "Features", "CPU part",
            "CPU implementer", "isa", "uarch")
    return "\n".join(line for line in first.splitlines() if line.split(":", 1)[0].strip() in keep)


def code_fingerprint(code: types.CodeType) -> str:
    """A hash of everything in `code` (and the code objects among its constants)."""
    return digest(*_code_parts(code))


def _code_parts(code: types.CodeType) -> tuple:
    consts = tuple(("code", _code_parts(c)) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c))
                   for c in code.co_consts)
    return (code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars,
            code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags, code.co_filename,
            code.co_name, getattr(code, "co_qualname", ""), code.co_firstlineno, code.co_linetable,
            getattr(code, "co_exceptiontable", b""), code.co_stacksize, code.co_nlocals)


def value_fingerprint(obj) -> str | None:
    """Text that a value equal to `obj` for the compiled code has in any process, or None."""
    t = type(obj)
    if t in _SCALARS:
        return f"{t.__name__}:{obj!r}"
    if t is tuple:
        items = [value_fingerprint(x) for x in obj]
        return None if None in items else f"tuple:({','.join(items)})"
    if t is dict:
        if not all(type(k) is str for k in obj):
            return None
        items = [f"{k!r}={value_fingerprint(v)}" for k, v in sorted(obj.items())]
        return None if any(i.endswith("=None") for i in items) else f"dict:{{{','.join(items)}}}"
    if t is types.CodeType:
        return f"code:{code_fingerprint(obj)}"
    if t is types.ModuleType:
        return f"module:{obj.__name__}"
    if t is types.FunctionType:
        return f"function:{obj.__module__}.{obj.__qualname__}:{code_fingerprint(obj.__code__)}"
    return _named(obj)


def _named(obj) -> str | None:
    """module:qualname of a library object (a builtin, a ufunc, a class, a NumPy function) that
    that name resolves to, else None."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if type(module) is not str or type(qualname) is not str or "<" in qualname:
        return None
    found = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return f"named:{module}:{qualname}" if found is obj else None
