"""Suite-wide: the results cache of every command run by a test lives in a temporary directory,
never in the checkout (subprocesses inherit the variable)."""

import pytest

from moecl_verify.execution import CACHE_ENV


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv(CACHE_ENV, str(tmp_path_factory.mktemp("moecl-cache")))
    yield
    mp.undo()


# Hypothesis draws the same examples on every run, so the suite cannot flake;
# widen the search locally with --hypothesis-seed or a different profile.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("deterministic", derandomize=True, print_blob=True)
_hypothesis_settings.load_profile("deterministic")
