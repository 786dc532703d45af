"""Ahead-of-time export (tracer.export, tracer.aot.export): the libraries are run from C programs compiled against
their headers (for other architectures under qemu, for Windows under Wine), and through the generated ctypes
loaders, against CPython and the JIT."""
import importlib.util
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from tracer import export, trace
from tracer.aot.export import ExportError
from tracer.aot.toolchain import ToolchainError

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
from mlp_numpy import mlp

CC = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler to link and run exported libraries")

# Linux targets: (the C compiler for the test program, how to run it; None: missing). The others
# run under qemu-user with Debian's libc for them (qemu-user-static, libc6-<arch>-cross); zig
# (pip: ziglang, in the test extra) links their libraries and builds their programs (aarch64's:
# its Debian cross gcc where there is one). .ci/run installs the Debian packages
ZIG = [sys.executable, "-m", "ziglang", "cc"] if importlib.util.find_spec("ziglang") else None


def cross_target(zig_target: str, qemu: str, gcc: str | None = None) -> tuple:
    compiler = [gcc] if gcc else [*ZIG, "-target", zig_target] if ZIG else None
    runner = shutil.which(f"qemu-{qemu}-static") or shutil.which(f"qemu-{qemu}")
    sysroot = f"/usr/{zig_target}"      # Debian's libc6-<arch>-cross
    return compiler, [runner, "-L", sysroot] if runner and os.path.isdir(f"{sysroot}/lib") else None


# Windows x86-64: zig builds the program against the import library (MinGW-w64's printf, whose %a
# and %lld print as glibc's), Wine runs it in a prefix of this test run's own (Wine makes it on its
# first start, in a few seconds; `wine_prefix` removes it at the end)
WINE_PREFIX = os.path.join(tempfile.gettempdir(), f"tracer-test-wine-{os.getpid()}")
WINE = shutil.which("wine64") or shutil.which("wine")


def wine_target(zig_target: str) -> tuple:
    compiler = [*ZIG, "-target", zig_target, "-D__USE_MINGW_ANSI_STDIO=1"] if ZIG else None
    return compiler, ["env", f"WINEPREFIX={WINE_PREFIX}", "WINEDEBUG=-all", WINE] if WINE else None


LINUX_TARGETS = {"host": ([CC], []),
                 "aarch64-linux": cross_target("aarch64-linux-gnu", "aarch64", shutil.which("aarch64-linux-gnu-gcc")),
                 "riscv64-linux": cross_target("riscv64-linux-gnu", "riscv64"),
                 "armv7-linux": cross_target("arm-linux-gnueabihf", "arm")}
RUN_TARGETS = {**LINUX_TARGETS, "x86_64-windows": wine_target("x86_64-windows-gnu")}


def run_target(name):
    compiler, runner = RUN_TARGETS[name]
    emulator = ("Wine (Debian: wine wine64)" if name.endswith("-windows") else
                "qemu-user or the target's libc (Debian: qemu-user-static, libc6-<arch>-cross)")
    missing = [what for what, gone in [("zig (pip install ziglang)", compiler is None), (emulator, runner is None)]
               if gone]
    return pytest.param(name, marks=pytest.mark.skipif(bool(missing), reason=f"{name}: no {' and no '.join(missing)}"))


TARGETS = [run_target(name) for name in RUN_TARGETS]
ELF_TARGETS = [run_target(name) for name in LINUX_TARGETS]


@pytest.fixture(scope="session", autouse=True)
def wine_prefix():
    """The Wine prefix the Windows programs run in, removed (its wineserver stopped) after the tests."""
    yield WINE_PREFIX
    if os.path.isdir(WINE_PREFIX):
        subprocess.run(["env", f"WINEPREFIX={WINE_PREFIX}", "wineserver", "-k"], capture_output=True)
        shutil.rmtree(WINE_PREFIX, ignore_errors=True)


def fma(x, y, z):
    return x * y + z


def div(a, b):
    return a / b


def sin(x):          # a function named like libm's: the library must call libm's, not itself
    return math.sin(x) * 2.0


def checked_sqrt(x):
    if x < 0.0:
        raise ValueError("x must not be negative")
    return math.sqrt(x)


def pick(x, n):      # n indexes a tuple: its value is used at compile time (pinned)
    return (x, 2.0 * x, 3.0 * x)[n]


def run_c(tmp_path, out_dir: str, name: str, body: str, extra: str = "", target: str = "host") -> list[str]:
    """Compile `body` (the inside of main) against out_dir/<name>.h and lib<name>.so (for
    Windows: <name>.lib, <name>.dll) for `target` and run it (under qemu for another
    architecture, Wine for Windows); its stdout lines."""
    compiler, runner = RUN_TARGETS[target]
    source = tmp_path / "main.c"
    source.write_text(f'#include <stdio.h>\n#include <stdlib.h>\n#include "{name}.h"\n{extra}\n'
                      f"int main(void) {{\n{body}\n    return 0;\n}}\n")
    program = tmp_path / "main"
    rpath = [f"-Wl,-rpath,{out_dir}"]
    if target.endswith("-windows"):     # Windows finds a DLL in the program's folder
        program, rpath = os.path.join(out_dir, "main.exe"), []
    subprocess.run([*compiler, "-std=c99", "-Wall", "-Werror", "-o", str(program), str(source), f"-I{out_dir}",
                    f"-L{out_dir}", f"-l{name}", *rpath, "-lm"], check=True)
    done = subprocess.run([*runner, str(program)], capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


def load(exported):
    spec = importlib.util.spec_from_file_location(f"exported_{id(exported)}", exported.loader)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def c_double(x: float) -> str:
    return x.hex() if math.isfinite(x) else {math.inf: "INFINITY", -math.inf: "-INFINITY"}.get(x, "NAN")


POINTS = [(3.0, -1.0, 2.0), (0.1, 0.2, 0.3), (1e308, 10.0, -1e308), (-0.0, 5.0, -0.0), (1.0 / 3, 3.0, -1.0)]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fuse_fma", [False, True])
def test_fma_and_its_gradient_from_c(tmp_path, fuse_fma, target):
    out = str(tmp_path / "out")
    exported = export(fma, 3.0, -1.0, 2.0, out_dir=out, grad=True, fuse_fma=fuse_fma, target=target)
    assert exported.symbols == ["fma_fma", "fma_fma_grad"]
    calls = "\n".join(
        f"    if (fma_fma({c_double(x)}, {c_double(y)}, {c_double(z)}, &v) != FMA_OK) return 1;\n"
        f"    if (fma_fma_grad({c_double(x)}, {c_double(y)}, {c_double(z)}, &w, &dx, &dy, &dz) != FMA_OK) return 1;\n"
        f'    printf("%a %a %a %a %a\\n", v, w, dx, dy, dz);' for x, y, z in POINTS)
    lines = run_c(tmp_path, out, "fma", "    double v, w, dx, dy, dz;\n" + calls, target=target)
    jit = trace(fma, fuse_fma=fuse_fma)
    for (x, y, z), line in zip(POINTS, lines):
        v, w, dx, dy, dz = map(float.fromhex, line.split())
        assert v.hex() == w.hex() == jit(x, y, z).hex()
        if not fuse_fma:
            assert v.hex() == (x * y + z).hex()        # CPython's bits
        assert (dx, dy, dz) == (y, x, 1.0)


@pytest.mark.parametrize("target", TARGETS)
def test_errors_come_back_as_statuses(tmp_path, target):
    out = str(tmp_path / "out")
    export([(div, (1.0, 2.0)), (checked_sqrt, (4.0,)), (pick, (1.0, 1))], out_dir=out, name="errs", target=target)
    body = r'''
    double r;
    int s = errs_div(1.0, 0.0, &r);
    printf("%d|%s\n", s, errs_last_error());
    s = errs_div(1.0, 4.0, NULL);
    printf("%d|%s\n", s, errs_last_error());
    s = errs_div(1.0, 4.0, &r);
    printf("%d|%s|%a\n", s, errs_last_error(), r);
    s = errs_checked_sqrt(-1.0, &r);
    printf("%d|%s\n", s, errs_last_error());
    s = errs_pick(2.0, 2, &r);
    printf("%d|%s\n", s, errs_last_error());
    s = errs_pick(2.0, 1, &r);
    printf("%d|%a\n", s, r);
'''
    lines = run_c(tmp_path, out, "errs", body, target=target)
    assert lines[0] == "1|div: ZeroDivisionError: float division by zero"
    assert lines[1].startswith("5|div: the output pointer out is NULL")
    assert lines[2] == "0||0x1p-2"
    code, message = lines[3].split("|")
    assert code == "6" and message.endswith("ValueError: x must not be negative")
    assert "test_export.py:" in message                       # names the user's line
    assert lines[4].startswith("5|pick: argument n must be 1")
    assert lines[5] == "0|0x1p+2"


def small_mlp_weights(seed=0, sizes=(20, 8, 3)):
    rng = np.random.default_rng(seed)
    n_in, hidden, n_out = sizes
    return (rng.normal(0.0, 0.3, (n_in, hidden)), rng.normal(0.0, 0.1, hidden),
            rng.normal(0.0, 0.3, (hidden, n_out)), rng.normal(0.0, 0.1, n_out))


def c_array(name: str, a: np.ndarray) -> str:
    return f"static double {name}[{a.size}] = {{{', '.join(c_double(float(v)) for v in a.ravel())}}};"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("batch", [1, 5])
def test_mlp_forward_from_c_equals_the_jit(tmp_path, batch, target):
    W1, b1, W2, b2 = small_mlp_weights()
    x = np.random.default_rng(1).random((batch, 20))
    out = str(tmp_path / "out")
    export(mlp, W1, b1, W2, b2, x, out_dir=out, name="net", target=target)
    x2 = np.random.default_rng(2).random((batch, 20))      # other inputs than the example's
    xT = np.asfortranarray(x2)                               # the same values, strided
    extra = "\n".join([c_array("W1", W1), c_array("b1", b1), c_array("W2", W2), c_array("b2", b2),
                       c_array("x", x2), c_array("xT", xT.T.copy())])
    body = f'''
    int64_t s1[2] = {{20, 8}}, s2[1] = {{8}}, s3[2] = {{8, 3}}, s4[1] = {{3}}, sx[2] = {{{batch}, 20}};
    int64_t tx[2] = {{8, 8 * {batch}}};       /* column-major x: a transposed C array */
    net_f64_2d p, q;
    if (net_mlp(W1, s1, NULL, b1, s2, NULL, W2, s3, NULL, b2, s4, NULL, x, sx, NULL, &p) != NET_OK) return 1;
    if (net_mlp(W1, s1, NULL, b1, s2, NULL, W2, s3, NULL, b2, s4, NULL, xT, sx, tx, &q) != NET_OK) return 1;
    printf("%lld %lld\\n", (long long)p.shape[0], (long long)p.shape[1]);
    for (int i = 0; i < {batch} * 3; i++) printf("%a %a\\n", p.data[i], q.data[i]);
    net_free(p.owner);
    net_free(q.owner);
    int64_t bad[2] = {{{batch}, 19}};
    printf("%d\\n", net_mlp(W1, s1, NULL, b1, s2, NULL, W2, s3, NULL, b2, s4, NULL, x, bad, NULL, &p));
    printf("%d\\n", net_mlp(W1, s1, NULL, b1, s2, NULL, W2, s3, NULL, b2, s4, NULL, NULL, sx, NULL, &p));
'''
    lines = run_c(tmp_path, out, "net", body, extra, target=target)
    assert lines[0] == f"{batch} 3"
    expected = trace(mlp)(W1, b1, W2, b2, x2)
    got = np.array([[float.fromhex(v) for v in line.split()] for line in lines[1:1 + batch * 3]])
    assert np.array_equal(got[:, 0], got[:, 1])
    if target == "host":          # the same libm as the JIT's: the same bits
        assert np.array_equal(got[:, 0], expected.ravel())
    else:                         # another libm's exp (within an ulp or so)
        assert np.allclose(got[:, 0], expected.ravel(), rtol=1e-15, atol=0)
    assert np.abs(expected - mlp(W1, b1, W2, b2, x2)).max() < 1e-15
    assert lines[1 + batch * 3:] == ["4", "5"]    # shape mismatch, NULL data


def test_the_python_loader_round_trips(tmp_path):
    W1, b1, W2, b2 = small_mlp_weights()
    x = np.random.default_rng(3).random((4, 20))
    exported = export([(fma, (3.0, -1.0, 2.0)), (mlp, (W1, b1, W2, b2, x)), (checked_sqrt, (2.0,))],
                      out_dir=str(tmp_path), name="lib", grad=False)
    m = load(exported)
    assert m.fma(3.0, -1.0, 2.0) == trace(fma)(3.0, -1.0, 2.0)
    assert np.array_equal(m.mlp(W1, b1, W2, b2, x), trace(mlp)(W1, b1, W2, b2, x))
    assert m.checked_sqrt(2.0) == math.sqrt(2.0)
    with pytest.raises(ValueError, match="x must not be negative"):
        m.checked_sqrt(-1.0)
    with pytest.raises(ValueError, match="shapes do not fit"):
        m.mlp(W1, b1, W2, b2, np.ones((4, 21)))
    with pytest.raises(TypeError):
        m.fma(3, -1.0, 2.0)
    with pytest.raises(TypeError):
        m.mlp(W1, b1, W2, b2, np.ones((4, 20), dtype=np.float32))


def test_gradients_through_the_loader_match_finite_differences(tmp_path):
    def energy(x, k):
        return 0.5 * k * np.sum((x[1:] - x[:-1]) ** 2) + np.sum(np.sin(x))
    x = np.linspace(-1.0, 2.0, 7)
    m = load(export(energy, x, 3.0, out_dir=str(tmp_path), name="spring", grad=True))
    value, (dx, dk) = m.energy_grad(x, 3.0)
    assert value == m.energy(x, 3.0) == trace(energy)(x, 3.0)
    h = 1e-6
    for i in range(len(x)):
        e = np.zeros_like(x)
        e[i] = h
        assert abs((energy(x + e, 3.0) - energy(x - e, 3.0)) / (2 * h) - dx[i]) < 1e-6
    assert abs((energy(x, 3.0 + h) - energy(x, 3.0 - h)) / (2 * h) - dk) < 1e-6


def test_a_function_named_like_libm_calls_libm(tmp_path):
    m = load(export(sin, 0.5, out_dir=str(tmp_path)))
    assert m.sin(0.5) == math.sin(0.5) * 2.0


ELF_ABI_FLAGS = {"riscv64-linux": "double-float ABI", "armv7-linux": "hard-float ABI"}   # doubles in float registers


@pytest.mark.skipif(shutil.which("readelf") is None, reason="no readelf")
@pytest.mark.parametrize("target", ELF_TARGETS)
def test_the_library_needs_only_libc_and_libm(tmp_path, target):
    exported = export([(mlp, (*small_mlp_weights(), np.ones((2, 20)))), (div, (1.0, 2.0))], out_dir=str(tmp_path),
                      name="lib", target=target)
    dynamic = subprocess.run(["readelf", "-hd", exported.library], capture_output=True, text=True, check=True).stdout
    needed = {line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line}
    # ld-linux is glibc's dynamic loader: it provides __tls_get_addr (the per-thread error message)
    assert needed <= {"libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
                      "ld-linux-riscv64-lp64d.so.1", "ld-linux-armhf.so.3"}, needed
    assert ELF_ABI_FLAGS.get(target, "") in dynamic


def test_inputs_must_be_arguments(tmp_path):
    def total(xs):
        return sum(xs)
    with pytest.raises(ExportError, match="must take its inputs as arguments"):
        export(total, [1.0, 2.0], out_dir=str(tmp_path))
    with pytest.raises(ValueError, match="unknown target"):
        export(fma, 1.0, 2.0, 3.0, out_dir=str(tmp_path), target="pdp11")


def test_the_toolchain_error_says_what_to_install(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ziglang" else real(name, *a))
    monkeypatch.delenv("TRACER_CC", raising=False)
    assert load(export(fma, 3.0, -1.0, 2.0, out_dir=str(tmp_path / "cc"))).fma(3.0, -1.0, 2.0) == -1.0   # cc links
    for target in ["riscv64-linux", "armv7-linux", "x86_64-windows", "aarch64-macos"]:      # only zig links them
        with pytest.raises(ToolchainError, match=r'linking for .* needs zig \(pip install "tracer\[export\]"\)'):
            export(fma, 1.0, 2.0, 3.0, out_dir=str(tmp_path), target=target)
    monkeypatch.setenv("PATH", str(tmp_path))           # no cross gcc either
    with pytest.raises(ToolchainError, match=r'aarch64-linux-gnu-gcc is not installed \(pip install "tracer\[export\]"'):
        export(fma, 1.0, 2.0, 3.0, out_dir=str(tmp_path), target="aarch64-linux")
    monkeypatch.setenv("TRACER_CC", "/no/such/cc -O2")  # the user's compiler, whatever is installed
    with pytest.raises(ToolchainError, match="cannot run /no/such/cc"):
        export(fma, 1.0, 2.0, 3.0, out_dir=str(tmp_path), target="riscv64-linux")


def waves(x, y):
    return math.sin(x) * math.exp(y) + x ** y - math.atan2(y, x)


NODE = shutil.which("node")
WASM_READY = shutil.which("wasm-ld") is not None and os.path.exists("/usr/lib/wasm32-wasi/libc.a")


@pytest.mark.skipif(NODE is None or not WASM_READY, reason="no Node.js, or no wasm-ld and wasi-libc (Debian: lld wasi-libc)")
def test_wasm32_module_runs_in_node(tmp_path):
    import json
    W1, b1, W2, b2 = small_mlp_weights()
    x = np.random.default_rng(4).random((3, 20))
    exported = export([(fma, (3.0, -1.0, 2.0)), (waves, (0.5, 1.5)), (div, (1.0, 2.0)), (checked_sqrt, (2.0,)),
                       (mlp, (W1, b1, W2, b2, x))], out_dir=str(tmp_path), name="w", grad=False, target="wasm32")
    assert exported.library.endswith("w.wasm") and exported.loader.endswith("w.js")
    fma_grad = export(fma, 3.0, -1.0, 2.0, out_dir=str(tmp_path / "g"), name="g", grad=True, target="wasm32")
    points = [p for p in POINTS if abs(p[0]) < 1e300 and p[0] != 0.0]
    script = tmp_path / "run.js"

    def arr(a):
        return f"{{data: Float64Array.from({json.dumps(a.ravel().tolist())}), shape: {list(a.shape)}}}"
    script.write_text(f'''
(async () => {{
  const w = await require({json.dumps(exported.loader)}).load();
  const g = await require({json.dumps(fma_grad.loader)}).load();
  const points = {json.dumps(points)};
  const out = {{fma: points.map(p => w.fma(...p)), grad: points.map(p => g.fma_grad(...p)),
               waves: points.map(p => w.waves(Math.abs(p[0]), p[1])), errors: []}};
  const mlp = w.mlp({arr(W1)}, {arr(b1)}, {arr(W2)}, {arr(b2)}, {arr(x)});
  out.mlp = {{data: Array.from(mlp.data), shape: mlp.shape}};
  for (const bad of [() => w.div(1, 0), () => w.checked_sqrt(-1), () => w.fma("a", 1, 2),
                     () => w.mlp({arr(W1)}, {arr(b1)}, {arr(W2)}, {arr(b2)}, {arr(x[:, :19])})]) {{
    try {{ bad(); out.errors.push("no error"); }} catch (e) {{ out.errors.push([e.code || null, e.kind || e.name, e.message]); }}
  }}
  console.log(JSON.stringify(out));
}})();
''')
    done = subprocess.run([NODE, str(script)], capture_output=True, text=True, check=True)
    got = json.loads(done.stdout)
    jit_fma, jit_waves, jit_mlp = trace(fma), trace(waves), trace(mlp)
    assert got["fma"] == [jit_fma(*p) for p in points]                     # the same bits
    assert got["grad"] == [[jit_fma(*p), [y, x_, 1.0]] for p in points for x_, y in [p[:2]]]
    for p, v in zip(points, got["waves"]):                                  # wasi-libc's math functions
        assert v == pytest.approx(jit_waves(abs(p[0]), p[1]), rel=1e-15)
    assert got["mlp"]["shape"] == [3, 3]
    assert np.allclose(got["mlp"]["data"], jit_mlp(W1, b1, W2, b2, x).ravel(), rtol=1e-15, atol=0)
    (zero, kind0, message0), (raised, kind1, message1), typed, shape = got["errors"]
    assert (zero, kind0) == (1, "ZeroDivisionError") and message0.endswith("float division by zero")
    assert (raised, kind1) == (6, "ValueError") and message1.endswith("x must not be negative")
    assert typed[1] == "TypeError"
    assert shape[:2] == [4, "ValueError"]


EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def test_the_c_example_builds_and_runs(tmp_path):
    folder = os.path.join(EXAMPLES, "export_c")
    script = f"import sys; sys.path.insert(0, {folder!r}); import export_model; export_model.main({str(tmp_path)!r})"
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True)
    program = str(tmp_path / "main")
    subprocess.run([CC, "-std=c99", "-Wall", "-Werror", "-o", program, os.path.join(folder, "main.c"), f"-I{tmp_path}",
                    f"-L{tmp_path}", "-lmodel", f"-Wl,-rpath,{tmp_path}", "-lm"], check=True)
    done = subprocess.run([program], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fma(3, -1, 2) = -1; gradient (-1, 3, 1)" in done.stdout
    assert "status 4" in done.stdout


@pytest.mark.skipif(NODE is None or not WASM_READY, reason="no Node.js, or no wasm-ld and wasi-libc (Debian: lld wasi-libc)")
def test_the_wasm_example_runs_in_node(tmp_path):
    folder = os.path.join(EXAMPLES, "export_wasm")
    build = tmp_path / "build"
    script = (f"import sys; sys.path.insert(0, {os.path.join(EXAMPLES, 'export_c')!r}); import export_model; "
              f"export_model.main({str(build)!r}, target='wasm32')")
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True)
    shutil.copy(os.path.join(folder, "main.js"), tmp_path / "main.js")
    done = subprocess.run([NODE, str(tmp_path / "main.js")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "value and gradient: -1, [-1, 3, 1]" in done.stdout and "status 4" in done.stdout


def sgd_step(w, g, lr):
    w -= lr * g


def math_zoo(x, y):
    return (math.sqrt(x) + math.exp(-x) + math.log(x) + math.log10(x) + math.sin(x) * math.cos(y) + math.tan(y)
            + math.tanh(x) + math.atan(y) + math.asin(0.5 / x) + math.pow(x, y) + math.hypot(x, y) + x % y
            + math.floor(x * 3.5) + math.expm1(y) + math.log1p(x) + math.cosh(y) + math.fmod(x, y))


def test_in_place_updates_and_math_through_the_loader(tmp_path):
    example = np.ones(3)
    m = load(export([(sgd_step, (example, np.ones(3), 0.1)), (math_zoo, (2.5, 1.25))],
                    out_dir=str(tmp_path), name="misc", fuse_fma=False))
    assert np.array_equal(example, np.ones(3))        # exporting does not run the update on the example
    w, g = np.arange(4.0), np.full(4, 0.5)
    assert m.sgd_step(w, g, 0.1) is None
    assert np.array_equal(w, np.arange(4.0) - 0.1 * 0.5)           # written in place, CPython's bits
    for x, y in [(2.5, 1.25), (0.75, -0.5), (10.0, 3.0)]:
        assert m.math_zoo(x, y) == trace(math_zoo)(x, y) == math_zoo(x, y)


def test_command_line_export(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "tracer", "export", os.path.join(EXAMPLES, "fma.py") + ":fma",
                           "--args", "3.0", "-1.0", "2.0", "-o", str(out), "--grad"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "functions: fma_fma, fma_fma_grad" in done.stdout
    lines = run_c(tmp_path, str(out), "fma", "    double v, dx, dy, dz;\n"
                  "    int s = fma_fma_grad(3.0, -1.0, 2.0, &v, &dx, &dy, &dz);\n"
                  '    printf("%d %g %g %g %g\\n", s, v, dx, dy, dz);')
    assert lines == ["0 -1 -1 3 1"]
    done = subprocess.run([sys.executable, "-m", "tracer", "export", os.path.join(EXAMPLES, "fma.py") + ":fma",
                           "--args", "3.0", "-1.0", "2.0", "-o", str(out), "--target", "vax"], capture_output=True, text=True)
    assert done.returncode == 2 and "unknown target 'vax'" in done.stderr


MATH_POINTS = [(2.5, 1.25), (0.75, -0.5), (10.0, 3.0), (1.5, 7.0)]


@pytest.mark.parametrize("target", TARGETS)
def test_math_functions_on_other_targets(tmp_path, target):
    out = str(tmp_path / "out")
    export(math_zoo, 2.5, 1.25, out_dir=out, name="zoo", target=target, fuse_fma=False)
    body = "    double r;\n" + "\n".join(f'    if (zoo_math_zoo({c_double(x)}, {c_double(y)}, &r) != 0) return 1;\n'
                                         f'    printf("%a\\n", r);' for x, y in MATH_POINTS)
    got = [float.fromhex(line) for line in run_c(tmp_path, out, "zoo", body, target=target)]
    for (x, y), v in zip(MATH_POINTS, got):
        assert v == pytest.approx(math_zoo(x, y), rel=1e-14, abs=0)


@pytest.mark.skipif(NODE is None or not WASM_READY, reason="no Node.js, or no wasm-ld and wasi-libc (Debian: lld wasi-libc)")
def test_math_functions_in_wasm(tmp_path):
    import json
    exported = export(math_zoo, 2.5, 1.25, out_dir=str(tmp_path), name="zoo", target="wasm32", fuse_fma=False)
    script = tmp_path / "run.js"
    script.write_text(f"require({json.dumps(exported.loader)}).load().then(z => "
                      f"console.log(JSON.stringify({json.dumps(MATH_POINTS)}.map(p => z.math_zoo(...p)))));\n")
    got = json.loads(subprocess.run([NODE, str(script)], capture_output=True, text=True, check=True).stdout)
    for (x, y), v in zip(MATH_POINTS, got):     # wasi-libc's (musl's) math functions, not glibc's
        assert v == pytest.approx(math_zoo(x, y), rel=1e-14, abs=0)


def test_narrow_dtypes_through_the_loader(tmp_path):
    """uint8 images in and out, int16 and float16 arrays: the exported code wraps as NumPy does."""
    def brighten(img, k):
        return img + k, (img // 2).astype(np.int16), img.astype(np.float16) * 0.5
    img = np.array([[0, 100, 200], [250, 255, 7]], dtype=np.uint8)
    m = load(export(brighten, img, 60, out_dir=str(tmp_path), name="img"))
    for got, want in zip(m.brighten(img, 60), brighten(img, 60)):
        assert got.dtype == want.dtype and np.array_equal(got, want)


def test_linalg_is_refused_clearly(tmp_path):
    with pytest.raises(ExportError, match="np.linalg"):
        export(lambda a: np.linalg.inv(a), np.eye(3), out_dir=str(tmp_path))


def int_zoo(a, b, x, img):
    return a // b, a % b, a * b, a / b, int(x * 1e10), (img // 3).astype(np.int16), img.astype(np.float16) * 0.5


INT_POINTS = [(7, 3, 0.5), (-7, 3, -2.25), (7, -3, 1e5), (2**40 + 5, 12345, -3.75), (-(2**62), 7, 0.0), (1, 0, 1.0)]


@pytest.mark.parametrize("target", TARGETS)
def test_integers_and_narrow_dtypes_from_c(tmp_path, target):
    """64-bit division and conversions (compiler-rt's on armv7), overflow into NEEDS_PYTHON, float16 arrays."""
    out = str(tmp_path / "out")
    img = np.array([[0, 100, 200], [250, 255, 7]], dtype=np.uint8)
    export(int_zoo, 7, 3, 0.5, img, out_dir=out, name="iz", target=target)
    calls = "\n".join(
        f'    s = iz_int_zoo({a}LL, {b}LL, {c_double(x)}, img, shape, NULL, &q, &r, &p, &d, &n, &h, &f);\n'
        f'    printf("%d %lld %lld %lld %a %lld\\n", s, (long long)q, (long long)r, (long long)p, d, (long long)n);'
        for a, b, x in INT_POINTS)
    body = f'''
    uint8_t img[6] = {{{', '.join(map(str, img.ravel()))}}};
    int64_t shape[2] = {{2, 3}}, q = 0, r = 0, p = 0, n = 0;
    double d = 0;
    iz_i16_2d h;
    iz_f16_2d f;
    int s = iz_int_zoo(7, 3, 0.5, img, shape, NULL, &q, &r, &p, &d, &n, &h, &f);
    for (int i = 0; i < 6; i++) printf("%d %d\\n", h.data[i], f.data[i]);
    iz_free(h.owner);
    iz_free(f.owner);
{calls}
'''
    lines = run_c(tmp_path, out, "iz", body, target=target)
    halves, floats = (img // 3).astype(np.int16).ravel(), (img.astype(np.float16) * 0.5).ravel()
    assert lines[:6] == [f"{h} {f}" for h, f in zip(halves, floats.view(np.uint16))]
    for (a, b, x), line in zip(INT_POINTS, lines[6:]):
        s, *ints, d, n = line.split()
        if b == 0:
            assert s == "1"                                          # ZeroDivisionError
        elif not -2**63 <= a * b < 2**63:
            assert s == "8"                                          # NEEDS_PYTHON: an int beyond 64 bits
        else:
            assert (int(s), *map(int, ints), float.fromhex(d), int(n)) == (0, a // b, a % b, a * b, a / b, int(x * 1e10))
