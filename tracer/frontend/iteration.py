"""Loops the tracer compiles instead of unrolling: the unroll limits, and `RangeIter`, the
iterator of a loop that becomes a `loop` op.

A `for` over a range known at trace time unrolls up to UNROLL_LIMIT iterations (traced for
autodiff: AUTODIFF_UNROLL_LIMIT, where an unrolled gradient needs no tape); a longer one, or one
with traced bounds, iterates a `RangeIter` and compiles to a loop (tracer.frontend.branches
builds it). So do `for v in x` over a NumPy array's first axis (tracer.frontend.arrays) and a
loop over a long list held in an array (tracer.frontend.gathered). A region that changes a list
raises `ListChanged`: compiled code cannot change it on one path only, so the loop unrolls.

`prange` (public as `tracer.prange`) is `range` when it runs as Python; traced, its loop iterates
a `ParallelRangeIter` and becomes a `loop` op with attrs parallel=True, which `parallel=True`
code runs in chunks on the thread pool where it can (codegen.prange).
"""
from __future__ import annotations

from dataclasses import dataclass

from tracer.errors import UnsupportedError
from tracer.frontend.builder import is_traced
from tracer.frontend.objects import SymbolicRange

UNROLL_LIMIT = 16           # a loop over a constant range longer than this stays a loop
AUTODIFF_UNROLL_LIMIT = 64    # traced for autodiff, loops over known ranges up to this long unroll (longer: a tape)


class ListChanged(UnsupportedError):
    """A list changed in a region (a branch side, a loop body): a loop over a range known at
    trace time unrolls instead."""


@dataclass(frozen=True, eq=False)
class RangeIter:
    """Iteration over range(start, stop, step) with traced bounds (or a long constant range):
    `index` is the next value to produce. Over a NumPy array (`for v in x`), `array` is the
    TracedArray and the loop produces array[index] instead; over a list of run-time length
    (tracer.frontend.dynlists), `stop` is None and the list gives its length at each step."""
    start: object
    stop: object
    step: object
    index: object
    array: object = None
    carried = True

    def fields(self) -> tuple:
        return (self.start, self.stop, self.step, self.index, self.array)

    def has_next(self, b, fold: bool = False):
        step, index = self.step, self.index
        if fold and is_traced(index) and index.op == "const":
            index = index.attrs["value"]         # (a peeled first iteration of a known range)
        if self.stop is None:                    # a list of run-time length: its length now
            return b.compare("lt", index, self.array.live_length(b))
        if not is_traced(step):
            return b.compare("lt" if step > 0 else "gt", index, self.stop)
        up = b.compare("gt", step, 0)
        return b.emit("select", (up, b.compare("lt", self.index, self.stop), b.compare("gt", self.index, self.stop)))

    def advanced(self, b) -> RangeIter:
        index = b.binary("add", self.index, self.step)
        if is_traced(index) and index.op == "add" and self.step in (1, -1) and type(self.step) is int:
            index.attrs["bounded"] = True    # made only while index is inside the range: never past i64
        return type(self)(self.start, self.stop, self.step, index, self.array)


def prange(*args) -> range:
    """range(stop), range(start, stop[, step]) whose iterations may run in parallel (numba's
    convention): under @trace(parallel=True) each iteration may run on another thread, so they
    must write disjoint array elements and read nothing another iteration writes, except scalar
    accumulators updated as `s += x` (or `-=`, `*=`), combined per chunk in a fixed order. Run as
    plain Python (or without parallel=True), it is `range`."""
    return range(*args)


class ParallelRange(SymbolicRange):
    """prange(...) in traced code (its numbers traced or not): a `for` over it compiles to a
    loop marked parallel; any other use is the range's."""


class ParallelRangeIter(RangeIter):
    """The RangeIter of a `for` over prange(...): the loop it becomes is marked parallel."""
