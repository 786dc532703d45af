"""The package's public functions stay functions whatever is imported first: a module of the
package never shares a name with one (importing `tracer.X` binds the module X on the package)."""
import subprocess
import sys

import tracer


def test_no_module_shadows_a_public_function():
    code = ("import importlib, pkgutil, tracer\n"
            "for m in pkgutil.iter_modules(tracer.__path__):\n"
            "    if m.name not in ('__main__',) and not m.name.startswith('native'):\n"
            "        importlib.import_module('tracer.' + m.name)\n"
            "for name in tracer.__all__:\n"
            "    assert callable(getattr(tracer, name)), name\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_explain_is_callable_after_its_module_is_imported():
    from tracer.explanation import Explanation  # noqa: F401
    assert callable(tracer.explain) and callable(tracer.vectorize)
