"""The user's lines in the tracebacks of the errors compiled code raises.

An entry (codegen.entry) that raises an exception itself then calls `tracer.native`'s
add_traceback (tools_add_traceback, tracer/csrc/tools.c) with a constant TracebackSite: the line
of the op that failed or of the `raise` (its file, its function's name, its number), linked to the
line of each inlined call it was reached from. The traceback then reads as CPython's would: the
caller's line, the traced function's line, and below it an inlined callee's line. Which op failed
is the index its kernel noted for this thread (codegen.kernel.note_failed_site, the JIT's
`note_site`; codegen.lower.failure_sites).
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen.kernel import I32, I64, PTR
from codegen.lower import failure_sites
from codegen.runtime import THREAD_FAILED_SITE
from tracer import ir, native
from tracer.errors import SourceLoc

ADD_TRACEBACK = "__tracer_add_traceback"
CALL_OUT_FAILED = "__tracer_call_out_failed"   # the same, without the tracer's frames (codegen.callouts)
# TracebackSite of tracer/csrc/tools.h: caller, filename, name, lineno
TRACEBACK_SITE = ll.LiteralStructType([PTR, PTR, PTR, I64])
NULL = ll.Constant(PTR, None)


def traceback_symbols(fn: ir.Function) -> dict[str, int]:
    """What an entry's module imports from the process to make tracebacks."""
    symbols = {ADD_TRACEBACK: native.add_traceback_address}
    if any(v.op == "python_call" for v in fn.walk()):
        symbols[CALL_OUT_FAILED] = native.call_out_failed_address
    return symbols


class TracebackSites:
    """The TracebackSites of one entry: constants of its module, one per chain of lines."""

    def __init__(self, module: ll.Module, fn: ir.Function):
        self.module = module
        self.fn = fn
        self.sites: dict[tuple, ll.GlobalVariable] = {}
        self.strings: dict[str, ll.GlobalVariable] = {}
        # a line whose function the front end did not name is the traced function's own
        loc = fn.loc
        self.function_name = loc.function if loc is not None and loc.function else fn.name.rsplit(".", 1)[-1]

    def site(self, loc: SourceLoc | None) -> ll.Constant:
        """A pointer to the TracebackSite of `loc` and its callers (NULL: no line known)."""
        if loc is None:
            return NULL
        key = self._key(loc)
        site = self.sites.get(key)
        if site is None:
            fields = [self.site(loc.caller), self._string(loc.filename),
                      self._string(loc.function or self.function_name), ll.Constant(I64, loc.lineno)]
            site = ll.GlobalVariable(self.module, TRACEBACK_SITE, f"__tracer_site_{len(self.sites)}")
            site.initializer = ll.Constant(TRACEBACK_SITE, fields)
            site.global_constant = True
            site.linkage = "private"
            self.sites[key] = site
        return site

    def _key(self, loc: SourceLoc | None) -> tuple:
        chain = []
        while loc is not None:
            chain.append((loc.filename, loc.lineno, loc.function))
            loc = loc.caller
        return tuple(chain)

    def _string(self, text: str) -> ll.GlobalVariable:
        g = self.strings.get(text)
        if g is None:
            data = bytearray(text.encode("utf-8", "replace") + b"\0")
            g = ll.GlobalVariable(self.module, ll.ArrayType(ll.IntType(8), len(data)), f"__tracer_site_text_{len(self.strings)}")
            g.initializer = ll.Constant(g.value_type, data)
            g.global_constant = True
            g.linkage = "private"
            g.unnamed_addr = True
            self.strings[text] = g
        return g

    def add(self, builder: ll.IRBuilder, site: ll.Value, helper: str = ADD_TRACEBACK) -> None:
        """Emit the call that puts `site`'s lines into the traceback of the exception set (with
        CALL_OUT_FAILED, after taking the tracer's frames out of it)."""
        fn = self.module.globals.get(helper)
        if fn is None:
            fn = ll.Function(self.module, ll.FunctionType(ll.VoidType(), [PTR]), helper)
            fn.attributes.add("cold")
        builder.call(fn, [site])

    def add_failed(self, builder: ll.IRBuilder, helper: str = ADD_TRACEBACK) -> None:
        """Emit the call for the op the kernel noted (note_failed_site) (the function's first line if
        it noted none)."""
        sites = [self.site(v.loc) for v in failure_sites(self.fn)]
        fallback = self.site(self.fn.loc)
        if not sites:
            self.add(builder, fallback, helper)
            return
        table = self.module.globals.get("__tracer_failure_sites")
        if table is None:
            table = ll.GlobalVariable(self.module, ll.ArrayType(PTR, len(sites)), "__tracer_failure_sites")
            table.initializer = ll.Constant(table.value_type, sites)
            table.global_constant = True
            table.linkage = "private"
        failed_site = self.module.globals.get(THREAD_FAILED_SITE)
        if failed_site is None:
            failed_site = ll.Function(self.module, ll.FunctionType(I32, []), THREAD_FAILED_SITE)
        index = builder.call(failed_site, [])
        noted = builder.icmp_unsigned("<", index, ll.Constant(I32, len(sites)))
        with builder.if_else(noted) as (then, otherwise):
            with then:
                at = builder.gep(table, [ll.Constant(I32, 0), index], source_etype=table.value_type)
                known = builder.load(at, typ=PTR)
                known_block = builder.block
            with otherwise:
                otherwise_block = builder.block
        site = builder.phi(PTR)
        site.add_incoming(known, known_block)
        site.add_incoming(fallback, otherwise_block)
        self.add(builder, site, helper)
