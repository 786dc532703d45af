"""An item of a short list or tuple made in the trace, at an index known only at run time.

`parent[i]` where `i` comes out of a data-dependent loop: the items merge as the paths of a
branch merge (states.layout_of: numbers, None or a number, tuples of them, strings; ints and
floats as a `mixed_numbers.MixedNumber`), and the item
is a `select` per leaf over the items, from the last to the first; an index out of range is
CPython's IndexError. Up to SELECT_LIMIT items (a longer list is held in an array instead, where
its items are numbers).
"""
from __future__ import annotations

from tracer.errors import UnsupportedError
from tracer.frontend import mixed_numbers
from tracer.frontend.states import ALL, flatten, layout_of, mixed_layout, rebuild

SELECT_LIMIT = 32


def selectable(container) -> bool:
    return type(container) in (list, tuple) and 0 < len(container) <= SELECT_LIMIT


def select_item(tracer, container, index):
    """container[index] for a traced int `index` (CPython's negative indices and IndexError)."""
    b = tracer.builder
    n = len(container)
    index = b.convert(index, b.kind(0)) if index.type != b.kind(0) else index
    i = b.emit("select", (b.compare("lt", index, 0), b.binary("add", index, n), index))
    outside = b.emit("select", (b.compare("lt", i, 0), b.const(True), b.compare("ge", i, n)))
    b.raise_if(outside, IndexError(f"{type(container).__name__} index out of range"))
    items = list(container)
    try:
        layout = layout_of(items, "an item of this list", b, force=ALL)
    except UnsupportedError as exc:
        if mixed_numbers.merges(items, tracer) is None:
            raise UnsupportedError(f"indexing this list at an index known only at run time: {exc.message}",
                                   b.loc) from None
        layout = mixed_layout(tracer)          # ints and floats: a number whose type is known at run time
    leaves = [flatten(layout, item, b) for item in items]
    chosen = list(leaves[-1])
    for k in range(n - 2, -1, -1):
        here = b.compare("eq", i, k)
        chosen = [b.emit("select", (here, b.value(x), b.value(y))) for x, y in zip(leaves[k], chosen)]
    return rebuild(layout, chosen)
