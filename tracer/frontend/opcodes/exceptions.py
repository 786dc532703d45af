"""Opcode handlers: try/except/else/finally, `with`, raise and re-raise.

Compiled code follows the path on which nothing raises: an exception at run time inside a try
statement is a failure of the call, and in a function with a try statement every failure runs
the Python function again from the start (ir.Function.python_on_failure), where CPython's
handlers run. So nothing in the call may run twice: no calls into CPython in such a function.

A `raise` statement that the traced path meets (its condition known at trace time) is caught at
trace time, as CPython catches it: the handler that the code's exception table names runs, traced,
with the exception object (`except E as e:`, `__exit__(type, exc, tb)`, a `finally` body, a bare
`raise`). Only exceptions of `raise` statements are caught so: any other exception met at trace
time is compiled as a failure, which the Python function answers.

Handlers that would catch an interrupt (`finally`, `with`, a bare `except`, `except
BaseException` or `KeyboardInterrupt`) need one more rule. Compiled code checks for Ctrl-C only
in loops (and in array operations, which loop); an interrupt found there would leave such a
handler unrun. So nothing that loops is compiled inside such a try body (GraphBuilder.no_loops):
a loop there unrolls, or the function runs as Python and says why. An interrupt then arrives
before the body or after it, as it may in CPython.
"""
from __future__ import annotations

import dis
from dataclasses import dataclass

from bytecode import Instr

from tracer.errors import InternalError, UnsupportedError
from tracer.frontend.builder import NO_LOOPS
from tracer.frontend.callouts import DeferredException

# what an except clause may name only where nothing in its try body loops (see above)
CATCH_ALL = {"BaseException", "KeyboardInterrupt", "SystemExit", "GeneratorExit"}
HANDLING = "<exception>"   # the local that holds the exception an except clause handles (a bare `raise`)
CLASS_LOADS = ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_FAST", "LOAD_ATTR", "BUILD_TUPLE")


@dataclass(frozen=True)
class Handler:
    """Where an exception raised at one instruction goes: the handler's instruction index, the
    stack depth it unwinds to, and whether the raising instruction's offset is pushed first."""
    index: int
    depth: int
    lasti: bool


@dataclass(frozen=True)
class ExceptionTable:
    handlers: dict            # instruction index -> Handler (instructions outside every try: absent)
    interruptible: frozenset  # instruction indices inside a try whose handlers (or outer ones) catch everything


_TABLES: dict = {}


def exception_table(code, instrs: list, labels: dict) -> ExceptionTable:
    """The code's exception table (CPython's, from `dis`), by index into `instrs` (the
    `bytecode` package's instructions of `code`)."""
    table = _TABLES.get(code)
    if table is not None:
        return table
    indices = [i for i, item in enumerate(instrs) if isinstance(item, Instr)]
    real = [ins for ins in dis.get_instructions(code) if ins.opname not in ("EXTENDED_ARG", "CACHE")]
    if len(real) != len(indices):
        raise InternalError(f"internal error in the tracer (the exception table of {code.co_name} does not "
                            f"match its instructions); please report it")
    at = {ins.offset: i for ins, i in zip(real, indices)}
    handlers = {}
    for entry in dis.Bytecode(code).exception_entries:
        handler = Handler(at[entry.target], entry.depth, entry.lasti)
        for offset in range(entry.start, entry.end, 2):
            if offset in at:
                handlers[at[offset]] = handler
    interruptible = frozenset(i for i in handlers if _catches_everything(instrs, labels, handlers, i))
    table = _TABLES[code] = ExceptionTable(handlers, interruptible)
    return table


def _catches_everything(instrs: list, labels: dict, handlers: dict, index: int) -> bool:
    """Whether an exception at instruction `index` reaches a handler that catches everything."""
    seen = set()
    handler = handlers.get(index)
    while handler is not None and handler.index not in seen:
        seen.add(handler.index)
        if instrs[handler.index].name == "PUSH_EXC_INFO":       # a user's handler (not a cleanup)
            names = except_clause_names(instrs, labels, handler.index)
            if names is None or names & CATCH_ALL:
                return True
        handler = handlers.get(handler.index)
    return False


def except_clause_names(instrs: list, labels: dict, pc: int) -> set | None:
    """The names the except clauses of the handler at `pc` load (their classes, `np`, `linalg`
    of np.linalg.LinAlgError), or None for a handler that catches everything (a bare except, a
    finally block, a with statement's exit) or is not a chain of `except <classes>:` clauses."""
    names, pc = set(), next_instruction(instrs, pc + 1)
    while instrs[pc].name != "RERAISE":       # (no clause matched: the exception goes on)
        while instrs[pc].name != "CHECK_EXC_MATCH":
            instr = instrs[pc]
            if instr.name not in CLASS_LOADS:
                return None
            arg = instr.arg[1] if isinstance(instr.arg, tuple) else instr.arg
            names.add(str(getattr(arg, "name", arg)))
            pc = next_instruction(instrs, pc + 1)
        jump = instrs[next_instruction(instrs, pc + 1)]     # to the next clause when none matches
        if not jump.name.startswith("POP_JUMP"):
            return None
        pc = next_instruction(instrs, labels[jump.arg])
    return names


def next_instruction(instrs: list, pc: int) -> int:
    """The index of the first instruction at or after `pc` (past labels and markers)."""
    while not isinstance(instrs[pc], Instr):
        pc += 1
    return pc


def made_at_trace_time(named, exc) -> bool:
    """Whether the exception (or cause) a raise statement names is CPython's own, made at trace
    time: not one whose message compiled code makes (an f-string of a traced number)."""
    if isinstance(named, DeferredException):
        return False
    return exc is None or all(type(a) in (str, int, float, bool, type(None)) for a in exc.args)


def is_exception_class(cls) -> bool:
    if isinstance(cls, tuple):
        return all(map(is_exception_class, cls))
    return isinstance(cls, type) and issubclass(cls, BaseException)


class ExceptionOps:
    """try, except, finally and with, on a SymbolicFrame."""

    def exceptions(self) -> ExceptionTable:
        if self.exception_table is None:
            self.exception_table = exception_table(self.code, self.instrs, self.labels)
        return self.exception_table

    def starts_exception_handler(self, label) -> bool:
        """Whether a try-block's handler is user code (a `try` or `with` statement), not the
        cleanup CPython 3.12+ wraps around inlined comprehensions: user handlers push the exception."""
        return self.instrs[self.next_instruction(self.labels[label])].name == "PUSH_EXC_INFO"

    def enter_try(self, handler) -> None:
        """The path enters a try body (or a with block): every failure from here runs Python."""
        pc = self.next_instruction(self.labels[handler])
        if any(isinstance(x, Instr) and x.name == "CHECK_EG_MATCH" for x in self.instrs[pc:pc + 8]):
            raise self.tracer.error("except* is not supported")
        self.tracer.call_out = False
        self.tracer.catches = self.tracer.catches or self.builder.loc

    def note_interruptible(self, index: int) -> None:
        """Keep GraphBuilder.no_loops counting the frames inside a try body that must not loop."""
        if not self.code.co_exceptiontable:
            return
        inside = index in self.exceptions().interruptible
        if inside != self.no_loops:
            self.builder.no_loops += 1 if inside else -1
            self.no_loops = inside

    def leave_frame(self) -> None:
        if self.no_loops:
            self.builder.no_loops -= 1
            self.no_loops = False

    def loop_allowed(self, header: int) -> None:
        """A loop may be built at `header` unless it is inside a try body that must not loop."""
        outer = self.builder.no_loops - self.no_loops
        if outer or (self.code.co_exceptiontable and header in self.exceptions().interruptible):
            raise UnsupportedError(NO_LOOPS, self.builder.loc)

    def catch(self, exc: BaseException, index: int) -> bool:
        """Whether the exception a `raise` statement raised at instruction `index` is caught by a
        handler of this frame: the frame then goes on there, as CPython's would."""
        if self.tracer.raised.get(id(exc)) is not exc or not self.code.co_exceptiontable:
            return False
        handler = self.exceptions().handlers.get(index)
        if handler is None:
            return False
        del self.stack[handler.depth:]
        if handler.lasti:
            self.push(index)             # (a stand-in for the offset: only RERAISE reads it)
        self.push(exc)
        self.pc = handler.index
        return True

    def op_RAISE_VARARGS(self, instr):
        if instr.arg == 0:              # a bare `raise`: the exception being handled (here or by a caller)
            exc = self.handled_exception()
            if exc is None:
                raise self.tracer.error("a bare `raise` outside an except clause is not supported")
            raise exc
        cause = self.pop() if instr.arg == 2 else None
        named = self.pop()
        exc = self.exception_object(named, "exceptions")
        if instr.arg == 2:              # raise exc from cause (None: from None)
            exc.__cause__ = None if cause is None else self.exception_object(cause, "exception causes")
        handled = self.handled_exception()
        if handled is not None and handled is not exc:      # raised while handling one: CPython's context
            exc.__context__ = handled
        if made_at_trace_time(named, exc) and made_at_trace_time(cause, exc.__cause__):
            self.tracer.raised[id(exc)] = exc
        raise exc

    def handled_exception(self):
        """The exception an except clause (of this frame or a caller's) is handling, or None."""
        return next((f.locals[HANDLING] for f in reversed(self.tracer.frames) if HANDLING in f.locals), None)

    def op_RERAISE(self, instr):
        exc = self.pop()
        if self.tracer.raised.get(id(exc)) is not exc:
            raise InternalError("internal error in the tracer (a re-raise of an exception it did not catch); "
                                "please report it", self.builder.loc)
        raise exc

    def op_PUSH_EXC_INFO(self, instr):
        exc = self.pop()
        self.push(self.locals.get(HANDLING), exc)     # (the exception handled before, restored by POP_EXCEPT)
        self.locals[HANDLING] = exc

    def op_POP_EXCEPT(self, instr):
        before = self.pop()
        if before is None:
            self.locals.pop(HANDLING, None)
        else:
            self.locals[HANDLING] = before

    def op_CHECK_EXC_MATCH(self, instr):
        cls = self.pop()
        if not is_exception_class(cls):
            raise TypeError("catching classes that do not inherit from BaseException is not allowed")
        self.push(isinstance(self.stack[-1], cls))

    def op_BEFORE_WITH(self, instr):
        manager = self.pop()
        enter = self.load_attribute(manager, "__enter__")
        self.push(self.load_attribute(manager, "__exit__"))
        self.push(self.call_value(enter, []))

    def op_WITH_EXCEPT_START(self, instr):
        exit_, exc = self.stack[-4], self.stack[-1]
        self.push(self.call_value(exit_, [type(exc), exc, exc.__traceback__]))

    def exception_object(self, exc, what: str):
        """The exception object a `raise` names (a class is called), as CPython makes it."""
        if isinstance(exc, DeferredException):
            exc = exc.raise_now(self.tracer)
        if isinstance(exc, type) and issubclass(exc, BaseException):
            exc = exc()
        if not isinstance(exc, BaseException):
            raise TypeError(f"{what} must derive from BaseException")
        return exc
