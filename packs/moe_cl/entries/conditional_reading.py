"""Theorems 1 and 2 read conditionally on the routing and task sequence.

The theorems' right-hand sides are functions of the routing counts.  Besides
"in expectation over the whole run" (the paired tests in thm1.py / thm2.py),
a reader may take them as holding given the routing: for every task sequence
and routing, E[F_t | routing] < RHS(routing).  Under assumption A1 (Gaussian
features independent of the routing) the left side is exact, from the
recursion of eq. (42) (:mod:`theory.conditional` in rationals,
:mod:`numeric.conditional_oracle` in floats, both tested against Monte Carlo),
so a violating sequence is a proof, not a statistic.  Two pieces of evidence
per entry:

* the shortest violating sequence found by exhaustive search over all
  sequences of each length at N = 2, M = 3 (> N), d = 2, s = 1 and orthonormal
  ground truths, in exact rational arithmetic (it cannot be shrunk in length);
* the share of the simulation's realized sequences (Algorithm 1, the claim's
  configuration, pool 0 of its pools) on which the bound fails, evaluated with
  the float oracle.

The entry is ``refuted`` when an exact violation exists, ``inconclusive``
otherwise: exhaustive search on tiny sizes cannot confirm a universal bound.
"""

from __future__ import annotations

import numpy as np

from moecl_verify.checks.model import ClaimResult, exact_result
from moecl_verify.theory.conditional import Violation, smallest_violation

READING = "conditional on the routing and task sequence (A1: Gaussian features independent of the routing)"
# The other reading the theorems' entries take: the right-hand side at each replicate's realized routing counts,
# paired with the realized error, in expectation over the whole run (thm1.py, thm2.py, theorems_at_fig2.py).
IN_EXPECTATION = "in expectation over the run at the realized routing counts"
PART = "conditional on the routing"
TOLERANCE = 1e-9  # relative to S + D: float64 round-off of the oracle is ~1e-13


def realized(lhs: np.ndarray, rhs: np.ndarray, scale: float, identity: bool, where: str) -> tuple[int, str]:
    """How many realized sequences break the bound (or identity), and a sentence saying so."""
    diff = lhs - rhs
    bad = np.abs(diff) > TOLERANCE * scale if identity else diff > TOLERANCE * scale
    worst = int(np.argmax(np.abs(diff) if identity else diff))
    replicate = np.unravel_index(worst, diff.shape)[0]
    text = (f"On the simulation's realized sequences ({where}; float oracle of eq. (42)): {int(bad.sum())} of "
            f"{bad.size} (replicate, horizon) cases break it; worst: replicate {replicate}, E[. | routing] = "
            f"{lhs.flat[worst]:.6g} against {rhs.flat[worst]:.6g}.")
    return int(bad.sum()), text


def entry(claim_id: str, source: str, kind: str, formula: str, exact: Violation | None, realized_count: int,
          realized_text: str, **config) -> ClaimResult:
    """One results entry for the conditional reading of a bound or identity."""
    if exact is not None:
        verdict = "refuted"
        evidence = ("Exact counterexample (shortest violating sequence, exhaustive search, rational arithmetic): "
                    + exact.describe() + ". " + realized_text)
        smallest = {"N": exact.N, "M": exact.M, "d": exact.d, "s": exact.s, "horizon": exact.horizon, "T1": exact.T1,
                    "tasks": [n + 1 for n in exact.tasks], "experts": [m + 1 for m in exact.chosen],
                    "lhs": str(exact.lhs), "rhs": str(exact.rhs)}
    elif realized_count:
        verdict, smallest = "refuted", None
        evidence = "Violated on realized sequences (deterministic evaluation, no sampling error). " + realized_text
    else:
        verdict, smallest = "inconclusive", None
        evidence = ("No violating sequence found; a universal bound cannot be confirmed by a finite search. "
                    + realized_text)
    return exact_result(claim_id, source, kind, PART, verdict, evidence, formula, reading=READING, **config,
                        **({"smallest": smallest} if smallest else {}))


def smallest(bound: str) -> Violation | None:
    """The shortest exact violation of eq. (19)/(20) (left side strictly larger) or of the late identity."""
    return smallest_violation(bound, exceeds=bound != "late")
