"""The exceptions a CPython entry raises itself (codegen.entry): a `raise` op's exception, made
with CPython's C API as CPython's own `raise` makes it, instead of running the Python function
again to raise it.

Which ones (`native_exception`): a builtin exception class with no argument or one string, no
cause, raised where the traced code handles no exception, or (`raise E(...) from None`) while
handling one of that kind. What CPython's raise sets that the message does not say is set the
same way: its context is the exception the caller is handling (PyErr_SetString chains it);
`from None` suppresses the context and sets it to the exception the traced code was handling,
made anew and chained the same way (a `raise` op's `contexts`, tracer.frontend.opcodes.exceptions).
Every function called is exported by CPython (resolved by name, so cached code stays valid).
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen.kernel import PTR

VOID = ll.VoidType()
SIGNATURES = {
    "PyErr_Fetch": (VOID, [PTR, PTR, PTR]),
    "PyErr_NormalizeException": (VOID, [PTR, PTR, PTR]),
    "PyErr_Restore": (VOID, [PTR, PTR, PTR]),
    "PyException_SetCause": (VOID, [PTR, PTR]),
    "PyException_SetContext": (VOID, [PTR, PTR]),
}


def _plain(exc: BaseException) -> bool:
    """A builtin exception class with no argument or one string."""
    return type(exc).__module__ == "builtins" and (
        exc.args == () or (len(exc.args) == 1 and type(exc.args[0]) is str))


def native_exception(exc: BaseException, contexts: tuple = ()) -> bool:
    """Whether an entry can raise `exc` itself, raised while handling `contexts` (innermost first;
    a `raise` op's attribute), anything else is raised by running the Python function: same
    type, same args, the same `from`."""
    if not _plain(exc) or exc.__cause__ is not None:
        return False
    if not exc.__suppress_context__:
        return not contexts
    return len(contexts) <= 1 and all(_plain(c) and c.__cause__ is None and not c.__suppress_context__
                                      for c in contexts)


def raised_natively(site) -> bool:
    """native_exception of a `raise` op."""
    return native_exception(site.attrs["exception"], site.attrs.get("contexts", ()))


def raise_exception(e, site) -> None:
    """Emit, in entry builder `e`, the code that sets the exception of `raise` op `site`
    (raised_natively) as the raised exception."""
    exc = site.attrs["exception"]
    if not exc.__suppress_context__:
        _set(e, exc)
        return
    context = None
    contexts = site.attrs.get("contexts", ())
    if contexts:                         # made and chained first, as where the trace raised `exc`
        _set(e, contexts[0])
        kind, context, tb = _fetch(e)
        e.api.call("Py_DecRef", kind)
        e.api.call("Py_DecRef", tb)
    _set(e, exc)
    kind, value, tb = _fetch(e)
    _call(e, "PyException_SetCause", value, ll.Constant(PTR, None))    # (cause None, context suppressed)
    if context is not None:
        _call(e, "PyException_SetContext", value, context)             # (steals it)
    _call(e, "PyErr_Restore", kind, value, tb)


def _set(e, exc: BaseException) -> None:
    if exc.args:
        e.api.call("PyErr_SetString", e.api.exception(type(exc)), e.api.string(exc.args[0]))
    else:
        e.api.call("PyErr_SetNone", e.api.exception(type(exc)))


def _fetch(e) -> tuple:
    """The raised exception's (type, instance, traceback), taken out (new references)."""
    b = e.builder
    with b.goto_entry_block():
        slots = [b.alloca(PTR, name=name) for name in ("exc_type", "exc_value", "exc_tb")]
    _call(e, "PyErr_Fetch", *slots)
    _call(e, "PyErr_NormalizeException", *slots)
    return tuple(b.load(slot, typ=PTR) for slot in slots)


def _call(e, name: str, *args):
    fn = e.api.module.globals.get(name)
    if fn is None:
        ret, params = SIGNATURES[name]
        fn = ll.Function(e.api.module, ll.FunctionType(ret, params), name)
    return e.builder.call(fn, args)
