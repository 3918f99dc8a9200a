"""The entries of the insights C4 and C5 (:mod:`packs.moe_cl.claims.theorems`) from the reruns of
:mod:`packs.moe_cl.experiments.theorem_variants`: one ``positive``-rule entry per insight and pool, decided by
the run's error control (:mod:`checks.decide`).
"""

from __future__ import annotations

from moecl_verify.checks.kinds.mean import Measurement
from moecl_verify.packs.moe_cl.experiments.pools import POOL_SEED


def measurement(ctx, claim_id, criterion, tests, k: int) -> Measurement:
    """One insight's criterion on pool k (of each setting it uses)."""
    return Measurement(claim_id=claim_id, source="Section 5 insights (Theorems 1-2 vs Proposition 4)",
                       kind="qualitative", form="stated",
                       config={"features": "definition1", "pool": k, "pool_seed": POOL_SEED,
                               "settings": ["Theorem 1: N=3, M=10", "Theorem 2: N=6, K=2, M=4"],
                               "T": 200, "seed": ctx.seed},
                       tests=tuple(tests), scale=1.0, formula=criterion, rule="positive", horizon_name="case")
