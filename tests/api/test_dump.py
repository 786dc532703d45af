"""`python -m tracer dump` (tracer.__main__, tracer.dump): a golden test of the fma table, every stage, and one-line errors."""
import os
import subprocess
import sys
import textwrap

import pytest

from tracer import trace

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FMA = os.path.join("examples", "fma.py") + ":fma"

GOLDEN_IR = """\
func fma(x: f64, y: f64, z: f64) -> f64
  value  op   operands  type  source
  %0     mul  x, y      f64   fma.py:12  return x * y + z
  %1     add  %0, z     f64   fma.py:12  return x * y + z
  return %1"""

GOLDEN_OPT = """\
func fma(x: f64, y: f64, z: f64) -> f64
  value  op   operands  type  source
  %0     fma  x, y, z   f64   fma.py:12  return x * y + z
  return %0
# 2 values captured, 1 after passes; fused multiply-adds: 1"""


def run_cli(*args, cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "tracer", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_golden_ir_and_opt_tables_for_fma():
    ir = run_cli("dump", FMA, "--args", "3.0", "-1.0", "2.0", "--stage", "ir")
    assert ir.returncode == 0, ir.stderr
    assert ir.stdout.rstrip() == GOLDEN_IR
    opt = run_cli("dump", FMA, "--args", "3.0", "-1.0", "2.0", "--stage", "opt")
    assert opt.stdout.rstrip() == GOLDEN_OPT


def test_no_fma_keeps_the_multiply_and_the_add():
    out = run_cli("dump", FMA, "--args", "3.0", "-1.0", "2.0", "--no-fma").stdout
    assert " mul " in out and " add " in out and " fma " not in out
    assert "fused multiply-adds: 0 (fusion off)" in out


def test_asm_is_a_single_fused_multiply_add():
    out = run_cli("dump", FMA, "--args", "3.0", "-1.0", "2.0", "--stage", "asm").stdout
    kernel = out.split("__tracer_fma:", 1)[1].split(".Lfunc_end0", 1)[0]
    instructions = [line.split()[0] for line in kernel.splitlines() if line.strip() and not line.strip().startswith((".", "#"))]
    assert sum(i.startswith("vfmadd") for i in instructions) == 1
    assert not any(i in ("vmulsd", "vaddsd", "mulsd", "addsd") for i in instructions), instructions


def test_llvm_and_bytecode_stages():
    llvm = run_cli("dump", FMA, "--args", "3.0", "-1.0", "2.0", "--stage", "llvm").stdout
    assert "@llvm.fma.f64" in llvm and "define" in llvm
    bytecode = run_cli("dump", FMA, "--stage", "bytecode", "--args", "1.0", "1.0", "1.0").stdout
    assert "BINARY_OP" in bytecode and "RETURN_VALUE" in bytecode


def test_annotations_give_the_argument_types(tmp_path):
    source = tmp_path / "annotated.py"
    source.write_text("def f(n: int, x: float) -> float:\n    return x * n\n")
    out = run_cli("dump", f"{source}:f", "--stage", "ir")
    assert out.returncode == 0, out.stderr
    assert "func f(n: i64, x: f64) -> f64" in out.stdout


def test_package_module_target(tmp_path):
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kernels.py").write_text("def saxpy(a, x, y):\n    return a * x + y\n")
    env_path = str(tmp_path)
    out = subprocess.run([sys.executable, "-m", "tracer", "dump", "mypkg.kernels:saxpy", "--args", "2.0", "1.0", "0.5"],
                         cwd=env_path, capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join([env_path, ROOT])))
    assert out.returncode == 0, out.stderr
    assert "func saxpy(a: f64, x: f64, y: f64) -> f64" in out.stdout and " fma " in out.stdout


@pytest.mark.parametrize("args, message", [
    (("dump", "examples/nope.py:fma"), "no such file"),
    (("dump", "examples/fma.py:nope"), "has no function 'nope'"),
    (("dump", "examples/fma.py"), "TARGET must be"),
    (("dump", "no_such_module_xyz:f"), "cannot import module"),
    (("dump", FMA, "--args", "3.0", "oops", "1.0"), "is not a Python literal"),
    (("dump", FMA), "has no float/int/bool annotation"),
])
def test_errors_are_one_line_and_a_nonzero_exit(args, message):
    out = run_cli(*args)
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_unsupported_construct_names_file_and_line(tmp_path):
    source = tmp_path / "bad.py"
    source.write_text(textwrap.dedent("""\
        def f(x):
            global G
            G = x
            return x
    """))
    out = run_cli("dump", f"{source}:f", "--args", "1.0", "--fullgraph")
    assert out.returncode == 2
    assert f"{source}:3" in out.stderr and "assigning a global" in out.stderr and "G = x" in out.stderr
    assert "Traceback" not in out.stderr
    # as @trace does by default: the function runs as Python, and the dump says why
    out = run_cli("dump", f"{source}:f", "--args", "1.0")
    assert out.returncode == 0
    assert "runs as Python" in out.stdout and f"{source}:3" in out.stdout and "assigning a global" in out.stdout


def test_traced_function_dump_method():
    f = trace(lambda x, y: x * y + 1.0)
    assert " fma " in f.dump(2.0, 3.0, stage="opt")


GOLDEN_GRAD_OPT = """\
func value_and_grad_fma(x: f64, y: f64, z: f64) -> (f64, (f64, f64, f64))
  value  op     operands  type                    source
  %0     fma    x, y, z   f64                     fma.py:12  return x * y + z
  %1     const  1.0       f64                     fma.py:11  def fma(x, y, z):
  %2     tuple  y, x, %1  (f64, f64, f64)         fma.py:11  def fma(x, y, z):
  %3     tuple  %0, %2    (f64, (f64, f64, f64))  fma.py:11  def fma(x, y, z):
  return %3"""


def test_grad_shows_the_joint_value_and_gradient_function():
    opt = run_cli("dump", FMA, "--args", "3.0", "-1.0", "2.0", "--grad", "--argnums", "0,1,2")
    assert opt.returncode == 0, opt.stderr
    assert opt.stdout.rstrip().rsplit("\n", 1)[0] == GOLDEN_GRAD_OPT
    ir = run_cli("dump", FMA, "--args", "3.0", "-1.0", "2.0", "--grad", "--stage", "ir")
    assert "func value_and_grad_fma(x: f64, y: f64, z: f64) -> (f64, f64)" in ir.stdout
    assert " mul " in ir.stdout                  # the backward: ct * y for x, before the passes
    asm = run_cli("dump", FMA, "--args", "3.0", "-1.0", "2.0", "--grad", "--stage", "asm")
    assert "__tracer_value_and_grad_fma" in asm.stdout


@pytest.mark.parametrize("args, message", [
    (["--grad", "--argnums", "x"], "--argnums takes comma-separated"),
    (["--grad", "--argnums", "5"], "argnums"),
    (["--grad", "--stage", "bytecode"], "--grad shows IR stages"),
])
def test_grad_errors(args, message):
    r = run_cli("dump", FMA, "--args", "3.0", "-1.0", "2.0", *args)
    assert r.returncode == 2 and message in r.stderr, r.stderr


def clipped_newton(x):
    y = x if x > 1.0 else 1.0
    while abs(y * y - x) > 1e-12 * x:
        y = 0.5 * (y + x / y)
    return y


GOLDEN_CONTROL_FLOW = """\
func clipped_newton(x: f64) -> f64
  value    op         operands      type        source
  %0       const      1.0           f64
  %1       gt         x, %0         bool
  %2       if         %1            (f64,)
    then:
    yield x
    else:
    yield %0
  %3       getitem    %2, index=0   f64
  %4       mul        %3, %3        f64
  %5       sub        %4, x         f64
  %6       abs        %5            f64
  %7       const      1e-12         f64
  %8       mul        %7, x         f64
  %9       gt         %6, %8        bool
  %10      if         %9            (f64,)
    then:
    %11      const    0.0           f64
    %12      loop     %3, %11       (f64, f64)
      body(%13: f64, %14: f64):
      %15      div    x, %13        f64
      %16      add    %13, %15      f64
      %17      const  0.5           f64
      %18      mul    %17, %16      f64
      %19      mul    %18, %18      f64
      %20      sub    %19, x        f64
      %21      abs    %20           f64
      %22      gt     %21, %8       bool
      yield %22, %18, %18
    %23      getitem  %12, index=1  f64
    yield %23
    else:
    yield %3
  %24      getitem    %10, index=0  f64
  return %24"""


def test_control_flow_prints_regions_under_their_op():
    from tracer.ir import format_function
    f = trace(clipped_newton, fuse_fma=False)
    assert f(2.0) == clipped_newton(2.0)
    assert format_function(f.specializations[0].optimized, show_source=False) == GOLDEN_CONTROL_FLOW
