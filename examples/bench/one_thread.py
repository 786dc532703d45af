"""Imported by the benchmarks before NumPy, JAX or PyTorch: every peer runs on one thread, as
shared/BENCHMARKS.md specifies (OpenBLAS would otherwise use every core for NumPy's matrix
products, and XLA its thread pool), so the figures compare code, not core counts. The tracer's
compile cache is off, so that compile times are compiles (examples/bench/startup.py measures the
cache). A variable already set in the environment is left as it is."""
import os

os.environ.setdefault("TRACER_CACHE", "0")

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
