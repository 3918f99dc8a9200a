"""Suite-wide: the results cache of every command run by a test lives in a temporary directory,
never in the checkout (subprocesses inherit the variable); each test is marked with its tier.

Tiers, by folder: ``unit`` (tests/unit: theory, numeric, statistics, layout), ``claims`` (tests/claims:
each claim on tiny contexts), ``app`` (tests/app and tests/reports: the command line and the renderers),
``e2e`` (tests/e2e: one smoke run of every claim). ``slow`` marks the expensive ones in any tier.
"""

import json
import subprocess
import sys
from dataclasses import dataclass, replace
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


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks
def pytest_collection_modifyitems(config, items):
    root = Path(__file__).parent
    for item in items:
        folder = Path(str(item.fspath)).relative_to(root).parts[0]
        if folder in _TIERS:
            item.add_marker(getattr(pytest.mark, _TIERS[folder]))
        # With pytest-xdist, every test of the shared smoke run goes to one worker, so the run is made once.
        if "smoke_run" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("smoke-run"))


@dataclass(frozen=True)
class SmokeRun:
    """One ``moecl-verify run`` of every claim at the smoke budget (seed 0), as a user starts it."""

    root: Path
    out: Path
    cache: Path
    process: subprocess.CompletedProcess

    def result(self, prefix: str | tuple[str, ...] = ""):
        """The run read back from results.json, restricted to claims whose id starts with ``prefix``."""
        from moecl_verify.reports import results_json

        run = results_json.load(self.out / "results.json")
        return replace(run, results=tuple(r for r in run.results if r.id.startswith(prefix)))


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory) -> SmokeRun:
    """Computed once per test session and shared by the end-to-end tests and the claim tests that read a
    whole smoke run. Under pytest-xdist the workers share one folder and a lock: the first worker to need
    the run makes it, the others read it."""
    import fcntl
    import os

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    root = shared / "smoke-run"
    out, cache = root / "out", root / "cache"
    with open(shared / "smoke-run.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = root / "process.json"
        if not done.exists():
            root.mkdir(parents=True, exist_ok=True)
            process = subprocess.run([sys.executable, "-m", "moecl_verify", "run", "--budget", "smoke", "--seed", "0",
                                      "--format", "json,junit", "--quiet", "--cache-dir", str(cache), "--out", str(out)],
                                     capture_output=True, text=True, cwd=root, timeout=900)
            done.write_text(json.dumps({"args": process.args, "returncode": process.returncode,
                                        "stdout": process.stdout, "stderr": process.stderr}))
        record = json.loads(done.read_text())
    process = subprocess.CompletedProcess(record["args"], record["returncode"], record["stdout"], record["stderr"])
    assert process.returncode == 0, process.stderr
    return SmokeRun(root, out, cache, process)
