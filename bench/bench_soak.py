"""Soak benchmark: a run over all claims, then the same command again on the warm cache.

Prints the first run's wall time and peak memory (max RSS of the child), and
for the immediate rerun its wall time, its ratio to the first run, and the
cache hit rate (targets: 100% hits, rerun under 10% of the first run's time).
Both runs write results.json only (``--format json``), so the times are the
checks' own; the two results.json files must be byte-identical.

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
    proc = subprocess.run([sys.executable, "-m", "checks", *args], capture_output=True, text=True)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"run failed ({proc.returncode}): {proc.stderr[-2000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", default="full", choices=["smoke", "standard", "full"])
    parser.add_argument("--claims", default=None)
    parser.add_argument("--jobs", type=int, default=1)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        common = ["run", "--budget", opts.budget, "--format", "json", "--quiet", "--cache-dir", str(tmp / "cache"),
                  "--jobs", str(opts.jobs)] + (["--claims", opts.claims] if opts.claims else [])
        first_wall, first_peak = _run([*common, "--out", str(tmp / "first")])
        second_wall, _ = _run([*common, "--out", str(tmp / "second")])
        cache = json.loads((tmp / "second" / "run-info.json").read_text())["cache"]
        identical = (tmp / "first" / "results.json").read_bytes() == (tmp / "second" / "results.json").read_bytes()
    print(f"budget {opts.budget}, claims {opts.claims or 'all'}, jobs {opts.jobs}")
    print(f"first run:  {first_wall:8.1f} s wall, peak RSS {first_peak / 2**20:.2f} GiB")
    print(f"rerun:      {second_wall:8.1f} s wall ({second_wall / first_wall:.1%} of the first; target < 10%)")
    print(f"cache hits: {cache['hits']} of {cache['hits'] + cache['misses']} chunks ({cache['hit_rate']:.0%}; target 100%), "
          f"corrupt {cache['corrupt']}")
    print(f"results.json byte-identical: {identical}")
    return 0 if identical and cache["misses"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
