"""Boundaries of exported libraries: what the ctypes loader accepts (ints past 64 bits, wrong types, NumPy
scalars) against CPython's own conversions, and array sizes whose byte count overflows, from a C program built
against the header and through ctypes."""
import array
import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tracer import export

CC = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler to link and run exported libraries")
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def affine(flag, x, n):
    return x * n + 1.0 if flag else x - n


def pick(x, n):      # n indexes a tuple: its value is used at compile time (pinned)
    return (x, 2.0 * x, 3.0 * x)[n]


def scale(x, a):
    return x * a


def total(m):
    return np.sum(m)


def load(exported):
    spec = importlib.util.spec_from_file_location(f"exported_{id(exported)}", exported.loader)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("boundaries"))
    exported = export([(affine, (True, 1.5, 3)), (pick, (1.0, 1)), (scale, (np.ones(3), 2.0)),
                       (total, (np.ones((2, 3)),))], out_dir=out, name="bounds", fuse_fma=False)
    return exported, load(exported)


def cpython_overflow_message() -> str:
    """CPython's own message for an int that does not fit a C integer."""
    with pytest.raises(OverflowError) as caught:
        array.array("l", [2**70])
    return str(caught.value)


def test_ints_past_64_bits_raise_overflow_error_instead_of_wrapping(lib):
    _, m = lib
    cpython = cpython_overflow_message()             # "Python int too large to convert to C long"
    for n in (2**70 + 5, 2**63, INT64_MIN - 1, 2**64 + 3, -(2**100)):
        with pytest.raises(OverflowError) as caught:
            m.affine(True, 1.5, n)
        message = str(caught.value)
        assert message.startswith("affine() argument n: ") and cpython.rsplit(" ", 1)[0] in message, message
    with pytest.raises(OverflowError, match=r"pick\(\) argument n"):    # 2**64 + 1 must not wrap to the pinned 1
        m.pick(2.0, 2**64 + 1)
    for n in (INT64_MAX, INT64_MIN, 0, -7):          # the limits themselves are exact
        assert m.affine(True, 1.5, n) == affine(True, 1.5, n)
        assert m.affine(False, 1.5, n) == affine(False, 1.5, n)
    assert m.pick(2.0, 1) == pick(2.0, 1)


def test_numpy_scalars_pass_as_their_python_values(lib):
    _, m = lib
    cases = [(np.bool_(True), np.float64(0.1), np.int64(7)), (np.bool_(False), np.float32(0.1), np.int32(-3)),
             (True, np.float16(2.5), np.uint8(200)), (np.True_, np.float64(-0.0), np.int64(INT64_MAX)),
             (False, 1e300, np.uint64(2**63 - 1)), (np.False_, np.float32(3.5), np.int16(-5))]
    for flag, x, n in cases:
        got = m.affine(flag, x, n)
        assert type(got) is float
        assert got == affine(bool(flag), float(x), int(n)), (flag, x, n)   # CPython on the exact values
    for n in (np.uint64(2**64 - 1), np.uint64(2**63)):
        with pytest.raises(OverflowError, match=r"affine\(\) argument n"):
            m.affine(True, 1.0, n)
    assert m.pick(np.float32(0.5), np.int64(1)) == pick(0.5, 1)
    assert np.array_equal(m.scale(np.arange(3.0), np.float64(0.5)), scale(np.arange(3.0), 0.5))


@pytest.mark.parametrize("call, message", [
    (lambda m: m.affine(True, "1.5", 3), r"affine\(\) argument x must be a float, not str"),
    (lambda m: m.affine(True, None, 3), r"affine\(\) argument x must be a float, not NoneType"),
    (lambda m: m.affine(True, 1, 3), r"affine\(\) argument x must be a float, not int"),
    (lambda m: m.affine(True, np.array(1.5), 3), r"affine\(\) argument x must be a float, not ndarray"),
    (lambda m: m.affine(True, np.longdouble(1.5), 3), r"affine\(\) argument x must be a float, not longdouble"),
    (lambda m: m.affine(1, 1.5, 3), r"affine\(\) argument flag must be a bool, not int"),
    (lambda m: m.affine(True, 1.5, 3.0), r"affine\(\) argument n must be an int, not float"),
    (lambda m: m.affine(True, 1.5, True), r"affine\(\) argument n must be an int, not bool"),
    (lambda m: m.affine(True, 1.5, np.float64(3.0)), r"affine\(\) argument n must be an int, not float64"),
    (lambda m: m.affine(True, 1.5, np.bool_(True)), r"affine\(\) argument n must be an int, not bool"),
    (lambda m: m.scale(np.ones(3, np.float32), 2.0),
     r"scale\(\) argument x must be a 1-d numpy.ndarray of float64, not a 1-d array of float32"),
    (lambda m: m.scale(np.ones((3, 1)), 2.0),
     r"scale\(\) argument x must be a 1-d numpy.ndarray of float64, not a 2-d array of float64"),
    (lambda m: m.scale(None, 2.0), r"scale\(\) argument x must be a 1-d numpy.ndarray of float64, not NoneType"),
    (lambda m: m.scale([1.0, 2.0], 2.0), r"scale\(\) argument x must be a 1-d numpy.ndarray of float64, not list"),
    (lambda m: m.total(np.ones(4)), r"total\(\) argument m must be a 2-d numpy.ndarray of float64, not a 1-d"),
])
def test_wrong_argument_types_name_the_argument(lib, call, message):
    with pytest.raises(TypeError, match=message):
        call(lib[1])


# sizes whose byte count (the product of the sizes other than 0, times 8) does not fit in int64_t
OVERFLOWING_1D = [1 << 62, 1 << 61, (1 << 60) + 1, INT64_MAX]
OVERFLOWING_2D = [(1 << 32, 1 << 32), (1 << 31, 1 << 31), (3, 1 << 62), (1 << 62, 0), (0, 1 << 62), (INT64_MAX, 2)]


def test_overflowing_array_sizes_from_c_are_bad_arguments(tmp_path, lib):
    exported, _ = lib
    out = os.path.dirname(exported.library)
    rows = "\n".join(f"    {{ int64_t n[1] = {{INT64_C({n})}}; report(bounds_scale(buf, n, NULL, 2.0, &r)); }}"
                     for n in OVERFLOWING_1D)
    rows += "\n" + "\n".join(f"    {{ int64_t n[2] = {{INT64_C({a}), INT64_C({b})}}; report(bounds_total(buf, n, NULL, &t)); }}"
                             for a, b in OVERFLOWING_2D)
    source = tmp_path / "main.c"
    source.write_text(textwrap.dedent('''\
        #include <stdio.h>
        #include "bounds.h"
        static void report(int status) { printf("%d|%s\\n", status, bounds_last_error()); }
        int main(void) {
            double buf[4] = {1.0, 2.0, 3.0, 4.0}, t;
            bounds_f64_1d r;
        ''') + rows + textwrap.dedent('''
            int64_t four[1] = {4}, two_by_two[2] = {2, 2};
            report(bounds_scale(buf, four, NULL, 2.0, &r));
            printf("%g %g\\n", r.data[0], r.data[3]);
            bounds_free(r.owner);
            report(bounds_total(buf, two_by_two, NULL, &t));
            printf("%g\\n", t);
            return 0;
        }
        '''))
    program = tmp_path / "main"
    subprocess.run([CC, "-std=c99", "-Wall", "-Werror", "-o", str(program), str(source), f"-I{out}", f"-L{out}",
                    "-lbounds", f"-Wl,-rpath,{out}", "-lm"], check=True)
    done = subprocess.run([str(program)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"the C program died with status {done.returncode}: {done.stderr}"
    lines = done.stdout.splitlines()
    for line, what in zip(lines, ["x"] * len(OVERFLOWING_1D) + ["m"] * len(OVERFLOWING_2D)):
        fn = "scale" if what == "x" else "total"
        assert line == f"5|{fn}: {what}_shape: the array's size in bytes overflows the address space", line
    rest = lines[len(OVERFLOWING_1D) + len(OVERFLOWING_2D):]
    assert rest == ["0|", "2 8", "0|", f"{total(np.arange(1.0, 5.0).reshape(2, 2)):g}"]


def test_overflowing_array_sizes_through_ctypes_are_bad_arguments(lib):
    exported, _ = lib
    # in a child process: before the check, these calls crash the process that makes them
    script = textwrap.dedent(f'''
        import ctypes
        lib = ctypes.CDLL({exported.library!r})
        lib.bounds_last_error.restype = ctypes.c_char_p
        P = ctypes.c_void_p
        lib.bounds_scale.argtypes = [P, P, P, ctypes.c_double, P]
        lib.bounds_total.argtypes = [P, P, P, P]
        buf = (ctypes.c_double * 4)(1.0, 2.0, 3.0, 4.0)
        out = (ctypes.c_char * 64)()
        for n in {OVERFLOWING_1D!r}:
            status = lib.bounds_scale(buf, (ctypes.c_int64 * 1)(n), None, 2.0, out)
            print(status, lib.bounds_last_error().decode())
        for a, b in {OVERFLOWING_2D!r}:
            status = lib.bounds_total(buf, (ctypes.c_int64 * 2)(a, b), None, out)
            print(status, lib.bounds_last_error().decode())
    ''')
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"the process died with status {done.returncode}: {done.stderr}"
    lines = done.stdout.splitlines()
    assert len(lines) == len(OVERFLOWING_1D) + len(OVERFLOWING_2D)
    assert all(line.startswith("5 ") and "size in bytes overflows" in line for line in lines), lines


NODE = shutil.which("node")
WASM_READY = shutil.which("wasm-ld") is not None and os.path.exists("/usr/lib/wasm32-wasi/libc.a")


@pytest.mark.skipif(NODE is None or not WASM_READY, reason="no Node.js, or no wasm-ld and wasi-libc (Debian: lld wasi-libc)")
def test_wasm32_array_sizes_past_its_address_space_are_bad_arguments(tmp_path):
    import json
    exported = export(scale, np.ones(3), 2.0, out_dir=str(tmp_path), name="w", target="wasm32")
    script = tmp_path / "run.js"
    # sizes whose byte count passes 2**31 - 1 (a 32-bit ptrdiff_t), with 4 doubles of data
    script.write_text(f"require({json.dumps(exported.loader)}).load().then(w => {{\n"
                      "  for (const n of [2 ** 28, 2 ** 29, 2 ** 40, 2 ** 61]) {\n"
                      "    try { w.scale({data: new Float64Array(4), shape: [n]}, 2.0); console.log('no error'); }\n"
                      "    catch (e) { console.log(`${e.code}|${e.message}`); }\n"
                      "  }\n"
                      "  console.log(Array.from(w.scale({data: new Float64Array([1, 2, 3, 4]), shape: [4]}, 2.0).data).join(' '));\n"
                      "});\n")
    done = subprocess.run([NODE, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:4] == ["5|scale: x_shape: the array's size in bytes overflows the address space"] * 4, lines
    assert lines[4] == "2 4 6 8"
