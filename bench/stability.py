"""Verdict stability across seeds and budgets: a verdict that another seed or a larger budget turns from
confirmed to refuted (or back) is a defect of the decision rule, not a finding.

Runs ``moecl-verify run`` at the smoke budget with seeds 0, 1 and 2 and at the standard budget with seed
0 (each into its own folder under ``--out``, sharing one results cache), matches entries across the runs
by claim id, form and the string-valued settings that name an entry (features, part, reading, pool,
hidden constant), and lists every entry whose verdict is ``confirmed`` in one run and ``refuted`` in
another. The target is none.

    python bench/stability.py [--out bench-stability] [--skip-standard] [--jobs N] [--cache-dir DIR]
                              [--compare-only]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

RUNS = [("smoke", 0), ("smoke", 1), ("smoke", 2), ("standard", 0)]
NAMING_NUMBERS = ("pool", "hidden_constant", "M", "N", "K")
# String settings that are outcomes of the run, not names of the entry (which case decided it).
OUTCOMES = ("decisive_horizon",)


def entry_name(entry: dict) -> str:
    config = entry.get("config", {})
    named = {k: v for k, v in config.items()
             if k not in OUTCOMES and (isinstance(v, str) or (k in NAMING_NUMBERS and v is not None))}
    return f"{entry['id']} [{entry['form']}] " + json.dumps(named, sort_keys=True)


def verdicts(path: Path) -> dict[str, str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    seen: Counter = Counter()
    out = {}
    for entry in data["results"]:
        name = entry_name(entry)
        seen[name] += 1
        out[name if seen[name] == 1 else f"{name} #{seen[name]}"] = entry["verdict"]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench-stability", help="folder for the runs (default bench-stability)")
    parser.add_argument("--skip-standard", action="store_true", help="only the three smoke runs")
    parser.add_argument("--jobs", default=None,
                        help="worker processes per run (default: the tool's, one per usable core)")
    parser.add_argument("--compare-only", action="store_true",
                        help="do not run: compare the results.json files already in OUT's run folders")
    parser.add_argument("--cache-dir", default=None,
                        help="results cache shared by the runs (default OUT/cache; point it at the main job's "
                             "cache to reuse its standard run)")
    args = parser.parse_args()
    out = Path(args.out)
    runs = [r for r in RUNS if not (args.skip_standard and r[0] == "standard")]
    tables = {}
    for budget, seed in runs:
        folder = out / f"{budget}-seed{seed}"
        started = time.monotonic()
        if args.compare_only:
            tables[(budget, seed)] = verdicts(folder / "results.json")
            counts = Counter(tables[(budget, seed)].values())
            print(f"{budget:<9} seed {seed}: {len(tables[(budget, seed)])} entries "
                  f"({', '.join(f'{n} {v}' for v, n in sorted(counts.items()))})")
            continue
        proc = subprocess.run([sys.executable, "-m", "moecl_verify", "run", "--budget", budget, "--seed", str(seed),
                               "--format", "json", "--quiet", *(["--jobs", args.jobs] if args.jobs else []), "--out", str(folder),
                               "--cache-dir", args.cache_dir or str(out / "cache")], capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return proc.returncode
        tables[(budget, seed)] = verdicts(folder / "results.json")
        counts = Counter(tables[(budget, seed)].values())
        print(f"{budget:<9} seed {seed}: {len(tables[(budget, seed)])} entries "
              f"({', '.join(f'{n} {v}' for v, n in sorted(counts.items()))}), {time.monotonic() - started:.0f} s")
    names = sorted(set().union(*tables.values()))
    flips = []
    for name in names:
        seen = {run: table[name] for run, table in tables.items() if name in table}
        if "confirmed" in seen.values() and "refuted" in seen.values():
            flips.append((name, seen))
    missing = [n for n in names if sum(n in t for t in tables.values()) < len(tables)]
    print(f"\n{len(names)} entries matched across {len(tables)} runs ({len(missing)} not present in every run)")
    print(f"entries whose verdict moves between confirmed and refuted: {len(flips)} (target: none)")
    for name, seen in flips:
        where = ", ".join(f"{b} seed {s}: {v}" for (b, s), v in seen.items())
        print(f"  {name}\n    {where}")
    return 0 if not flips else 1


if __name__ == "__main__":
    sys.exit(main())
