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
  ground truths, in exact rational arithmetic (it cannot be shrunk in length),
  among the sequences inside Theorem 1's premises (``theory.conditional.PREMISES``:
  T1 >= M, every expert explored, one task per expert after T1; eq. (19)'s rounds
  1..t are a prefix of such an exploration); sequences outside them, such as one
  expert taking every round, are not counted;
* the share of the simulation's realized sequences (Algorithm 1, the claim's
  configuration, pool 0 of its pools) on which the bound fails, evaluated with
  the float oracle.

The entry is ``refuted`` when an exact violation exists, ``inconclusive``
otherwise: exhaustive search on tiny sizes cannot confirm a universal bound.
"""

from __future__ import annotations

import numpy as np

from moecl_verify.checks.model import ClaimResult, exact_result
from moecl_verify.theory.conditional import PREMISES, Violation, smallest_violation

READING = "conditional on the routing and task sequence (A1: Gaussian features independent of the routing)"
# The other reading the theorems' entries take: the right-hand side at each replicate's realized routing counts,
# paired with the realized error, in expectation over the whole run (thm1.py, thm2.py, theorems_at_fig2.py).
IN_EXPECTATION = "in expectation over the run at the realized routing counts"
PART = "conditional on the routing"
TOLERANCE = 1e-9  # relative to S + D: float64 round-off of the oracle is ~1e-13


def explored(chosen: np.ndarray, M: int, T1: int) -> np.ndarray:
    """Per replicate: its exploration rounds 1..T1 route every expert at least once (Lemma 8's balanced
    exploration, a premise of the theorems' routings)."""
    used = np.zeros((chosen.shape[0], M), dtype=bool)
    used[np.arange(chosen.shape[0])[:, None], chosen[:, :T1]] = True
    return used.all(axis=1)


def realized(lhs: np.ndarray, rhs: np.ndarray, scale: float, identity: bool, where: str,
             inside: np.ndarray | None = None) -> tuple[int, str]:
    """How many realized sequences break the bound (or identity), and a sentence saying so.  ``inside``: per
    replicate, whether its sequence satisfies the premises (:func:`explored`); only those are counted."""
    keep = np.ones(lhs.shape[0], dtype=bool) if inside is None else np.asarray(inside, dtype=bool)
    mask = np.broadcast_to(keep.reshape((-1,) + (1,) * (np.ndim(lhs) - 1)), np.shape(lhs))
    diff = np.where(mask, lhs - rhs, 0.0)
    bad = np.abs(diff) > TOLERANCE * scale if identity else diff > TOLERANCE * scale
    worst = int(np.argmax(np.abs(diff) if identity else diff))
    replicate = np.unravel_index(worst, diff.shape)[0]
    cases = int(mask.sum())
    share = ("" if inside is None else f"{int(keep.sum())} of {keep.size} replicates explore every expert "
             "during exploration, and only their sequences count; ")
    text = (f"On the simulation's realized sequences ({where}; float oracle of eq. (42)): {share}{int(bad.sum())} "
            f"of {cases} (replicate, horizon) cases break it"
            + (f"; worst: replicate {replicate}, E[. | routing] = {lhs.flat[worst]:.6g} against "
               f"{np.broadcast_to(rhs, lhs.shape).flat[worst]:.6g}." if cases else "."))
    return int(bad.sum()), text


def entry(claim_id: str, source: str, kind: str, formula: str, exact: Violation | None, realized_count: int,
          realized_text: str, exhaustive: bool = True, **config) -> ClaimResult:
    """One results entry for the conditional reading of a bound or identity.  ``exhaustive``: the exhaustive
    search inside the premises ran (:func:`smallest`), and ``exact`` is its outcome."""
    searched = (f"No violating sequence inside the premises ({'; '.join(PREMISES)}) up to horizon {HORIZON} "
                "(N = 2, M = 3, d = 2, s = 1, orthonormal w, exhaustive, exact)" if exhaustive else
                "No exhaustive search of sequences for this bound")
    if exact is not None:
        verdict = "refuted"
        evidence = ("Exact counterexample inside the premises (shortest violating sequence, exhaustive search, "
                    "rational arithmetic): " + exact.describe() + ". " + realized_text)
        smallest = {"N": exact.N, "M": exact.M, "d": exact.d, "s": exact.s, "horizon": exact.horizon, "T1": exact.T1,
                    "w": [list(w) for w in exact.W],
                    "tasks": [n + 1 for n in exact.tasks], "experts": [m + 1 for m in exact.chosen],
                    "lhs": str(exact.lhs), "rhs": str(exact.rhs), "premises": list(exact.premises)}
    elif realized_count:
        verdict, smallest = "refuted", None
        evidence = (f"{searched}, but violated on Algorithm 1's realized sequences (deterministic evaluation, no "
                    "sampling error). " + realized_text)
    else:
        verdict, smallest = "inconclusive", None
        evidence = f"{searched}; a universal bound cannot be confirmed by a finite search. " + realized_text
    return exact_result(claim_id, source, kind, PART, verdict, evidence, formula, reading=READING, **config,
                        **({"smallest": smallest} if smallest else {}))


HORIZON = 4  # the exhaustive search's longest sequences


def smallest(bound: str) -> Violation | None:
    """The shortest exact violation of eq. (19)/(20) (left side strictly larger) or of the late identity, among
    the sequences inside Theorem 1's premises."""
    return smallest_violation(bound, exceeds=bound != "late", max_horizon=HORIZON, premises=True)
