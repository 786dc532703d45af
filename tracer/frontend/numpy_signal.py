"""NumPy's padding and 1-D convolution inside a trace: `np.pad` (modes constant, edge, wrap,
reflect, symmetric) and `np.convolve` / `np.correlate` (modes full, same, valid).

np.pad joins, along each axis in turn, the array with the pieces NumPy puts before and after it
(exact copies: NumPy's bits). np.convolve is a sum of shifted copies of the longer array scaled
by the other's elements, one elementwise op each (fused into one loop); NumPy computes each
output as one dot product (BLAS for float64), so the last bits of a sum can differ, as they do
between NumPy builds. Registered into `tracer.frontend.numpy_more`'s tables.
"""
from __future__ import annotations

from tracer.errors import DataDependentControlFlow, NeedsConcreteValue
from tracer.frontend import arrays, indexing, numpy_shapes
from tracer.frontend.arrays import convert, emit_elementwise, wrap
from tracer.frontend.builder import is_traced
from tracer.frontend.numpy_more import as_array, fallback_unless, numpy_function
from tracer.frontend.numpy_shapes import along
from tracer.ir import BOOL, ArrayType
from tracer.ir.array_ops import ELEMENTWISE

PAD_MODES = ("constant", "edge", "wrap", "reflect", "symmetric")


# ------------------------------------------------------------------------------------- pad
@numpy_function("pad", array_result=True)
def pad(tracer, array, pad_width, mode="constant", **kwargs):
    x = as_array(tracer, array, "np.pad")
    if mode not in PAD_MODES or set(kwargs) - ({"constant_values"} if mode == "constant" else set()):
        raise tracer.error(f"np.pad(..., mode={mode!r}{', ' if kwargs else ''}{', '.join(kwargs)}) is not "
                           f"supported yet (modes: {', '.join(PAD_MODES)})")
    widths = _pairs(tracer, pad_width, x.rank, "pad_width")
    values = _pairs(tracer, kwargs.get("constant_values", 0), x.rank, "constant_values", numbers=True)
    for axis, (before, after) in enumerate(widths):
        if before == after == 0:
            continue
        if mode != "constant" and x.type.shape[axis] == 0:
            raise ValueError(f"can't extend empty axis {axis} using modes other than 'constant' or 'empty'")
        pieces = [_piece(tracer, x, axis, before, mode, values[axis][0], start=True), x,
                  _piece(tracer, x, axis, after, mode, values[axis][1], start=False)]
        x = numpy_shapes.join(tracer, [p for p in pieces if p is not None], axis)
    return x


def _pairs(tracer, spec, rank: int, what: str, numbers: bool = False) -> list:
    """NumPy's broadcast of pad_width (or constant_values) to (before, after) for each axis."""
    def value(v):
        if is_traced(v) and not numbers:
            return tracer.builder.concretize(v, f"np.pad's {what}")
        if not numbers and (type(v) is not int or v < 0):
            raise ValueError("index can't contain negative values" if type(v) is int else
                             f"`{what}` must be of integral type.")
        return v
    if type(spec) not in (list, tuple):
        return [(value(spec), value(spec))] * rank
    items = list(spec)
    if len(items) == 1 and type(items[0]) in (list, tuple):
        items = list(items[0])
    if all(type(i) not in (list, tuple) for i in items):
        if len(items) == 1:
            return [(value(items[0]), value(items[0]))] * rank
        if len(items) == 2:
            return [(value(items[0]), value(items[1]))] * rank
    if len(items) != rank or any(type(i) not in (list, tuple) or len(i) != 2 for i in items):
        raise ValueError(f"operands could not be broadcast together with remapped shapes [original->remapped]: "
                         f"({len(items)},) and requested shape ({rank},2)")
    return [(value(i[0]), value(i[1])) for i in items]


def _piece(tracer, x, axis: int, width: int, mode: str, fill, start: bool):
    """What NumPy puts `width` wide before (start) or after the array along `axis`, or None.
    The size along `axis` may be known only at run time: where NumPy would reflect more than
    once (a width past the size), the call fails and the Python function runs."""
    if width == 0:
        return None
    b = tracer.builder
    sizes = arrays.sizes_of(tracer, x.value)
    n = sizes[axis]
    if mode == "constant":
        shape = tuple(width if d == axis else s for d, s in enumerate(x.type.shape))
        value = convert(tracer, b.value(fill) if is_traced(fill) else fill, x.type.dtype)
        return wrap(tracer, b.emit("full", (b.value(value), *(b.value(width if d == axis else s)
                                                              for d, s in enumerate(sizes))), shape=shape))
    if mode == "edge":
        last = b.binary("sub", n, 1)
        edge = indexing.subscript(tracer, x, along(x.rank, axis, slice(0, 1) if start else slice(last, n)))
        return numpy_shapes.join(tracer, [edge] * width, axis)
    # one reflection or wrap: width < n - 1 (reflect), < n (symmetric: a stop of -1 would wrap), <= n
    room = {"wrap": 0, "symmetric": 1, "reflect": 2}[mode]
    fallback_unless(tracer, b.compare("le", width + room, n) if is_traced(n) else width + room <= n)
    if mode == "wrap":
        part = slice(b.binary("sub", n, width), n) if start else slice(0, width)
    elif mode == "reflect":
        part = slice(width, 0, -1) if start else slice(b.binary("sub", n, 2), b.binary("sub", n, 2 + width), -1)
    else:                                                         # symmetric
        part = slice(width - 1, None, -1) if start else slice(b.binary("sub", n, 1), b.binary("sub", n, 1 + width), -1)
    return indexing.subscript(tracer, x, along(x.rank, axis, part))


# ------------------------------------------------------------------------------- convolve
@numpy_function("convolve", array_result=True)
def convolve(tracer, a, v, mode="full"):
    x, k = as_array(tracer, a, "np.convolve"), as_array(tracer, v, "np.convolve")
    return _sliding(tracer, x, k, mode, "np.convolve", flip=True)


@numpy_function("correlate", array_result=True)
def correlate(tracer, a, v, mode="valid"):
    x, k = as_array(tracer, a, "np.correlate"), as_array(tracer, v, "np.correlate")
    return _sliding(tracer, x, k, mode, "np.correlate", flip=False)


def _pinned_size(tracer, x):
    """The length of 1-D `x` at trace time when it comes from int arguments (pinned: the
    function compiles again for another value); None when it depends on an array argument.
    The length is looked for where the array was made (`np.ones(m)`, `np.arange(m)`, then
    elementwise ops), not in its contents."""
    v = x.value
    while v.op in ELEMENTWISE or v.op in ("copy", "select"):
        same = [a for a in v.args if isinstance(a.type, ArrayType) and a.type.rank == 1]
        if not same:
            break
        v = same[0]
    size = {"full": lambda: v.args[1], "iota": lambda: v.args[0]}.get(v.op, lambda: None)()
    if size is None:
        return None
    try:
        return tracer.builder.concretize(size, "the length")
    except (NeedsConcreteValue, DataDependentControlFlow):
        return None


def _sliding(tracer, x, k, mode: str, what: str, flip: bool):
    """out[i] = sum over j of xp[i + j] * w[j], xp the longer array padded with m - 1 zeros on
    each side and w the shorter, of m elements (reversed for a convolution): one scaled slice of
    xp per element of w, so the shorter array's size must be known at trace time (the longer's
    may be known only at run time: a call where it is the shorter runs the Python function)."""
    b = tracer.builder
    if x.rank != 1 or k.rank != 1:
        raise ValueError("object too deep for desired array" if max(x.rank, k.rank) > 1 else
                         "object of too small depth for desired array")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    n, m = x.type.shape[0], k.type.shape[0]
    if n is None and m is None:               # a size made from an int argument is pinned
        m = _pinned_size(tracer, k)
        n = _pinned_size(tracer, x) if m is None else None
    if 0 in (n, m):
        raise ValueError(f"{'v' if m == 0 else 'a'} cannot be empty")
    swapped = m is None or (n is not None and m > n)     # NumPy slides the shorter along the longer
    if swapped:
        x, k, n, m = k, x, m, n
    if m is None:
        raise tracer.error(f"{what} of two arrays whose sizes are known only at run time is not supported yet")
    dtype = arrays.promote(tracer, x.value, k.value)
    if dtype == BOOL:
        raise tracer.error(f"{what} of bool arrays is not supported yet")
    n = arrays.sizes_of(tracer, x.value)[0]
    if is_traced(n):
        fallback_unless(tracer, b.compare("ge", n, m))
    if flip != swapped:                       # (a correlation with swapped operands is reversed)
        k = indexing.subscript(tracer, k, (slice(None, None, -1),))
    left = {"full": m - 1, "same": m // 2, "valid": 0}[mode]
    length = {"full": b.binary("add", n, m - 1), "same": n, "valid": b.binary("sub", n, m - 1)}[mode]
    xp = pad(tracer, x, [(m - 1, m - 1)])
    total = None
    for j in range(m):
        start = (m - 1) - left + j
        window = indexing.subscript(tracer, xp, (slice(start, b.binary("add", start, length)),))
        weight = indexing.subscript(tracer, k, j)
        term = emit_elementwise(tracer, "mul", [window.value, weight], dtype)
        total = term if total is None else emit_elementwise(tracer, "add", [total, term], dtype)
    result = wrap(tracer, total)
    if not flip and swapped:
        result = indexing.subscript(tracer, result, (slice(None, None, -1),))
    return result
