"""Builds the C extension tracer._frame; everything else is in pyproject.toml."""
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "tracer._frame",
            sources=["tracer/_frame.c", "tracer/_dispatch.c", "tracer/_gather.c", "tracer/_test_entries.c"],
            depends=["tracer/_dispatch.h", "tracer/_gather.h"],
            # Hidden visibility: only PyInit__frame is exported, and calls
            # between the two C files are direct, not through the PLT.
            extra_compile_args=["-std=c99", "-Wall", "-fvisibility=hidden"],
        )
    ],
)
