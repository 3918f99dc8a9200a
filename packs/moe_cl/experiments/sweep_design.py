"""The design of the sigma0 sweeps: common random numbers along a sweep, several task pools across it.

A sweep fits an exponent of a measured quantity against sigma0 (Proposition 2, Lemma 6, Corollary 1, the
exploration sweep of Lemmas 1, 5, 7, 8 and 9, Lemmas 11 and 12, the router-phase runs of Propositions 1 and 3
and Lemmas 13-15).

* **Common random numbers.**  Along a sweep only sigma0 changes.  Each pool is one base pool z_n scaled to
  every sigma0 (w_n = sigma0 z_n, v_n = z_n, Section 3.2), and every sigma0 replays the same replicate draws:
  the replicate streams are keyed without sigma0 and streamed by round (:mod:`numeric.streams`), so a
  smaller sigma0, which runs longer, starts from the very rounds a larger one saw.  Replicate r at one sigma0
  is paired with replicate r at every other, and the exponent is fitted on paired data: pool-to-pool and
  draw-to-draw noise no longer moves the local exponents between neighbouring sigma0.
* **Pools as the outer level.**  The statements hold for every admissible pool of ground truths, so a sweep
  runs the budget's ``sweep_pools`` pools (:mod:`packs.moe_cl.budgets`), drawn from their own seed
  (``POOL_SEED``, independent of ``--seed``), each with an equal share of the budget's replicates.  The
  bootstrap of the exponent (:func:`checks.scaling.fit_exponent_pools`) resamples pools, then replicates
  within each drawn pool, paired across sigma0, so the exponent's standard error carries both levels.  A verdict speaks for the pools tried
  (their average curve), and names them.
"""

from __future__ import annotations

import math

import numpy as np

from moecl_verify.checks.scaling import ScalingFit, fit_exponent_pools
from moecl_verify.packs.moe_cl.budgets import Sizes
from moecl_verify.packs.moe_cl.experiments.pools import POOL_SEED
from moecl_verify.numeric.pool import TaskPool, make_pool
from moecl_verify.numeric.seeding import generator_for

# Replicates per chunk along a sweep: fixed, since the chunking is part of the streams (a chunk size that
# varied with the horizon would break the pairing across sigma0); streamed draws keep memory bounded.
SWEEP_CHUNK = 1000


def sweep_pools(sizes: Sizes) -> range:
    """The pools of a sweep at a run whose budget buys ``sizes`` (``ctx.sizes``)."""
    return range(sizes.sweep_pools)


def replicates_per_pool(total: int, sizes: Sizes) -> int:
    """``total`` replicates of a sweep point, shared equally by the sweep's pools (rounded up)."""
    return int(math.ceil(total / sizes.sweep_pools))


def sweep_pool(claim: str, k: int, *, N: int, d: int, sigma0: float) -> TaskPool:
    """Pool k of a claim's sweep at sigma0: the base pool z_n of ``generator_for(POOL_SEED, claim, "sweep pool",
    k)`` scaled to w_n = sigma0 z_n, with signals v_n = w_n / sigma0 = z_n (||v_n||_inf = O(1), Section 3.2)."""
    return make_pool(generator_for(POOL_SEED, claim, "sweep pool", k), N=N, d=d, sigma0=sigma0,
                     signal_scale=1.0 / sigma0)


def replicate_key(claim: str, *parts: str, pool: int) -> tuple:
    """The replicate streams of pool ``pool`` of a sweep: keyed by the claim, the parts that change the
    dynamics' identity (a hidden constant, a horizon label), and the pool, never by sigma0."""
    return (claim, *parts, "pool", pool)


def split_pools(values: np.ndarray, sizes: Sizes) -> list[np.ndarray]:
    """Per-replicate values of a sweep point split by pool (pool k's replicates are consecutive, the same
    replicates at every sigma0)."""
    return np.split(np.asarray(values), len(sweep_pools(sizes)))


def fit_sweep(x: list[float], samples: list[np.ndarray], rng: np.random.Generator, sizes: Sizes,
              quantile: float | None = None, level: float = 0.99, resamples: int = 2000) -> ScalingFit:
    """The mean (``quantile`` None) or quantile scaling fit over a sweep's pools
    (:func:`checks.scaling.fit_exponent_pools`: pools, then replicates within pools, paired across sigma0) of
    per-replicate ``samples`` (one array per value of ``x``, pool k's replicates consecutive)."""
    by_pool = [split_pools(sample, sizes) for sample in samples]
    per_pool = [[parts[k] for parts in by_pool] for k in range(len(by_pool[0]))]
    return fit_exponent_pools(x, per_pool, rng, level=level, resamples=resamples, quantile=quantile,
                              parameter="sigma0")


def design_config(sizes: Sizes, total: int) -> dict:
    """What an entry records of the design."""
    return {"pools": sizes.sweep_pools, "pool_seed": POOL_SEED,
            "replicates_per_pool": replicates_per_pool(total, sizes), "common_random_numbers": True}


DESIGN_NOTE = ("Sweep design: {pools} task pools (pool seed {seed}, independent of --seed), each one base pool "
               "scaled to every sigma0, and common random numbers along the sweep (the same replicate draws at "
               "every sigma0, paired); the exponent's bootstrap resamples pools, then replicates within pools.")
