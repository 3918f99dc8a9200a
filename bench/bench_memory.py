"""Memory benchmark: the peak resident memory of a run at each budget, and of its largest process.

Each run is ``moecl-verify run --budget B --format json`` in a fresh cache (so every chunk is computed, as on a
first run) with the default claim lanes.  While it runs, the process tree (the command and its claim lanes) is
sampled with psutil every 0.1 s: the peak of the summed RSS is the run's peak, the peak of one process's RSS
its largest process (a lane, or the command itself with one lane).  (``ru_maxrss`` cannot stand in: a lane
resets its peak at each group it starts, so that run-info.json can give each group's own peak.)

    python bench/bench_memory.py                         # smoke, standard and full
    python bench/bench_memory.py --budgets standard --claims 'thm1.*,thm2.*,c4,c5'

Needs psutil (installed with the tool).  The full budget takes about 8 minutes on two cores.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

SAMPLE_SECONDS = 0.1


@dataclass(frozen=True)
class MemoryPeak:
    budget: str
    wall_seconds: float
    total_peak: int  # bytes: the largest summed RSS of the process tree at one sample
    process_peak: int  # bytes: the largest RSS of one process at one sample
    processes: int  # processes seen in the tree


def _tree(root: psutil.Process) -> list[psutil.Process]:
    try:
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def measure(budget: str, claims: str | None, jobs: int | None, workdir: Path, outdir: Path) -> MemoryPeak:
    command = [sys.executable, "-m", "moecl_verify", "run", "--budget", budget, "--format", "json", "--quiet",
               "--cache-dir", str(workdir / f"cache-{budget}"), "--out", str(outdir / f"out-{budget}"),
               *(["--claims", claims] if claims else []), *(["--jobs", str(jobs)] if jobs else [])]
    started = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    root = psutil.Process(proc.pid)
    total_peak = process_peak = 0
    seen: set[int] = set()
    while proc.poll() is None:
        total = 0
        for p in _tree(root):
            try:
                rss = p.memory_info().rss
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            seen.add(p.pid)
            total += rss
            process_peak = max(process_peak, rss)
        total_peak = max(total_peak, total)
        time.sleep(SAMPLE_SECONDS)
    stderr = proc.stderr.read() if proc.stderr else ""
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{budget} run failed ({proc.returncode}): {stderr[-2000:]}")
    return MemoryPeak(budget, wall, total_peak, process_peak, len(seen))


def gib(n: int) -> str:
    return f"{n / 2**30:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", default="smoke,standard,full", help="comma-separated budgets, in order")
    parser.add_argument("--claims", default=None, help="as the tool's --claims (default: every claim)")
    parser.add_argument("--jobs", type=int, default=None, help="as the tool's --jobs (default: one lane per core)")
    parser.add_argument("--keep", default=None, metavar="DIR",
                        help="keep each run's outputs in DIR/out-BUDGET (e.g. to diff them); default: a temporary "
                             "folder, removed with the caches")
    opts = parser.parse_args()
    budgets = [b.strip() for b in opts.budgets.split(",") if b.strip()]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        for budget in budgets:
            row = measure(budget, opts.claims, opts.jobs, Path(tmp), Path(opts.keep or tmp))
            rows.append(row)
            print(f"{budget}: {row.wall_seconds:.0f} s, peak {gib(row.total_peak)} GiB summed over "
                  f"{row.processes} processes, largest process {gib(row.process_peak)} GiB", file=sys.stderr)
    print(f"claims: {opts.claims or 'all'}; lanes: {opts.jobs or 'default (one per core)'}")
    print()
    print("| budget | wall s | peak RSS, all processes (GiB) | largest process (GiB) |")
    print("|---|---|---|---|")
    for row in rows:
        print(f"| {row.budget} | {row.wall_seconds:.0f} | {gib(row.total_peak)} | {gib(row.process_peak)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
