"""The routing ablation at Figure 2's configuration: how much of the late identity's failure is misrouting.

Theorem 1's late identity E[F_t] = (T1 - 1)/(t - 1) E[F_T1] (t > T1) rests on two steps of its proof: after
T1 each task is routed inside its expert set (Proposition 3: uniformly within M_n, never outside), and an
expert given its own task again does not move (Lemma 3).  Both fail in the runs, so the excess of E[F_t] over
the identity at Figure 2's configuration (N = 7, d = 10, s = 6, sigma0 = 0.4, T = 2000, M in {10, 20}) has two
candidate causes.  Which one produces it is measured by removing one and keeping everything else:

* removed: routing outside the expert sets after T1.  The ablated run (``router="sets_after_T1"`` of
  :class:`numeric.moe.MoEConfig`) is Figure 2's run on the same draws (tasks, features, signal positions,
  routing noise: the keyed streams of :func:`packs.moe_cl.experiments.fig2_runs.run`), the learned gate routing
  every round up to T1, then each task routed uniformly within its eq. (11) set of the gate after round T1
  (made a partition in which every task has an expert, M >= N).  The gate keeps training and terminating as
  in Algorithm 1; only the choice of expert after T1 is forced.  So the rounds up to T1 are the baseline's
  (same experts, same F_T1), and replicate i of both runs shares its random numbers: the per-replicate
  difference is paired.
* measured: F_t - (T1 - 1)/(t - 1) F_T1 per replicate at the horizons of the late identity's entries (LATE),
  under Definition 1's features (Figure 2's) and Gaussian features (Assumption A1's), each task pool of the
  budget, M = 10 and 20.

What the ablation removes is Proposition 3's part of the excess (``CAUSE``); what remains with the routing
forced is the most that Lemma 3's moving experts can claim at that configuration.  The records
(:class:`checks.ablation.Ablation`, intervals at the run's confidence) travel in the late-identity entries'
configuration (``config["ablation"]``) and from there onto Theorem 1's slip (``Slip.ablation``).
"""

from __future__ import annotations

import numpy as np

from moecl_verify.checks import ablation
from moecl_verify.checks.context import Context
from moecl_verify.checks.model import Interpretation
from moecl_verify.numeric.moe import SETS_AFTER_T1
from moecl_verify.packs.moe_cl.experiments import fig2_runs
from moecl_verify.packs.moe_cl.experiments.fig2_runs import FIG2, LATE

# Proposition 3's root cause (claims/router/prop3.py): tasks routed outside their eq. (11) sets after the freeze.
CAUSE = "prop3.routing_outside_sets"
REMOVED = "routing outside the expert sets after T1"
QUANTITY = "E[F_t]'s excess over the late identity at Figure 2's configuration"
FEATURES = (FIG2["features"], "gaussian")
INTERPRETATION = Interpretation(
    id="thm1.late.routing_ablation",
    location="Section 5.1, Theorem 1 (t > T1); Proposition 3; Lemma 3",
    issue="How much of the late identity's failure at Figure 2's configuration comes from tasks routed outside "
    "their expert sets (Proposition 3's cause) rather than from experts that keep moving (Lemma 3's).",
    choice="An ablation on common random numbers: Figure 2's run replayed on the same draws with the learned gate "
    "routing every round up to T1, then each task routed uniformly within its eq. (11) set of the gate after round "
    "T1 (a task whose set is empty takes the best-aligned expert of a set with two or more, so that the sets "
    "partition the experts); the gate keeps training and terminating. The sets are the gate's at T1, not at the "
    "freeze T2 a few rounds later, so that forcing the routing does not change the sets it is forced into. "
    f"Measured per replicate: F_t - (T1 - 1)/(t - 1) F_T1 at t in {{{', '.join(map(str, LATE))}}}, under "
    "Definition 1's and "
    f"Gaussian features, Theorem 1's numbers of experts there (M > N), each task pool; intervals at the run's "
    f"confidence ({100 * ablation.LEVEL:g}%).",
)


def excess(run, T1: int, t: int) -> np.ndarray:
    """Per replicate F_t - (T1 - 1)/(t - 1) F_T1, the late identity's residual (Theorem 1, t > T1)."""
    return run.forgetting[:, t - 1] - (T1 - 1) / (t - 1) * run.forgetting[:, T1 - 1]


def late_identity(ctx: Context, M: int, pool: int) -> list[dict]:
    """The ablation records (as JSON) of the late identity's residual at Figure 2's configuration with M experts
    on task pool ``pool``, per feature model and horizon."""
    T1 = fig2_runs.moe_config(M, True).exploration_rounds
    out = []
    for features in FEATURES:
        baseline = fig2_runs.run(ctx, M, True, pool=pool, features=features)
        forced = fig2_runs.run(ctx, M, True, pool=pool, features=features, router=SETS_AFTER_T1)
        for t in LATE:
            out.append(ablation.paired(CAUSE, REMOVED, QUANTITY, excess(baseline, T1, t), excess(forced, T1, t),
                                       case=f"{features} features, M = {M}, pool {pool}, t = {t}").to_json())
    return out


def records(results) -> tuple[ablation.Ablation, ...]:
    """The ablation records carried by the given entries, in their order."""
    return tuple(ablation.Ablation.from_json(a) for r in results for a in r.config.get("ablation", ()))


def summary(records_, features: str) -> str:
    """The ablated residual under one feature model, over M, pools and horizons, in words: its span at the first
    and the last horizon (whether it decays with t), for Theorem 1's slip."""
    rows = [a for a in records_ if a.case.startswith(f"{features} features")]
    if not rows:
        return ""
    by_t: dict[int, list[float]] = {}
    for a in rows:
        by_t.setdefault(int(a.case.rsplit("t = ", 1)[1]), []).append(a.ablated)
    first, last = min(by_t), max(by_t)
    span = lambda v: f"{min(v):.3g}" if f"{min(v):.3g}" == f"{max(v):.3g}" else f"{min(v):.3g} to {max(v):.3g}"  # noqa: E731
    return f"{span(by_t[first])} at t = {first} and {span(by_t[last])} at t = {last} ({features} features)"


__all__ = ["CAUSE", "FEATURES", "INTERPRETATION", "QUANTITY", "REMOVED", "excess", "late_identity", "records", "summary"]
