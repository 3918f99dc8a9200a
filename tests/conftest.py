"""Suite-wide: the results cache of every command run by a test lives in a temporary directory,
never in the checkout (subprocesses inherit the variable)."""

import pytest

from checks.execution import CACHE_ENV


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv(CACHE_ENV, str(tmp_path_factory.mktemp("moecl-cache")))
    yield
    mp.undo()
