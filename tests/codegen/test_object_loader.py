"""The loader of relocatable objects (tracer/csrc/objload.c): objects LLVM emits for this host
(reloc=pic, codemodel=small), loaded without LLVM and called through ctypes: calls to libm and to
symbols given by the caller, jump tables, constant pools, tables of pointers, state that persists,
the GOT, stubs for far calls, .bss; errors for what is missing; malformed images never crash.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
import platform
import random
import struct
import sys

import pytest

if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
    pytest.skip("the object loader is for Linux x86-64", allow_module_level=True)

import llvmlite.binding as llvm

from codegen.target import initialize
from tracer.native import LoadedObject, load_object

R_X86_64_64, R_X86_64_PC32, R_X86_64_PLT32 = 1, 2, 4
GOTPCREL_TYPES = {9, 41, 42}        # GOTPCREL, GOTPCRELX, REX_GOTPCRELX

MAIN_IR = r"""
declare double @sin(double)
declare double @exp(double)
declare i64 @callback(i64)
@PyFloat_Type = external global i8
@maybe_absent = extern_weak global i8

@counter = global i64 0
@private_counter = internal global i64 100
@big = global [1048576 x i64] zeroinitializer
@one = internal constant i64 11
@two = constant i64 22
@table = constant [3 x ptr] [ptr @one, ptr @two, ptr @twice]

define i64 @twice(i64 %x) noinline {
  %r = mul i64 %x, 2
  ret i64 %r
}

define i64 @twice_plus_one(i64 %x) {
  %t = call i64 @twice(i64 %x)
  %r = add i64 %t, 1
  ret i64 %r
}

define double @sin_exp(double %x) {
  %s = call double @sin(double %x)
  %e = call double @exp(double %s)
  ret double %e
}

define double @poly(double %x) {
  %a = fmul double %x, 3.25
  %b = fadd double %a, 0.1
  %c = fdiv double %b, 7.5
  ret double %c
}

define i64 @pick(i64 %x, i64 %y) {
entry:
  switch i64 %x, label %other [i64 0, label %c0 i64 1, label %c1 i64 2, label %c2 i64 3, label %c3
                               i64 4, label %c4 i64 5, label %c5 i64 6, label %c6 i64 7, label %c7]
c0:
  %r0 = mul i64 %y, 3
  ret i64 %r0
c1:
  %r1 = add i64 %y, 7
  ret i64 %r1
c2:
  %r2 = xor i64 %y, 5
  ret i64 %r2
c3:
  %r3 = sub i64 %y, 11
  ret i64 %r3
c4:
  %r4 = mul i64 %y, %y
  ret i64 %r4
c5:
  %r5 = shl i64 %y, 2
  ret i64 %r5
c6:
  %r6 = sdiv i64 %y, 3
  ret i64 %r6
c7:
  %r7 = srem i64 %y, 5
  ret i64 %r7
other:
  ret i64 -1
}

define i64 @table_value(i64 %i) {
  %p = getelementptr [3 x ptr], ptr @table, i64 0, i64 %i
  %q = load ptr, ptr %p
  %v = load i64, ptr %q
  ret i64 %v
}

define i64 @table_call(i64 %i, i64 %x) {
  %p = getelementptr [3 x ptr], ptr @table, i64 0, i64 %i
  %f = load ptr, ptr %p
  %r = call i64 %f(i64 %x)
  ret i64 %r
}

define i64 @count() {
  %v = load i64, ptr @counter
  %n = add i64 %v, 1
  store i64 %n, ptr @counter
  ret i64 %n
}

define i64 @count_private() {
  %v = load i64, ptr @private_counter
  %n = add i64 %v, 1
  store i64 %n, ptr @private_counter
  ret i64 %n
}

define i64 @call_back(i64 %x) {
  %r = call i64 @callback(i64 %x)
  %s = add i64 %r, 1
  ret i64 %s
}

define ptr @float_type() {
  ret ptr @PyFloat_Type
}

define ptr @absent() {
  ret ptr @maybe_absent
}

define void @big_set(i64 %i, i64 %v) {
  %p = getelementptr [1048576 x i64], ptr @big, i64 0, i64 %i
  store i64 %v, ptr %p
  ret void
}

define i64 @big_get(i64 %i) {
  %p = getelementptr [1048576 x i64], ptr @big, i64 0, i64 %i
  %v = load i64, ptr %p
  ret i64 %v
}
"""

MAIN_EXPORTS = ("twice", "twice_plus_one", "sin_exp", "poly", "pick", "table_value", "table_call", "count",
                "count_private", "call_back", "float_type", "absent", "big_set", "big_get", "counter", "big")

I64_I64 = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)
F64_F64 = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)


@functools.cache
def target_machine():
    initialize()
    return llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=2, reloc="pic",
        codemodel="small")


@functools.cache
def emit(ir_text: str) -> bytes:
    """The relocatable object LLVM emits for `ir_text`, as the project will store it."""
    tm = target_machine()
    module = llvm.parse_assembly(ir_text)
    module.triple = tm.triple
    module.data_layout = str(tm.target_data)
    module.verify()
    return bytes(tm.emit_object(module))


def relocation_types(image: bytes) -> set[int]:
    """The relocation types in the object's RELA sections (a small ELF reader of its own)."""
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", image, 0x3A)
    types = set()
    for i in range(shnum):
        _, sh_type, _, _, offset, size, _, _, _, _ = struct.unpack_from("<IIQQQQIIQQ", image, shoff + i * shentsize)
        if sh_type == 4:                # SHT_RELA
            types |= {struct.unpack_from("<Q", image, offset + k + 8)[0] & 0xFFFFFFFF for k in range(0, size, 24)}
    return types


@pytest.fixture(scope="module")
def callback():
    return I64_I64(lambda x: x * 10)


def load_main(callback, symbols=None):
    symbols = {"callback": ctypes.cast(callback, ctypes.c_void_p).value, **(symbols or {})}
    loaded, addresses = load_object(emit(MAIN_IR), symbols, MAIN_EXPORTS)
    return loaded, dict(zip(MAIN_EXPORTS, addresses))


@pytest.fixture(scope="module")
def main(callback):
    return load_main(callback)


def test_the_object_uses_the_relocations_under_test():
    types = relocation_types(emit(MAIN_IR))
    assert {R_X86_64_64, R_X86_64_PC32, R_X86_64_PLT32} <= types
    assert types & GOTPCREL_TYPES


def test_exports_lie_in_the_mapping(main):
    loaded, at = main
    assert isinstance(loaded, LoadedObject)
    assert loaded.size >= 8 << 20           # the .bss
    assert all(loaded.address <= a < loaded.address + loaded.size for a in at.values())


def protection_at(address: int) -> str:
    """The permissions of the mapping of this process that holds `address` (/proc/self/maps)."""
    with open("/proc/self/maps") as f:
        for line in f:
            span, perms = line.split()[:2]
            lo, hi = (int(x, 16) for x in span.split("-"))
            if lo <= address < hi:
                return perms
    raise AssertionError(f"{address:#x} is not mapped")


def test_protections(main):
    loaded, at = main
    assert protection_at(at["twice"]) == "r-xp"
    assert protection_at(at["counter"]) == protection_at(at["big"]) == "rw-p"
    perms = {protection_at(a) for a in range(loaded.address, loaded.address + loaded.size, 4096)}
    assert perms <= {"r-xp", "r--p", "rw-p"}


def test_calls_into_libm(main):
    f = F64_F64(main[1]["sin_exp"])
    for x in (0.0, 0.5, -1.25, 3.0, 100.0):
        assert f(x) == math.exp(math.sin(x))


def test_symbols_come_first(callback):
    cos = ctypes.cast(ctypes.CDLL(ctypes.util.find_library("m")).cos, ctypes.c_void_p).value
    loaded, at = load_main(callback, {"sin": cos})
    assert F64_F64(at["sin_exp"])(0.75) == math.exp(math.cos(0.75))


def test_constant_pool(main):
    f = F64_F64(main[1]["poly"])
    for x in (0.0, 1.5, -2.0, 1e10):
        assert f(x) == (x * 3.25 + 0.1) / 7.5


def test_jump_table(main):
    f = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)(main[1]["pick"])
    y = 23
    expected = [y * 3, y + 7, y ^ 5, y - 11, y * y, y << 2, y // 3, y % 5]
    assert [f(x, y) for x in range(8)] == expected
    assert f(8, y) == f(-1, y) == f(1000, y) == -1


def test_table_of_pointers(main):
    at = main[1]
    assert [I64_I64(at["table_value"])(i) for i in (0, 1)] == [11, 22]
    table_call = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)(at["table_call"])
    assert table_call(2, 21) == 42


def test_internal_calls(main):
    at = main[1]
    assert I64_I64(at["twice"])(5) == 10
    assert I64_I64(at["twice_plus_one"])(5) == 11


def test_call_to_a_given_symbol(main):
    assert I64_I64(main[1]["call_back"])(4) == 41


def test_external_data_through_the_got(main):
    at = main[1]
    assert ctypes.CFUNCTYPE(ctypes.c_void_p)(at["float_type"])() == id(float)
    assert ctypes.CFUNCTYPE(ctypes.c_void_p)(at["absent"])() is None     # weak, missing: 0


def test_state_persists_and_copies_are_independent(callback):
    first, at1 = load_main(callback)
    second, at2 = load_main(callback)
    count1, count2 = ctypes.CFUNCTYPE(ctypes.c_int64)(at1["count"]), ctypes.CFUNCTYPE(ctypes.c_int64)(at2["count"])
    assert [count1() for _ in range(3)] == [1, 2, 3]
    assert count2() == 1
    assert ctypes.c_int64.from_address(at1["counter"]).value == 3
    private1 = ctypes.CFUNCTYPE(ctypes.c_int64)(at1["count_private"])
    private2 = ctypes.CFUNCTYPE(ctypes.c_int64)(at2["count_private"])
    assert [private1(), private1(), private2()] == [101, 102, 101]


def test_bss(main):
    at = main[1]
    big_set = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64)(at["big_set"])
    big_get = I64_I64(at["big_get"])
    assert big_get(0) == big_get(1048575) == big_get(500000) == 0
    big_set(1048575, -7)
    assert big_get(1048575) == -7
    assert ctypes.c_int64.from_address(at["big"] + 8 * 1048575).value == -7


FAR_IR = r"""
declare i64 @far_function()
define i64 @call_far() {
  %r = call i64 @far_function()
  %s = add i64 %r, 1
  ret i64 %s
}
"""

FAR_DATA_IR = r"""
@far_data = external dso_local global i64
define i64 @read_far() {
  %v = load i64, ptr @far_data
  ret i64 %v
}
"""


@pytest.fixture(scope="module")
def far_code():
    """A page at a low address (far from the loader's mappings) holding `mov eax, 42; ret`."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    page = libc.mmap(0x20000000, 4096, 7, 0x22, -1, 0)     # PROT_READ|WRITE|EXEC, MAP_PRIVATE|ANONYMOUS
    if page in (None, ctypes.c_void_p(-1).value):
        pytest.skip("no page for far code")
    ctypes.memmove(page, b"\xb8\x2a\x00\x00\x00\xc3", 6)
    yield page
    libc.munmap(page, 4096)


def test_a_far_call_goes_through_a_stub(far_code):
    loaded, (call_far,) = load_object(emit(FAR_IR), {"far_function": far_code}, ("call_far",))
    if abs(call_far - far_code) < 1 << 31:
        pytest.skip("the far code is near the mapping")
    assert ctypes.CFUNCTYPE(ctypes.c_int64)(call_far)() == 43


def test_far_data_does_not_fit(far_code):
    assert R_X86_64_PC32 in relocation_types(emit(FAR_DATA_IR))
    with pytest.raises(ImportError, match="far_data"):
        load_object(emit(FAR_DATA_IR), {"far_data": far_code}, ("read_far",))


def test_a_missing_symbol():
    image = emit("declare i64 @tracer_test_no_such_symbol(i64)\n"
                 "define i64 @f(i64 %x) {\n  %r = call i64 @tracer_test_no_such_symbol(i64 %x)\n  ret i64 %r\n}\n")
    with pytest.raises(ImportError, match="tracer_test_no_such_symbol"):
        load_object(image, {}, ("f",))
    loaded, (f,) = load_object(image, {"tracer_test_no_such_symbol": id(None)}, ("f",))
    assert f


def test_a_missing_export(main):
    with pytest.raises(ImportError, match="no_such_export"):
        load_object(emit(MAIN_IR), {"callback": 1}, ("twice", "no_such_export"))
    with pytest.raises(ImportError, match="one"):           # internal: not exported
        load_object(emit(MAIN_IR), {"callback": 1}, ("one",))


def test_arguments():
    with pytest.raises(TypeError):
        load_object(bytearray(emit(FAR_IR)), {"far_function": 1}, ())
    with pytest.raises(TypeError):
        load_object(emit(FAR_IR), {"far_function": 1}, (1,))
    with pytest.raises(TypeError):
        LoadedObject()
    with pytest.raises(ValueError, match="malformed object"):
        load_object(b"", {}, ())


SMALL_IR = r"""
declare double @sin(double)
@counter = global i64 0
@ptrs = constant [2 x ptr] [ptr @counter, ptr @f]
define double @f(double %x) {
  %s = call double @sin(double %x)
  %t = fmul double %s, 1.5
  %v = load i64, ptr @counter
  %n = add i64 %v, 1
  store i64 %n, ptr @counter
  ret double %t
}
"""


def load_leniently(image: bytes) -> None:
    try:
        load_object(image, {}, ("f",))
    except (ValueError, ImportError):
        pass


def test_truncated_images():
    image = emit(SMALL_IR)
    load_object(image, {}, ("f",))
    for n in range(len(image)):
        with pytest.raises((ValueError, ImportError)):
            load_object(image[:n], {}, ("f",))


def test_mutated_images():
    image = emit(SMALL_IR)
    shoff, = struct.unpack_from("<Q", image, 0x28)
    header_bytes = list(range(64)) + list(range(shoff, len(image)))
    rng = random.Random(1234)
    for trial in range(4000):
        mutated = bytearray(image)
        positions = header_bytes if trial % 4 else range(len(image))
        for _ in range(rng.randint(1, 4)):
            mutated[rng.choice(positions)] = rng.randrange(256) if trial % 3 else rng.choice((0, 0xFF, 0x80, 0x7F))
        load_leniently(bytes(mutated))


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_memory_is_returned(callback):
    image = emit(MAIN_IR)
    symbols = {"callback": ctypes.cast(callback, ctypes.c_void_p).value}
    for _ in range(100):
        load_object(image, symbols, MAIN_EXPORTS)
    before = rss()
    for _ in range(2000):
        loaded, at = load_object(image, symbols, MAIN_EXPORTS)
        del loaded
    assert rss() - before < 8 << 20
