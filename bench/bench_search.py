"""Benchmark: the worst-case searches (packs/moe_cl/entries/worst_case.py, worst_case_more.py) at the smoke and
standard budgets' evaluations.

Run from the repository root:

    python bench/bench_search.py [--seed 0] [--repeat 3]

Each statement is searched as its claim searches it (``worst_case.run_search``: the generator keyed by the seed,
the claim and the statement; each budget's ``search_evaluations``, 300 at smoke and 3000 at standard), and the
wall time of each search is the minimum over --repeat runs, to damp machine noise.  Printed per statement and
budget: the outcome (found, or the least slack), the evaluations spent (float and exact; a search that finds a
violation stops early and then shrinks it) and the seconds; then the totals per budget against the targets (the
whole search within 10 s at smoke and 60 s at standard), and, within this run, the ratio of the standard total to
the smoke total and the time per evaluation.  Nothing is asserted on time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

# Running as a script puts bench/ (not the repo root) on sys.path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from moecl_verify.packs.moe_cl.budgets import BUDGETS  # noqa: E402
from moecl_verify.packs.moe_cl.entries import worst_case, worst_case_more  # noqa: E402

# (claim, statement), as the claims search them
STATEMENTS = (
    ("lemma2", worst_case.LEMMA2_STATED),
    ("lemma2", worst_case.LEMMA2_SHARP),
    ("thm1.generalization", worst_case.EQ20_AVERAGED),
    ("thm1.generalization", worst_case.EQ20_AVERAGED_SETS),
    ("thm2.generalization", worst_case.EQ22_GIVEN_ROUTING),
    ("thm1.forgetting_early", worst_case_more.EQ19_GIVEN_ROUTING),
    ("thm1.generalization", worst_case_more.EQ20_GIVEN_ROUTING),
    ("thm1.generalization", worst_case_more.EQ20_GIVEN_ROUTING_SETS),
    ("lemma12", worst_case_more.LEMMA12_GIVEN_ROUND),
)
# searched with the budget spread over every size configuration, as thm1.generalization searches them
COVERED = (worst_case.EQ20_AVERAGED, worst_case.EQ20_AVERAGED_SETS)
TARGETS = {"smoke": 10.0, "standard": 60.0}  # seconds, the whole search across all statements


def _best_of(repeat: int, claim: str, st, seed: int, evaluations: int):
    best, result = float("inf"), None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        result = worst_case.run_search(st, seed, claim, evaluations, cover=st in COVERED)
        best = min(best, time.perf_counter() - t0)
    return best, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="timing repeats; the minimum is kept")
    args = parser.parse_args(argv)

    print("how to run: python bench/bench_search.py [--seed 0] [--repeat 3]")
    totals, spent = {}, {}
    for budget in TARGETS:
        evaluations = BUDGETS[budget].search_evaluations
        print(f"\n{budget}: {evaluations} evaluations per search, seed {args.seed}")
        totals[budget], spent[budget] = 0.0, 0
        for claim, st in STATEMENTS:
            seconds, res = _best_of(args.repeat, claim, st, args.seed, evaluations)
            totals[budget] += seconds
            spent[budget] += res.evaluations + res.exact_evaluations + (res.counterexample.evaluations if res.found
                                                                        else 0)
            outcome = (f"found, shrunk slack {res.counterexample.slack}" if res.found
                       else f"none found, least slack {res.least_slack:.3g}")
            print(f"  {seconds:8.3f} s  {res.evaluations:5d} + {res.exact_evaluations:3d} exact  {outcome:40s} {st.name}")
        verdict = "within" if totals[budget] <= TARGETS[budget] else "OVER"
        print(f"  total {totals[budget]:.3f} s ({verdict} the {TARGETS[budget]:g} s target), "
              f"{spent[budget]} evaluations with shrinking, "
              f"{1e3 * totals[budget] / max(spent[budget], 1):.3f} ms per evaluation")
    print(f"\nstandard / smoke total time: {totals['standard'] / max(totals['smoke'], 1e-12):.1f}x "
          f"(evaluations allowed: {BUDGETS['standard'].search_evaluations / BUDGETS['smoke'].search_evaluations:g}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
