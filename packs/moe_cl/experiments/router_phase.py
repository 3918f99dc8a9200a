"""Shared machinery of the router-learning-phase claims (Propositions 1 and 3, Lemmas 13-15).

An experiment, no claim: :mod:`packs.moe_cl.claims.router.prop1`, :mod:`~packs.moe_cl.claims.router.prop3` and
:mod:`~packs.moe_cl.claims.router.lemma13` to :mod:`~packs.moe_cl.claims.router.lemma15` use it.  Here:

* the two simulations they share through ``ctx.shared``, traced per round by
  :mod:`numeric.gate_trace` and kept as per-replicate summaries (the per-round
  gate history is dropped once measured; the orderings of Lemmas 13 and 15
  keep one margin per round, from which those claims say whether they hold):
  - ``algorithm1``: Algorithm 1 with early termination (Gamma = lambda =
    c sigma0^1.25, eta = alpha = c sigma0^0.5, T1 = ceil(M / eta)), run to
    T = T1 + 300 so that every task arrives about 100 times after the gate
    freezes;
  - ``phase``: the gate keeps training (no termination) up to t1 =
    ceil(M / (eta sigma0^0.25)), the router-learning phase where Lemmas 13-15
    are stated; on pool 0 of Proposition 2's sweep with its replicate count
    (:mod:`packs.moe_cl.experiments.gate_training`), the same draws at every sigma0
    (common random numbers, :mod:`packs.moe_cl.experiments.sweep_design`);
  both over sigma0 in {0.4, 0.2, ..., 0.00625} (prop2's sweep and two smaller
  values, 64x), hidden constant c in {1, 0.5}; N = 3, M = 6, d = 10, s = 6,
  v_n = w_n / sigma0, Definition 1 features;
* the failure-probability trend (log failure probability against log sigma0,
  with a parametric-bootstrap standard error);
* the samples of probability entries (per sigma0, the count of replicates in
  which an event holds) and the readings and notes these claims share (the
  signal-only matrix, no termination, the probability rule).

The claims build their evidence from these samples (:mod:`packs.moe_cl.entries.router_phase`: one
probability or scaling entry per hidden constant, and the slips of parts refuted at every hidden
constant); :mod:`moecl_verify.checks.decide` decides them under the run's error control.

"With probability at least 1 - o(1)" is :class:`moecl_verify.checks.kinds.proportion.ProportionEvidence`
with ``claim="vanishing"``: per sigma0 of the sweep, the fraction of replicates in which the event
holds; refuted only when, at the run's threshold, the failure probability at the smallest sigma0
exceeds 0.1 and its exponent in sigma0 lies below 0.1 (failures stay bounded away from 0); confirmed
when the failure probability's upper bound there is at most 0.05, or at most 0.25 with an exponent
significantly above 0.
A run too small to resolve either side ends inconclusive, never in a wrong verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from moecl_verify.checks import stats
from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments.gate_training import BASE, SIGMA0
from moecl_verify.packs.moe_cl.experiments.sweep_design import (SWEEP_CHUNK, replicate_key, replicates_per_pool,
                                                                sweep_pool, sweep_pools)
from moecl_verify.checks.kinds.proportion import ProportionRow
from moecl_verify.checks.model import Interpretation
from moecl_verify.numeric import gate_trace as gt
from moecl_verify.numeric.chunks import Chunk, chunk_sizes
from moecl_verify.numeric.moe import MoEConfig, draw_moe_chunk
from moecl_verify.numeric.gate_trace import FrozenRouting
from moecl_verify.numeric.pool import TaskPool

# prop2's sweep extended by two smaller sigma0 (64x in all): the probability trends need the small end.
SWEEP = SIGMA0 + (0.0125, 0.00625)
POST_T1 = 300  # rounds after T1 in the Algorithm 1 runs: ~100 arrivals per task after the gate freezes
STILL = 1e-20  # squared moves below STILL * mean ||w_n||^2 are no move; an exact fixed point of eq. (5) moves < 1e-28
MIN_EXPECTED = 5.0  # chi-square cells need an expected count of at least 5
# "With probability 1 - o(1)" is decided by ProportionEvidence's "vanishing" rule (its module states the
# thresholds on the failure probability and its exponent), at the threshold Holm gives the entry.


PROBABILITY_RULE = Interpretation(
    id="router_phase.probability_rule",
    location="Propositions 1 and 3, Lemmas 13 and 15 ('with probability at least 1 - o(1)')",
    issue="o(1) is an asymptotic statement; a finite sweep cannot reach the limit.",
    choice="At the false-fail rate the run's error control gives the entry: confirmed if at the smallest sigma0 the "
    "failure probability's upper confidence bound is <= 0.05, or if it falls with sigma0 (fitted exponent of the "
    "failure probability significantly > 0) and its upper bound is <= 0.25; refuted if at the smallest sigma0 it "
    "is significantly above 0.1 and its exponent significantly below 0.1 (failures do not vanish).",
)


NO_TERMINATION = Interpretation(
    id="router_phase.no_termination",
    location="Lemmas 13-15; Proposition 1's proof (E.8); Proposition 2",
    issue="The lemmas describe the router-learning phase, in which Algorithm 1 would already have frozen the gate.",
    choice="The gate keeps training (MoEConfig(termination=False)) up to t1, as Proposition 2 assumes; the runs "
    "are prop2's t1 runs, replayed per round.",
)


SIGNAL_MATRIX = Interpretation(
    id="router_phase.signal_matrix",
    location="Lemmas 13 and 15 (X_n, X_n'); Lemma 1's proof (X~)",
    issue="'Feature matrices containing v_n' leaves the noise columns and beta_t open.",
    choice="The signal-only matrix X_n = [v_n, 0, ..., 0] of Lemma 1's proof with beta = 1: pi_m(X_n, Theta) = "
    "softmax over experts of theta_m^T v_n (Lemma 1: the noise columns move gate outputs by O(sigma0^1.5)).",
)

# The notes of Lemmas 13-15.
PHASE_NOTES = ("Gate still training (no termination), prop2's runs at t1 replayed per round; one entry per hidden "
               "constant c in {1, 0.5}; orderings as probabilities over replicates, asymptotic steps as fitted "
               "exponents (bootstrap), decided under the run's error control.")


# ----------------------------------------------------------------------------- simulations


def config(sigma0: float, c: float, termination: bool) -> MoEConfig:
    """Algorithm 1's scalings with hidden constant c: eta = alpha = c sigma0^0.5, lambda = Gamma = c sigma0^1.25."""
    return MoEConfig(M=BASE["M"], eta=c * sigma0**0.5, alpha=c * sigma0**0.5, lam=c * sigma0**1.25,
                     Gamma=c * sigma0**1.25, termination=termination)


def t1_round(sigma0: float, c: float) -> int:
    """t1 = ceil(M / (eta sigma0^0.25)), the end of the router-learning phase (Proposition 2), as prop2 computes it."""
    return int(math.ceil(BASE["M"] / (c * sigma0**0.5 * sigma0**0.25)))


def _pool(k: int, sigma0: float) -> TaskPool:
    # Pool k of prop2's sweep (v_n = w_n / sigma0 so that ||v_n||_inf = O(1), Section 3.2): one base pool
    # scaled to each sigma0, drawn from the pool seed, so only sigma0 changes along the sweep.
    return sweep_pool("prop2", k, N=BASE["N"], d=BASE["d"], sigma0=sigma0)


@dataclass(frozen=True, eq=False)
class Algorithm1Summary:
    """Per replicate of an Algorithm 1 run (termination on, T = T1 + POST_T1); see :mod:`numeric.gate_trace`."""

    T1: int
    stable: np.ndarray  # eq. (11) sets equal at Theta_t for t = T1+1..T
    routed_single: np.ndarray  # after T1 each expert receives tasks of one n
    unchanged: np.ndarray  # no expert moves in rounds T1+2..T
    moved_share: np.ndarray  # share of rounds T1+2..T in which the routed expert moved
    median_relative_move: float  # median squared move in rounds T1+2..T / mean ||w_n||^2
    routing: FrozenRouting
    p_value: np.ndarray  # chi-square p of uniform routing within the sets (NaN: nothing testable)
    pool: np.ndarray  # the sweep pool of each replicate


@dataclass(frozen=True, eq=False)
class PhaseSummary:
    """Per replicate of a router-learning-phase run (no termination, T = t1)."""

    T1: int
    t1: int
    stable: np.ndarray  # eq. (11) sets equal at Theta_t for t = T1+1..t1
    eq33_margin: np.ndarray  # (R, rounds T1+2..t1): eq. (33)'s margin per round, sets of Theta_{T1+1} (Lemma 13)
    eq40_margin: np.ndarray  # (R, rounds T1+1..t1): eq. (40)'s margin per round, sets at the round (Lemma 15)
    eq40_margin_fixed_sets: np.ndarray  # eq. (40)'s margin with the sets of Theta_{T1+1} (the other reading)
    pi_gap_T1: np.ndarray  # eq. (35) at Theta_T1
    signal_step: np.ndarray
    theta_gap_t1: np.ndarray
    pi_gap_between: np.ndarray  # eq. (38), largest over the phase
    grad_gap: np.ndarray  # Lemma 14, largest over the phase
    pool: np.ndarray  # the sweep pool of each replicate


_ROUTING_FIELDS = ("T2", "any_outside", "outside_share", "chi2", "df", "within_gap", "between_gap", "empty_sets")


def _algorithm1_chunk(*, pool, cfg, size, T, seed, key, index) -> dict:
    """One chunk of an Algorithm 1 run, traced and reduced to per-replicate arrays (cacheable, picklable)."""
    draws = draw_moe_chunk(pool, M=cfg.M, size=size, T=T, s=BASE["s"], features=BASE["features"],
                           sigma_t=BASE["sigma_t"], beta_max=1.0, seed=seed, key=key, index=index)
    tr = gt.run_gate_trace(pool, draws, cfg, factors=False)
    scale = float(np.mean(np.sum(pool.W**2, axis=1)))
    moves = gt.moved(tr, tr.T1 + 1, STILL * scale)
    routing = gt.frozen_routing(tr, pool.V, MIN_EXPECTED)
    return {"stable": gt.sets_stable(tr, pool.V, tr.T1 + 1, tr.T),
            "routed_single": gt.routed_single_task(tr, tr.T1, pool.N),
            "unchanged": ~moves.any(axis=1), "moved_share": moves.mean(axis=1),
            "post_steps": tr.delta[:, tr.T1 + 1:] / scale,
            **{f"routing.{name}": getattr(routing, name) for name in _ROUTING_FIELDS}}


def _phase_chunk(*, pool, cfg, size, T, seed, key, index) -> dict:
    """One chunk of a router-learning-phase run (no termination, T = t1), reduced to per-replicate arrays."""
    draws = draw_moe_chunk(pool, M=cfg.M, size=size, T=T, s=BASE["s"], features=BASE["features"],
                           sigma_t=BASE["sigma_t"], beta_max=1.0, seed=seed, key=key, index=index)
    tr = gt.run_gate_trace(pool, draws, cfg, factors=False)
    V = pool.V
    return {"stable": gt.sets_stable(tr, V, tr.T1 + 1, tr.T), "eq33_margin": gt.eq33_margin(tr, V),
            "eq40_margin": gt.eq40_margin(tr, V), "eq40_margin_fixed_sets": gt.eq40_margin(tr, V, fixed_sets=True),
            "pi_gap_T1": gt.pi_gap_own_signal(tr, V, tr.T1), "signal_step": gt.signal_step_max(tr, V),
            "theta_gap_t1": gt.theta_gap_between(tr, V, tr.T), "pi_gap_between": gt.pi_gap_between_max(tr, V),
            "grad_gap": gt.grad_gap_max(tr)}


def _run_chunks(ctx: Context, fn, sigma0: float, cfg: MoEConfig, R: int, T: int, key: tuple, label: str) -> dict:
    """Per-replicate arrays of R replicates shared among the sweep's pools (:mod:`packs.moe_cl.experiments.sweep_design`),
    pool k's in consecutive rows, each pool in the sweep's fixed chunks keyed without sigma0 (so every sigma0 replays
    the same draws), computed or read from the results cache by the run's chunk runner; ``pool`` holds each
    replicate's pool."""
    per_pool = replicates_per_pool(R, ctx.sizes)
    chunks = []
    for k in sweep_pools(ctx.sizes):
        chunks += [Chunk(fn, dict(pool=_pool(k, sigma0), cfg=cfg, size=size, T=T, seed=ctx.seed,
                                  key=replicate_key(*key, pool=k), index=i), size=size)
                   for i, size in enumerate(chunk_sizes(per_pool, SWEEP_CHUNK))]
    parts = ctx.runner.run(chunks, lambda done, total: ctx.progress(label, done, total))
    out = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    out["pool"] = np.repeat(np.arange(len(sweep_pools(ctx.sizes))), per_pool)
    return out


def algorithm1(ctx: Context, sigma0: float, c: float) -> Algorithm1Summary:
    """Algorithm 1 with early termination, T = T1 + POST_T1, summarized (shared by prop1 and prop3)."""

    def compute():
        cfg = config(sigma0, c, termination=True)
        T = cfg.exploration_rounds + POST_T1
        a = _run_chunks(ctx, _algorithm1_chunk, sigma0, cfg, ctx.sizes.router_algorithm1_replicates, T,
                        ("router_phase", "algorithm1", str(c)), f"Algorithm 1 sigma0={sigma0:g} c={c:g}")
        routing = FrozenRouting(**{name: a[f"routing.{name}"] for name in _ROUTING_FIELDS})
        p = np.array([stats.chi2_sf(x, int(k)) if k else np.nan for x, k in zip(routing.chi2, routing.df)])
        return Algorithm1Summary(
            T1=cfg.exploration_rounds, stable=a["stable"], routed_single=a["routed_single"], unchanged=a["unchanged"],
            moved_share=a["moved_share"], median_relative_move=float(np.median(a["post_steps"])),
            routing=routing, p_value=p, pool=a["pool"])

    return ctx.shared(("router_phase", "algorithm1", sigma0, c, ctx.seed, ctx.budget.name), compute)


def phase(ctx: Context, sigma0: float, c: float) -> PhaseSummary:
    """No termination, T = t1, on prop2's sweep pools with common random numbers along the sweep, traced per round
    and summarized (shared by prop1 and Lemmas 13-15)."""

    def compute():
        cfg = config(sigma0, c, termination=False)
        T = t1_round(sigma0, c)
        # prop2's t1 runs replayed per round: prop2's replicates, the same draws
        a = _run_chunks(ctx, _phase_chunk, sigma0, cfg, ctx.sizes.prop2_replicates, T,
                        ("router_phase", "phase", str(c)), f"router phase sigma0={sigma0:g} c={c:g}")
        return PhaseSummary(T1=cfg.exploration_rounds, t1=T, **a)

    return ctx.shared(("router_phase", "phase", sigma0, c, ctx.seed, ctx.budget.name), compute)


def phases(ctx: Context, c: float) -> dict:
    """{sigma0: :func:`phase`} over SWEEP at hidden constant c (Lemmas 13-15)."""
    return {s0: phase(ctx, s0, c) for s0 in SWEEP}


# ----------------------------------------------------------------------------- statistics



def chi2_uniform(counts: np.ndarray) -> tuple[float, int]:
    """Pearson's statistic of counts against equal cell probabilities, and its degrees of freedom."""
    counts = np.asarray(counts, dtype=float)
    expected = counts.sum() / counts.size
    return float(((counts - expected) ** 2 / expected).sum()), int(counts.size - 1)


def _log_failure(failures: np.ndarray, trials: np.ndarray) -> np.ndarray:
    return np.log((failures + 0.5) / (trials + 1.0))


def failure_slope(rows: list[ProportionRow], rng: np.random.Generator, resamples: int = 2000) -> tuple[float, float]:
    """Slope of log q against log sigma0 (q the failure probability) and its parametric-bootstrap standard error."""
    x = np.log([r.x for r in rows])
    trials = np.array([r.trials for r in rows], dtype=float)
    failures = np.array([r.trials - r.successes for r in rows], dtype=float)
    A = np.vstack([x, np.ones_like(x)]).T
    slope = float(np.linalg.lstsq(A, _log_failure(failures, trials), rcond=None)[0][0])
    q = failures / trials
    boot = rng.binomial(trials.astype(np.int64)[None, :], q[None, :], size=(resamples, len(rows))).astype(float)
    fits = np.linalg.lstsq(A, _log_failure(boot, trials[None, :]).T, rcond=None)[0][0]
    return slope, float(np.std(fits, ddof=1))


# ----------------------------------------------------------------------------- samples for the entries


def probability_rows(events: dict[float, np.ndarray]) -> list[ProportionRow]:
    """{sigma0: per-replicate booleans} -> one row per sigma0."""
    return [ProportionRow(s0, int(np.sum(e)), int(np.size(e))) for s0, e in events.items()]


def by_sigma0(values: dict, name: str) -> list[dict]:
    """{sigma0: value} as JSON-friendly rows [{"sigma0": ..., name: value}] (or the value's own fields if a dict)."""
    return [{"sigma0": s0, **(v if isinstance(v, dict) else {name: v})} for s0, v in values.items()]
