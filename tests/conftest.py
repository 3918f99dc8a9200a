"""Suite-wide: the results cache of every command run by a test lives in a temporary directory,
never in the checkout (subprocesses inherit the variable); each test is marked with its tier.

Tiers, by folder: ``unit`` (tests/unit: theory, numeric, statistics, layout), ``claims`` (tests/claims:
each claim on tiny contexts), ``app`` (tests/app and tests/reports: the command line and the renderers),
``e2e`` (tests/e2e: one smoke run of every claim). ``slow`` marks the expensive ones in any tier.
"""

from pathlib import Path

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


_TIERS = {"unit": "unit", "claims": "claims", "app": "app", "reports": "app", "e2e": "e2e"}


def pytest_collection_modifyitems(config, items):
    root = Path(__file__).parent
    for item in items:
        folder = Path(str(item.fspath)).relative_to(root).parts[0]
        if folder in _TIERS:
            item.add_marker(getattr(pytest.mark, _TIERS[folder]))
