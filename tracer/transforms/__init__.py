"""IR -> IR transformations, each runnable, printable and testable alone.

    passes/       optimization: fold, simplify, cse, dce, fma fusion, loop fusion, in-place updates
    autodiff.py   reverse-mode differentiation: a function's gradient as a new IR function
    sym.py        the IR-building values derivative rules are written with (`Sym`, `BlockEmitter`)
    vectorize.py  a function of floats as one `map` over arrays of its arguments
"""
