"""The Appendix A.4 simulations behind Figures 4 and 5: Algorithm 1 with several termination thresholds Gamma.

Setting (Appendix A.4): lambda = sigma0^1.25, sigma0 = 0.4, M = 5, K = 3
clusters W1 = {1, 4}, W2 = {2, 5}, W3 = {3, 6}; N = 6 (Figure 4) or N = 30
(Figure 5); Gamma in {sigma0^0.75, sigma0} (> lambda) and {sigma0^1.25,
sigma0^1.5} (<= lambda).  All Gamma values share the same draws (paired
comparisons).  Unstated and chosen: T = 2000, eta = 0.5, alpha = 0.5 (as
Figure 2), v_n = w_n, M = 5 and K = 3 for Figure 5 as for Figure 4.

Task pools are an outer level of the design (:mod:`packs.moe_cl.experiments.pools`): pool k is drawn from
``generator_for(POOL_SEED, "fig45", "pool", N, k)``, independently of the replicate seed; the replicates of
pool k draw from ``ctx.seed`` with the pool index in their key.  Each pool is its own entry (its key's
pool k; config ``pool``, ``pool_seed``).

Also here: the readings both figures report (Figure 2's model readings and the two of Appendix A.4), the
paired margin and the freeze table; the entry both figures' claims build is :func:`packs.moe_cl.entries.fig45.measurement`.
"""

from __future__ import annotations

import math

import numpy as np

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments.fig2_runs import INTERPRETATIONS as MOE_INTERPRETATIONS
from moecl_verify.packs.moe_cl.experiments.pools import POOL_SEED
from moecl_verify.checks.model import Interpretation
from moecl_verify.checks.kinds.mean import HorizonTest
from moecl_verify.checks.stats import MeanTest
from moecl_verify.numeric.moe import MoEConfig, simulate_moe
from moecl_verify.numeric.pool import make_clustered_pool
from moecl_verify.numeric.seeding import generator_for

SIGMA0 = 0.4
GAMMAS = {"sigma0^0.75": SIGMA0**0.75, "sigma0": SIGMA0, "sigma0^1.25": SIGMA0**1.25, "sigma0^1.5": SIGMA0**1.5}
LARGE = ("sigma0^0.75", "sigma0")  # Gamma > lambda
SMALL = ("sigma0^1.25", "sigma0^1.5")  # Gamma <= lambda
BASE = dict(T=2000, M=5, K=3, d=10, s=6, sigma0=SIGMA0, sigma_t=0.1, eta=0.5, alpha=0.5, lam=SIGMA0**1.25)
FIG4_N, FIG5_N = 6, 30

INTERPRETATIONS = MOE_INTERPRETATIONS + (
    Interpretation(
        id="fig45.unstated",
        location="Appendix A.4",
        issue="T, eta, alpha for Figures 4-5 and M, K for Figure 5 are not given.",
        choice="T = 2000, eta = 0.5, alpha = 0.5 (Figure 2's values); Figure 5 keeps M = 5 and K = 3 clusters "
        "(task n in cluster n mod 3) with N = 30.",
    ),
    Interpretation(
        id="fig45.balance_measure",
        location="Appendix A.4, Figure 4",
        issue="'Balanced load within an expert set' is not quantified.",
        choice="Top share: per task cluster, the fraction of its post-freeze tasks taken by its most used "
        "expert, averaged over clusters (second half of the run when the gate never froze).",
    ),
)


def task_pool(N: int, pool: int = 0):
    """Task pool number ``pool`` (k >= 0) of N tasks, drawn from POOL_SEED, never from the replicate seed."""
    return make_clustered_pool(
        generator_for(POOL_SEED, "fig45", "pool", N, pool), N=N, K=BASE["K"], d=BASE["d"], sigma0=BASE["sigma0"]
    )


def run(ctx: Context, N: int, gamma_name: str, pool: int = 0):
    """One Gamma on task pool ``pool`` (drawn from POOL_SEED); replicate draws keyed by (N, pool) only, so every
    Gamma shares them (paired comparisons)."""

    def compute():
        tasks = task_pool(N, pool)
        cfg = MoEConfig(M=BASE["M"], eta=BASE["eta"], alpha=BASE["alpha"], lam=BASE["lam"], Gamma=GAMMAS[gamma_name])
        label = f"fig{4 if N == FIG4_N else 5} Gamma={gamma_name} pool {pool}"
        return simulate_moe(
            tasks,
            cfg,
            R=ctx.sizes.fig45_replicates,
            T=BASE["T"],
            s=BASE["s"],
            sigma_t=BASE["sigma_t"],
            seed=ctx.seed,
            key=("fig45", N, pool),  # the same draws for every Gamma: paired comparisons
            chunk_size=100,
            progress=lambda done, total: ctx.progress(label, done, total),
            runner=ctx.runner,
        )

    return ctx.shared(("fig45", N, gamma_name, pool, ctx.seed, ctx.budget.name), compute)


def paired(label: str, a: np.ndarray, b: np.ndarray, extra: np.ndarray | None = None) -> HorizonTest:
    diff = a - b if extra is None else a - b + extra
    diff = diff[np.isfinite(diff)]
    se = float(diff.std(ddof=1) / math.sqrt(diff.size))
    return HorizonTest(label, MeanTest(expected=0.0, observed=float(diff.mean()), stderr=se, n=int(diff.size)))


def freeze_table(ctx: Context, N: int, pool: int = 0) -> list[dict]:
    """When the gate froze on task pool ``pool``, per Gamma: the reason a Gamma comparison can or cannot show an
    effect."""
    rows = []
    T1 = MoEConfig(M=BASE["M"], eta=BASE["eta"], alpha=0, lam=0, Gamma=0).exploration_rounds
    for name in GAMMAS:
        fr = run(ctx, N, name, pool).freeze_round
        rows.append(
            {
                "Gamma": name,
                "T1": T1,
                "frozen_fraction": float((fr > 0).mean()),
                "median_freeze_round": float(np.median(fr[fr > 0])) if (fr > 0).any() else float("nan"),
            }
        )
    return rows
