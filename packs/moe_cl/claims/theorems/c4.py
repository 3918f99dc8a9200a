"""Insight C4, drawn from Theorems 1-2 (an independent reviewer's reading of the paper, claim C4).

C4: MoE lowers forgetting and generalization error against one expert when
tasks differ (Theorem 1 vs Proposition 4; Theorem 2 "still benefits").

Criterion (rule ``positive``, final round T = 200 of Theorem 1's and Theorem
2's configurations, see :mod:`packs.moe_cl.experiments.thm1_runs` and
:mod:`packs.moe_cl.experiments.thm2_runs`): Delta = E[X_T | M = 1] - E[X_T | MoE] > 0
for X in {F, G}, both settings. One entry per pool k (pool k of each setting,
:mod:`packs.moe_cl.experiments.pools`), decided by the run's error control
(:mod:`checks.decide`, criterion evidence: a ``Measurement`` with rule ``positive``).
"""

from __future__ import annotations

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments import thm1_runs, thm2_runs
from moecl_verify.packs.moe_cl.experiments.theorem_variants import margin, variant
from moecl_verify.packs.moe_cl.entries.theorem_variants import measurement
from moecl_verify.checks.kinds.mean import Measurement
from moecl_verify.checks.registry import Claim, register


def measure_c4(ctx: Context) -> list[Measurement]:
    out = []
    for k in thm1_runs.pools(ctx):
        tests = []
        for module, name in ((thm1_runs, "Thm 1"), (thm2_runs, "Thm 2")):
            _, _, moe = module.run(ctx, "definition1", k)
            single = variant(ctx, module, 1, k)
            for metric, short in (("forgetting", "F"), ("generalization", "G")):
                tests.append(margin(f"pool {k}, {name}, {short}",
                                    [(1.0, getattr(single, metric)[:, -1]), (-1.0, getattr(moe, metric)[:, -1])]))
        out.append(measurement(ctx, "c4", "MoE beats one expert at T: Delta = E[X_T | M=1] - E[X_T | MoE]", tests, k))
    return out


SUMMARY = "MoE lowers forgetting and generalization error against one expert."
register(__name__, Claim(
    id="c4", source="Section 5 insights; an independent reviewer's reading of the paper, claims C4-C5", kind="qualitative",
    statement=r"\text{" + SUMMARY + "}", preconditions=("Algorithm 1 with termination",), measure=measure_c4,
    summary=SUMMARY,
    notes="Decided on Theorem 1's and Theorem 2's configurations (definition1 features, T = 200). "
    + thm1_runs.POOL_NOTE,
    shares=("insights", "thm1", "thm2"),
))
