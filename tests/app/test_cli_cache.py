"""The results cache from the command line: reuse, resume after SIGKILL, info/clear, --no-cache, the lock."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from moecl_verify.checks import runner
from moecl_verify.packs.moe_cl import PACK
from moecl_verify.cli import main
from moecl_verify.numeric.cache import MARKER, ResultCache
from moecl_verify.reports import results_json

# Chunks of one sweep claim at smoke: 5 sigma0 x 2 constants x the sweep design's pools (one chunk each).
PER_CLAIM = 5 * 2 * PACK.budgets["smoke"].sweep_pools
# Lemma 6 at smoke: one sweep claim, PER_CLAIM chunks.
SWEEP = ["run", "--claims", "lemma6", "--budget", "smoke", "--seed", "0", "--quiet", "--format", "json"]


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "moecl_verify", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def _entries(cache):
    """Finished chunk entries: descriptions, which are written last (temporary files end in .tmp),
    not counting finished-claim records (``claim-*``)."""
    if not cache.is_dir():
        return 0
    return len([p for p in cache.glob("*.json") if not p.name.startswith((".", "claim-")) and p.name != MARKER])


@pytest.mark.heavy
@pytest.mark.slow
def test_sigkill_mid_sweep_then_rerun_resumes_and_matches_an_uninterrupted_run(tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "out"
    command = [sys.executable, "-m", "moecl_verify", *SWEEP, "--out", str(out), "--cache-dir", str(cache)]
    victim = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while _entries(cache) < 4 and victim.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    victim.send_signal(signal.SIGKILL)
    assert victim.wait(timeout=30) == -signal.SIGKILL, "the run finished before it could be killed"
    finished = _entries(cache)
    assert 4 <= finished < PER_CLAIM and not (out / "results.json").exists()

    resumed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    info = json.loads((out / "run-info.json").read_text())
    stats, reused = info["cache"], info["claim_records"]["reused"]
    # The claim was killed mid-sweep, so no claim record exists: every chunk is looked up, the finished ones hit.
    assert reused == 0 and stats["corrupt"] == 0, info
    assert stats["hits"] >= finished and stats["hits"] + stats["misses"] == PER_CLAIM, (stats, finished)

    uninterrupted = results_json.dumps(runner.run(["lemma6"], budget="smoke", seed=0))
    assert (out / "results.json").read_text(encoding="utf-8") == uninterrupted


@pytest.mark.heavy
def test_rerun_reuses_the_claim_or_hits_every_chunk_then_info_and_clear(tmp_path, capsys):
    cache = tmp_path / "cache"
    args = ["run", "--claims", "lemma6", "--budget", "smoke", "--quiet", "--format", "json", "--cache-dir", str(cache)]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    assert main([*args, "--out", str(tmp_path / "c"), "--recompute-claims"]) == 0
    info = {run: json.loads((tmp_path / run / "run-info.json").read_text()) for run in "abc"}
    assert info["a"]["cache"]["misses"] == PER_CLAIM and info["a"]["claim_records"]["computed"] == 1
    # The identical rerun reuses the finished claim and needs no chunk at all ...
    assert info["b"]["claim_records"]["reused"] == 1 and info["b"]["cache"]["hits"] + info["b"]["cache"]["misses"] == 0
    # ... and with --recompute-claims it redoes the analysis from cached chunks only.
    assert info["c"]["claim_records"] == {"enabled": False}
    assert info["c"]["cache"] == {**info["a"]["cache"], "hits": PER_CLAIM, "misses": 0, "hit_rate": 1.0}
    first = (tmp_path / "a" / "results.json").read_bytes()
    assert first == (tmp_path / "b" / "results.json").read_bytes() == (tmp_path / "c" / "results.json").read_bytes()
    capsys.readouterr()
    assert main(["cache", "info", "--cache-dir", str(cache)]) == 0
    assert f"{PER_CLAIM + 1} entries (1 of them claim and slip records)" in capsys.readouterr().out
    assert main(["cache", "clear", "--cache-dir", str(cache)]) == 0
    assert f"removed {2 * (PER_CLAIM + 1)} files" in capsys.readouterr().out
    assert main(["cache", "info", "--cache-dir", str(cache)]) == 0 and "0 entries" in capsys.readouterr().out


@pytest.mark.heavy
def test_a_locked_cache_is_a_one_line_usage_error(tmp_path):
    with ResultCache(tmp_path / "c"):
        proc = cli("run", "--claims", "lemma4", "--quiet", "--format", "json", "--out", str(tmp_path / "o"),
                   "--cache-dir", str(tmp_path / "c"))
        cleared = cli("cache", "clear", "--cache-dir", str(tmp_path / "c"))
        bypass = cli("run", "--claims", "lemma4", "--budget", "smoke", "--quiet", "--format", "json", "--out", str(tmp_path / "o"),
                     "--cache-dir", str(tmp_path / "c"), "--no-cache")
    assert proc.returncode == 2 and cleared.returncode == 2
    assert bypass.returncode == 0, bypass.stderr  # --no-cache neither reads nor writes, so needs no lock
    assert json.loads((tmp_path / "o" / "run-info.json").read_text())["cache"] == {"enabled": False}
    assert proc.stderr.count("\n") == 1 and "locked by another run" in proc.stderr and f"pid {os.getpid()}" in proc.stderr


@pytest.mark.parametrize("args, word", [
    (["--jobs", "0"], "--jobs"),
    (["--scheduler", "tcp://127.0.0.1:1"], "--scheduler"),
    (["--executor", "threads"], "--executor"),
])
def test_bad_execution_options_exit_2(tmp_path, args, word):
    proc = cli("run", "--claims", "lemma4", "--quiet", "--out", str(tmp_path), *args)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and word in proc.stderr
