"""Theorem 1's and Theorem 2's settings rerun with another number of experts, and the criteria helpers the
insights C4 and C5 share.

Both insights compare final-round means (T = 200, definition1 features) across
numbers of experts: a margin Delta = sum_k c_k E[X_k] over independent runs,
reported as one ``positive``-rule entry per insight and pool (pool k of Theorem 1's and of Theorem 2's
setting, :mod:`packs.moe_cl.experiments.pools`), built by :mod:`packs.moe_cl.entries.theorem_variants` and
decided by the run's error control (:mod:`checks.decide`).
"""

from __future__ import annotations

import math

import numpy as np

from moecl_verify.checks.context import Context
from moecl_verify.checks.kinds.mean import HorizonTest
from moecl_verify.checks.stats import MeanTest
from moecl_verify.numeric.kept import Keep
from moecl_verify.numeric.moe import simulate_moe


def variant(ctx: Context, module, M: int, k: int, features: str = "definition1"):
    """The configuration of Theorem 1 or 2 with another number of experts (pool k, own draws).

    ``module`` is :mod:`packs.moe_cl.experiments.thm1_runs` or :mod:`packs.moe_cl.experiments.thm2_runs`.  The insights read
    F_T, G_T and the freeze round, so that is all the run keeps (:mod:`numeric.kept`).
    """

    def compute():
        pool = module.task_pool(k)
        c = module.CONFIG
        final = (c["T"],)
        run = simulate_moe(pool, module.moe_config(M), R=module.replicates(ctx), T=c["T"], s=c["s"],
                           features=features, sigma_t=c["sigma_t"], seed=ctx.seed,
                           key=("insights", module.VARIANT_KEY, M, features, k), chunk_size=1000,
                           keep=Keep(whole=("freeze_round",), rounds={"forgetting": final, "generalization": final}),
                           progress=lambda done, total: ctx.progress(f"insights M={M} pool {k}", done, total),
                           runner=ctx.runner)
        return run

    return ctx.shared(("insights", module.VARIANT_KEY, M, features, k, ctx.seed, ctx.budget.name), compute)


def margin(label, terms) -> HorizonTest:
    est = sum(c * float(np.mean(x)) for c, x in terms)
    var = sum(c * c * float(np.var(x, ddof=1)) / x.size for c, x in terms)
    return HorizonTest(label, MeanTest(0.0, est, math.sqrt(var), min(x.size for _, x in terms)))
