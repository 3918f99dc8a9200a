"""Theorem 1's configuration and its Algorithm 1 simulation, shared by the Theorem 1 claims and the insights
C4-C5 (which rerun it with other numbers of experts).

Configuration: N = 3 tasks, M = 10 experts (N ln N = 3.3, so M = Omega(N ln N)
with constant 3), sigma0 = 0.4, eta = alpha = 0.5, lambda = 0.3, Gamma =
sigma0^1.25, v_n = 2.5 w_n (= w_n / sigma0, so that ||v_n||_inf = O(1)), T1 = 20,
T = 200; both feature models.

Pools (:mod:`packs.moe_cl.experiments.pools`): the theorem is stated for every admissible pool of ground truths,
so it is run on the budget's ``task_pools`` pools. Pool k is drawn from
``generator_for(POOL_SEED, "thm1", "pool", k)``, independently of the replicate seed; the replicates of pool k
draw from ``ctx.seed`` with k appended to their stream key. Each pool gives its own entries (config ``pool``,
``pool_seed``, part ``pool k``).
"""

from __future__ import annotations

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments.pools import POOL_NOTE, POOL_SEED, pool_config, pool_indices  # noqa: F401  (the theorem claims read POOL_NOTE and pool_config through this module)
from moecl_verify.packs.moe_cl.experiments import theorem_setting
from moecl_verify.numeric.moe import MoEConfig
from moecl_verify.numeric.pool import make_pool
from moecl_verify.numeric.seeding import generator_for

SIGMA0 = 0.4
CONFIG = dict(N=3, M=10, d=10, s=6, T=200, sigma0=SIGMA0, sigma_t=0.1, signal_scale=2.5, eta=0.5, alpha=0.5, lam=0.3,
              Gamma=SIGMA0**1.25)
# The stream key of the insights' reruns of this setting (C4, C5). A fixed string, not a module name, so
# that moving code never changes the draws; it keeps the value it had when it was still derived from the
# module's name.
# A stream key (the seeds of these runs derive from it): kept as first written, wherever the code moves.
VARIANT_KEY = "checks.claims.thm1"
# The rounds at which the Theorem 1 claims read F_t: eq. (19) during exploration, the late identity after it.
# The runs keep F_t and G_t at these rounds only (and at T1 and T, which every reader may use).
EARLY = (2, 5, 10, 20)
LATE = (40, 100, 200)
ROUNDS_READ = {"forgetting": EARLY + LATE}


def replicates(ctx: Context) -> int:
    """The replicates of each run of this setting at the context's budget (also the insights' reruns)."""
    return ctx.sizes.thm1_replicates


def pools(ctx: Context) -> range:
    """The pool indices of this run's budget."""
    return pool_indices(ctx.sizes)


def task_pool(k: int):
    """Pool k of ground truths (independent of the replicate seed)."""
    return make_pool(generator_for(POOL_SEED, "thm1", "pool", k), N=CONFIG["N"], d=CONFIG["d"], sigma0=SIGMA0,
                     signal_scale=CONFIG["signal_scale"])


def moe_config(M: int = CONFIG["M"]) -> MoEConfig:
    return theorem_setting.moe_config(CONFIG, M)


def run(ctx: Context, features: str, k: int):
    """Pool k's ground truths, the configuration and the simulation (replicates from ``ctx.seed``)."""
    return theorem_setting.run(ctx, "thm1", CONFIG, replicates(ctx), task_pool, features, k, ROUNDS_READ)
