"""The entries of Figures 4 and 5's claims (:mod:`packs.moe_cl.claims.figures`) from the runs of
:mod:`packs.moe_cl.experiments.fig45_runs`: one ``positive``-rule entry per criterion and task pool, with the
freeze table beside it, decided by the run's error control (:mod:`checks.decide`).
"""

from __future__ import annotations

from moecl_verify.checks.kinds.mean import Measurement
from moecl_verify.packs.moe_cl.experiments.fig45_runs import BASE, GAMMAS, freeze_table
from moecl_verify.packs.moe_cl.experiments.pools import POOL_SEED


def measurement(ctx, claim_id, source, criterion, tests, N, pool: int = 0) -> Measurement:
    config = dict(BASE)
    config.update(
        pool=pool, pool_seed=POOL_SEED, N=N, Gammas=GAMMAS,
        replicates=ctx.sizes.fig45_replicates, seed=ctx.seed, freeze=freeze_table(ctx, N, pool),
    )
    return Measurement(
        claim_id=claim_id,
        source=source,
        kind="qualitative",
        form="stated",
        config=config,
        tests=tuple(tests),
        scale=1.0,
        formula=f"{criterion} [task pool {pool}, pool seed {POOL_SEED}]",
        rule="positive",
        horizon_name="case",
    )
