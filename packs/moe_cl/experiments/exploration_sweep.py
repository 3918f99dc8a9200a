"""The exploration sweep of Algorithm 1 (Appendix D-E), shared by Lemmas 1, 5, 7, 8 and 9
(:mod:`packs.moe_cl.claims.exploration`): one simulation per (reading, sigma0, hidden constant), :func:`simulate`.

Experiment (scaling mechanism of :mod:`checks.scaling`, as Lemma 6): N = 3,
M = 6, d = 10, s = 6, Definition 1 features with sigma_t = 0.1, v_n = w_n /
sigma0 (so ||v_n||_inf = O(1) as Section 3.2 assumes), eta = alpha = c
sigma0^0.5, lambda = Gamma = c sigma0^1.25, T1 = ceil(M / eta), T = 2 T1, for
hidden constants c in {1, 0.5} (one entry each; :mod:`checks.decide` reconciles
their verdicts with :func:`checks.scaling.reconcile_entries`), over the geometric sweep sigma0 in
{0.05, ..., 0.003125} (16x).  The sweep sits below the paper's sigma0 = 0.4
on purpose: above sigma0 ~ 0.1 the local loss (Delta ~ d sigma0^2) outweighs
the auxiliary loss (~ alpha M / t) during exploration, which the proofs assume
away, and the fitted exponents there describe that transient, not the
asymptotics the lemmas state.  Runs follow the sweep design of :mod:`packs.moe_cl.experiments.sweep_design`:
several pools from the pool seed, each one base pool scaled to every sigma0, the budget's replicates shared
among them, and the same replicate draws at every sigma0.  The per-round gate state comes from
:mod:`numeric.gate_trace` (same draws and trajectories as numeric.moe).  Every
ambiguity resolved is in ``INTERPRETATIONS`` (all five lemmas) and ``SIGNAL_INTERPRETATIONS``
(Lemmas 1 and 7, which also read the noise level and the feature signal).
"""

from __future__ import annotations

import numpy as np

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments.sweep_design import replicate_key, replicates_per_pool, sweep_pool, sweep_pools
from moecl_verify.checks.model import Interpretation
from moecl_verify.numeric.chunks import Chunk
from moecl_verify.numeric.gate_trace import GateTrace, run_gate_trace
from moecl_verify.numeric.moe import MoEConfig, draw_moe_chunk
from moecl_verify.numeric.pool import TaskPool
from moecl_verify.numeric.seeding import generator_for

SIGMA0 = (0.05, 0.025, 0.0125, 0.00625, 0.003125)
CONSTANTS = (1.0, 0.5)  # hidden constant c of eta = alpha = c sigma0^0.5, lambda = Gamma = c sigma0^1.25
BASE = dict(N=3, M=6, d=10, s=6, features="definition1", beta_max=1.0)
SIGMA_T = 0.1  # Appendix A.2's noise level
# Lemma 1's reading of the noise level: fixed (Appendix A.2) or shrinking with sigma0 (= 0.1 at sigma0 = 0.4).
READINGS = {"fixed": "sigma_t = 0.1", "scaled": "sigma_t = sigma0 / 4"}
HORIZON = 2  # T = 2 T1: the whole exploration phase and as many router-learning rounds
# The replicates per configuration, shared among the sweep's pools: the budget's exploration_replicates
# (packs/moe_cl/budgets.py).
CHUNK = 100
QUANTILE = 0.9  # Lemma 8: "with probability at least 1 - delta", delta = 0.1
LEVEL = 0.99  # the bootstrap interval recorded with each fit (verdicts face the run's Holm thresholds)


INTERPRETATIONS = (
    Interpretation(
        id="exploration.sweep",
        location="Lemmas 1, 5, 7, 8, 9 (asymptotics in sigma0 under Algorithm 1)",
        issue="The lemmas are asymptotic in sigma0 with unstated constants; at the paper's sigma0 = 0.4 the local "
        "loss dominates the auxiliary loss during exploration, contrary to the proofs' premise.",
        choice="sigma0 in {0.05, 0.025, 0.0125, 0.00625, 0.003125}, eta = alpha = c sigma0^0.5, lambda = Gamma = "
        "c sigma0^1.25, c in {1, 0.5}, T1 = ceil(M / eta), T = 2 T1, v_n = w_n / sigma0 (the sweep design's pools: "
        "each v_n fixed, "
        "w_n = sigma0 v_n across the sweep), N = 3, M = 6, d = 10, s = 6.",
    ),
    Interpretation(
        id="exploration.eta_exponents",
        location="Lemmas 8, 9 (bounds in eta)",
        issue="Bounds are stated in eta, the sweep is in sigma0.",
        choice="eta = c sigma0^0.5: eta^0.5 / M = c^0.5 sigma0^0.25 / M, eta^-0.5 sigma0 = c^-0.5 sigma0^0.75, "
        "eta^-0.5 = c^-0.5 sigma0^-0.25; M and c are held fixed, so only the sigma0 exponent is tested.",
    ),
    Interpretation(
        id="exploration.for_any_round",
        location="Lemma 5 ('for any t in {1, ..., T1}', 'for any expert m')",
        issue="Omega/O 'for any round and expert' can be read per round or uniformly over rounds.",
        choice="Uniformly: per replicate the smallest ||grad||_inf over t <= T1 and m (Omega part) and the largest "
        "over t > T1 and m (O part); the gradient of round t is the one eq. (9) would apply, also after early "
        "termination has frozen the gate.",
    ),
    Interpretation(
        id="exploration.aux_factor",
        location="Lemma 4's proof (alpha M t f) vs eq. (7) and Lemma 5 (alpha M / t)",
        issue="The auxiliary gradient's factor: t as printed in Lemma 4's proof, or 1/t as eq. (7) gives and "
        "Lemma 5 uses (alpha M / T1).",
        choice="1/t (the engine's default) for every entry; Lemma 8 is also run with the printed factor t as a "
        "separately labelled entry, because its verdict depends on it.",
        option="aux_factor",
    ),
    Interpretation(
        id="exploration.theta_T1",
        location="Lemmas 8, 9 ('at the end of the exploration phase, t = T1')",
        issue="theta_{T1} is the gate routing round T1 (before its update) or after it.",
        choice="theta_{T1}: the gate that routes round T1; f_{T1}^(m) = (routings of m in rounds 1..T1) / T1 (eq. 7).",
    ),
)

# Lemma 1's "w.p. 1 - o(1)" (packs.moe_cl.claims.exploration.lemma1), named in SIGNAL_INTERPRETATIONS below.
CALIBRATION = 0.75  # P(gap <= C sigma0^1.5) at the largest sigma0, by the choice of C

# Lemmas 1 and 7 share one list of readings (each claim shows all of them, as before the split).
SIGNAL_INTERPRETATIONS = INTERPRETATIONS + (
    Interpretation(
        id="lemma1.noise_level",
        location="Definition 1 (noise columns N(0, sigma_t^2 I_d)); Appendix C (|sum of noise entries| = O(sigma0))",
        issue="The proof needs the summed noise entries to be O(sigma0), which Definition 1 does not give: sigma_t "
        "is a free noise level (0.1 in Appendix A.2).",
        choice="Both readings, one entry each: sigma_t = 0.1 fixed, and sigma_t = sigma0 / 4 (0.1 at sigma0 = 0.4).",
        option="sigma_t",
    ),
    Interpretation(
        id="lemma1.x_tilde",
        location="Lemma 1 ('any two feature matrices with the same feature signal')",
        issue="X~ can be another draw with the same signal or, as the proof takes it, the signal column alone.",
        choice="The proof's X~ = [beta_t v_n, 0, ..., 0]; two independent draws differ by at most twice this gap.",
    ),
    Interpretation(
        id="lemma1.probability",
        location="Lemma 1 ('with probability at least 1 - o(1)')",
        issue="An O() bound with probability 1 - o(1) has an unstated constant.",
        choice=f"C = the {CALIBRATION:.0%} quantile of gap / sigma0^1.5 at sigma0 = {SIGMA0[0]}; the probability "
        f"P(gap <= C sigma0^1.5) must then climb from {CALIBRATION} towards 1 as sigma0 shrinks, so at the smallest "
        f"sigma0 it is at least {CALIBRATION}: refuted if it is significantly below {CALIBRATION}, confirmed if its "
        "one-sided lower confidence bound is at least that, both at the entry's threshold under the run's error "
        "control (checks/decide.py).",
    ),
    Interpretation(
        id="lemma7.sign_and_signal",
        location="Lemma 7 ('-O(sigma0)' for m_t, 'O(M^-1 sigma0)' otherwise, 'for any feature signal v_n')",
        issue="'-O(sigma0)' mixes a sign and a size; 'any v_n' may mean the round's own signal or every signal.",
        choice="Sign (negative for m_t, positive for the others) and size (O(sigma0)) checked apart; the sign for "
        "the own signal v_{n_t} and for every v_n.",
    ),
    Interpretation(
        id="lemma7.sign_every_round",
        location="Lemma 7 ('in any round t in {1, ..., T1}', '-O(sigma0)' for m_t) and proof E.1 ('grad L_aux > 0 "
        "for m_t, < 0 for m != m_t')",
        issue="The lemma states no probability: the sign in '-O(sigma0)' may be meant in every exploration round, "
        "or only with probability 1 - o(1) as sigma0 -> 0 (as Lemma 1 is stated).",
        choice="Reading 'every round' (its own entries, parts 'sign: ...', config reading = 'every round'): one "
        "wrong-sign round refutes it (wrong-sign count at most 0), at sigma_t = 0.1 and at sigma_t = sigma0 / 4.",
    ),
    Interpretation(
        id="lemma7.sign_one_minus_o1",
        location="Lemma 7 ('-O(sigma0)' for m_t, 'O(M^-1 sigma0)' otherwise)",
        issue="As for lemma7.sign_every_round: the sign may hold only with probability 1 - o(1), and it can only "
        "tend to 1 if the noise shrinks with sigma0 (with sigma_t fixed the wrong-sign probability is a constant).",
        choice="Reading '1 - o(1)' (its own entries, parts 'sign w.p. 1 - o(1): ...', config reading = '1 - o(1)'): "
        "sigma_t = sigma0 / 4; per sigma0 the share of exploration rounds with the right sign (both hidden "
        "constants pooled), the failure probability required to vanish as sigma0 -> 0 (its level at the smallest "
        "sigma0 and its exponent in sigma0, parametric-bootstrap standard error).",
    ),
)


# --------------------------------------------------------------------------- simulation


def sigma_t_for(reading: str, sigma0: float) -> float:
    """Definition 1's noise level under the reading of Lemma 1's proof (see packs.moe_cl.claims.exploration.lemma1)."""
    return SIGMA_T if reading == "fixed" else sigma0 / 4.0


def config_for(sigma0: float, c: float, aux_factor: str = "1/t") -> MoEConfig:
    """Algorithm 1's scalings with hidden constant c."""
    return MoEConfig(M=BASE["M"], eta=c * sigma0**0.5, alpha=c * sigma0**0.5, lam=c * sigma0**1.25,
                     Gamma=c * sigma0**1.25, aux_factor=aux_factor)


def pool_for(k: int, sigma0: float) -> TaskPool:
    """Pool k of the sweep: v_n = Z_n fixed, w_n = sigma0 Z_n (Z ~ N(0, I_d)), drawn from the pool seed (so the
    replicate seed does not move it), the same base pool at every sigma0."""
    return sweep_pool("exploration", k, N=BASE["N"], d=BASE["d"], sigma0=sigma0)


# Lemma 7's constructed pool (the adversarial pool its derivation points to): pool 0's base signals with the
# second replaced by minus the first, so <v_1, v_2> = -||v_1||^2 < 0 by construction.
CONSTRUCTED = "antipodal"
CONSTRUCTED_NOTE = "pool 0's base signals with v_2 := -v_1, so <v_1, v_2> = -||v_1||^2; rebuilt from the pool seed"


def constructed_pool(sigma0: float) -> TaskPool:
    """Lemma 7's adversarial pool at sigma0: v_n = z_n of pool 0 except v_2 = -v_1, w_n = sigma0 v_n.  Nothing
    in Section 3's assumptions on the ground truths (i.i.d. draws aside) excludes such a pool, and the claim is
    stated for any feature signals."""
    Z = np.array(pool_for(0, 1.0).V)
    Z[1] = -Z[0]
    return TaskPool(W=sigma0 * Z, V=Z)


def summarize(trace: GateTrace, pool: TaskPool, cfg: MoEConfig, sigma0: float, pick_rng: np.random.Generator) -> dict:
    """Per-replicate summaries of one traced chunk, for all five lemmas (arrays with a leading R axis)."""
    R, T, M = trace.R, trace.T, cfg.M
    T1 = cfg.exploration_rounds
    rows = np.arange(R)
    out: dict[str, np.ndarray] = {}

    # Lemma 1: gap |h_m(X_t) - h_m(X~_t)| = |theta_t^(m) . (noise columns summed)|, rounds t >= 2 (theta_1 = 0).
    theta_r = trace.theta[:, :T]
    gap = np.abs(np.einsum("rtmd,rtd->rtm", theta_r, trace.noise_sum))[:, 1:]
    out["l1_gap_q90"] = np.quantile(gap.reshape(R, -1), QUANTILE, axis=1)
    pick_t = pick_rng.integers(0, T - 1, size=R)
    pick_m = pick_rng.integers(0, M, size=R)
    out["l1_pick_ratio"] = gap[rows, pick_t, pick_m] / sigma0**1.5
    # The proof's step |sum_j theta_j a_j| <= max_j |theta_j| |sum_j a_j| (a = summed noise columns).
    printed = np.abs(theta_r).max(axis=-1) * np.abs(trace.noise_sum.sum(axis=-1))[..., None]
    out["l1_printed_fails"] = (gap > printed[:, 1:] * (1 + 1e-12)).mean(axis=(1, 2))

    # Lemma 5: infinity norms of the gradient parts, per round and expert.
    g_loc, g_aux = trace.grad_inf("loc"), trace.grad_inf("aux")
    g_task = g_loc + g_aux  # exact: both parts are nonnegative multiples of (1{k=m_t} - pi_k) xbar
    out["l5_p1_task_min"] = g_task[:, :T1].min(axis=(1, 2))
    out["l5_p1_aux_min"] = g_aux[:, :T1].min(axis=(1, 2))
    out["l5_p2_task_max"] = g_task[:, T1:].max(axis=(1, 2)) if T > T1 else np.full(R, np.nan)
    out["l5_loc_max"] = g_loc.max(axis=(1, 2))
    t = np.arange(1, T + 1)
    out["l5_aux_ratio_max"] = (g_aux.max(axis=2) * t / (cfg.alpha * M)).max(axis=1)
    xinf = np.abs(trace.xbar).max(axis=-1)
    out["l5_aux_ratio_bound"] = (g_aux.max(axis=2) * t / (cfg.alpha * M * xinf)).max(axis=1)
    # The colinearity repair, checked against the engine's own update: ||theta_{t+1} - theta_t||_inf / eta.
    step = np.abs(trace.theta[:, 1:] - trace.theta[:, :-1]).max(axis=-1) / cfg.eta
    dev = np.abs(step - g_task) / np.maximum(g_task, 1e-300)
    out["l5_colinear_dev"] = np.where(trace.applied[..., None], dev, 0.0).max(axis=(1, 2))

    # Lemma 7: <theta_{t+1} - theta_t, v_n> over the exploration rounds t <= T1.
    dtheta = trace.theta[:, 1:T1 + 1] - trace.theta[:, :T1]
    proj = np.einsum("rtmd,nd->rtmn", dtheta, pool.V)  # (R, T1, M, N)
    j = np.arange(T1)
    chosen, tasks = trace.chosen[:, :T1], trace.tasks[:, :T1]
    routed = proj[rows[:, None], j[None, :], chosen]  # (R, T1, N)
    routed_own = np.take_along_axis(routed, tasks[..., None], axis=-1)[..., 0]
    own_all = np.take_along_axis(proj, tasks[:, :, None, None], axis=-1)[..., 0]  # (R, T1, M)
    others = np.ones((R, T1, M), dtype=bool)
    others[rows[:, None], j[None, :], chosen] = False
    out["l7_rounds"] = np.full(R, T1)
    out["l7_routed_own_wrong"] = (routed_own >= 0).sum(axis=1)
    out["l7_routed_any_wrong"] = (routed >= 0).any(axis=-1).sum(axis=1)
    out["l7_others_own_wrong"] = ((own_all <= 0) & others).any(axis=-1).sum(axis=1)
    out["l7_mag_routed"] = np.abs(routed).max(axis=(1, 2))
    out["l7_mag_others"] = np.where(others[..., None], np.abs(proj), 0.0).max(axis=(1, 2, 3))
    ratio = np.where(others, np.abs(own_all), 0.0).sum(axis=-1) / ((M - 1) * np.abs(routed_own))
    out["l7_ratio_mean"] = ratio.mean(axis=1)
    # The first wrong-sign round (own signal) of each replicate, as a concrete counterexample.
    wrong = routed_own >= 0
    first = np.where(wrong.any(axis=1), wrong.argmax(axis=1), -1)
    jj = np.maximum(first, 0)
    v = pool.V[tasks[rows, jj]]
    out["l7_cx_round"] = first + 1  # 0 = none
    out["l7_cx_beta"] = trace.beta[rows, jj]
    out["l7_cx_noise_proj"] = np.einsum("rd,rd->r", trace.noise_sum[rows, jj], v)
    out["l7_cx_signal_proj"] = trace.beta[rows, jj] * np.einsum("rd,rd->r", v, v)
    out["l7_cx_value"] = routed_own[rows, jj]

    # Lemmas 8, 9 at t = T1.
    counts = trace.counts[:, T1 - 1]
    out["l8_counts"] = counts
    out["l8_dev_max"] = np.abs(counts / T1 - 1.0 / M).max(axis=1)
    out["l9_count_spread"] = counts.max(axis=1) - counts.min(axis=1)
    th = trace.theta[:, T1 - 1]
    out["l9_theta_gap"] = (th.max(axis=1) - th.min(axis=1)).max(axis=-1)
    return out


def exploration_chunk(*, pool, cfg, size, T, sigma_t, sigma0, seed, key, index) -> dict:
    """One chunk: draw as numeric.moe.simulate_moe does, trace, summarize (module level: cacheable, picklable)."""
    draws = draw_moe_chunk(pool, M=cfg.M, size=size, T=T, s=BASE["s"], features=BASE["features"], sigma_t=sigma_t,
                           beta_max=BASE["beta_max"], seed=seed, key=key, index=index)
    trace = run_gate_trace(pool, draws, cfg)
    return summarize(trace, pool, cfg, sigma0, generator_for(seed, *key, "lemma1-pick", index))


def simulate_constructed(ctx: Context, sigma0: float, c: float, reading: str = "scaled") -> dict:
    """:func:`simulate` on Lemma 7's :func:`constructed_pool` alone (exploration phase only, one pool's share of
    the budget's replicates, its own replicate streams)."""

    def compute() -> dict:
        cfg = config_for(sigma0, c)
        T1 = cfg.exploration_rounds
        R = replicates_per_pool(ctx.sizes.exploration_replicates, ctx.sizes)
        key = replicate_key("exploration", reading, "1/t", str(c), pool=CONSTRUCTED)
        chunks = [Chunk(exploration_chunk, dict(pool=constructed_pool(sigma0), cfg=cfg, size=min(CHUNK, R - start),
                                                T=T1, sigma_t=sigma_t_for(reading, sigma0), sigma0=sigma0,
                                                seed=ctx.seed, key=key, index=i), size=min(CHUNK, R - start))
                  for i, start in enumerate(range(0, R, CHUNK))]
        label = f"exploration {reading} constructed pool sigma0={sigma0:g} c={c:g}"
        parts = ctx.runner.run(chunks, lambda done, total: ctx.progress(label, done, total))
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}

    return ctx.shared(("exploration", CONSTRUCTED, reading, sigma0, c, ctx.seed, ctx.budget.name), compute)


def simulate(ctx: Context, sigma0: float, c: float, reading: str = "fixed", aux_factor: str = "1/t") -> dict:
    """Summaries of one configuration, computed once per run (ctx.shared) and concatenated over chunks."""

    def compute() -> dict:
        cfg = config_for(sigma0, c, aux_factor)
        T1 = cfg.exploration_rounds
        # Lemma 8's sensitivity run only needs the exploration phase.
        T = HORIZON * T1 if aux_factor == "1/t" else T1
        R = replicates_per_pool(ctx.sizes.exploration_replicates, ctx.sizes)
        chunks = []
        for k in sweep_pools(ctx.sizes):
            # Keyed without sigma0: every sigma0 replays the same draws (common random numbers, sweep_design).
            key = replicate_key("exploration", reading, aux_factor, str(c), pool=k)
            chunks += [
                Chunk(exploration_chunk, dict(pool=pool_for(k, sigma0), cfg=cfg, size=min(CHUNK, R - start), T=T,
                                              sigma_t=sigma_t_for(reading, sigma0), sigma0=sigma0, seed=ctx.seed,
                                              key=key, index=i),
                      size=min(CHUNK, R - start))
                for i, start in enumerate(range(0, R, CHUNK))
            ]
        label = f"exploration {reading} {aux_factor} sigma0={sigma0:g} c={c:g}"
        parts = ctx.runner.run(chunks, lambda done, total: ctx.progress(label, done, total))
        joined = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
        joined["pool"] = np.repeat(np.arange(len(sweep_pools(ctx.sizes))), R)
        joined["T1"], joined["T"] = T1, T
        return joined

    return ctx.shared(("exploration", reading, aux_factor, sigma0, c, ctx.seed, ctx.budget.name), compute)

