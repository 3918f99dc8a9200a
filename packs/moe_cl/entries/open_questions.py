"""The entries of the experiments beyond the paper (:mod:`packs.moe_cl.claims.beyond`, and the router claim C2)
from the samples of :mod:`packs.moe_cl.experiments.open_questions`: one positive-rule entry per part, regime and
task pool, decided by the run's error control (:mod:`checks.decide`).
"""

from __future__ import annotations

from moecl_verify.checks.context import Context
from moecl_verify.checks.kinds.mean import HorizonTest, Measurement
from moecl_verify.packs.moe_cl.experiments.open_questions import SOURCE, Regime
from moecl_verify.packs.moe_cl.experiments.pools import POOL_SEED


def measurement(ctx: Context, claim_id: str, regime: Regime, pool: int, part: str, criterion: str,
                tests: list[HorizonTest | None], **extra) -> Measurement:
    """A positive-rule entry: 'every case's margin Delta is > 0', one per (part, regime, pool). Cases no two
    replicates define are left out and listed under ``cases_without_data``."""
    kept = [t for t in tests if t is not None]
    if not kept:
        raise RuntimeError(f"{claim_id} ({part}, {regime.name}, pool {pool}): no case has two replicates")
    config = {"part": f"{part}, {regime.name} regime", "pool": pool, "pool_seed": POOL_SEED,
              "replicates": ctx.sizes.open_replicates, "seed": ctx.seed, **regime.as_config(), **extra}
    if len(kept) < len(tests):
        config["cases_without_data"] = len(tests) - len(kept)
    return Measurement(claim_id=claim_id, source=SOURCE, kind="experiment", form="stated", config=config,
                       tests=tuple(kept), scale=1.0, rule="positive", horizon_name="case",
                       formula=f"{criterion} [{regime.name} regime, task pool {pool}, pool seed {POOL_SEED}]")
