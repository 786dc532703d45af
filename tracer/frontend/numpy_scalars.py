"""NumPy's scalars in traced code: which traced numbers are np.float64 / np.int64 rather than
Python's float and int (an element, a reduction, a NumPy function's result), and the check their
float arithmetic gets (NumPy warns where it overflows or makes a NaN; Python does not).
"""
from __future__ import annotations

from tracer.frontend.builder import is_traced
from tracer.ir import BOOL, F32, F64, I64, TupleType, Value, leaf_types

ARITHMETIC = ("add", "sub", "mul", "div", "floordiv", "mod", "pow")

NUMPY_SCALAR_SOURCES = {"load", "reduce", "argreduce", "matmul", "linalg_det", "linalg_slogdet"}


def made_by_numpy(tracer, v: Value) -> bool:
    """Whether scalar `v` is a NumPy scalar: it depends on an element or a reduction of an array,
    or on a NumPy function's result (tracer.numpy_scalars), other than through float(), int() or
    bool() (tracer.python_scalars); a value a data-dependent branch or loop chose is one where
    any path's is. The answer is kept (tracer.made_by_numpy): a long chain of
    arithmetic asks of each link."""
    known = tracer.made_by_numpy
    if v in known:
        return known[v]
    stack, seen, found = [v], set(), False
    carried: dict = {}                  # a loop body's parameter -> its initial and next values
    open_param = False                  # met a loop's parameter whose values were not in view
    while stack and not found:
        x = stack.pop()
        if x in seen or x in tracer.python_scalars:
            continue
        seen.add(x)
        if x in known:
            found = known[x]
            continue
        found = x.op in NUMPY_SCALAR_SOURCES or x in tracer.numpy_scalars
        if x.op == "block_param":
            open_param = open_param or x not in carried
            stack.extend(carried.get(x, ()))
        else:
            stack.extend(_sources(x, carried))
    if found or not open_param:         # (a "no" that a loop's parameter gave may change)
        known[v] = found
    return found


def _sources(x: Value, carried: dict) -> list:
    """The values x's own value is made from: its operands; for one result of a branch or loop
    (getitem of an `if` or `loop`), what each path yields there (a loop's carried values: also
    their initial values; its parameters stand for both, `carried`), not its condition."""
    if x.op == "getitem" and x.args[0].op in ("if", "loop"):
        owner, k = x.args[0], x.attrs["index"]
        shift = 1 if owner.op == "loop" else 0          # a loop's body yields its continue flag first
        out = [region.results[k + shift] for region in owner.regions if len(region.results) > k + shift]
        if owner.op == "loop":
            for body in owner.regions:
                for j, p in enumerate(body.params):
                    carried[p] = [a for a in (owner.args[j] if j < len(owner.args) else None,
                                              body.results[j + 1] if j + 1 < len(body.results) else None)
                                  if isinstance(a, Value)]
        if owner.op == "loop":
            out.append(owner.args[k] if len(owner.args) > k else None)
        return [r for r in out if isinstance(r, Value)]
    if x.op in ("if", "loop") and isinstance(x.type, TupleType):
        return []                       # (its results are read through getitem)
    return list(x.args) + [r for region in x.regions for r in region.results if isinstance(r, Value)]


def checked_scalar_arithmetic(tracer, result):
    """`result` of arithmetic on two scalars; where one is a NumPy scalar and the result a
    float, NumPy warns when it overflows or makes a NaN ("overflow encountered in scalar
    multiply"): the result is checked (op numpy_scalar_check)."""
    if not is_traced(result) or result.type not in (F64, F32):
        return result
    op = result.args[0] if result.op == "to_f32" else result      # float32: done in f64, then rounded
    if not (op.op in ARITHMETIC and len(op.args) == 2 or op.op == "sqrt") or any(a.type != F64 for a in op.args):
        return result
    if result.type != F32 and not any(made_by_numpy(tracer, x) for x in op.args):
        return result
    operands = op.args if len(op.args) == 2 else op.args * 2       # (sqrt: a NaN from a number)
    return tracer.builder.emit("numpy_scalar_check", (result, *operands))


def numpy_results(tracer, result: Value) -> tuple[bool, ...]:
    """Per leaf of the traced function's result (tuples made by `tuple` ops opened): whether it
    is a NumPy scalar of float64, int64 or bool (the narrow dtypes always are), or () for none."""
    flags = []

    def visit(v):
        if v.op == "tuple" and isinstance(v.type, TupleType):
            for a in v.args:
                visit(a)
        elif isinstance(v.type, TupleType):
            flags.extend([False] * len(leaf_types(v.type)))
        else:
            flags.append(v.type in (F64, I64, BOOL) and surely_numpy(tracer, v, {}))
    visit(result)
    return tuple(flags) if any(flags) else ()


def surely_numpy(tracer, v: Value, seen: dict, carried: dict | None = None) -> bool:
    """Whether `v` is a NumPy scalar on every path (a result boxed as one): an element, a
    reduction, a NumPy function's number, or arithmetic with one; for a value a branch or loop
    chose, every path's (a loop's first value too: a loop that runs no time keeps it). Walked
    with a stack of its own: a long chain of arithmetic is deeper than Python's recursion."""
    carried = {} if carried is None else carried
    frames: list = []               # (value, its inputs not yet asked, whether all must be)
    answer = _open(tracer, v, seen, carried, frames)
    while frames:
        x, rest, need_all = frames[-1]
        if answer is not None and answer != need_all:     # a True settles "any", a False "all"
            frames.pop()
            seen[x] = answer
            continue
        nxt = next(rest, None)
        if nxt is None:
            frames.pop()
            seen[x] = answer = need_all
            continue
        answer = _open(tracer, nxt, seen, carried, frames)
    return answer


def _open(tracer, v: Value, seen: dict, carried: dict, frames: list):
    """surely_numpy's answer for `v` where it asks no input, else None with a frame pushed."""
    if v in seen:
        return seen[v]              # (a loop's value met again: as it was assumed)
    seen[v] = True
    if v in tracer.python_scalars:
        result = False
    elif v.op in NUMPY_SCALAR_SOURCES or v in tracer.numpy_scalars:
        result = True
    elif v.op == "block_param" and v not in carried:
        result = False
    elif v.op == "block_param":
        frames.append((v, iter(carried[v]), True))
        return None
    elif v.op == "getitem" and v.args[0].op in ("if", "loop"):
        frames.append((v, iter(_sources(v, carried)), True))
        return None
    else:
        frames.append((v, iter(v.args), False))
        return None
    seen[v] = result
    return result
