"""Figure 5 (Appendix A.4): the termination threshold Gamma, forgetting and generalization error.

Statements (Appendix A.4), with lambda = sigma0^1.25, sigma0 = 0.4, N = 30
(100 runs): forgetting is robust to Gamma; generalization error is smaller for
Gamma in {sigma0^1.25, sigma0^1.5} (<= lambda, balanced load, see Figure 4)
than in {sigma0^0.75, sigma0}.

Measured: final-round forgetting and generalization error per replicate; all
Gamma values share the same draws (paired comparisons; the simulations, shared
with Figure 4, are in :mod:`packs.moe_cl.experiments.fig45_runs`).  Unstated and
chosen: M = 5 and K = 3 for Figure 5 as for Figure 4.

The statements are made for the setting, not for one draw of the ground
truths, so each is measured on several task pools drawn independently of the
replicate seed (:mod:`packs.moe_cl.experiments.pools`), one entry per pool (its key's
pool k).  Each entry is a criterion "Delta > 0 in every case"
(``Measurement``, rule ``positive``), decided by the run's error control
(:mod:`checks.decide`).  The levels artifact shows pool 0 only.
"""

from __future__ import annotations

import math

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments import fig45_runs
from moecl_verify.packs.moe_cl.experiments.pools import POOL_NOTE
from moecl_verify.packs.moe_cl.experiments.fig45_runs import FIG5_N, GAMMAS, INTERPRETATIONS, LARGE, SMALL, paired
from moecl_verify.packs.moe_cl.entries.fig45 import measurement
from moecl_verify.packs.moe_cl.experiments.pools import POOL_SEED, pool_indices
from moecl_verify.checks.kinds.mean import Measurement
from moecl_verify.checks.registry import Claim, register

EQUIVALENCE = 0.1  # "robust": within 10% of the small-Gamma level


def _final(run, metric):
    return getattr(run, metric)[:, -1]


def measure_fig5_generalization(ctx: Context) -> list[Measurement]:
    criterion = "generalization error is smaller with Gamma <= lambda: Delta = E[G_T | Gamma large] - E[G_T | Gamma small] (paired)"
    out = []
    for k in pool_indices(ctx.sizes):
        g = {name: _final(fig45_runs.run(ctx, FIG5_N, name, k), "generalization") for name in GAMMAS}
        tests = [paired(f"{big} vs {small}", g[big], g[small]) for big in LARGE for small in SMALL]
        out.append(measurement(ctx, "fig5.generalization", "Appendix A.4, Figure 5(b)", criterion, tests, FIG5_N, k))
    return out


def measure_fig5_forgetting(ctx: Context) -> list[Measurement]:
    criterion = (
        f"forgetting is robust to Gamma: within {EQUIVALENCE:.0%} of its value at Gamma = sigma0^1.5 for every Gamma "
        "(two one-sided margins per Gamma, paired)"
    )
    out = []
    for k in pool_indices(ctx.sizes):
        f = {name: _final(fig45_runs.run(ctx, FIG5_N, name, k), "forgetting") for name in GAMMAS}
        ref = f["sigma0^1.5"]
        tests = []
        for name in ("sigma0^0.75", "sigma0", "sigma0^1.25"):
            tests.append(paired(f"{name} not above", ref, f[name], EQUIVALENCE * ref))
            tests.append(paired(f"{name} not below", f[name], ref, EQUIVALENCE * ref))
        out.append(measurement(ctx, "fig5.forgetting_robust", "Appendix A.4, Figure 5(a)", criterion, tests, FIG5_N, k))
    return out


def fig5_levels(ctx: Context) -> dict:
    """Final forgetting and generalization error per Gamma on task pool 0 (Figure 5's picture)."""
    rows = []
    for name in GAMMAS:
        run = fig45_runs.run(ctx, FIG5_N, name, 0)
        row = {"Gamma": name, "value": GAMMAS[name]}
        for metric in ("forgetting", "generalization"):
            x = _final(run, metric)
            row[metric] = float(x.mean())
            row[metric + "_stderr"] = float(x.std(ddof=1) / math.sqrt(x.size))
        rows.append(row)
    return {"pool": 0, "pool_seed": POOL_SEED, "rows": rows}


for claim_id, measure, summary, source, artifacts in (
    ("fig5.generalization", measure_fig5_generalization, "Balanced load (Gamma <= lambda) lowers generalization error.",
     "Appendix A.4, Figure 5(b)", (("fig5_levels", fig5_levels),)),
    ("fig5.forgetting_robust", measure_fig5_forgetting, "Forgetting is robust to the threshold Gamma.",
     "Appendix A.4, Figure 5(a)", ()),
):
    register(__name__, 
        Claim(
            id=claim_id,
            source=source,
            kind="qualitative",
            statement=r"\text{" + summary + "}",
            preconditions=("Algorithm 1 with termination", "lambda = sigma0^1.25, M = 5, K = 3"),
            measure=measure,
            interpretations=INTERPRETATIONS,
            summary=summary,
            notes="Qualitative statement about an Appendix A.4 figure, decided by the criterion in the evidence. "
            + POOL_NOTE + " The levels figure shows pool 0.",
            artifacts=artifacts,
            shares=("fig45",),
        )
    )
