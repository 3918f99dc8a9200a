"""Figure 2's runs in the regime where the paper's gate specializes, for the Figure 2 claims' sensitivity entries.

At Figure 2's stated hyperparameters the gate freezes a few rounds after exploration and routes far from its
expert sets (:mod:`packs.moe_cl.experiments.open_questions`, regime ``paper``), so Figure 2's conclusions are tested
there on a gate that does not do what the paper's theory says it does.  The ``specializing`` regime of
:data:`packs.moe_cl.experiments.open_questions.REGIMES` is one where it does (N = 3, M = 6, d = 10, s = 6,
sigma0 = 0.2, Algorithm 1's scalings at the constants a documented search picked, v_n = 4 w_n / sigma0,
sigma_t = 0.1).  Here Algorithm 1 runs there with and without termination, and with one expert (M = 1), on the
regime's task pools, so that Figure 2's criteria can be read in it: which of the figure's conclusions survive
where the gate specializes.

Draws: pool k is the regime's (drawn from POOL_SEED, never from the replicate seed); the replicates of M
experts on pool k draw from ``generator_for(ctx.seed, "fig2", "specializing", M, k, "chunk", i)``, so with and
without termination share them (paired).  Each run keeps the final F_T and G_T and the freeze round only.
"""

from __future__ import annotations

import dataclasses

from moecl_verify.checks.context import Context
from moecl_verify.numeric.kept import Keep
from moecl_verify.numeric.moe import simulate_moe
from moecl_verify.packs.moe_cl.experiments.open_questions import REGIMES

REGIME = REGIMES["specializing"]


def describe() -> str:
    """The regime in the paper's quantities, for the entries' texts."""
    r = REGIME
    return (f"N = {r.N} i.i.d. tasks, M = {r.M}, d = {r.d}, s = {r.s}, sigma0 = {r.sigma0:g}, eta = alpha = "
            f"{r.eta:.3g}, lambda = {r.lam:.3g}, Gamma = {r.Gamma:.3g}, T1 = {r.T1}, v_n = {r.signal_scale:g} w_n, "
            f"sigma_t = {r.sigma_t:g}, T = {r.T}")


def run(ctx: Context, M: int, termination: bool, pool: int):
    """Algorithm 1 with M experts (M = 1: one expert) in the specializing regime on its task pool ``pool``."""

    def compute():
        cfg = dataclasses.replace(REGIME.config(termination=termination), M=M, record_rounds=False)
        return simulate_moe(
            REGIME.pool(pool), cfg, R=ctx.sizes.fig2_replicates, T=REGIME.T, s=REGIME.s, features="definition1",
            sigma_t=REGIME.sigma_t, beta_max=1.0, seed=ctx.seed, key=("fig2", "specializing", M, pool),
            chunk_size=100, runner=ctx.runner,
            progress=lambda done, total: ctx.progress(
                f"fig2 specializing M={M} {'term' if termination else 'no-term'} pool {pool}", done, total),
            keep=Keep(whole=("freeze_round",), rounds={"forgetting": (REGIME.T,), "generalization": (REGIME.T,)}),
        )

    return ctx.shared(("fig2", "specializing", M, termination, pool, ctx.seed, ctx.budget.name), compute)


__all__ = ["REGIME", "describe", "run"]
