"""Suite-wide: the results cache of every command run by a test lives in a temporary directory,
never in the checkout (subprocesses inherit the variable); each test is marked with its tier.

Tiers, by folder: ``unit`` (tests/unit: theory, numeric, statistics, layout), ``claims`` (tests/claims:
each claim on tiny contexts), ``app`` (tests/app and tests/reports: the command line and the renderers),
``e2e`` (tests/e2e: one smoke run of every claim). ``slow`` marks the expensive ones in any tier.
"""

import json
import os
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

# No deadline and no too-slow health check: the suite shares two cores with a background smoke run and
# numba's compilation, so an example's wall time says nothing about the code under test.
from hypothesis import HealthCheck as _HealthCheck  # noqa: E402

_hypothesis_settings.register_profile("deterministic", derandomize=True, print_blob=True, deadline=None,
                                      suppress_health_check=[_HealthCheck.too_slow])
_hypothesis_settings.load_profile("deterministic")


_WARM_KERNELS = """
from moecl_verify.numeric.moe import MoEConfig, simulate_moe
from moecl_verify.numeric.pool import make_pool
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.numeric.single_expert import simulate_single_expert

pool = make_pool(generator_for(0, "warm kernels"), N=2, d=3, sigma0=1.0)
simulate_moe(pool, MoEConfig(M=2, eta=0.1, alpha=0.1, lam=0.1, Gamma=0.1), R=1, T=2, s=1, seed=0, engine="numba")
simulate_single_expert(pool, R=1, T=2, s=1, seed=0, engine="numba")
"""


def pytest_configure(config):
    """In the controller, as the session starts: call the compiled kernels once in a background process, so
    that numba compiles them (about 17 s on a fresh install) a single time and writes its on-disk cache while
    the workers start and run other tests.  A worker or a command that needs a kernel first waits for that
    compilation (each kernel's first call in a process holds an inter-process lock, numeric/kernels.py) and
    then loads the cache in under a second, instead of compiling its own copy."""
    if hasattr(config, "workerinput"):
        return
    _BACKGROUND.append(subprocess.Popen([sys.executable, "-c", _WARM_KERNELS], start_new_session=True,
                                        stdout=subprocess.DEVNULL))


_KERNEL_FREE = ("unit/theory", "unit/checks", "unit/test_layout.py")


def _kernel_free_rank(item, root: Path) -> int:
    """0 for the folders whose tests need no compiled kernel, 1 for the rest."""
    path = Path(str(item.fspath)).relative_to(root).as_posix()
    return 0 if path.startswith(_KERNEL_FREE) else 1


_TIERS = {"unit": "unit", "claims": "claims", "app": "app", "reports": "app", "e2e": "e2e"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    root = Path(__file__).parent
    for item in items:
        folder = Path(str(item.fspath)).relative_to(root).parts[0]
        if folder in _TIERS:
            item.add_marker(getattr(pytest.mark, _TIERS[folder]))
    # Tests that read the shared smoke run go last, so the run (started in the background once collection is
    # done) overlaps the rest of the suite instead of keeping a worker waiting. The tests that need no
    # simulation kernel (theory, statistics, layout) go first, so that numba's compilation of the kernels on a
    # fresh install (started in the background by pytest_configure) overlaps them.
    items.sort(key=lambda item: ("smoke_run" in getattr(item, "fixturenames", ()), _kernel_free_rank(item, root)))


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


def _smoke_root(config) -> Path:
    """A folder every pytest-xdist worker of this test run shares (the controller's base temp), or the
    session's own base temp; pytest's retention of old base temps removes it later."""
    import os

    base = config._tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "smoke-run"


def _smoke_claims() -> str:
    """Every registered claim of the paper but Figure 3's (its small networks take most of a minute with the
    dnn extra; tests/claims/test_fig3_claims.py and tests/unit/numeric/test_dnn_pieces.py cover them), and
    none of the experiments beyond the paper (tests/claims/test_open_experiments.py runs each on small
    settings), so the suite stays within its time."""
    from moecl_verify.checks.registry import all_claims

    return ",".join(c.id for c in all_claims() if not c.id.startswith(SMOKE_SKIPS))


SMOKE_SKIPS = ("fig3.", "open.")
SMOKE_COMMAND = ["run", "--budget", "smoke", "--seed", "0", "--jobs", "1", "--format", "json,junit,md,html,headline", "--quiet",
                 "--claims", _smoke_claims()]


def _start_smoke_run(root: Path) -> subprocess.Popen | None:
    """Start the smoke run in the background unless another worker already did (an exclusive file decides)."""
    import os

    root.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(root / "started", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return None
    script = (f"{sys.executable} -m moecl_verify {' '.join(SMOKE_COMMAND)} --cache-dir {root / 'cache'} "
              f"--out {root / 'out'} > {root / 'stdout'} 2> {root / 'stderr'}; echo $? > {root / 'rc.tmp'}; "
              f"mv {root / 'rc.tmp'} {root / 'rc'}")
    return subprocess.Popen(["sh", "-c", script], cwd=root, start_new_session=True)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Every test that reads the shared smoke run is in the heavy tier: the run is a whole paper's checks,
    more than the default suite's three minutes can hold beside the rest (it runs before the marks select)."""
    for item in items:
        if "smoke_run" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.heavy)


_BACKGROUND: list = []


def pytest_collection_finish(session):
    if any("smoke_run" in getattr(item, "fixturenames", ()) for item in session.items):
        started = _start_smoke_run(_smoke_root(session.config))
        if started is not None:
            _BACKGROUND.append(started)
    if hasattr(session.config, "workerinput"):
        # The shared smoke run (started above, at the default priority) is the session's longest path: the tests
        # that read it wait for it at the end. The workers yield the CPU to it when both want it.
        os.nice(5)


def pytest_sessionfinish(session, exitstatus):
    """A background process this process started is awaited (a worker that ends early may have started the
    smoke run other workers' tests still wait for), unless the session was interrupted or is stopping on a
    failure (-x, --maxfail): then it is killed, so no run is left behind."""
    import os
    import signal

    stopping = exitstatus == pytest.ExitCode.INTERRUPTED or bool(session.shouldstop) or bool(session.shouldfail)
    for process in _BACKGROUND:
        if process.poll() is None:
            if stopping:
                os.killpg(process.pid, signal.SIGTERM)
            else:
                process.wait()


@pytest.fixture(scope="session")
def smoke_run(pytestconfig) -> SmokeRun:
    """The smoke run, shared by the end-to-end tests and the claim tests that read a whole run: started in
    the background by the first worker to finish collecting, awaited here."""
    import time

    root = _smoke_root(pytestconfig)
    _start_smoke_run(root)  # a no-op if it is already running
    deadline = time.monotonic() + 900
    while not (root / "rc").exists():
        assert time.monotonic() < deadline, "the smoke run did not finish in 15 minutes"
        time.sleep(0.5)
    process = subprocess.CompletedProcess(SMOKE_COMMAND, int((root / "rc").read_text()),
                                          (root / "stdout").read_text(), (root / "stderr").read_text())
    assert process.returncode == 0, process.stderr
    return SmokeRun(root, root / "out", root / "cache", process)
