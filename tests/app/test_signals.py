"""SIGTERM ends a run as Ctrl-C does: exit 143 (130 for SIGINT), one line, no lane's traceback, no leaked
resources, nothing half-written in --out, and the rerun resumes from the cache."""

import os
import signal
import subprocess
import sys
import time

import pytest

RUN = ["run", "--claims", "prop2.*,lemma6", "--budget", "smoke", "--jobs", "2", "--quiet", "--format", "json"]


@pytest.mark.heavy
@pytest.mark.slow
@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_mid_run_exits_cleanly_and_the_rerun_resumes(tmp_path, sig, code):
    cache, out = tmp_path / "cache", tmp_path / "out"
    command = [sys.executable, "-m", "moecl_verify", *RUN, "--out", str(out), "--cache-dir", str(cache)]
    victim = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)
    deadline = time.monotonic() + 120
    while not any(cache.glob("*.npz")) and victim.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert victim.poll() is None, "the run finished before the signal"
    # SIGINT as a terminal sends it, to the whole process group (the lanes too); SIGTERM to the command alone.
    if sig == signal.SIGINT:
        os.killpg(victim.pid, sig)
    else:
        victim.send_signal(sig)
    _, err = victim.communicate(timeout=120)
    assert victim.returncode == code, err
    lines = [line for line in err.strip().splitlines() if "created results cache" not in line]
    assert lines == ["moecl-verify: terminated" if code == 143 else "moecl-verify: interrupted"]
    assert not (out / "results.json").exists()
    assert not [p for p in out.iterdir() if p.name.startswith(".moecl-staging-")] if out.exists() else True
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert (out / "results.json").is_file()
