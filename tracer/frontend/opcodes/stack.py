"""Opcode handlers: the value stack, local variables, cells, globals, constants, returns."""
from __future__ import annotations

import sys

from tracer.frontend.builder import NeedsPython
from tracer.frontend.complexes import TracedComplex
from tracer.frontend.generators import SUM_LOCAL
from tracer.frontend.objects import NULL, Cell, MaybeNone
from tracer.frontend.states import MaybeUnbound


def unbound_message(name: str) -> str:
    return f"cannot access local variable '{name}' where it is not associated with a value"


def _name(arg) -> str:
    """Cell and free variables arrive as CellVar/FreeVar objects on 3.11, as names later."""
    return getattr(arg, "name", arg)


NONE_TESTS = {"POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE", "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE",
              "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE"}


class StackOps:
    # -- no-ops: they matter to CPython's own bookkeeping only
    def op_RESUME(self, instr): pass
    def op_NOP(self, instr): pass
    def op_PRECALL(self, instr): pass
    def op_CACHE(self, instr): pass
    def op_COPY_FREE_VARS(self, instr): pass  # free cells are installed when the frame is made

    def op_POP_TOP(self, instr):
        self.pop()

    def op_PUSH_NULL(self, instr):
        self.push(NULL)

    def op_COPY(self, instr):
        self.push(self.stack[-instr.arg])

    def op_SWAP(self, instr):
        self.stack[-1], self.stack[-instr.arg] = self.stack[-instr.arg], self.stack[-1]

    def op_LOAD_CONST(self, instr):
        self.push(_constant(instr.arg))

    def op_RETURN_VALUE(self, instr):
        self.return_value = self.pop()
        if self.sink is not None:              # a generator consumed by sum(): its sum
            self.return_value = self.locals[SUM_LOCAL]

    def op_RETURN_CONST(self, instr):
        self.return_value = instr.arg if self.sink is None else self.locals[SUM_LOCAL]

    # -- locals
    def load_local(self, name):
        name = _name(name)
        value = self.locals.get(name, NULL)
        if value is NULL:
            if name in self.cells:
                # 3.13 has no LOAD_CLOSURE: LOAD_FAST of a cell variable pushes the cell itself
                return self.cells[name]
            raise UnboundLocalError(unbound_message(name))
        if isinstance(value, MaybeUnbound):       # bound on some paths only: check at run time
            b = self.builder
            b.raise_if(b.logical_not(value.bound), UnboundLocalError(unbound_message(name)))
            value = self.locals[name] = value.value
        if isinstance(value, MaybeNone) and not self.tests_none_next():
            # None on some paths, used as a number here: where it is None, Python runs the
            # function (and raises its TypeError, or does what it does with None)
            b = self.builder
            b.raise_if(b.logical_not(value.present), NeedsPython("a variable that is None here, used as a number"))
            return value.value
        return value

    def tests_none_next(self) -> bool:
        """Whether the instructions after this load test it against None (`x is None`, `if x is
        not None`), store it elsewhere or return it, which take the variable as it is."""
        following = [i.name for i in self.instrs[self.pc:self.pc + 3] if hasattr(i, "opcode")][:2]
        return bool(following) and (following[0] in NONE_TESTS or following[0] in ("STORE_FAST", "RETURN_VALUE")
                                    or following == ["LOAD_CONST", "IS_OP"])

    def op_LOAD_FAST(self, instr):
        self.push(self.load_local(instr.arg))

    op_LOAD_FAST_CHECK = op_LOAD_FAST

    def op_LOAD_FAST_LOAD_FAST(self, instr):
        for name in instr.arg:
            self.push(self.load_local(name))

    def op_LOAD_FAST_AND_CLEAR(self, instr):
        # 3.12+ inlined comprehensions save the outer variable (or NULL) and restore it later.
        # For a cell variable CPython's local slot holds the cell itself: that is what is saved
        # (the comprehension then makes a fresh cell), and STORE_FAST puts it back.
        name = _name(instr.arg)
        if name in self.code.co_cellvars:
            self.locals.pop(name, None)
            self.push(self.cells.pop(name, NULL))
        else:
            self.push(self.locals.pop(name, NULL))

    def store_local(self, name, value):
        name = _name(name)
        if name in self.code.co_cellvars and (value is NULL or isinstance(value, Cell)):
            # restoring a cell variable's slot after an inlined comprehension
            self.locals.pop(name, None)
            if value is NULL:
                self.cells.pop(name, None)
            else:
                self.cells[name] = value
        elif value is NULL:
            self.locals.pop(name, None)
        else:
            self.locals[name] = value

    def op_STORE_FAST(self, instr):
        self.store_local(instr.arg, self.pop())

    def op_STORE_FAST_STORE_FAST(self, instr):
        for name in instr.arg:
            self.store_local(name, self.pop())

    def op_STORE_FAST_LOAD_FAST(self, instr):
        store, load = instr.arg
        self.store_local(store, self.pop())
        self.push(self.load_local(load))

    def op_DELETE_FAST(self, instr):
        self.load_local(instr.arg)
        del self.locals[instr.arg]

    # -- cells (closures)
    def op_MAKE_CELL(self, instr):
        # always a fresh cell: an inlined comprehension (3.12+) makes one per run, and closures
        # made in an earlier run keep theirs
        name = _name(instr.arg)
        self.cells[name] = Cell(self.locals.pop(name, NULL))

    def op_LOAD_CLOSURE(self, instr):
        self.push(self.cells[_name(instr.arg)])

    def op_LOAD_DEREF(self, instr):
        name = _name(instr.arg)
        value = self.cells[name].contents
        if value is NULL:
            raise NameError(f"cannot access free variable '{name}' where it is not associated with a value in enclosing scope")
        self.push(value)

    def op_STORE_DEREF(self, instr):
        cell = self.cells[_name(instr.arg)]
        cell.contents = self.pop()
        if cell.real is not None:            # (the class statement's own name, for its methods)
            cell.real.cell_contents = cell.contents

    # -- globals
    def op_LOAD_GLOBAL(self, instr):
        push_null, name = instr.arg if isinstance(instr.arg, tuple) else (False, instr.arg)
        value = self.tracer.read_global(self.globals, self.builtins, name)
        if push_null:
            self.push_callable(value)
        else:
            self.push(value)

    def push_callable(self, value):
        """A callable and the NULL below (3.11, 3.12) or above (3.13) it, in CPython's order:
        CALL reads either (pop_call), and a graph break's continuation pushes this stack back
        for CPython's own CALL (tracer.frontend.resume)."""
        if sys.version_info >= (3, 13):
            self.push(value, NULL)
        else:
            self.push(NULL, value)

    # -- calls' keyword names (3.11/3.12; 3.13 passes them on the stack to CALL_KW)
    def op_KW_NAMES(self, instr):
        self.kw_names = instr.arg


def _constant(x):
    """A constant as traced code holds it: a complex one (in a tuple too) is a TracedComplex of
    two floats, so that `z = 0j` merges with the z a loop computes."""
    if type(x) is complex:
        return TracedComplex(x.real, x.imag)
    if type(x) is tuple and any(type(e) in (complex, tuple) for e in x):
        return tuple(map(_constant, x))
    return x
