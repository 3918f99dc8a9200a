"""Figure 4 (Appendix A.4): the termination threshold Gamma and load balance.

Statement (Appendix A.4), with lambda = sigma0^1.25, sigma0 = 0.4, M = 5,
N = 6, K = 3 clusters W1 = {1, 4}, W2 = {2, 5}, W3 = {3, 6}: if the gate stops
with Gamma > lambda (Gamma in {sigma0^0.75, sigma0}), the small routing noise
cannot change the router's choice inside a task cluster, so load within an
expert set is unbalanced; with Gamma <= lambda (Gamma in {sigma0^1.25,
sigma0^1.5}) the noise balances it.

Measured quantity, per replicate, over the rounds after the gate froze (or
the second half of the run if it never froze): for each task cluster, the share
of its tasks taken by its most used expert ("top share"; 1 = one expert does
everything, 1/|set| = perfectly balanced), averaged over clusters.  All Gamma
values share the same draws (paired comparisons; the simulations, shared with
Figure 5, are in :mod:`packs.moe_cl.experiments.fig45_runs`).

The statement is made for the setting, not for one draw of the ground truths,
so it is measured on several task pools drawn independently of the replicate
seed (:mod:`packs.moe_cl.experiments.pools`), one entry per pool (its key's pool k).
Each entry is a criterion "Delta > 0 in every case" (``Measurement``, rule
``positive``), decided by the run's error control (:mod:`checks.decide`).
The routing artifact shows pool 0 only.
"""

from __future__ import annotations

import numpy as np

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments import fig45_runs
from moecl_verify.packs.moe_cl.experiments.pools import POOL_NOTE
from moecl_verify.packs.moe_cl.experiments.fig45_runs import BASE, FIG4_N, GAMMAS, INTERPRETATIONS, LARGE, SMALL, paired
from moecl_verify.packs.moe_cl.entries.fig45 import measurement
from moecl_verify.packs.moe_cl.experiments.pools import POOL_SEED, pool_indices
from moecl_verify.checks.kinds.mean import Measurement
from moecl_verify.checks.registry import Claim, register


def top_share(run, K: int) -> np.ndarray:
    """Per replicate: mean over clusters of the most used expert's share of that cluster's late tasks."""
    R, T = run.tasks.shape
    out = np.empty(R)
    for r in range(R):
        start = run.freeze_round[r] if run.freeze_round[r] > 0 else T // 2
        tasks = run.tasks[r, start:] % K
        chosen = run.chosen[r, start:]
        shares = []
        for k in range(K):
            picked = chosen[tasks == k]
            if picked.size:
                shares.append(np.bincount(picked, minlength=run.loads.shape[1]).max() / picked.size)
        out[r] = np.mean(shares) if shares else np.nan
    return out


def measure_fig4_balance(ctx: Context) -> list[Measurement]:
    criterion = (
        "Gamma <= lambda balances load within expert sets better than Gamma > lambda: Delta = E[top share | "
        "Gamma > lambda] - E[top share | Gamma <= lambda] (paired draws)"
    )
    out = []
    for k in pool_indices(ctx.sizes):
        shares = {g: top_share(fig45_runs.run(ctx, FIG4_N, g, k), BASE["K"]) for g in GAMMAS}
        tests = [paired(f"{big} vs {small}", shares[big], shares[small]) for big, small in zip(LARGE, SMALL)]
        out.append(measurement(ctx, "fig4.balance", "Appendix A.4, Figure 4", criterion, tests, FIG4_N, k))
    return out


def fig4_routing(ctx: Context) -> dict:
    """Task and routed expert per round of replicate 0 on task pool 0, per Gamma (Figure 4's picture)."""
    out = {"T": BASE["T"], "M": BASE["M"], "N": FIG4_N, "pool": 0, "pool_seed": POOL_SEED, "panels": []}
    for name in GAMMAS:
        run = fig45_runs.run(ctx, FIG4_N, name, 0)
        out["panels"].append(
            {
                "Gamma": name,
                "freeze_round": int(run.freeze_round[0]),
                "tasks": run.tasks[0].tolist(),
                "chosen": run.chosen[0].tolist(),
            }
        )
    return out


SUMMARY = "Gamma <= lambda balances load within expert sets."
register(__name__, 
    Claim(
        id="fig4.balance",
        source="Appendix A.4, Figure 4",
        kind="qualitative",
        statement=r"\text{" + SUMMARY + "}",
        preconditions=("Algorithm 1 with termination", "lambda = sigma0^1.25, M = 5, K = 3"),
        measure=measure_fig4_balance,
        interpretations=INTERPRETATIONS,
        summary=SUMMARY,
        notes="Qualitative statement about an Appendix A.4 figure, decided by the criterion in the evidence. "
        + POOL_NOTE + " The routing figure shows replicate 0 of pool 0.",
        artifacts=(("fig4_routing", fig4_routing),),
        shares=("fig45",),
    )
)
