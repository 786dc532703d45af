"""Settings shared by every test folder: the markers the suite uses."""


def pytest_configure(config):
    config.addinivalue_line("markers", "fuzz: runs generated programs against CPython (tests/test_fuzz.py; "
                                       "`-m fuzz` selects them, `-m 'not fuzz'` skips them)")
