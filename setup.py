"""Builds the C extension tracer.native (the PEP 523 hook, the dispatcher, the list gatherer,
what debuggers and tracebacks see); everything else is in pyproject.toml."""
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "tracer.native",
            sources=["tracer/csrc/frame.c", "tracer/csrc/dispatch.c", "tracer/csrc/native_entry.c",
                     "tracer/csrc/gather.c", "tracer/csrc/tools.c", "tracer/csrc/released.c", "tracer/csrc/pool.c",
                     "tracer/csrc/objload.c", "tracer/csrc/runtime.c"],
            depends=["tracer/csrc/dispatch.h", "tracer/csrc/native_entry.h", "tracer/csrc/gather.h",
                     "tracer/csrc/tools.h", "tracer/csrc/released.h", "tracer/csrc/pool.h",
                     "tracer/csrc/objload.h", "tracer/csrc/runtime.h"],
            # Hidden visibility: only PyInit_native is exported, and calls
            # between the C files are direct, not through the PLT.
            extra_compile_args=["-std=c99", "-Wall", "-fvisibility=hidden"],
        )
    ],
)
