"""Opcode handlers: try/except/else/finally, `with`, raise and re-raise.

Compiled code follows the path on which nothing raises: an exception at run time inside a try
statement is a failure of the call. Where an op that may fail (or a raise) is compiled inside a
try body whose handler of the user's may catch it, or inside a handler (CPython chains the
exception it handles: GraphBuilder.fails_in_handler), every failure runs the Python function
again from the start (ir.Function.python_on_failure), where CPython's handlers run. So nothing in
the call may run twice: no calls into CPython inside a try body, nor anywhere in such a function.

A `raise` statement that the traced path meets (its condition known at trace time) is caught at
trace time, as CPython catches it: the handler that the code's exception table names runs, traced,
with the exception object (`except E as e:`, `__exit__(type, exc, tb)`, a `finally` body, a bare
`raise`). Of the other exceptions met at trace time, only CPython's lookup and value errors
(`TRUSTED`: a pop from an empty list, a missing key) are caught so, by except clauses that name
classes (`ExceptionOps.caught_as_named`); any other is compiled as a failure.

A `raise` op that no handler of the user's catches (`uncaught`: one that left every frame's try
bodies, or is raised outside them) is what CPython raises out of the call: its entry raises it
itself (codegen.raises), with the exceptions the traced code was handling as its context
(`contexts`, noted where each exception is met: an exception object's own __context__ is what
the tracer was handling when it raised it), unless the trace holds writes in copies or follows
NumPy's semantics (`settle_uncaught`). A message made from traced numbers is then made by CPython,
called from compiled code (callouts.DeferredException), where no handler may catch it.

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

from tracer.errors import InternalError, UnsupportedError, is_internal
from tracer.frontend.builder import NO_LOOPS
from tracer.frontend.callouts import DeferredException, MessageMadeAtRunTime

# what an except clause may name only where nothing in its try body loops (see above)
CATCH_ALL = {"BaseException", "KeyboardInterrupt", "SystemExit", "GeneratorExit"}
# what CPython raises that is caught at trace time, raise statement or not (ExceptionOps.caught_as_named)
TRUSTED = (LookupError, ValueError, ArithmeticError)
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
    handled: frozenset        # instruction indices whose exception reaches a user's handler (not only cleanups)


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
    handled = frozenset(i for i in handlers if _reaches_user_handler(instrs, handlers, i))
    table = _TABLES[code] = ExceptionTable(handlers, interruptible, handled)
    return table


def _reaches_user_handler(instrs: list, handlers: dict, index: int) -> bool:
    """Whether an exception at instruction `index` reaches code of the user's (an except clause,
    a finally body, a with statement's __exit__), not only cleanups that raise it again."""
    seen = set()
    handler = handlers.get(index)
    while handler is not None and handler.index not in seen:
        seen.add(handler.index)
        if instrs[handler.index].name == "PUSH_EXC_INFO":
            return True
        handler = handlers.get(handler.index)
    return False


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


def start_exception_state(tracer) -> None:
    """What a Tracer notes of exceptions and handlers, and the builder's hooks that read it."""
    tracer.raised = {}                 # id -> what a raise statement raised (ExceptionOps.catch)
    tracer.passed_handlers = {}        # id -> exception that left a user's handler to Python (catch)
    tracer.tried = None                # where the trace first entered a try body (or a with block)
    tracer.call_out_outside_try = False    # call_out before it: a raise no handler catches may call out
    tracer.contexts = {}               # id(exc) -> (exc, what the traced code was handling then)
    tracer.builder.caught_by_python = lambda exc: caught_by_python(tracer, exc)
    tracer.builder.raise_attrs = lambda exc: raise_attrs(tracer, exc)


def caught_by_python(tracer, exc: BaseException | None) -> bool:
    """Whether a handler of the user's may catch `exc`, compiled as a `raise` op now: one it passed
    on its way out of a frame (ExceptionOps.catch), or one of a frame running now. None: whether
    the Python function must answer an op emitted now that may fail, as such a handler may catch
    its exception, or the traced code is handling one (CPython's context of it)."""
    if exc is None:
        return any(f.handles(f.pc - 1) or HANDLING in f.locals for f in tracer.frames)
    return tracer.passed_handlers.get(id(exc)) is exc or any(f.handles(f.pc - 1) for f in tracer.frames)


def raise_attrs(tracer, exc: BaseException) -> dict:
    """The attributes of the `raise` op of `exc`: `uncaught` where no handler of the user's may
    catch it, and `contexts`, the exceptions the traced code was handling when it was raised
    (its __context__, that one's...: what CPython chains; not the exception objects' own
    __context__, which the tracer's surroundings set when it raised them at trace time)."""
    attrs = {}
    if caught_by_python(tracer, exc):
        tracer.builder.fails_in_handler = tracer.builder.fails_in_handler or tracer.loc
    else:
        attrs["uncaught"] = True
    chain, seen = [], {id(exc)}
    context = traced_context(tracer, exc)
    while context is not None and id(context) not in seen and len(chain) < 8:
        chain.append(context)
        seen.add(id(context))
        context = traced_context(tracer, context)
    if chain:
        attrs["contexts"] = tuple(chain)
    return attrs


def traced_context(tracer, exc: BaseException):
    """The exception the traced code was handling where `exc` was raised (noted by the frame that
    raised it; one noted nowhere is raised now: what a frame running now handles)."""
    noted = tracer.contexts.get(id(exc))
    if noted is not None and noted[0] is exc:
        return noted[1]
    return next((f.locals[HANDLING] for f in reversed(tracer.frames) if HANDLING in f.locals), None)


def settle_uncaught(tracer, fn):
    """Whether every failure of the trace runs the Python function (`tracer.catches`: where an op
    that may raise was emitted inside a try body, GraphBuilder.fails_in_handler), and which
    `raise` ops compiled code raises itself all the same (`uncaught`, codegen.entry): those no
    handler of the user's catches, unless the trace holds writes in copies until it returns (lists
    held in arrays, arrays written in place) or follows NumPy's semantics. In a function with a
    try statement, a TypeError met at trace time that no `raise` statement made is left to Python
    too: it may be the tracer's (a builtin given one of its stand-ins), never to be caught or not
    as the user's. Returns ir.Function.python_on_failure."""
    suspects = [v for v in fn.walk() if v.op == "raise" and v.attrs.get("uncaught") and tracer.tried
                and isinstance(v.attrs["exception"], TypeError)
                and tracer.raised.get(id(v.attrs["exception"])) is not v.attrs["exception"]]
    tracer.catches = tracer.catches or tracer.builder.fails_in_handler or (suspects[0].loc if suspects else None)
    held = tracer.uses_numpy or tracer.written_gathers or tracer.updated_arrays
    suspect_ids = {id(v) for v in suspects}
    for v in fn.walk():
        if v.op == "raise" and (held or id(v) in suspect_ids):
            v.attrs.pop("uncaught", None)
    return tracer.uses_numpy or tracer.catches


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
        """The path enters a try body (or a with block): no calls into CPython from here (a failure
        a handler of the user's may catch runs the Python function: GraphBuilder.fails_in_handler)."""
        pc = self.next_instruction(self.labels[handler])
        if any(isinstance(x, Instr) and x.name == "CHECK_EG_MATCH" for x in self.instrs[pc:pc + 8]):
            raise self.tracer.error("except* is not supported")
        if self.tracer.tried is None:
            self.tracer.call_out_outside_try = self.tracer.call_out
        self.tracer.call_out = False
        self.tracer.tried = self.tracer.tried or self.builder.loc

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
        handler of this frame: the frame then goes on there, as CPython's would. One that is not
        caught so but reaches a handler of the user's is noted: its `raise` op is left to Python."""
        noted = self.tracer.contexts.get(id(exc))
        if noted is None or noted[0] is not exc:      # (first met here: what this frame handles)
            self.tracer.contexts[id(exc)] = (exc, self.handled_exception())
        if not self.code.co_exceptiontable:
            return False
        handler = self.exceptions().handlers.get(index)
        if handler is None:
            return False
        if self.tracer.raised.get(id(exc)) is not exc:
            if not self.caught_as_named(exc, handler):
                if index in self.exceptions().handled:
                    self.tracer.passed_handlers[id(exc)] = exc
                return False
            self.tracer.raised[id(exc)] = exc
        del self.stack[handler.depth:]
        if handler.lasti:
            self.push(index)             # (a stand-in for the offset: only RERAISE reads it)
        self.push(exc)
        self.pc = handler.index
        return True

    def caught_as_named(self, exc: BaseException, handler: Handler) -> bool:
        """Whether an exception no `raise` statement made (CPython's, met at trace time: a pop
        from an empty list, a key not found) is caught at trace time all the same: one of
        CPython's lookup and value errors, by a handler whose except clauses name classes (not
        Exception, nor a bare except, finally or with), where the user expects it."""
        if type(exc).__module__ != "builtins" or not isinstance(exc, TRUSTED) or is_internal(exc) \
                or any(isinstance(a, MessageMadeAtRunTime) for a in exc.args):    # (its message: Python's)
            return False
        if self.instrs[handler.index].name != "PUSH_EXC_INFO":
            return False
        names = except_clause_names(self.instrs, self.labels, handler.index)
        return names is not None and not names & (CATCH_ALL | {"Exception"})

    def handles(self, index: int) -> bool:
        """Whether an exception at instruction `index` reaches a handler of the user's in this frame."""
        return bool(self.code.co_exceptiontable) and index in self.exceptions().handled

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
        self.tracer.contexts[id(exc)] = (exc, handled if handled is not exc else None)
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
