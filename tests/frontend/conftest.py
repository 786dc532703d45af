"""Fixtures of the front end's tests."""
import pytest
from hook_harness import installed_hook

import tracer.api


@pytest.fixture
def hook():
    """Installs the PEP 523 hook around a test; yields a function that registers a callback and
    code objects. Leaves no state behind (tests/frontend/test_frame_hook*.py)."""
    yield from installed_hook()


@pytest.fixture
def python_runs(monkeypatch):
    """The names of the functions whose Python ran in place of their compiled code (a failed
    guard, or a compiled call that handed over to Python: tracer.api.run_plain)."""
    ran = []
    plain = tracer.api.run_plain

    def counted(f, *args, **kwargs):
        ran.append(f.__name__)
        return plain(f, *args, **kwargs)
    monkeypatch.setattr(tracer.api, "run_plain", counted)
    return ran
