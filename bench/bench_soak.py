"""Soak benchmark: a run over all claims, then the same command again on the warm cache.

Prints the first run's wall time and peak memory (max RSS of the child), and
for the immediate rerun its wall time, its ratio to the first run, and what it
reused (targets: nothing recomputed, rerun under 10% of the first run's time).
The identical rerun reuses finished claims whole (``checks.claim_store``), so
it looks up no chunk; a third run with ``--recompute-claims`` redoes every
claim's analysis from the cached chunks and reports their hit rate (target
100%).  All runs write results.json only (``--format json``), so the times are
the checks' own; the results.json files must be byte-identical.

    python bench/bench_soak.py                      # full budget, all claims
    python bench/bench_soak.py --budget standard --jobs 2
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _run(args: list[str]) -> tuple[float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "moecl_verify", *args], capture_output=True, text=True)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"run failed ({proc.returncode}): {proc.stderr[-2000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", default="full", choices=["smoke", "standard", "full"])
    parser.add_argument("--claims", default=None)
    parser.add_argument("--jobs", type=int, default=None, help="as the tool's --jobs (default: one per usable core)")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        common = ["run", "--budget", opts.budget, "--format", "json", "--quiet", "--cache-dir", str(tmp / "cache"),
                  *(["--jobs", str(opts.jobs)] if opts.jobs else [])] + (["--claims", opts.claims] if opts.claims else [])
        first_wall, first_peak = _run([*common, "--out", str(tmp / "first")])
        second_wall, _ = _run([*common, "--out", str(tmp / "second")])
        third_wall, _ = _run([*common, "--out", str(tmp / "third"), "--recompute-claims"])
        info = {run: json.loads((tmp / run / "run-info.json").read_text()) for run in ("first", "second", "third")}
        first = (tmp / "first" / "results.json").read_bytes()
        identical = all((tmp / run / "results.json").read_bytes() == first for run in ("second", "third"))
    records, cache = info["second"]["claim_records"], info["third"]["cache"]
    print(f"budget {opts.budget}, claims {opts.claims or 'all'}, jobs {opts.jobs}")
    print(f"first run:  {first_wall:8.1f} s wall, peak RSS {first_peak / 2**20:.2f} GiB, "
          f"{info['first']['cache']['misses']} chunks computed")
    print(f"rerun:      {second_wall:8.1f} s wall ({second_wall / first_wall:.1%} of the first; target < 10%); "
          f"claims reused {records['reused']} of {records['reused'] + records['computed']}, "
          f"chunks recomputed {info['second']['cache'].get('misses', 0)}")
    print(f"rerun with --recompute-claims: {third_wall:8.1f} s wall ({third_wall / first_wall:.1%} of the first); "
          f"chunk hits {cache['hits']} of {cache['hits'] + cache['misses']} ({cache['hit_rate']:.0%}; target 100%), "
          f"corrupt {cache['corrupt']}")
    slowest = sorted(info["third"]["claim_seconds"].items(), key=lambda kv: -kv[1])[:5]
    print("  its slowest analyses: " + ", ".join(f"{k} {v:.1f} s" for k, v in slowest))
    print(f"results.json byte-identical across the three runs: {identical}")
    ok = identical and records["computed"] == 0 and info["second"]["cache"].get("misses", 0) == 0 and cache["misses"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
