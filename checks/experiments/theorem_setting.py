"""Algorithm 1 at one theorem's configuration on one task pool: what Theorem 1's and Theorem 2's settings
(:mod:`~moecl_verify.checks.experiments.thm1_runs`, :mod:`~moecl_verify.checks.experiments.thm2_runs`) share.

The simulation is computed once per run (``ctx.shared``), its replicates drawn from ``ctx.seed`` under the
stream key ``(name, features, k)``; the pool comes from the caller, drawn from the pools' own seed.
"""

from __future__ import annotations

from typing import Callable

from moecl_verify.checks.context import Context
from moecl_verify.numeric.moe import MoEConfig, simulate_moe
from moecl_verify.numeric.pool import TaskPool


def moe_config(config: dict, M: int | None = None) -> MoEConfig:
    """Algorithm 1's hyperparameters of ``config`` (with ``M`` experts, default the configuration's)."""
    return MoEConfig(M=config["M"] if M is None else M, eta=config["eta"], alpha=config["alpha"], lam=config["lam"],
                     Gamma=config["Gamma"])


def run(ctx: Context, name: str, config: dict, replicates: dict, task_pool: Callable[[int], TaskPool],
        features: str, k: int):
    """(pool k, configuration, simulation) of the setting ``name``."""
    def compute():
        pool = task_pool(k)
        cfg = moe_config(config)
        simulated = simulate_moe(pool, cfg, R=replicates[ctx.budget.name], T=config["T"], s=config["s"],
                                 features=features, sigma_t=config["sigma_t"], seed=ctx.seed, key=(name, features, k),
                                 chunk_size=1000, runner=ctx.runner,
                                 progress=lambda done, total: ctx.progress(f"{name} {features} pool {k}", done, total))
        return pool, cfg, simulated

    return ctx.shared((name, features, k, ctx.seed, ctx.budget.name), compute)
