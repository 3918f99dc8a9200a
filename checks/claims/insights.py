"""The qualitative insights drawn from Theorems 1-2 (an independent reviewer's reading of the paper, claims C4 and C5).

C4: MoE lowers forgetting and generalization error against one expert when
tasks differ (Theorem 1 vs Proposition 4; Theorem 2 "still benefits").
C5: adding experts beyond what the tasks need does not help and delays
convergence (T1 = ceil(M / eta) grows with M).

Criteria (rule ``positive``, final round T = 200 of Theorem 1's and Theorem
2's configurations, see :mod:`checks.claims.thm1` and :mod:`checks.claims.thm2`):
C4: Delta = E[X_T | M = 1] - E[X_T | MoE] > 0 for X in {F, G}, both settings.
C5: with N = 3, M = 20 against M = 10: Delta = E[freeze round | 20] -
E[freeze round | 10] > 0 (delay) and Delta = E[G_T | 20] - E[G_T | 10] +
0.05 E[G_T | 1] > 0 (no gain beyond 5% of the single expert's level).
"""

from __future__ import annotations

import math

import numpy as np

from moecl_verify.checks.claims import thm1, thm2
from moecl_verify.checks.context import Context
from moecl_verify.checks.model import HorizonTest, Measurement
from moecl_verify.checks.registry import Claim, register
from moecl_verify.checks.stats import MeanTest
from moecl_verify.numeric.moe import MoEConfig, simulate_moe

NOT_BETTER = 0.05


def _variant(ctx: Context, module, M: int, features: str = "definition1"):
    """The configuration of Theorem 1 or 2 with another number of experts (same pool, own draws)."""

    def compute():
        pool, base_cfg, _ = module._run(ctx, features)
        c = module.CONFIG
        cfg = MoEConfig(M=M, eta=c["eta"], alpha=c["alpha"], lam=c["lam"], Gamma=c["Gamma"])
        run = simulate_moe(pool, cfg, R=module.REPLICATES[ctx.budget.name], T=c["T"], s=c["s"], features=features,
                           sigma_t=c["sigma_t"], seed=ctx.seed, key=("insights", module.__name__, M, features),
                           chunk_size=1000, progress=lambda done, total: ctx.progress(f"insights M={M}", done, total),
                           runner=ctx.runner)
        return run

    return ctx.shared(("insights", module.__name__, M, features, ctx.seed, ctx.budget.name), compute)


def _margin(label, terms) -> HorizonTest:
    est = sum(c * float(np.mean(x)) for c, x in terms)
    var = sum(c * c * float(np.var(x, ddof=1)) / x.size for c, x in terms)
    return HorizonTest(label, MeanTest(0.0, est, math.sqrt(var), min(x.size for _, x in terms)))


def _measurement(ctx, claim_id, criterion, tests) -> Measurement:
    return Measurement(claim_id=claim_id, source="Section 5 insights (Theorems 1-2 vs Proposition 4)",
                       kind="qualitative", form="stated",
                       config={"features": "definition1", "settings": ["Theorem 1: N=3, M=10", "Theorem 2: N=6, K=2, M=4"],
                               "T": 200, "seed": ctx.seed},
                       tests=tuple(tests), scale=1.0, formula=criterion, rule="positive", horizon_name="case")


def measure_c4(ctx: Context) -> list[Measurement]:
    tests = []
    for module, name in ((thm1, "Thm 1"), (thm2, "Thm 2")):
        _, _, moe = module._run(ctx, "definition1")
        single = _variant(ctx, module, 1)
        for metric, short in (("forgetting", "F"), ("generalization", "G")):
            tests.append(_margin(f"{name}, {short}", [(1.0, getattr(single, metric)[:, -1]), (-1.0, getattr(moe, metric)[:, -1])]))
    return [_measurement(ctx, "c4", "MoE beats one expert at T: Delta = E[X_T | M=1] - E[X_T | MoE]", tests)]


def measure_c5(ctx: Context) -> list[Measurement]:
    _, _, m10 = thm1._run(ctx, "definition1")
    m20, single = _variant(ctx, thm1, 20), _variant(ctx, thm1, 1)
    never = float(thm1.CONFIG["T"] + 1)
    f10 = np.where(m10.freeze_round > 0, m10.freeze_round, never).astype(float)
    f20 = np.where(m20.freeze_round > 0, m20.freeze_round, never).astype(float)
    tests = [
        _margin("delay (freeze round)", [(1.0, f20), (-1.0, f10)]),
        _margin("no gain (G_T)", [(1.0, m20.generalization[:, -1]), (-1.0, m10.generalization[:, -1]),
                                  (NOT_BETTER, single.generalization[:, -1])]),
    ]
    criterion = (f"M = 20 vs M = 10 with N = 3: later freeze, and E[G_T | 20] - E[G_T | 10] + {NOT_BETTER:g} "
                 "E[G_T | 1] > 0")
    return [_measurement(ctx, "c5", criterion, tests)]


for claim_id, fn, summary in (
    ("c4", measure_c4, "MoE lowers forgetting and generalization error against one expert."),
    ("c5", measure_c5, "Experts beyond what the tasks need do not help and delay convergence."),
):
    register(Claim(
        id=claim_id, source="Section 5 insights; an independent reviewer's reading of the paper, claims C4-C5", kind="qualitative",
        statement=r"\text{" + summary + "}", preconditions=("Algorithm 1 with termination",), measure=fn,
        summary=summary,
        notes="Decided on Theorem 1's and Theorem 2's configurations (definition1 features, T = 200).",
    ))
