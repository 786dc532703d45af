"""tracer: compile plain Python numeric functions to native code.

    from tracer import trace

    @trace
    def fma(x, y, z):
        return x * y + z

    fma(3.0, -1.0, 2.0)   # first call: capture (PEP 523), trace, optimize, compile; then native

See README.md and the design in DESIGN.md: capture -> interpreter -> IR -> passes -> codegen.
"""
from .api import trace
from .gradients import grad, value_and_grad, vjp
from .capture import capture, stats
from .errors import DataDependentControlFlow, TracerError, UnsupportedError
from .vectorize import vectorize
from .aot import export

__all__ = ["trace", "grad", "value_and_grad", "vjp", "vectorize", "export", "capture", "stats", "TracerError",
           "UnsupportedError", "DataDependentControlFlow"]
