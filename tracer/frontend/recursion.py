"""Recursive calls in a trace: unrolled as far as they go, with their int arguments pinned."""
from __future__ import annotations

import dis
import functools

from tracer.frontend.builder import is_traced
from tracer.ir import F64


@functools.lru_cache(maxsize=1024)
def names_itself(code) -> bool:
    """Whether a function calls itself by name: a closure variable or a global of its own name."""
    return code.co_name in code.co_freevars or any(
        i.opname == "LOAD_GLOBAL" and i.argval == code.co_name for i in dis.get_instructions(code))


def unrolled_arguments(tracer, code, name: str, args, kwargs: dict, cells: dict, limit: int):
    """The arguments of a call to inline. Those of a recursive call (of a function already being
    inlined, or of one that names itself) are made constants (pinning the int arguments they come
    from), so that the recursion unrolls in the trace as far as it goes (at most `limit` deep);
    and so are the ints its closure holds (`full = (1 << n) - 1`)."""
    if tracer.call_stack.count(code) >= limit:     # (the tracer's own stack stays shallow)
        raise tracer.error(f"recursion deeper than {limit} calls ({name}()) is not supported yet")
    if code not in tracer.call_stack and not names_itself(code):
        return args, kwargs

    def constant(x):
        if type(x) is tuple:
            return tuple(constant(v) for v in x)
        if not is_traced(x):
            return x
        if x.type == F64 or not tracer.builder.must_be_concrete(x):
            raise tracer.error(f"recursive call to {name}() with an argument known only at run time is not "
                               f"supported yet")
        return tracer.builder.concretize(x, f"an argument of the recursive call to {name}()")
    for cell in cells.values():
        if is_traced(cell.contents) and cell.contents.type != F64 and tracer.builder.must_be_concrete(cell.contents):
            cell.contents = constant(cell.contents)
    return [constant(a) for a in args], {k: constant(a) for k, a in kwargs.items()}
