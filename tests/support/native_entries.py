"""Stand-ins for the native entries the compiler generates, for the tests of the C dispatcher and
the frame hook: tests/support/native/entries.c, built here into a shared library (it is not part of the
shipped extension), and the address of each entry.

    ADD = entry_address("add_floats")   # two exact floats -> their sum; anything else: a miss
    ECHO = entry_address("echo")        # -> (self, args)
    RAISE = entry_address("raise")      # ValueError("raised by the test entry")
    MISS = entry_address("miss")        # always a miss
"""
from __future__ import annotations

import ctypes
import functools
import pathlib
import subprocess
import sysconfig
import tempfile

SOURCE = pathlib.Path(__file__).parent / "native" / "entries.c"


@functools.cache
def _library() -> ctypes.PyDLL:
    out = pathlib.Path(tempfile.mkdtemp(prefix="tracer-test-entries-")) / "entries.so"
    compiler = (sysconfig.get_config_var("CC") or "cc").split()
    subprocess.run([*compiler, "-shared", "-fPIC", "-O1", "-Wall", "-I", sysconfig.get_paths()["include"],
                    str(SOURCE), "-o", str(out)], check=True)
    return ctypes.PyDLL(str(out))   # PyDLL: its functions are called with the GIL held


def entry_address(kind: str = "add_floats") -> int:
    """The address of test_entry_<kind> in the built library."""
    return ctypes.cast(getattr(_library(), f"test_entry_{kind}"), ctypes.c_void_p).value
