"""`python -m tracer` with bad inputs (tracer.__main__): every failure is one line on stderr, `tracer: error: ...`,
no traceback, and exit status 2 for a command line that asks for something impossible, 1 for a failure while
doing it. Each case runs the command line in a subprocess."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FMA = os.path.join(ROOT, "examples", "fma.py") + ":fma"
ARGS = ["--args", "3.0", "-1.0", "2.0"]

KERNELS = textwrap.dedent("""\
    def scale(x: float, k: float) -> float:
        return x * k

    def uses_global(x):
        global G
        G = x
        return x

    def divides(x):
        return 1.0 / x
""")


def run_cli(*args, cwd, **env):
    environment = {k: v for k, v in os.environ.items() if k != "TRACER_DEBUG"}
    environment.update(PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), **env)
    return subprocess.run([sys.executable, "-m", "tracer", *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS)
    (tmp_path / "syntax_error.py").write_text("def f(x):\n    return x +\n")
    (tmp_path / "raises_on_import.py").write_text("raise RuntimeError('the module is broken')\n")
    (tmp_path / "a_file").write_text("not a folder\n")
    return tmp_path


def assert_one_line_error(done, status: int, fragment: str):
    lines = done.stderr.strip().splitlines()
    assert done.returncode == status, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and len(lines) == 1, done.stderr
    assert lines[0].startswith("tracer: error: ") and fragment in lines[0], lines[0]
    assert done.stdout == ""


USAGE_ERRORS = [
    ([], "the following arguments are required: command"),
    (["compile", FMA], "invalid choice: 'compile'"),
    (["dump", FMA, *ARGS, "--stage", "bits"], "argument --stage: invalid choice: 'bits'"),
    (["dump", "missing.py:fma", *ARGS], "no such file: missing.py"),
    (["dump", "no_such_module_xyz:fma", *ARGS], "cannot import module 'no_such_module_xyz'"),
    (["dump", "kernels.py:nope", *ARGS], "kernels.py has no function 'nope'"),
    (["dump", "kernels.py", *ARGS], "TARGET must be"),
    (["dump", FMA, "--args", "3.0", "oops", "1.0"], "'oops' is not a Python literal"),
    (["dump", FMA, "--args", "3.0", "1.0"], "missing a required argument: 'z'"),
    (["dump", FMA, "--args", "3.0", "1", "1.0", "--grad", "--argnums", "1"], "only float arguments"),
    (["dump", "kernels.py:uses_global", "--args", "1.0", "--fullgraph"], "kernels.py:6: assigning a global"),
    (["export", FMA, *ARGS], "the following arguments are required: -o/--out"),
    (["export", FMA, *ARGS, "-o", "out", "--target", "vax"], "unknown target 'vax'"),
    (["export", FMA, *ARGS, "-o", "out", "--cpu", "no-such-cpu"], "unknown CPU 'no-such-cpu'"),
    (["export", FMA, *ARGS, "-o", "out", "--name", "1lib"], "the library name '1lib' is not a C identifier"),
    (["export", FMA, *ARGS, "-o", "build/dir/libfma.so"], "-o/--out is the output folder"),
    (["export", "no_such_module_xyz:f", "-o", "out"], "cannot import module 'no_such_module_xyz'"),
    (["export", FMA, "--fn", "nope", *ARGS, "-o", "out"], "has no function 'nope'"),
    (["export", "kernels.py:scale", "--args", "{1: 2}", "2.0", "-o", "out"], "argument x of scale is a dict"),
    (["export", "kernels.py:scale", "--args", "np.ones(3, dtype=int)", "2.0", "-o", "out"], "is not a Python literal"),
    (["export", "kernels.py:scale", "--args", "1.0", "-o", "out"], "missing a required argument: 'k'"),
    (["export", "kernels.py:uses_global", "--args", "1.0", "-o", "out"], "kernels.py:6: assigning a global"),
    (["export", "kernels.py:scale", "--args", "1", "2", "-o", "out", "--grad"], "no float argument to differentiate"),
]


@pytest.mark.parametrize("args, fragment", USAGE_ERRORS)
def test_usage_errors_exit_2_with_one_line(workdir, args, fragment):
    assert_one_line_error(run_cli(*args, cwd=workdir), 2, fragment)
    assert not (workdir / "out").exists() and not (workdir / "build").exists()


FAILURES = [
    (["export", "kernels.py:scale", "-o", "a_file/out"], {}, "cannot write to the output folder a_file/out: "),
    (["export", "kernels.py:scale", "-o", "a_file"], {}, "cannot write to the output folder a_file: it is a file"),
    (["export", "kernels.py:divides", "--args", "0.0", "-o", "out"], {}, "ZeroDivisionError: float division by zero"),
    (["dump", "syntax_error.py:f", "--args", "1.0"], {}, "importing syntax_error.py raised SyntaxError"),
    (["export", "raises_on_import.py:f", "-o", "out"], {}, "raised RuntimeError: the module is broken"),
    (["export", "kernels.py:scale", "-o", "out"], {"TRACER_CC": "/no/such/compiler"}, "cannot run /no/such/compiler"),
    (["export", "kernels.py:scale", "-o", "out"], {"TRACER_CC": "false"}, "linking out/libscale.so failed"),
]


@pytest.mark.parametrize("args, env, fragment", FAILURES)
def test_failures_exit_1_with_one_line(workdir, args, env, fragment):
    assert_one_line_error(run_cli(*args, cwd=workdir, **env), 1, fragment)


def test_tracer_debug_shows_the_traceback(workdir):
    done = run_cli("export", "kernels.py:divides", "--args", "0.0", "-o", "out", cwd=workdir, TRACER_DEBUG="1")
    assert done.returncode == 1
    assert "Traceback" in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("tracer: error: ZeroDivisionError")


def test_a_good_command_still_works(workdir):
    done = run_cli("export", "kernels.py:scale", "-o", "out", "--cpu", "x86-64-v2" if os.uname().machine == "x86_64"
                   else "generic", cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "functions: scale_scale"
    assert run_cli("--help", cwd=workdir).returncode == 0
