"""`np.einsum` in traced code, in explicit (`'ij,jk->ik'`) and implicit (`'ij,jk'`) form.

Each operand's axes are put in one order of all the subscript letters (the output's first, then
the summed ones), with size-1 axes for the letters it lacks; the operands are multiplied (NumPy's
broadcasting makes them one shape, and fusion makes that one loop) and summed over the letters
the output lacks. The sums run in this project's order (pairwise along the last axis), where
NumPy's einsum loops have their own: floats may differ in the last bits. A letter twice in one
operand (a diagonal, `'ii->i'`), `...`, and more than one sum of products in an operand's
letters beyond the output's are the refusals: each a clear error.
"""
from __future__ import annotations

from tracer.frontend import arrays
from tracer.frontend.arrays import emit_elementwise, promote, wrap
from tracer.frontend.numpy_more import as_array, numpy_function, sum_of
from tracer.frontend.numpy_shapes import expand_dims
from tracer.ir import BOOL


def parse(tracer, subscripts, count: int) -> tuple[list[str], str]:
    """The letters of each operand and of the output (implicit: the letters used once, sorted)."""
    if not isinstance(subscripts, str):
        raise tracer.error("np.einsum is supported with a subscripts string")
    text = subscripts.replace(" ", "")
    if "." in text:
        raise tracer.error("np.einsum with '...' is not supported yet")
    inputs, arrow, output = text.partition("->")
    terms = inputs.split(",")
    if len(terms) != count:
        raise ValueError("more operands provided to einstein sum function than specified in the subscripts string"
                         if count > len(terms) else "fewer operands provided to einstein sum function than "
                                                      "specified in the subscripts string")
    for t in terms + [output]:
        if not t.isalpha() and t:
            raise ValueError(f"invalid subscript in einstein sum subscripts string: {t!r}")
        if len(set(t)) != len(t):
            raise tracer.error("np.einsum with a letter repeated in one operand (a diagonal) is not supported yet")
    if not arrow:
        letters = "".join(terms)
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return terms, output


@numpy_function("einsum")
def einsum(tracer, subscripts, *operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    if out is not None or dtype is not None:
        raise tracer.error("np.einsum(..., out=/dtype=) is not supported yet")
    terms, output = parse(tracer, subscripts, len(operands))
    pieces = [as_array(tracer, x, "np.einsum") for x in operands]
    for term, piece in zip(terms, pieces):
        if len(term) != piece.rank:
            raise ValueError(f"einstein sum subscripts string contains too many subscripts for operand "
                             f"{terms.index(term)}" if len(term) > piece.rank else
                             "operand has more dimensions than subscripts given in einstein sum, but no '...' "
                             "ellipsis provided to broadcast the extra dimensions.")
    summed = [c for term in terms for c in term if c not in output]
    order_ = list(output) + list(dict.fromkeys(summed))
    for c in output:
        if not any(c in term for term in terms):
            raise ValueError(f"einstein sum subscripts string included output subscript '{c}' which never "
                             f"appeared in an input")
    aligned = [_aligned(tracer, piece, term, order_) for term, piece in zip(terms, pieces)]
    dtype_ = promote(tracer, *(a.value for a in aligned))
    if dtype_ == BOOL:
        raise tracer.error("np.einsum of bool arrays is not supported yet")
    product = aligned[0].value
    for a in aligned[1:]:
        product = emit_elementwise(tracer, "mul", [product, a.value], dtype_)
    axes = tuple(range(len(output), len(order_)))
    return wrap(tracer, sum_of(tracer, product, axes)) if axes else wrap(tracer, product)


def _aligned(tracer, piece, term: str, order_: list):
    """The operand with its axes in `order_` (size 1 where it lacks a letter): a view."""
    present = [c for c in order_ if c in term]
    view = arrays.transpose(tracer, piece, tuple(term.index(c) for c in present)) if present else piece
    for axis, c in enumerate(order_):
        if c not in term:
            view = expand_dims(tracer, view, axis)
    return view
