"""Insight C5, drawn from Theorem 1 (an independent reviewer's reading of the paper, claim C5).

C5: adding experts beyond what the tasks need does not help and delays
convergence (T1 = ceil(M / eta) grows with M).

Criterion (rule ``positive``, final round T = 200 of Theorem 1's configuration,
see :mod:`packs.moe_cl.experiments.thm1_runs`): with N = 3, M = 20 against M = 10:
Delta = E[freeze round | 20] - E[freeze round | 10] > 0 (delay) and Delta =
E[G_T | 20] - E[G_T | 10] + 0.05 E[G_T | 1] > 0 (no gain beyond 5% of the
single expert's level).  One entry per pool k of Theorem 1's setting
(:mod:`packs.moe_cl.experiments.pools`), decided by the run's error control
(:mod:`checks.decide`, criterion evidence: a ``Measurement`` with rule ``positive``).
"""

from __future__ import annotations

import numpy as np

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments import thm1_runs
from moecl_verify.packs.moe_cl.experiments.theorem_variants import margin, variant
from moecl_verify.packs.moe_cl.entries.theorem_variants import measurement
from moecl_verify.checks.kinds.mean import Measurement
from moecl_verify.checks.registry import Claim, register

NOT_BETTER = 0.05


def measure_c5(ctx: Context) -> list[Measurement]:
    out = []
    never = float(thm1_runs.CONFIG["T"] + 1)
    criterion = (f"M = 20 vs M = 10 with N = 3: later freeze, and E[G_T | 20] - E[G_T | 10] + {NOT_BETTER:g} "
                 "E[G_T | 1] > 0")
    for k in thm1_runs.pools(ctx):
        _, _, m10 = thm1_runs.run(ctx, "definition1", k)
        m20, single = variant(ctx, thm1_runs, 20, k), variant(ctx, thm1_runs, 1, k)
        f10 = np.where(m10.freeze_round > 0, m10.freeze_round, never).astype(float)
        f20 = np.where(m20.freeze_round > 0, m20.freeze_round, never).astype(float)
        tests = [
            margin(f"pool {k}, delay (freeze round)", [(1.0, f20), (-1.0, f10)]),
            margin(f"pool {k}, no gain (G_T)", [(1.0, m20.generalization[:, -1]), (-1.0, m10.generalization[:, -1]),
                                                (NOT_BETTER, single.generalization[:, -1])]),
        ]
        out.append(measurement(ctx, "c5", criterion, tests, k))
    return out


SUMMARY = "Experts beyond what the tasks need do not help and delay convergence."
register(__name__, Claim(
    id="c5", source="Section 5 insights; an independent reviewer's reading of the paper, claims C4-C5", kind="qualitative",
    statement=r"\text{" + SUMMARY + "}", preconditions=("Algorithm 1 with termination",), measure=measure_c5,
    summary=SUMMARY,
    notes="Decided on Theorem 1's configuration (definition1 features, T = 200). " + thm1_runs.POOL_NOTE,
    shares=("insights", "thm1"),
))
