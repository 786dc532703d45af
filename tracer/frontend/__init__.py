"""The front end: from a Python call to a typed IR function.

    capture.py      the PEP 523 hook's Python side: hand a call's frame to the tracer
    interpreter.py  the symbolic bytecode interpreter (opcodes/ holds its handlers by family)
    flow.py         the bytecode's control-flow graph: where branches meet, loops
    branches.py     data-dependent control flow: both sides of a branch, loops as IR loops
    states.py       the frame states branches and loops fork, and how their values merge
    iteration.py    when a loop unrolls, and RangeIter, what a loop compiled to a loop op iterates
    generators.py   generators made by traced code, run lazily or folded into sum()
    builder.py      emits IR with Python's numeric semantics
    objects.py      the symbolic stand-ins on the interpreter's stack (lists, objects, functions, arrays)
    arrays.py       NumPy arrays in traced code
    gathered.py     long Python lists held in arrays, so loops over them stay loops
    library.py      builtins and `math` inside a trace
    numpy_api.py    NumPy functions and array methods inside a trace
    sources.py      where each traced input comes from, and the guards on it
    loader.py       the generated function that checks guards and loads inputs per call
"""
