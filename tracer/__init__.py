"""tracer: compile plain Python numeric functions to native code.

    from tracer import trace

    @trace
    def fma(x, y, z):
        return x * y + z

    fma(3.0, -1.0, 2.0)   # first call: capture (PEP 523), trace, optimize, compile; then native

See README.md and the design in DESIGN.md: capture -> interpreter -> IR -> passes -> codegen.
"""
from tracer.api import trace
from tracer.gradients import grad, value_and_grad, vjp
from tracer.capture import capture, stats
from tracer.errors import DataDependentControlFlow, TracerError, UnsupportedError
from tracer.vectorize import vectorize
from tracer.aot import export

__all__ = ["trace", "grad", "value_and_grad", "vjp", "vectorize", "export", "capture", "stats", "TracerError",
           "UnsupportedError", "DataDependentControlFlow"]
