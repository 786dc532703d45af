"""The package as a user gets it: an sdist and a wheel built from the source (`python -m build`, the
wheel from the sdist, so the sdist must hold everything, C sources included), the wheel installed
into a fresh virtual environment, and `trace`, `grad`, `dump` and `export` run there from outside
the source tree.
"""
from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import sys
import tarfile
import textwrap
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(importlib.util.find_spec("build") is None,
                                reason="needs the `build` package (pip install -e '.[test]')")

USER_PROGRAM = '''
import ctypes, math, os, pathlib, subprocess, sys

import tracer
from tracer import export, grad, trace

here = pathlib.Path.cwd()
assert "site-packages" in tracer.__file__, tracer.__file__          # the installed copy, not the source
assert not hasattr(tracer.native, "_test_entry_address")               # test entries are not shipped


def fma(x, y, z):
    return x * y + z


def wave(x):
    return math.sin(x) * x


assert trace(fma)(3.0, -1.0, 2.0) == 3.0 * -1.0 + 2.0
assert grad(wave)(1.5) == math.cos(1.5) * 1.5 + math.sin(1.5)
assert trace(fma).dump(3.0, -1.0, 2.0, stage="ir").startswith("func fma(x: f64, y: f64, z: f64) -> f64")

done = export(fma, 3.0, -1.0, 2.0, out_dir=str(here / "out"), grad=True)
library = ctypes.CDLL(done.library)
out = ctypes.c_double()
assert library.fma_fma(ctypes.c_double(3.0), ctypes.c_double(-1.0), ctypes.c_double(2.0), ctypes.byref(out)) == 0
assert out.value == -1.0
print("user program: ok")
'''


def run(command, cwd, **kwargs):
    done = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{' '.join(map(str, command))} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_sdist_and_wheel_install_into_a_fresh_venv_and_run(tmp_path):
    dist = tmp_path / "dist"
    run([sys.executable, "-m", "build", "--outdir", dist, ROOT], cwd=tmp_path)
    (sdist,), (wheel,) = dist.glob("*.tar.gz"), dist.glob("*.whl")

    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"tracer/csrc/frame.c", "tracer/csrc/dispatch.h", "setup.py", "pyproject.toml", "LICENSE"} <= names
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {"tracer/py.typed", "tracer/native.pyi", "tracer/ir/ops.py", "codegen/lower.py"} <= names
    assert any(n.startswith("tracer/native.") and n.endswith(".so") for n in names)
    assert not any(n.startswith("tests/") or n.endswith(".c") for n in names)

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv], cwd=tmp_path)
    python = venv / "bin" / "python"
    run([python, "-m", "pip", "install", "-q", wheel], cwd=tmp_path)

    work = tmp_path / "user"
    work.mkdir()
    (work / "program.py").write_text(textwrap.dedent(USER_PROGRAM))
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    assert "user program: ok" in run([python, "program.py"], cwd=work, env=environment)

    dumped = run([venv / "bin" / "tracer", "dump", "program.py:fma", "--args", "3.0", "-1.0", "2.0",
                  "--stage", "opt"], cwd=work, env=environment)
    assert "mul" in dumped or "fma" in dumped
    exported = run([python, "-m", "tracer", "export", "program.py:wave", "--args", "1.5", "-o", "lib",
                    "--grad"], cwd=work, env=environment)
    assert (work / "lib" / "libwave.so").exists(), exported
