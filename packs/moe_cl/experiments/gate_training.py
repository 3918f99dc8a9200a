"""Proposition 2's sweeps: the gate keeps training (no termination) to t1 or t2, gaps measured on the signals.

Sweep: sigma0 in {0.4, 0.2, 0.1, 0.05, 0.025} (larger budgets reach further down, :func:`sweep`),
eta = alpha = c sigma0^0.5, lambda = Gamma = c sigma0^1.25 with hidden constant c in :data:`CONSTANTS`,
no termination, v_n = w_n / sigma0, N = 3, M = 6, Definition 1 features (:data:`BASE`).  Pools and
replicates follow :mod:`packs.moe_cl.experiments.sweep_design`: several pools drawn from their own seed, each run
on the same replicate draws at every sigma0 (common random numbers), the budget's replicates shared among
the pools.

Besides :mod:`packs.moe_cl.claims.router.prop2`, the router-phase runs (:mod:`packs.moe_cl.experiments.router_phase`)
use these constants and this sweep's pool 0, replayed per round.

Measured gaps (reading recorded in prop2's interpretations): gate outputs on the feature signal,
h_m(v_n) = theta_m^T v_n; expert sets M_n = {m : n = argmax_j theta_m^T v_j} (eq. 11) at the round
measured.  'Within': per task n with |M_n| >= 2, the largest |h_m(v_n) - h_m'(v_n)| over m, m' in M_n,
averaged over such n.  'Between': per task n, the mean over m in M_n, m' not in M_n of
|h_m(v_n) - h_m'(v_n)|, averaged over n.  'All' (t2): the largest gap over all pairs and tasks.
"""

from __future__ import annotations

import math

import numpy as np

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.budgets import Sizes
from moecl_verify.packs.moe_cl.experiments.sweep_design import (SWEEP_CHUNK, replicate_key, replicates_per_pool,
                                                           sweep_pool, sweep_pools)
from moecl_verify.numeric.moe import MoEConfig, simulate_moe

SIGMA0 = (0.4, 0.2, 0.1, 0.05, 0.025)  # the smoke sweep; larger budgets reach further down
# The deepest sweep; a budget sweeps its first ``prop2_sweep_depth`` values (packs/moe_cl/budgets.py): the rounds
# t1, t2 grow like sigma0^-0.75 and sigma0^-1.25, so only the larger budgets reach the smallest sigma0.  The
# report's scaling table states each entry's range.
SWEEP_SIGMA0 = SIGMA0 + (0.0125, 0.00625, 0.003125, 0.0015625)
CONSTANTS = (1.0, 0.5)  # the hidden constant c of eta = alpha = c sigma0^0.5, lambda = Gamma = c sigma0^1.25
BASE = dict(N=3, M=6, d=10, s=6, sigma_t=0.1, features="definition1")


def sweep(sizes: Sizes) -> tuple[float, ...]:
    """The sigma0 Proposition 2 sweeps at a run whose budget buys ``sizes``: the first ``prop2_sweep_depth`` of
    :data:`SWEEP_SIGMA0`."""
    return SWEEP_SIGMA0[:sizes.prop2_sweep_depth]


def gaps(theta: np.ndarray, V: np.ndarray) -> dict[str, np.ndarray]:
    """Per replicate: within-set max gap, between-set mean gap, overall max gap (on the signals)."""
    H = np.einsum("rmd,nd->rmn", theta, V)  # h_m(v_n)
    sets = np.argmax(H, axis=2)  # (R, M): the set of each expert
    R, M, N = H.shape
    within, between, overall = np.full(R, np.nan), np.full(R, np.nan), np.zeros(R)
    for r in range(R):
        w_vals, b_vals = [], []
        for n in range(N):
            h = H[r, :, n]
            inside = sets[r] == n
            diff = np.abs(h[:, None] - h[None, :])
            overall[r] = max(overall[r], diff.max())
            if inside.sum() >= 2:
                w_vals.append(diff[np.ix_(inside, inside)].max())
            if inside.any() and (~inside).any():
                b_vals.append(diff[np.ix_(inside, ~inside)].mean())
        within[r] = np.mean(w_vals) if w_vals else np.nan
        between[r] = np.mean(b_vals) if b_vals else np.nan
    return {"within": within, "between": between, "overall": overall}


def measure_at(ctx: Context, sigma0: float, which: str, c: float) -> dict:
    """The gaps at round t1 (``which`` = "t1") or t2 ("t2") of the runs at ``sigma0`` and hidden constant c:
    ``"pools"`` lists, per pool of the sweep design (:mod:`packs.moe_cl.experiments.sweep_design`), the per-replicate
    gaps (paired across sigma0 by common random numbers); ``"T"`` is the round.  Shared through
    ``ctx.shared``."""
    def compute():
        eta = c * sigma0**0.5
        cfg = MoEConfig(M=BASE["M"], eta=eta, alpha=c * sigma0**0.5, lam=c * sigma0**1.25, Gamma=c * sigma0**1.25,
                        termination=False)
        power = 0.25 if which == "t1" else 0.75
        T = int(math.ceil(BASE["M"] / (eta * sigma0**power)))
        per_pool = []
        for k in sweep_pools(ctx.sizes):
            pool = sweep_pool("prop2", k, N=BASE["N"], d=BASE["d"], sigma0=sigma0)
            # Keyed without sigma0 and without the horizon: the t1 run is the first t1 rounds of the t2 run,
            # and every sigma0 replays the same draws.
            run = simulate_moe(pool, cfg, R=replicates_per_pool(ctx.sizes.prop2_replicates, ctx.sizes), T=T,
                               s=BASE["s"], features=BASE["features"], sigma_t=BASE["sigma_t"], seed=ctx.seed,
                               key=replicate_key("prop2", str(c), pool=k), chunk_size=SWEEP_CHUNK,
                               progress=lambda done, total: ctx.progress(
                                   f"prop2 {which} sigma0={sigma0:g} pool {k}", done, total),
                               runner=ctx.runner)
            per_pool.append(gaps(run.theta, pool.V))
        return {"pools": per_pool, "T": T}

    return ctx.shared(("prop2", which, sigma0, c, ctx.seed, ctx.budget.name), compute)
