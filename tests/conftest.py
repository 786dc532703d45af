"""Settings shared by every test folder: the markers the suite uses, and the `python_runs` and
`pool_size` fixtures.

The compile cache is off for the suite (and the processes it starts), so that each test traces
and compiles what it checks; tests/api/test_compile_cache.py turns it on where it tests it."""
import os

import pytest

os.environ.setdefault("TRACER_CACHE", "0")

import tracer.api  # (after the cache is turned off)
from tracer import native


def pytest_configure(config):
    config.addinivalue_line("markers", "fuzz: runs generated programs against CPython (tests/test_fuzz.py; "
                                       "`-m fuzz` selects them, `-m 'not fuzz'` skips them)")


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


@pytest.fixture(params=[1, 2, 3], ids=lambda n: f"{n}threads")
def pool_size(request):
    """The runtime's thread pool at 1, 2 and 3 threads for the test, as it was after."""
    before = native.get_num_threads()
    native.set_num_threads(request.param)
    yield request.param
    native.set_num_threads(before)
