"""A wasm32 export (`<name>.wasm`) run outside JavaScript: under wasmtime (PyPI: wasmtime, in the
test extra), from Python through its embedding API, as the JS loaders run it (tracer.aot.wasm).

The module imports nothing (malloc and the math functions are wasi-libc's, linked in), so it is
instantiated with no imports; WASI is defined anyway if a later module asks for it, and the
imports are checked to be empty, as the loaders (which pass `{}`) need. Arguments and results
travel through the module's memory as the loaders move them: doubles and int64 sizes by value,
arrays in buffers from the module's malloc (data, an int64 shape, NULL strides), a result array
as `{u32 data, u32 owner, i64 shape[rank]}` whose owner goes back to `<prefix>free`, and a
failure as a status code with `<prefix>last_error()`'s message. fma, its gradient and a sum over
an array agree with the JIT (and CPython) bit for bit; the MLP with the JIT within an ulp or so
(wasi-libc's exp is not glibc's).

Skips without wasm-ld and wasi-libc (Debian: lld wasi-libc) or without wasmtime.
"""
from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from test_export import POINTS, WASM_READY, checked_sqrt, div, fma, mlp, small_mlp_weights  # mlp: examples/mlp_numpy.py

from codegen.export import CODES
from tracer import export, trace

wasmtime = pytest.importorskip("wasmtime", reason="no wasmtime (pip install wasmtime)")
pytestmark = pytest.mark.skipif(not WASM_READY, reason="no wasm-ld and wasi-libc (Debian: lld wasi-libc)")

NULL = 0


def total(x):                # a reduction over an array: the same bits wherever it runs
    return np.sum(x * x) + np.sum(x)


class Module:
    """An instance of an exported `.wasm` in a wasmtime Store, and the loaders' ways of calling it."""

    def __init__(self, path: str, prefix: str):
        engine = wasmtime.Engine()
        self.store = wasmtime.Store(engine)
        module = wasmtime.Module.from_file(engine, path)
        self.imports = [(i.module, i.name) for i in module.imports]
        linker = wasmtime.Linker(engine)
        if any(m.startswith("wasi") for m, _ in self.imports):
            linker.define_wasi()
            self.store.set_wasi(wasmtime.WasiConfig())
        self.exports = linker.instantiate(self.store, module).exports(self.store)
        self.memory = self.exports["memory"]
        self.prefix = prefix
        self.temps: list[int] = []

    def call(self, name: str, *args) -> int:
        return self.exports[name](self.store, *args)

    def read(self, address: int, size: int) -> bytes:
        return bytes(self.memory.read(self.store, address, address + size))

    def alloc(self, size: int) -> int:
        """A buffer from the module's malloc, freed by release()."""
        pointer = self.call("malloc", max(size, 8))
        assert pointer != NULL, "out of memory in the wasm module"
        self.temps.append(pointer)
        return pointer

    def release(self) -> None:
        while self.temps:
            self.call("free", self.temps.pop())

    def array(self, a: np.ndarray) -> list[int]:
        """The three arguments of an array: its data, its shape and NULL strides (C order)."""
        a = np.ascontiguousarray(a, dtype=np.float64)
        data, shape = self.alloc(a.nbytes), self.alloc(8 * a.ndim)
        self.memory.write(self.store, a.tobytes(), data)
        self.memory.write(self.store, struct.pack(f"<{a.ndim}q", *a.shape), shape)
        return [data, shape, NULL]

    def double(self, address: int) -> float:
        return struct.unpack("<d", self.read(address, 8))[0]

    def result_array(self, address: int, rank: int) -> np.ndarray:
        """The array result at `address` ({u32 data, u32 owner, i64 shape[rank]}), its owner freed."""
        data, owner = struct.unpack("<II", self.read(address, 8))
        shape = struct.unpack(f"<{rank}q", self.read(address + 8, 8 * rank))
        count = math.prod(shape)
        values = np.frombuffer(self.read(data, 8 * count), dtype="<f8").reshape(shape).copy()
        self.call(f"{self.prefix}free", owner)
        return values

    def last_error(self) -> str:
        address = self.call(f"{self.prefix}last_error")
        end = self.memory.data_len(self.store)
        return self.read(address, min(4096, end - address)).split(b"\0", 1)[0].decode()

    def scalar_call(self, name: str, *args: float, results: int = 1) -> tuple[int, list[float]]:
        """Call `<prefix><name>` with double arguments and `results` double out pointers."""
        outs = [self.alloc(8) for _ in range(results)]
        try:
            status = self.call(self.prefix + name, *args, *outs)
            return status, [self.double(p) for p in outs] if status == 0 else []
        finally:
            self.release()


def bits(x: float) -> str:
    return struct.pack(">d", x).hex()


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """net.wasm (fma unfused and its gradient, fma fused, mlp, total, div, checked_sqrt) and the
    MLP's example weights."""
    folder = tmp_path_factory.mktemp("wasmtime")
    weights = small_mlp_weights()
    x = np.random.default_rng(4).random((3, 20))
    export([(fma, (3.0, -1.0, 2.0)), (mlp, (*weights, x)), (total, (np.ones(5),)), (div, (1.0, 2.0)),
            (checked_sqrt, (2.0,))], out_dir=str(folder / "net"), name="net", grad=[fma], target="wasm32",
           fuse_fma=False)
    export(fma, 3.0, -1.0, 2.0, out_dir=str(folder / "fused"), name="fused", target="wasm32")
    return Module(str(folder / "net" / "net.wasm"), "net_"), Module(str(folder / "fused" / "fused.wasm"), "fused_"), weights


def test_the_module_needs_no_imports(exported):
    net, fused, _ = exported
    assert net.imports == [] and fused.imports == []     # the JS loaders instantiate it with {}
    names = set(net.exports)
    assert {"memory", "malloc", "free", "net_last_error", "net_free", "net_fma", "net_fma_grad", "net_mlp"} <= names


def test_fma_and_its_gradient_are_the_jits_bits(exported):
    net, fused, _ = exported
    jit, jit_fused = trace(fma, fuse_fma=False), trace(fma)
    for x, y, z in POINTS:
        status, [value] = net.scalar_call("fma", x, y, z)
        assert status == 0 and bits(value) == bits(jit(x, y, z)) == bits(x * y + z)       # CPython's bits
        status, [value, dx, dy, dz] = net.scalar_call("fma_grad", x, y, z, results=4)
        assert status == 0 and bits(value) == bits(x * y + z)
        assert [bits(dx), bits(dy), bits(dz)] == [bits(y), bits(x), bits(1.0)]
        status, [value] = fused.scalar_call("fma", x, y, z)
        assert status == 0 and bits(value) == bits(jit_fused(x, y, z))


@pytest.mark.parametrize("n", [2, 7, 1000])      # the export is specialized for n != 1
def test_a_sum_over_an_array_is_the_jits_bits(exported, n):
    net, _, _ = exported
    x = np.random.default_rng(n).normal(size=n)
    try:
        out = net.alloc(8)
        assert net.call("net_total", *net.array(x), out) == 0
        got = net.double(out)
    finally:
        net.release()
    assert bits(got) == bits(trace(total)(x))
    assert got == pytest.approx(total(x), rel=1e-14)


def test_the_mlp_forward_agrees_with_the_jit(exported):
    net, _, weights = exported
    x = np.random.default_rng(5).random((4, 20))          # other inputs than the example's
    try:
        out = net.alloc(8 + 8 * 2)
        args = [a for w in (*weights, x) for a in net.array(w)]
        assert net.call("net_mlp", *args, out) == 0, net.last_error()
        got = net.result_array(out, 2)
    finally:
        net.release()
    expected = trace(mlp)(*weights, x)
    assert got.shape == expected.shape == (4, 3)
    assert np.allclose(got, expected, rtol=1e-15, atol=0)          # wasi-libc's exp, within an ulp or so
    assert np.allclose(got.sum(axis=1), 1.0, rtol=1e-14)


def test_failures_are_status_codes_and_messages(exported):
    net, _, weights = exported
    zero_division, shape_mismatch = CODES["ZERO_DIVISION"], CODES["SHAPE_MISMATCH"]
    assert net.scalar_call("div", 1.0, 0.0) == (zero_division[0], [])
    assert zero_division[1] is ZeroDivisionError
    assert net.last_error() == "div: ZeroDivisionError: float division by zero"
    assert net.scalar_call("div", 1.0, 4.0) == (0, [0.25])
    assert net.last_error() == ""                                     # cleared by a success
    assert net.call("net_div", 1.0, 4.0, NULL) == CODES["BAD_ARGUMENT"][0]
    assert net.last_error().startswith("div: the output pointer out is NULL")
    status, _ = net.scalar_call("checked_sqrt", -1.0)
    assert status == CODES["RAISED"][0] and net.last_error().endswith("ValueError: x must not be negative")
    try:
        out = net.alloc(8 + 8 * 2)
        args = [a for w in (*weights, np.ones((3, 19))) for a in net.array(w)]
        status = net.call("net_mlp", *args, out)
    finally:
        net.release()
    assert (status, shape_mismatch[1]) == (shape_mismatch[0], ValueError)
    assert net.last_error().startswith("mlp:"), net.last_error()
