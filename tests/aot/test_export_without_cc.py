"""Export with no C compiler on the machine but zig from pip (tracer.aot.toolchain): a child Python
runs with PATH set to a folder that holds no compiler (nothing at all: zig needs no other program)
and with CC and TRACER_CC unset. It first checks that cc, gcc and clang are not found, then
exports fma for this machine (loaded through the generated ctypes loader and called) and for
every other target zig links (Linux, Windows, macOS), each linked by zig alone. Skips without
ziglang.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest
from test_export import fma

from tracer import trace

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ziglang") is None,
                                reason='no zig (pip install "tracer[export]")')

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHILD = textwrap.dedent('''
    import importlib.util, json, shutil, sys
    from tracer import export
    from tracer.aot.export import TARGETS
    from tracer.aot.toolchain import linker_command

    def fma(x, y, z):
        return x * y + z

    out = {"found": {name: shutil.which(name) for name in ("cc", "gcc", "clang", "c99", "ld")},
           "linkers": {}, "libraries": {}}
    for target, (triple, _) in TARGETS.items():
        if target == "wasm32":
            continue
        out["linkers"][target] = linker_command(None, triple)
        out["libraries"][target] = export(fma, 3.0, -1.0, 2.0, out_dir=f"{sys.argv[1]}/{target}", name="fma",
                                          grad=True, target=target).library
    loader = f"{sys.argv[1]}/host/fma.py"
    spec = importlib.util.spec_from_file_location("fma_loader", loader)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out["fma"] = module.fma(0.1, 0.2, 0.3).hex()
    value, grads = module.fma_grad(3.0, -1.0, 2.0)
    out["fma_grad"] = [value, list(grads)]
    print(json.dumps(out))
''')



def elf_machine(path: str) -> int:
    """e_machine of a 64-bit little-endian ELF file."""
    with open(path, "rb") as f:
        header = f.read(20)
    assert header[:6] == b"\x7fELF\x02\x01", path
    return int.from_bytes(header[18:20], "little")


def test_export_links_with_zig_alone(tmp_path):
    bare = tmp_path / "bin"           # the child's PATH: no compiler, linker or anything else
    bare.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("CC", "TRACER_CC", "PYTHONPATH")}
    env.update(PATH=str(bare), PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "out")], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    got = json.loads(done.stdout.splitlines()[-1])
    assert got["found"] == dict.fromkeys(("cc", "gcc", "clang", "c99", "ld"))      # no system toolchain
    for target, command in got["linkers"].items():
        assert command[:4] == [sys.executable, "-m", "ziglang", "cc"], (target, command)
    assert got["fma"] == trace(fma)(0.1, 0.2, 0.3).hex()                   # the JIT's bits
    assert got["fma_grad"] == [-1.0, [-1.0, 3.0, 1.0]]
    assert len(got["libraries"]) >= 9
    for target, library in got["libraries"].items():
        name = {"windows": "fma.dll", "macos": "libfma.dylib"}.get(target.split("-")[-1], "libfma.so")
        assert library == str(tmp_path / "out" / target / name)
        with open(library, "rb") as f:
            magic = f.read(4)
        assert magic[:2] == b"MZ" or magic in (b"\x7fELF", b"\xcf\xfa\xed\xfe"), (target, magic)
    assert elf_machine(got["libraries"]["host"]) == elf_machine(os.path.realpath(sys.executable))
    assert elf_machine(got["libraries"]["aarch64-linux"]) == 0xB7                # EM_AARCH64
