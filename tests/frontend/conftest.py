"""Fixtures of the front end's tests."""
import pytest
from hook_harness import installed_hook


@pytest.fixture
def hook():
    """Installs the PEP 523 hook around a test; yields a function that registers a callback and
    code objects. Leaves no state behind (tests/frontend/test_frame_hook*.py)."""
    yield from installed_hook()
