"""IR -> IR transformations, each runnable, printable and testable alone.

    passes/      optimization: fold, simplify, cse, dce, fma fusion, loop fusion, in-place updates
    autodiff.py  reverse-mode differentiation: a function's gradient as a new IR function
"""
