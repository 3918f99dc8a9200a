"""Algorithm 1 at one theorem's configuration on one task pool: what Theorem 1's and Theorem 2's settings
(:mod:`~moecl_verify.packs.moe_cl.experiments.thm1_runs`, :mod:`~moecl_verify.packs.moe_cl.experiments.thm2_runs`) share.

The simulation is computed once per run (``ctx.shared``), its replicates drawn from ``ctx.seed`` under the
stream key ``(name, features, k)``; the pool comes from the caller, drawn from the pools' own seed.  It keeps
(:mod:`numeric.kept`) the tasks, routed experts and freeze rounds of every replicate, and F_t and G_t only at the
rounds its claims read (the caller's, plus T1 and T): at the full budget that is about 20 MB a run instead of
the 320 MB of the whole records.
"""

from __future__ import annotations

from typing import Callable

from moecl_verify.checks.context import Context
from moecl_verify.numeric.kept import Keep
from moecl_verify.numeric.moe import MoEConfig, simulate_moe
from moecl_verify.numeric.pool import TaskPool


def moe_config(config: dict, M: int | None = None) -> MoEConfig:
    """Algorithm 1's hyperparameters of ``config`` (with ``M`` experts, default the configuration's)."""
    return MoEConfig(M=config["M"] if M is None else M, eta=config["eta"], alpha=config["alpha"], lam=config["lam"],
                     Gamma=config["Gamma"])


# The records every reader of a setting's runs needs whole: eq. (19)-(22)'s right-hand sides and the
# conditional oracle read each round's task and expert; C5 reads the freeze round.
WHOLE = ("tasks", "chosen", "freeze_round")


def kept(config: dict, cfg: MoEConfig, rounds_read: dict[str, tuple[int, ...]]) -> Keep:
    """What a run of the setting keeps: :data:`WHOLE`, and F_t and G_t at ``rounds_read`` plus T1 and T."""
    always = (cfg.exploration_rounds, config["T"])
    return Keep(whole=WHOLE, rounds={name: tuple(sorted({*rounds_read.get(name, ()), *always}))
                                     for name in ("forgetting", "generalization")})


def run(ctx: Context, name: str, config: dict, replicates: int, task_pool: Callable[[int], TaskPool],
        features: str, k: int, rounds_read: dict[str, tuple[int, ...]]):
    """(pool k, configuration, simulation of ``replicates`` replicates) of the setting ``name``; the simulation
    keeps F_t and G_t at the rounds ``rounds_read`` names (see :func:`kept`)."""
    def compute():
        pool = task_pool(k)
        cfg = moe_config(config)
        simulated = simulate_moe(pool, cfg, R=replicates, T=config["T"], s=config["s"],
                                 features=features, sigma_t=config["sigma_t"], seed=ctx.seed, key=(name, features, k),
                                 chunk_size=1000, runner=ctx.runner, keep=kept(config, cfg, rounds_read),
                                 progress=lambda done, total: ctx.progress(f"{name} {features} pool {k}", done, total))
        return pool, cfg, simulated

    return ctx.shared((name, features, k, ctx.seed, ctx.budget.name), compute)
