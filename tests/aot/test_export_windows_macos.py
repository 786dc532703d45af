"""Export for Windows (a DLL and its import library) and macOS (a dylib), linked by zig: the files are read
back with small PE and Mach-O readers (machine, exported symbols, the libraries they load); Windows x86-64
also runs under Wine (test_export.py runs its C programs there too). There is no Mac to run the dylibs on."""
import os
import struct
import subprocess

import numpy as np
import pytest
from test_export import (
    RUN_TARGETS,
    ZIG,
    checked_sqrt,
    div,
    fma,
    mlp,
    run_target,
    small_mlp_weights,
    wine_prefix,  # noqa: F401  (the fixture: Wine's prefix, removed at the end)
)

from tracer import export

pytestmark = pytest.mark.skipif(ZIG is None, reason="no zig (pip install ziglang) to link Windows and macOS libraries")


def exported_library(tmp_path, target):
    W1, b1, W2, b2 = small_mlp_weights()
    return export([(fma, (3.0, -1.0, 2.0)), (div, (1.0, 2.0)), (mlp, (W1, b1, W2, b2, np.ones((2, 20))))],
                  out_dir=str(tmp_path), name="lib", grad=[fma], target=target)


# ------------------------------------------------------------------------------ PE (Windows)
def read_pe(path: str) -> dict:
    """A PE image's machine, whether it is a DLL, its exported names and the DLLs it imports."""
    data = open(path, "rb").read()
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    assert data[pe:pe + 4] == b"PE\0\0"
    machine, sections, _, _, _, optional_size, characteristics = struct.unpack_from("<HHIIIHH", data, pe + 4)
    optional = pe + 24
    assert struct.unpack_from("<H", data, optional)[0] == 0x20B               # PE32+: a 64-bit image
    directories = [struct.unpack_from("<II", data, optional + 112 + 8 * i) for i in range(16)]
    table = [struct.unpack_from("<IIII", data, optional + optional_size + 40 * i + 8) for i in range(sections)]

    def offset(rva):            # section rows: virtual size, address, raw size, raw offset
        return next(raw + rva - va for size, va, _, raw in table if va <= rva < va + size)

    def text(rva):
        start = offset(rva)
        return data[start:data.index(b"\0", start)].decode()
    export_rva = directories[0][0]
    count, names_rva = struct.unpack_from("<I", data, offset(export_rva) + 24)[0], struct.unpack_from(
        "<I", data, offset(export_rva) + 32)[0]
    exports = {text(struct.unpack_from("<I", data, offset(names_rva) + 4 * i)[0]) for i in range(count)}
    imports, entry = [], offset(directories[1][0])
    while struct.unpack_from("<I", data, entry + 12)[0]:       # import descriptors, up to an empty one
        imports.append(text(struct.unpack_from("<I", data, entry + 12)[0]))
        entry += 20
    return {"machine": machine, "dll": bool(characteristics & 0x2000), "exports": exports, "imports": imports}


PE_MACHINES = {"x86_64-windows": 0x8664, "aarch64-windows": 0xAA64}


@pytest.mark.parametrize("target", list(PE_MACHINES))
def test_windows_dll_exports_the_functions(tmp_path, target):
    exported = exported_library(tmp_path, target)
    assert exported.library == str(tmp_path / "lib.dll") and os.path.getsize(tmp_path / "lib.lib") > 0
    assert exported.import_library == str(tmp_path / "lib.lib")
    assert '"lib.dll"' in open(exported.loader).read()          # what the ctypes loader loads (on Windows)
    pe = read_pe(exported.library)
    assert pe["machine"] == PE_MACHINES[target] and pe["dll"]
    assert pe["exports"] == {*exported.symbols, "lib_last_error", "lib_free"}    # dllexport: these, no others
    # the C runtime only: the UCRT (api-ms-win-crt-*, in Windows 10 and later) and KERNEL32
    assert all(d == "KERNEL32.dll" or d.startswith("api-ms-win-crt-") for d in pe["imports"]), pe["imports"]


WINDOWS = run_target("x86_64-windows")


@pytest.mark.parametrize("target", [WINDOWS])
def test_the_error_message_is_per_thread_on_windows(tmp_path, target, wine_prefix):  # noqa: F811
    """The thread-local message (native TLS in the DLL) under Wine: a failure in one thread leaves another's be."""
    out = tmp_path / "out"
    export([(div, (1.0, 2.0)), (checked_sqrt, (4.0,))], out_dir=str(out), name="th", target=target)
    (out / "main.c").write_text(r'''
#include <stdio.h>
#include <windows.h>
#include "th.h"
_Static_assert(sizeof(long) == 4, "Windows is LLP64: the header's int64_t, not long");

static DWORD WINAPI other(LPVOID unused) {
    double r;
    (void)unused;
    printf("fresh|%s\n", th_last_error());
    printf("%d|%s\n", th_checked_sqrt(-1.0, &r), th_last_error());
    printf("%d|%s|%a\n", th_checked_sqrt(0.25, &r), th_last_error(), r);
    return 0;
}

int main(void) {
    double r;
    printf("%d|%s\n", th_div(1.0, 0.0, &r), th_last_error());
    HANDLE thread = CreateThread(NULL, 0, other, NULL, 0, NULL);
    if (thread == NULL || WaitForSingleObject(thread, INFINITE) != WAIT_OBJECT_0) return 1;
    CloseHandle(thread);
    printf("main|%s\n", th_last_error());
    return 0;
}
''')
    compiler, runner = RUN_TARGETS[target]
    program = str(out / "main.exe")
    subprocess.run([*compiler, "-std=c11", "-Wall", "-Werror", "-o", program, str(out / "main.c"), f"-I{out}",
                    f"-L{out}", "-lth"], check=True)
    lines = subprocess.run([*runner, program], capture_output=True, text=True, check=True).stdout.splitlines()
    assert lines[0] == "1|div: ZeroDivisionError: float division by zero"
    assert lines[1] == "fresh|"
    assert lines[2].startswith("6|checked_sqrt (") and lines[2].endswith("ValueError: x must not be negative")
    assert lines[3] == "0||0x1p-1"
    assert lines[4] == "main|div: ZeroDivisionError: float division by zero"      # untouched by the other thread


# ------------------------------------------------------------------------------ Mach-O (macOS)
LC_SYMTAB, LC_LOAD_DYLIB, LC_ID_DYLIB, LC_CODE_SIGNATURE, LC_BUILD_VERSION = 0x2, 0xC, 0xD, 0x1D, 0x32
MH_DYLIB, MH_HAS_TLV_DESCRIPTORS, N_EXT, N_TYPE, N_SECT = 6, 0x800000, 0x1, 0xE, 0xE


def read_macho(path: str) -> dict:
    """A 64-bit Mach-O file's CPU type, file type, flags, defined external symbols, install name,
    the dylibs it loads, its minimum macOS version and whether it carries a code signature."""
    data = open(path, "rb").read()
    magic, cpu, _, filetype, ncmds, _, flags, _ = struct.unpack_from("<IiiIIIII", data, 0)
    assert magic == 0xFEEDFACF
    found = {"cpu": cpu, "filetype": filetype, "flags": flags, "symbols": set(), "loads": [], "signed": False}
    at = 32
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, at)
        if cmd == LC_SYMTAB:
            symoff, nsyms, stroff, _ = struct.unpack_from("<IIII", data, at + 8)
            for i in range(nsyms):
                strx, kind = struct.unpack_from("<IB", data, symoff + 16 * i)
                if kind & N_EXT and kind & N_TYPE == N_SECT:
                    found["symbols"].add(data[stroff + strx:data.index(b"\0", stroff + strx)].decode())
        elif cmd in (LC_LOAD_DYLIB, LC_ID_DYLIB):
            name = at + struct.unpack_from("<I", data, at + 8)[0]
            text = data[name:data.index(b"\0", name)].decode()
            if cmd == LC_LOAD_DYLIB:
                found["loads"].append(text)
            else:
                found["id"] = text
        elif cmd == LC_BUILD_VERSION:
            platform, minos = struct.unpack_from("<II", data, at + 8)
            found["macos"] = (minos >> 16, (minos >> 8) & 0xFF) if platform == 1 else None
        found["signed"] |= cmd == LC_CODE_SIGNATURE
        at += size
    return found


CPU_TYPES = {"x86_64-macos": 0x01000007, "aarch64-macos": 0x0100000C}     # CPU_TYPE_X86_64, CPU_TYPE_ARM64


@pytest.mark.parametrize("target", list(CPU_TYPES))
def test_macos_dylib_exports_the_functions(tmp_path, target):
    exported = exported_library(tmp_path, target)
    assert exported.library == str(tmp_path / "liblib.dylib") and exported.import_library is None
    assert '"liblib.dylib"' in open(exported.loader).read()
    macho = read_macho(exported.library)
    assert macho["cpu"] == CPU_TYPES[target] and macho["filetype"] == MH_DYLIB
    # C names carry a leading underscore in Mach-O symbol tables
    assert {"_" + s for s in [*exported.symbols, "lib_last_error", "lib_free"]} <= macho["symbols"]
    assert macho["id"] == "@rpath/liblib.dylib" and macho["macos"] == (11, 0)
    assert macho["loads"] == ["/usr/lib/libSystem.B.dylib"]           # libc and libm are in libSystem
    assert macho["flags"] & MH_HAS_TLV_DESCRIPTORS                      # the per-thread message: macOS's TLV
    assert macho["signed"] == (target == "aarch64-macos")              # Apple silicon runs only signed code
