"""Generators created by traced code (a generator expression, a call to a generator function).

A `SymbolicGenerator` holds the generator's `SymbolicFrame` (tracer.frontend.interpreter) and runs
it only when its consumer asks for the next value, as CPython does. A consumer that folds every
value into a running state (sum(), tracer.frontend.library.SumState) can instead run the frame
once with that state as a variable of the frame (SUM_LOCAL): a loop that yields then compiles to
a loop op carrying the state.
"""
from __future__ import annotations

from tracer.errors import UnsupportedError
from tracer.frontend.objects import NULL
from tracer.frontend.states import block_mark, cut_block, diverged_error

SUM_LOCAL = "<sum>"         # the running sum of a generator consumed by sum() (library.SumState)


class SymbolicGenerator:
    """A generator created by traced code (a generator expression): like CPython's, it runs its
    frame only when the consumer asks for the next value, so late binding and laziness hold."""

    advances = 0                        # values asked of it so far (states.mutable_snapshot)

    def __init__(self, frame):
        self.frame = frame              # its SymbolicFrame

    def __iter__(self):
        return self

    def fresh(self) -> bool:
        """Whether no value has been asked of it yet."""
        return self.frame.pc == 0 and self.frame.return_value is NULL

    def run_into(self, state, add):
        """Consume the generator, folding each value into `state` with add(state, tracer, value),
        inside its own frame (the state is a variable of it, SUM_LOCAL): a loop that yields
        compiles to a loop op carrying the state. The final state."""
        frame, b = self.frame, self.frame.builder
        if (error := diverged_error(b, self)) is not None:
            raise error
        self.advances += 1
        start, mark, caller_loc = frame.save(), block_mark(b.block), b.loc
        frame.is_generator, frame.sink = False, add
        frame.locals[SUM_LOCAL] = state
        try:
            frame.execute()
            return frame.return_value
        except UnsupportedError:
            # e.g. sum() over a traced range is an int when it is empty and a float when not: no
            # single type. Run it as a generator again (its loop unrolls; a traced range pins).
            cut_block(b.block, mark)
            frame.restore(start)
            frame.is_generator, frame.sink = True, None
            frame.locals.pop(SUM_LOCAL, None)
            frame.yielded.clear()
            return None
        finally:
            b.loc = caller_loc

    def __next__(self):
        frame = self.frame
        if (error := diverged_error(frame.builder, self)) is not None:
            raise error
        self.advances += 1
        if frame.return_value is not NULL:
            raise StopIteration
        caller_loc = frame.builder.loc
        try:
            frame.execute()
        finally:
            frame.builder.loc = caller_loc
        if frame.yielded:
            return frame.yielded.pop()
        raise StopIteration
