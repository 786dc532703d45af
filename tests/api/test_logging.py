"""What the tracer does, said through `logging` (tracer.logs, tracer.guard_misses): each compile
("tracer.compile": the function, file:line, argument types, time per stage), each recompile with
the guard the new call failed ("tracer.guards"), each fallback to Python with its file:line
("tracer.fallback"); TRACER_LOG=... shows them on stderr. And `dump --format dot`: the IR as a
Graphviz graph (tracer.dump.format_dot).
"""
from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import tracer
from tracer import logs, trace
from tracer.dump import capture_trace, format_dot
from tracer.transforms.passes import optimize

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.abspath(__file__)


@pytest.fixture
def records(caplog):
    """The "tracer" loggers' records at INFO and above, as (logger, level, message)."""
    caplog.set_level(logging.INFO, logger="tracer")

    def got(name: str = "tracer"):
        return [(r.name, r.levelname, r.getMessage()) for r in caplog.records
                if r.name == name or r.name.startswith(name + ".")]
    got.clear = caplog.clear
    return got


def line_of(fn, text: str) -> int:
    """The line number of the first line of `fn` holding `text`."""
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


# ------------------------------------------------------------------------------ compiles
def axpy(a, x, y):
    return a * x + y


def test_a_compile_is_logged_with_its_name_place_argument_types_and_time(records):
    f = trace(axpy)
    assert f(2.0, 3.0, 1.0) == 7.0
    [(name, level, message)] = records("tracer.compile")
    assert (name, level) == ("tracer.compile", "INFO")
    assert f"{HERE}:{axpy.__code__.co_firstlineno}: axpy(a: float, x: float, y: float) compiled in " in message
    for stage in ("trace", "passes", "lower", "llvm-opt", "llvm-codegen", "link"):
        assert f"{stage} " in message
    assert " ms" in message and "[native entry]" in message
    assert records("tracer.guards") == [] and records("tracer.fallback") == []


def test_a_call_that_hits_a_specialization_logs_nothing(records):
    f = trace(axpy)
    f(2.0, 3.0, 1.0)
    records.clear()
    for _ in range(3):
        assert f(1.0, 1.0, 1.0) == 2.0
    assert records() == []


def test_a_compile_longer_than_a_second_is_a_warning(records, monkeypatch):
    monkeypatch.setattr(logs, "SLOW_COMPILE_SECONDS", 0.0)
    trace(axpy)(1.0, 2.0, 3.0)
    [(_, level, message)] = records("tracer.compile")
    assert level == "WARNING" and "longer than a second" in message


# ------------------------------------------------------------------------------ recompiles
def test_a_new_argument_type_logs_the_guard_it_failed(records):
    f = trace(axpy)
    f(2.0, 3.0, 1.0)
    f(2, 3.0, 1.0)
    [(_, level, message)] = records("tracer.guards")
    assert level == "INFO"
    assert "axpy() recompiles (specialization 2 of at most 16)" in message
    assert "a: was float, now int" in message and "type(a) is float" in message
    compiles = records("tracer.compile")
    assert len(compiles) == 2 and "axpy(a: int, x: float, y: float)" in compiles[1][2]


def first_two(xs):
    return xs[0] + xs[1]


def test_a_list_of_another_length_logs_the_length_guard(records):
    f = trace(first_two)
    f([1.0, 2.0])
    f([1.0, 2.0, 4.0])
    [(_, _, message)] = records("tracer.guards")
    assert "len(xs): was 2, now 3" in message
    f([1, 2])               # both earlier specializations reject it, each for its own reason
    message = records("tracer.guards")[-1][2]
    assert "#1: xs[0]: was float, now int" in message and "#2: len(xs): was 3, now 2" in message


def test_an_array_of_another_dtype_or_rank_logs_both_kinds():
    np = pytest.importorskip("numpy")
    from tracer.guard_misses import describe_misses

    def total(v):
        return np.sum(v * 2.0)
    f = trace(total)
    f(np.ones(3))
    [reason] = describe_misses(f.specializations, (np.ones((2, 2)),), total.__code__)
    assert reason.startswith("v: was ndarray[float64, 1-d], now ndarray[float64, 2-d]")
    [reason] = describe_misses(f.specializations, (np.ones(3, dtype=np.float32),), total.__code__)
    assert reason.startswith("v: was ndarray[float64, 1-d], now ndarray[float32, 1-d]")


SCALE = 2.0


def scaled(x):
    return SCALE * x


def test_a_rebound_global_logs_its_binding_guard(records):
    global SCALE
    f = trace(scaled)
    assert f(1.5) == 3.0
    SCALE = 3.0
    try:
        assert f(1.5) == 4.5
    finally:
        SCALE = 2.0
    [(_, _, message)] = records("tracer.guards")
    assert "'SCALE': was 2.0, now 3.0" in message


def test_too_many_specializations_is_one_warning_naming_the_last_miss(records):
    def powers(x, n):
        return sum(x ** i for i in range(n))
    f = trace(powers, max_specializations=2)
    assert [f(1.5, n) for n in range(5)] == [powers(1.5, n) for n in range(5)]
    warnings = [m for _, level, m in records("tracer.guards") if level == "WARNING"]
    assert len(warnings) == 1
    assert "more than 2 specializations were compiled" in warnings[0]
    assert "this call: n: was 1, now 2" in warnings[0]


# ------------------------------------------------------------------------------ fallbacks
def imports_something(y):
    import math  # noqa: F401  (an import: the tracer cannot compile it)
    return str(y)


def breaks(x):
    y = x + 1.0
    s = imports_something(y)
    return len(s) + y


def runs_as_python(n, x):
    for _ in range(n):
        x = x + len(imports_something(x))
    return x


def test_a_graph_break_is_logged_with_file_and_line(records):
    f = trace(breaks)
    assert f(1.5) == breaks(1.5)
    [(_, level, message)] = records("tracer.fallback")
    assert level == "INFO"
    assert message.startswith(f"{HERE}:{line_of(breaks, 'imports_something(y)')}: breaks(): graph break")
    assert f"an import (IMPORT_NAME) is not supported, at {HERE}:{line_of(imports_something, 'import math')}" in message
    assert "(s = imports_something(y))" in message
    compiled = [m for _, _, m in records("tracer.compile")]
    assert any("breaks(x: float) compiled" in m and "up to a graph break" in m for m in compiled)


def test_a_function_run_as_python_is_logged_with_file_and_line(records):
    f = trace(runs_as_python)
    assert f(2, 1.0) == runs_as_python(2, 1.0)
    [(_, _, message)] = records("tracer.fallback")
    where = f"{HERE}:{line_of(imports_something, 'import math')}"
    assert message.startswith(f"{where}: runs_as_python() runs as Python for arguments (int, float): an import")
    assert records("tracer.compile") == []
    f(3, 1.0)                   # the same kinds: taken by the PythonRun, nothing logged again
    assert len(records("tracer.fallback")) == 1
    f(2, 1)                     # a new kind: the guard that failed, then why it runs as Python
    assert "x: was float, now int" in records("tracer.guards")[-1][2]


def test_explain_says_the_same_as_the_log(records):
    e = tracer.explain(breaks, 1.5)
    [(_, _, message)] = records("tracer.fallback")
    assert e.breaks[-1].what in message


# ------------------------------------------------------------------------------ TRACER_LOG
SCRIPT = textwrap.dedent("""
    import sys
    import tracer

    @tracer.trace
    def fma(x, y, z):
        return x * y + z

    fma(1.0, 2.0, 3.0)
    fma(1, 2, 3)
    print("logging" in sys.modules)
""")


def run_script(tmp_path, tracer_log: str | None):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("TRACER_LOG", None)
    if tracer_log is not None:
        env["TRACER_LOG"] = tracer_log
    script = tmp_path / "program.py"
    script.write_text(SCRIPT)
    return subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)


def test_tracer_log_compile_prints_compiles_on_stderr(tmp_path):
    done = run_script(tmp_path, "compile")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 2, done.stderr
    assert all(line.startswith(f"tracer.compile: {tmp_path / 'program.py'}:5: fma(") for line in lines)
    assert "fma(x: float, y: float, z: float) compiled in" in lines[0] and "fma(x: int" in lines[1]


def test_tracer_log_all_prints_every_channel(tmp_path):
    done = run_script(tmp_path, "all")
    assert done.returncode == 0, done.stderr
    assert "tracer.guards: " in done.stderr and "x: was float, now int" in done.stderr
    assert done.stderr.count("tracer.compile: ") == 2


def test_without_tracer_log_nothing_is_printed_and_logging_is_not_imported(tmp_path):
    done = run_script(tmp_path, None)
    assert done.returncode == 0 and done.stderr == ""
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("TRACER_LOG", None)
    imported = subprocess.run([sys.executable, "-c", "import sys, tracer; print('logging' in sys.modules, "
                               "'llvmlite' in sys.modules)"], env=env, capture_output=True, text=True, timeout=60)
    assert imported.stdout.split() == ["False", "False"]


def test_configure_names_unknown_channels():
    logger = logging.getLogger("tracer.guards")
    before = (list(logger.handlers), logger.level)
    try:
        import io
        stream = io.StringIO()
        assert logs.configure("guards, nonsense", stream=stream) == ["tracer.guards"]
        assert logs.configure("guards", stream=stream) == ["tracer.guards"]   # again: one handler
        assert sum(getattr(h, "tracer_log", False) for h in logger.handlers) == 1
        logger.info("hello")
        assert stream.getvalue().splitlines()[-1] == "tracer.guards: hello"
    finally:
        logger.handlers[:], logger.level = before
    assert logs.CHANNELS.keys() == {"compile", "guards", "fallback", "cache"}


# ------------------------------------------------------------------------------ dump --format dot
def branchy(n, x):
    s = 0.0
    for _ in range(n):
        if x > 0.5:
            s = s + x * 2.0
        else:
            s = s - 1.0
        x = x * 0.9
    return s


def test_format_dot_has_a_node_per_value_and_an_edge_per_operand():
    fn = optimize(capture_trace(branchy, (3, 1.0)).function)
    dot = format_dot(fn)
    lines = dot.splitlines()
    assert lines[0] == 'digraph "branchy" {' and lines[-1] == "}"
    assert dot.count("{") == dot.count("}")
    values = list(fn.walk())
    operand_edges = [line for line in lines if " -> " in line and "style=dashed" not in line]
    assert len(operand_edges) == sum(len(v.args) for v in values) > 0
    assert sum(1 for line in lines if "[label=\"%" in line and " = " in line) == len(values)
    assert "subgraph cluster_" in dot and ": then" in dot and ": body" in dot
    assert any(line.strip().startswith("result [") for line in lines)
    if shutil.which("dot"):
        done = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "<svg" in done.stdout


def test_format_dot_escapes_quotes_and_backslashes():
    def labelled(x):
        return x + 1.0
    fn = capture_trace(labelled, (1.0,)).function
    fn.name = 'a "quoted" \\ name'
    assert format_dot(fn).splitlines()[0] == 'digraph "a \\"quoted\\" \\\\ name" {'


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "tracer", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


def test_dump_dot_on_the_command_line():
    fma = os.path.join("examples", "fma.py") + ":fma"
    done = run_cli("dump", fma, "--args", "3.0", "-1.0", "2.0", "--dot")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('digraph "fma" {')
    assert "-> v3 [label=2];" in done.stdout          # fma(x, y, z): three operand edges
    ir = run_cli("dump", fma, "--args", "3.0", "-1.0", "2.0", "--format", "dot", "--stage", "ir")
    assert ir.returncode == 0 and " = mul" in ir.stdout and " = add" in ir.stdout
    wrong = run_cli("dump", fma, "--args", "3.0", "-1.0", "2.0", "--dot", "--stage", "llvm")
    assert wrong.returncode == 2
    assert wrong.stderr.strip() == "tracer: error: --format dot shows the IR stages (--stage ir or opt), not llvm"
