"""The programs export runs outside Python: C compilers and linkers (for this machine and cross),
wasm-ld and wasi-libc, and the error that says how to install a missing one.
"""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tempfile

from tracer.errors import TracerError

WASI_LIBC = "/usr/lib/wasm32-wasi/libc.a"     # Debian's wasi-libc: malloc and the math functions


class ExportError(TracerError):
    """A function that cannot be exported as asked (and why)."""


def find_tool(name: str) -> str:
    """The path of a toolchain program, or an ExportError that says how to get it."""
    path = shutil.which(name)
    if path is None:
        raise ExportError(f"export: {name} is not installed (Debian: apt-get install "
                          f"{DEBIAN_PACKAGES.get(name, name)})")
    return path


DEBIAN_PACKAGES = {"aarch64-linux-gnu-gcc": "gcc-aarch64-linux-gnu", "x86_64-linux-gnu-gcc": "gcc-x86-64-linux-gnu",
                   "wasm-ld": "lld wasi-libc", "cc": "gcc"}


def link_shared(obj: bytes, library: str, linker: str, triple: str | None) -> None:
    """Link an object file into the shared library `library` (this machine's compiler for
    its own architecture, else `linker`, a cross compiler)."""
    if triple is None or triple.split("-")[0] == platform.machine():
        cc = os.environ.get("CC") or shutil.which("cc") or find_tool("gcc")    # this machine's compiler
    else:
        cc = find_tool(linker)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "export.o")
        with open(path, "wb") as out:
            out.write(obj)
        done = subprocess.run([cc, "-shared", "-o", library, path, "-lm"], capture_output=True, text=True)
    if done.returncode != 0:
        raise ExportError(f"export: linking {library} failed:\n{done.stderr}")
