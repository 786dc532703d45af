"""The programs export runs outside Python: C compilers and linkers (for this machine and cross),
wasm-ld and wasi-libc, and the error that says how to install a missing one.

A library is linked by the first of: $TRACER_CC (a command, e.g. "zig cc -target
riscv64-linux-gnu"); zig from pip (`pip install "tracer[export]"`: clang and lld with the libc of
every Linux target, MinGW-w64 for Windows and the macOS system library stubs,
`python -m ziglang cc`); for Linux, this machine's C compiler for its own architecture, else a
Debian cross gcc (x86_64 and aarch64 only). Windows and macOS libraries need zig (or $TRACER_CC).
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
PIP_ZIG = 'pip install "tracer[export]" for zig, which links every target; or '
# LLVM triple -> zig's target: glibc on Linux (arm: ARMv7 with hardware floats), MinGW-w64 with
# the UCRT on Windows, macOS 11 (the first with arm64) and later
ZIG_TARGETS = {"x86_64-unknown-linux-gnu": "x86_64-linux-gnu", "aarch64-unknown-linux-gnu": "aarch64-linux-gnu",
               "riscv64-unknown-linux-gnu": "riscv64-linux-gnu", "armv7-unknown-linux-gnueabihf": "arm-linux-gnueabihf",
               "x86_64-pc-windows-gnu": "x86_64-windows-gnu", "aarch64-pc-windows-gnu": "aarch64-windows-gnu",
               "x86_64-apple-macosx11.0.0": "x86_64-macos.11.0", "arm64-apple-macosx11.0.0": "aarch64-macos.11.0"}


def target_os(triple: str | None) -> str:
    """"linux", "windows" or "macos": the system a library for `triple` (None: this machine) runs on."""
    if triple and "-windows" in triple:
        return "windows"
    return "macos" if triple and "-apple-" in triple else "linux"


def library_files(out_dir: str, name: str, triple: str | None) -> tuple[str, str | None]:
    """The shared library export writes for `triple`, and the import library C programs link
    against where the system needs one (Windows: <name>.lib, which MinGW and MSVC linkers read)."""
    system = target_os(triple)
    if system == "windows":
        return os.path.join(out_dir, f"{name}.dll"), os.path.join(out_dir, f"{name}.lib")
    return os.path.join(out_dir, f"lib{name}.{'dylib' if system == 'macos' else 'so'}"), None


def linker_command(linker: str | None, triple: str | None) -> list[str]:
    """The C compiler that links a shared library for `triple` (None: this machine's), as a
    command: $TRACER_CC, zig, this machine's compiler, or `linker` (a Debian cross gcc; None: none)."""
    if os.environ.get("TRACER_CC"):
        return shlex.split(os.environ["TRACER_CC"])
    arch = triple.split("-")[0] if triple else platform.machine()
    zig_target = ZIG_TARGETS.get(triple or f"{arch}-unknown-linux-gnu")
    if zig_target and importlib.util.find_spec("ziglang") is not None:
        # zig links all of its compiler-rt (1 MB with debug information on armv7) unless asked not to
        return [sys.executable, "-m", "ziglang", "cc", "-target", zig_target, "-Wl,--gc-sections,--strip-debug"]
    if arch == platform.machine() and target_os(triple) == "linux":
        return [os.environ.get("CC") or shutil.which("cc") or find_tool("gcc")]    # this machine's compiler
    if linker is None:
        raise ToolchainError(f'export: linking for {triple} needs zig (pip install "tracer[export]"), or '
                             f"TRACER_CC set to a C compiler for it")
    return [find_tool(linker)]


def link_shared(obj: bytes, library: str, linker: str | None, triple: str | None,
                import_library: str | None = None) -> None:
    """Link an object file into the shared library `library` for `triple` (see linker_command):
    on Windows a DLL and its import library, on macOS a dylib that loads as @rpath/<its name>."""
    cc = linker_command(linker, triple)
    system = target_os(triple)
    flags = {"windows": [f"-Wl,--out-implib,{import_library}"] if import_library else [],
             "macos": [f"-Wl,-install_name,@rpath/{os.path.basename(library)}"]}.get(system, [])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "export.o")
        with open(path, "wb") as out:
            out.write(obj)
        done = run_tool([*cc, "-shared", "-o", library, path, "-lm", *flags])
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
