"""The programs export runs outside Python: C compilers and linkers (for this machine and cross),
wasm-ld and wasi-libc, and the error that says how to install a missing one.

A Linux library is linked by the first of: $TRACER_CC (a command, e.g. "zig cc -target
riscv64-linux-gnu"); zig from pip (`pip install "tracer[export]"`: clang and lld with the libc of
every Linux target, `python -m ziglang cc`); this machine's C compiler for its own architecture,
else a Debian cross gcc (x86_64 and aarch64 only).
"""
from __future__ import annotations

import importlib.util
import os
import platform
import shlex
import shutil
import subprocess
import sys
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
        zig = "" if name == "wasm-ld" else PIP_ZIG
        raise ToolchainError(f"export: {name} is not installed ({zig}Debian: apt-get install "
                             f"{DEBIAN_PACKAGES.get(name, name)})")
    return path


DEBIAN_PACKAGES = {"aarch64-linux-gnu-gcc": "gcc-aarch64-linux-gnu", "x86_64-linux-gnu-gcc": "gcc-x86-64-linux-gnu",
                   "wasm-ld": "lld wasi-libc", "cc": "gcc", "gcc": "gcc"}
PIP_ZIG = 'pip install "tracer[export]" for zig, which links every Linux target; or '
# LLVM architecture -> zig's target (glibc; arm: ARMv7 with hardware floats)
ZIG_TARGETS = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu", "riscv64": "riscv64-linux-gnu",
               "armv7": "arm-linux-gnueabihf"}


def linker_command(linker: str | None, triple: str | None) -> list[str]:
    """The C compiler that links a shared library for `triple` (None: this machine's), as a
    command: $TRACER_CC, zig, this machine's compiler, or `linker` (a Debian cross gcc; None: none)."""
    if os.environ.get("TRACER_CC"):
        return shlex.split(os.environ["TRACER_CC"])
    arch = triple.split("-")[0] if triple else platform.machine()
    if arch in ZIG_TARGETS and importlib.util.find_spec("ziglang") is not None:
        # zig links all of its compiler-rt (1 MB with debug information on armv7) unless asked not to
        return [sys.executable, "-m", "ziglang", "cc", "-target", ZIG_TARGETS[arch], "-Wl,--gc-sections,--strip-debug"]
    if arch == platform.machine():
        return [os.environ.get("CC") or shutil.which("cc") or find_tool("gcc")]    # this machine's compiler
    if linker is None:
        raise ToolchainError(f'export: linking for {triple} needs zig (pip install "tracer[export]"), or '
                             f"TRACER_CC set to a C compiler for it")
    return [find_tool(linker)]


def link_shared(obj: bytes, library: str, linker: str | None, triple: str | None) -> None:
    """Link an object file into the shared library `library` for `triple` (see linker_command)."""
    cc = linker_command(linker, triple)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "export.o")
        with open(path, "wb") as out:
            out.write(obj)
        done = run_tool([*cc, "-shared", "-o", library, path, "-lm"])
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
