"""What the tests of the PEP 523 hook (tracer.native, used by tracer.frontend.capture) share: a
recording frame callback, the hook installed around a test and left with no state behind, native
stand-in entries (native_entries.py), and a fresh interpreter to run code that could crash.
"""
import contextlib
import os
import subprocess
import sys
import textwrap

from native_entries import entry_address

from tracer import native as F

ADD = entry_address()
ECHO = entry_address("echo")
RAISE = entry_address("raise")


class Callback:
    """A frame callback that records what it sees and answers `result`
    (or calls it with the arguments when `result` is callable).  With
    `only` (functions), other frames get SKIP: capture_all tests must not
    replace pytest's own functions."""

    def __init__(self, result=None, only=None):
        self.calls = []
        self.result = result
        self.only = None if only is None else {fn.__code__ for fn in only}

    def __call__(self, code, args, globals, builtins, closure):
        if self.only is not None and code not in self.only:
            return F.SKIP
        self.calls.append((code, args, globals, builtins, closure))
        if callable(self.result):
            return self.result(*args)
        return self.result

    @property
    def args(self):
        return [c[1] for c in self.calls]


@contextlib.contextmanager
def module_state():
    """Saves and restores the callback and capture_all: the tracer itself
    (tracer.frontend.capture) sets its callback at import, and other tests use it."""
    saved_cb = F.set_frame_callback(None)
    saved_all = F.set_capture_all(False)
    try:
        yield
    finally:
        F.set_frame_callback(saved_cb)
        F.set_capture_all(saved_all)


def installed_hook():
    """The body of a test's `hook` fixture (`yield from installed_hook()`): installs the hook
    around a test; yields a function that registers a callback and code objects.  Leaves no
    state behind."""
    registered = []

    def use(cb, *functions, state=True):
        F.set_frame_callback(cb)
        for fn in functions:
            F.register_code(fn.__code__, state)
            registered.append(fn.__code__)
        return cb

    assert not F.installed()
    with module_state():
        F.install()
        try:
            yield use
        finally:
            F.uninstall()
            for code in registered:
                F.unregister_code(code)
    assert not F.installed()


def run_python(source, timeout=300):
    """Runs source in a fresh interpreter that imports the same tracer."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(F.__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(source)],
                          capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=root)
