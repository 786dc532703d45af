"""The target machine (the host's, for the JIT) and the LLVM passes run on a module."""
from __future__ import annotations

import functools
import threading

import llvmlite.binding as llvm
from llvmlite import ir as ll


@functools.cache
def initialize() -> None:
    """Make the host's target and assembly printer available to LLVM (once; llvm.initialize()
    is gone in llvmlite 0.50, the native target still needs these)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


@functools.cache
def host_has_avx512() -> bool:
    """Whether this CPU has AVX-512 (F): 512-bit vectors, and vscalefpd (llvm.ldexp in one
    instruction, codegen.numpy_math)."""
    initialize()
    return bool(llvm.get_host_cpu_features().get("avx512f"))


def host_target_machine(wide: bool = False) -> llvm.TargetMachine:
    """This CPU, by name and features (so llvm.fma.f64 is one vfmadd), at opt level 3. `wide`:
    its loops vectorized 512 bits wide where the CPU has AVX-512 (LLVM's tuning of Intel's CPUs
    prefers 256: faster for loops bound by memory, slower for those bound by arithmetic, np.exp's).

    The large code model with static relocations: every address in the object is an absolute
    64-bit relocation, so it links wherever it is mapped (tracer.native.load_object and the
    compile cache, LLJIT elsewhere) with no range to overflow; LLVM also keeps a loop's constants
    in registers under it (the small code model made np.log's SIMD loop 1.9x slower)."""
    return _host_target_machine(wide and host_has_avx512())


@functools.cache
def _host_target_machine(wide: bool) -> llvm.TargetMachine:
    initialize()
    features = llvm.get_host_cpu_features().flatten() + (",-prefer-256-bit" if wide else "")
    tm = llvm.Target.from_default_triple().create_target_machine(cpu=llvm.get_host_cpu_name(), features=features,
                                                                   opt=3, reloc="static", codemodel="large")
    _host_passes.append([tm, None, 0])
    return tm


def parse(module: ll.Module | str, tm: llvm.TargetMachine | None = None, context=None) -> llvm.ModuleRef:
    """Parse LLVM IR text (or an llvmlite module) for `tm`, and verify it. In LLVM's global
    context unless `context` is given (what is parsed there leaves a little in it for good)."""
    tm = tm or host_target_machine()
    ref = llvm.parse_assembly(str(module), context)
    ref.triple = tm.triple
    ref.data_layout = str(tm.target_data)
    ref.verify()
    return ref


def optimize(module: ll.Module | str | llvm.ModuleRef, tm: llvm.TargetMachine | None = None) -> llvm.ModuleRef:
    """The O3 pipeline of the new pass manager; returns the (parsed, optimized) module."""
    tm = tm or host_target_machine()
    ref = module if isinstance(module, llvm.ModuleRef) else parse(module, tm)
    with _passes_lock:
        passes = _pass_builder(tm)
        manager = passes.getModulePassManager()
        manager.run(ref, passes)
        # llvmlite 0.50 never frees a ModulePassManager (ObjectRef's empty _dispose shadows the
        # one that would): 30-60 KB per pipeline. Free it here, then detach so it is not freed twice.
        llvm.newpassmanagers.NewPassManager._dispose(manager)
        manager.detach()
    return ref


# llvmlite 0.50 never frees a pass builder's instrumentation callbacks (about 1.5 KB each), and
# each pipeline run adds one callback to them that outlives the run (it only looks at `optnone`
# functions, which are never made here). So a host target machine's pass builder serves a few runs,
# then is replaced: a process that compiles forever leaks a few bytes per compile, not 1.5 KB.
RUNS_PER_PASS_BUILDER = 16
_passes_lock = threading.Lock()
_host_passes: list = []      # [a host target machine, its pass builder, its runs so far]


def _pass_builder(tm: llvm.TargetMachine):
    """A pass builder for `tm` at O3 with both vectorizers (call with _passes_lock held)."""
    host = next((entry for entry in _host_passes if entry[0] is tm), None)
    if host is not None and host[1] is not None and host[2] < RUNS_PER_PASS_BUILDER:
        host[2] += 1
        return host[1]
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    options.loop_vectorization = True
    options.slp_vectorization = True
    passes = llvm.create_pass_builder(tm, options)
    if host is not None:
        host[1:] = [passes, 1]
    return passes


def assembly(module: ll.Module | str | llvm.ModuleRef, tm: llvm.TargetMachine | None = None) -> str:
    """The target's assembly text for a module (as it is: optimize first for O3 code)."""
    tm = tm or host_target_machine()
    ref = module if isinstance(module, llvm.ModuleRef) else parse(module, tm)
    return tm.emit_assembly(ref)
