"""Ablations at Figure 2's configuration: each cause of a discrepancy removed in turn, everything else kept.

At Figure 2's configuration (N = 7, d = 10, s = 6, sigma0 = 0.4, T = 2000, M in {10, 20}, Definition 1's
features, Algorithm 1 with termination) three of Theorem 1's statements fail by wide margins, and each failure
has more than one candidate cause in the proof:

* the late identity E[F_t] = (T1 - 1)/(t - 1) E[F_T1] (t > T1) needs every task routed inside its expert set
  after T1 (Proposition 3), an expert given its own task again not to move (Lemma 3), and the rotational
  symmetry of the features behind the closed forms (Lemma 16's step, assumption A1);
* eq. (19) (t <= T1) is built from Appendix H's summand, which counts the gap between a task and itself as D
  (Proposition 4's proof), and from the same rotational symmetry;
* eq. (20) needs the routing, the experts' stillness and the symmetry again.

A number belongs to a cause only as far as removing that cause changes it, so each cause is removed by a
counterfactual on common random numbers (:func:`packs.moe_cl.experiments.fig2_runs.run`: the same tasks,
features, signal positions and routing noise, replicate by replicate):

* routing outside the expert sets: ``router="sets_after_T1"`` (the learned gate up to T1, then each task routed
  uniformly within its eq. (11) set of the gate after round T1; :class:`numeric.moe.MoEConfig`);
* the moving expert: ``expert_step="still_on_repeat"`` (Lemma 3 imposed: an expert routed the task it was last
  trained on keeps its model);
* Definition 1's features: Gaussian features from the same keyed normals (A1 holds);
* Appendix H's same-task term: a formula removal, the derived summand in place of the printed one
  (:func:`packs.moe_cl.experiments.theorem_bounds.eq19_rhs_derived`, theory.thm1.eq19_summand_derived) on the
  same run.

Where two causes together are the whole of a proof's argument, the run with both removed is recorded too (its
record names both, ``together``): it says how much the two explain between them, not what either explains alone.

Per replicate the residual of the statement (its left side minus its right side at the realized counts) is
measured with and without the cause, and :func:`checks.ablation.paired` turns the pairs into a record with
intervals at the run's confidence.  The records travel in the entries' configuration (``config["ablation"]``)
and from there onto Theorem 1's slips (``Slip.ablation``); they describe, they decide nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from moecl_verify.checks import ablation
from moecl_verify.checks.context import Context
from moecl_verify.checks.model import Interpretation
from moecl_verify.numeric.moe import SETS_AFTER_T1, STILL_ON_REPEAT
from moecl_verify.packs.moe_cl.experiments import fig2_runs
from moecl_verify.packs.moe_cl.experiments.fig2_runs import EARLY, FIG2, LATE
from moecl_verify.packs.moe_cl.experiments.theorem_bounds import eq19_rhs, eq19_rhs_derived, eq20_rhs

R_RATIO = 1 - FIG2["s"] / FIG2["d"]


@dataclass(frozen=True)
class Removal:
    """One cause and how a run removes it: ``run`` the arguments of :func:`fig2_runs.run` that remove it (empty
    for a formula removal), ``formula`` whether the derived right-hand side replaces the printed one."""

    cause: str
    removed: str
    run: dict = field(default_factory=dict)
    formula: bool = False


# Proposition 3's root cause (claims/router/prop3.py): tasks routed outside their eq. (11) sets after the freeze.
ROUTING = Removal("prop3.routing_outside_sets", "routing outside the expert sets after T1", {"router": SETS_AFTER_T1})
LEMMA3 = Removal("lemma3.expert_moves", "the expert's step on its own task again (Lemma 3 imposed)",
                 {"expert_step": STILL_ON_REPEAT})
FEATURES = Removal("lemma16.definition1", "Definition 1's features (Gaussian ones instead)", {"features": "gaussian"})
SAME_TASK = Removal("prop4.appH.same_task_gap", "Appendix H's same-task term from eq. (19)",
                    formula=True)
CAUSE = ROUTING.cause

LATE_QUANTITY = "E[F_t]'s excess over the late identity"
EARLY_QUANTITY = "E[F_t]'s excess over eq. (19)"
GENERALIZATION_QUANTITY = "E[G_T]'s excess over eq. (20)"

INTERPRETATION = Interpretation(
    id="thm1.fig2.ablations",
    location="Section 5.1, Theorem 1; Proposition 3; Lemma 3; Appendix H; Appendix I.1 (rotational symmetry)",
    issue="Which of the proof's steps produce Theorem 1's failures at Figure 2's configuration, and how much of "
    "each failure each step explains.",
    choice="Each cause removed in turn on common random numbers, everything else as at Figure 2's configuration: "
    "routing outside the expert sets (each task routed uniformly within its eq. (11) set of the gate after round "
    "T1, the sets made a partition in which every task has an expert; the gate keeps training and terminating); "
    "the moving expert (Lemma 3 imposed: an expert given the task it was last trained on keeps its model); "
    "Definition 1's features (Gaussian features from the same normals); Appendix H's same-task term (eq. (19)'s "
    "summand as it follows from the model, (1 - r)(1 - r^(L_t - L_tau)) D larger). Measured per replicate: the "
    f"statement's residual at the realized counts, at t in {{{', '.join(map(str, EARLY))}}} (eq. (19), t <= T1), "
    f"{{{', '.join(map(str, LATE))}}} (the late identity) and T (eq. (20)); intervals at the run's confidence "
    f"({100 * ablation.LEVEL:g}%). Joint removals are recorded as such and never quoted as one cause's effect.",
)


def _runs(ctx: Context, M: int, pool: int, removals) -> dict:
    """The baseline (Figure 2's run) and each removal's run (its arguments merged, for a joint removal)."""
    out = {(): fig2_runs.run(ctx, M, True, pool=pool)}
    for group in removals:
        kwargs = {k: v for r in group for k, v in r.run.items()}
        out[tuple(r.cause for r in group)] = fig2_runs.run(ctx, M, True, pool=pool, **kwargs) if kwargs else out[()]
    return out


def _records(ctx, M, pool, quantity, removals, residual, horizons) -> list[dict]:
    """One record per removal (a tuple of causes) and horizon: ``residual(run, t, formula)`` per replicate."""
    runs = _runs(ctx, M, pool, removals)
    out = []
    for group in removals:
        formula = any(r.formula for r in group)
        ablated_run = runs[tuple(r.cause for r in group)]
        for t in horizons:
            base = residual(runs[()], t, False)
            ablated = residual(ablated_run, t, formula)
            out.append(ablation.paired(group[0].cause, " and ".join(r.removed for r in group), quantity, base,
                                       ablated, case=f"M = {M}, pool {pool}, t = {t}",
                                       together=tuple(r.cause for r in group[1:])).to_json())
    return out


def late_identity(ctx: Context, M: int, pool: int) -> list[dict]:
    """The late identity's residual F_t - (T1 - 1)/(t - 1) F_T1 with each cause removed (routing, Lemma 3, the
    features), and with routing and Lemma 3 removed together (the proof's whole argument for t > T1)."""
    T1 = fig2_runs.moe_config(M, True).exploration_rounds

    def residual(run, t, formula):
        return run.forgetting[:, t - 1] - (T1 - 1) / (t - 1) * run.forgetting[:, T1 - 1]

    return _records(ctx, M, pool, LATE_QUANTITY, ((ROUTING,), (LEMMA3,), (FEATURES,), (ROUTING, LEMMA3)),
                    residual, LATE)


def early_bound(ctx: Context, M: int, pool: int) -> list[dict]:
    """Eq. (19)'s residual F_t - RHS(realized counts), t <= T1, with Appendix H's same-task term removed (the
    derived summand), with Gaussian features, and with both (the two steps eq. (19)'s proof takes from
    Proposition 4's)."""
    T1 = fig2_runs.moe_config(M, True).exploration_rounds
    p = fig2_runs.pool(ctx, FIG2["signal_scale"], True, pool=pool)

    def residual(run, t, formula):
        rhs = (eq19_rhs_derived if formula else eq19_rhs)(run.chosen, M, t, R_RATIO, p.S, p.D)
        return run.forgetting[:, t - 1] - rhs

    return _records(ctx, M, pool, EARLY_QUANTITY, ((SAME_TASK,), (FEATURES,), (SAME_TASK, FEATURES)), residual,
                    [t for t in EARLY if t <= T1])


def generalization_bound(ctx: Context, M: int, pool: int) -> list[dict]:
    """Eq. (20)'s residual G_T - RHS(realized counts) with each cause removed (routing, Lemma 3, the features)."""
    T1 = fig2_runs.moe_config(M, True).exploration_rounds
    p = fig2_runs.pool(ctx, FIG2["signal_scale"], True, pool=pool)

    def residual(run, t, formula):
        return run.generalization[:, t - 1] - eq20_rhs(run.chosen, M, T1, R_RATIO, p.S, p.D)

    return _records(ctx, M, pool, GENERALIZATION_QUANTITY, ((ROUTING,), (LEMMA3,), (FEATURES,)), residual,
                    (FIG2["T"],))


def convergence(ctx: Context, M: int, pool: int, near_zero: dict[str, float]) -> list[dict]:
    """Figure 2's 'almost zero' criterion with routing outside the expert sets removed: per replicate the final
    X_T minus 'almost zero' (``near_zero[metric]``, a tenth of one expert's E[X_T] on the pool), X = F and G, at
    T.  What the paper's figure shows is then reproduced or not with the routing Proposition 3 describes."""
    base = fig2_runs.run(ctx, M, True, pool=pool)
    forced = fig2_runs.run(ctx, M, True, pool=pool, **ROUTING.run)
    out = []
    for metric, name in (("forgetting", "F_T"), ("generalization", "G_T")):
        level = near_zero[metric]
        out.append(ablation.paired(ROUTING.cause, ROUTING.removed, f"E[{name}]'s excess over 'almost zero'",
                                   getattr(base, metric)[:, -1] - level, getattr(forced, metric)[:, -1] - level,
                                   case=f"M = {M}, pool {pool}, t = {FIG2['T']}").to_json())
    return out


def records(results) -> tuple[ablation.Ablation, ...]:
    """The ablation records carried by the given entries, in their order."""
    return tuple(ablation.Ablation.from_json(a) for r in results for a in r.config.get("ablation", ()))


def lowering_causes(records_) -> tuple[str, ...]:
    """The causes whose removal alone moved the residual in some case and, in every case it moved, towards 0
    (a part of the discrepancy, not an interaction that raises it), in the records' order."""
    out = []
    for cause in dict.fromkeys(a.cause for a in records_ if a.alone):
        moved = [a for a in records_ if a.cause == cause and a.alone and a.moved]
        if moved and all(a.share is not None and a.share > 0 for a in moved):
            out.append(cause)
    return tuple(out)


def share_span(records_, cause: str) -> str:
    """The share of the residual that removing ``cause`` alone takes away, over the cases where it moved it
    ("" where it moved none), as a percentage span: negative where the removal raised the residual."""
    shares = [a.share for a in records_ if a.cause == cause and a.alone and a.moved and a.share is not None]
    if not shares:
        return ""
    lo, hi = f"{100 * min(shares):.0f}%", f"{100 * max(shares):.0f}%"
    n = sum(1 for a in records_ if a.cause == cause and a.alone)
    return (lo if lo == hi else f"{lo} to {hi}") + f" ({len(shares)} of {n} cases)"


def ablated_span(records_, cause: str, together: tuple[str, ...] = ()) -> str:
    """What remains of the residual with ``cause`` (and ``together``) removed, over M, pools and horizons: its
    span at the first and the last horizon (whether it decays with t)."""
    rows = [a for a in records_ if a.cause == cause and a.together == tuple(together)]
    by_t: dict[int, list[float]] = {}
    for a in rows:
        by_t.setdefault(int(a.case.rsplit("t = ", 1)[1]), []).append(a.ablated)
    if not by_t:
        return ""

    def span(v):
        lo, hi = f"{min(v):.3g}", f"{max(v):.3g}"
        return lo if lo == hi else f"{lo} to {hi}"

    first, last = min(by_t), max(by_t)
    return (f"{span(by_t[first])} at t = {first}" if first == last else
            f"{span(by_t[first])} at t = {first} and {span(by_t[last])} at t = {last}")


__all__ = ["CAUSE", "EARLY_QUANTITY", "FEATURES", "GENERALIZATION_QUANTITY", "INTERPRETATION", "LATE_QUANTITY",
           "LEMMA3", "ROUTING", "Removal", "convergence", "SAME_TASK", "ablated_span", "early_bound", "generalization_bound",
           "late_identity", "lowering_causes", "records", "share_span"]
