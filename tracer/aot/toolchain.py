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


class ToolchainError(ExportError):
    """A compiler, linker or library that export needs is missing or failed. The message's
    first line says what went wrong; the lines after it are the tool's own output."""


def find_tool(name: str) -> str:
    """The path of a toolchain program, or a ToolchainError that says how to get it."""
    path = shutil.which(name)
    if path is None:
        raise ToolchainError(f"export: {name} is not installed (Debian: apt-get install "
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
        done = run_tool([cc, "-shared", "-o", library, path, "-lm"])
    if done.returncode != 0:
        raise ToolchainError(f"export: linking {library} failed: {first_error(done.stderr)}\n{done.stderr}")


def run_tool(command: list[str]) -> subprocess.CompletedProcess:
    """Run a toolchain program, its output captured; a ToolchainError if it cannot be started."""
    try:
        return subprocess.run(command, capture_output=True, text=True)
    except OSError as exc:
        raise ToolchainError(f"export: cannot run {command[0]}: {exc.strerror or exc}") from None


def first_error(output: str) -> str:
    """The line of a compiler's or linker's output that says what failed (its first error)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower() and not line.startswith("collect2"):
            return line
    return lines[0] if lines else "no message"
