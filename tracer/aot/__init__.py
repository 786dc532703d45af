"""Ahead-of-time export: functions compiled once into a shared library with a plain C ABI, a C
header that documents every symbol, and loaders (ctypes for Python, an ES module for wasm32).

    export.py     `tracer.export`: specialize, lower through codegen.export, write the files
    toolchain.py  compilers and linkers for each target, and ExportError
    wasm.py       the wasm32 module and its JavaScript loader
"""
