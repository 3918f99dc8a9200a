"""Algorithm 1 replayed with the per-round state the router-learning-phase claims need.

:func:`numeric.moe.run_moe_batched` keeps only final states (and, on request,
per-round gate outputs and sets).  Proposition 1 ("the expert models stop
changing after T1"), Lemma 13 and Lemma 15 (orderings of softmax outputs at
every round of the router-learning phase) and Lemma 14 (gradient gaps at every
round) need the gate parameters Theta_t and the routed expert's step at every
round.  :func:`trace_moe` runs the engine itself on the same draws with a
per-round observer (:class:`numeric.moe.RoundState`), and records:

* ``theta`` (R, T + 1, M, d): ``theta[:, t - 1]`` is Theta_t, the gate that
  routes round t (Theta_1 = Theta_0 = 0); ``theta[:, T]`` is the gate after
  the last round;
* ``step`` (R, T): ||w_t^(m_t) - w_{t-1}^(m_t)||^2, the routed expert's move
  in round t (every other expert does not move, eq. 5);
* ``grad_gap`` (R, T): max over m != m_t of ||grad_{theta_m} L_task -
  grad_{theta_{m_t}} L_task||_inf in round t (Lemma 14's quantity), for the
  gradient eq. (9) would apply (also after a freeze, when it is not applied);
* ``h`` (R, T, M): gate outputs on the round's data, ``tasks``, ``chosen``,
  ``freeze_round`` (0 = never frozen) and final ``w``.

The second half of the module holds the quantities measured on a trace (expert
sets, orderings of softmax outputs, gaps), one value per replicate.

A claim's chunk draws with :func:`numeric.moe.draw_moe_chunk`, as
:func:`numeric.moe.simulate_moe` does, so a trace and a ``simulate_moe`` run
with the same arguments are the same trajectories: bit for bit with ``engine="numpy"`` (the tests check
that), up to rounding with the compiled engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from moecl_verify.numeric.draws import ReplicateRounds
from moecl_verify.numeric.moe import MoEConfig, MoEDraws, RoundState, run_moe_batched
from moecl_verify.numeric.pool import TaskPool

__all__ = [
    "FrozenRouting", "PhaseTrace", "expert_sets", "frozen_routing", "grad_gap_max", "lemma13_holds", "lemma15_holds",
    "moved", "pi_gap_between_max", "pi_gap_own_signal", "routed_single_task", "sets_stable", "signal_outputs",
    "signal_softmax", "signal_step_max", "theta_gap_between", "trace_moe",
]


@dataclass(frozen=True, eq=False)
class PhaseTrace(ReplicateRounds):
    """Per-round state of Algorithm 1 (see the module docstring for shapes)."""

    tasks: np.ndarray
    chosen: np.ndarray
    theta: np.ndarray
    step: np.ndarray
    grad_gap: np.ndarray
    h: np.ndarray
    freeze_round: np.ndarray
    w: np.ndarray
    T1: int

    def gate(self, t: int) -> np.ndarray:
        """Theta_t (R, M, d), t = 1..T + 1."""
        if not 1 <= t <= self.T + 1:
            raise ValueError(f"t must be in [1, {self.T + 1}], got {t}")
        return self.theta[:, t - 1]

    @staticmethod
    def concatenate(traces: Sequence["PhaseTrace"]) -> "PhaseTrace":
        if not traces:
            raise ValueError("traces must be non-empty")
        names = ("tasks", "chosen", "theta", "step", "grad_gap", "h", "freeze_round", "w")
        return PhaseTrace(**{k: np.concatenate([getattr(x, k) for x in traces]) for k in names}, T1=traces[0].T1)


def trace_moe(pool: TaskPool, draws: MoEDraws, cfg: MoEConfig) -> PhaseTrace:
    """Algorithm 1 on ``draws`` (learned router; :func:`numeric.moe.run_moe_batched` with an observer),
    recording the per-round state."""
    if cfg.router != "learned":
        raise ValueError("trace_moe follows the learned router only")
    if cfg.top_k != 1 or cfg.balance != "aux":
        # the recorded coefficients and steps are those of Algorithm 1 (top-1, auxiliary loss in the gradient)
        raise ValueError("trace_moe follows Algorithm 1 only (top_k = 1, balance = 'aux')")
    if draws.M != cfg.M or draws.X.shape[2] != pool.d:
        raise ValueError("draws do not match the config's M or the pool's d")
    R, T, M, d = draws.R, draws.T, cfg.M, pool.d
    rows = np.arange(R)
    theta_hist = np.empty((R, T + 1, M, d))
    step_hist = np.empty((R, T))
    gap_hist = np.empty((R, T))
    h_hist = np.empty((R, T, M))

    def record(state: RoundState) -> None:
        j, grad = state.j, state.grad
        theta_hist[:, j] = state.theta
        theta_hist[:, j + 1] = state.theta_next
        # Lemma 14: ||grad_m - grad_{m_t}||_inf, largest over m != m_t.
        gaps = np.abs(grad - grad[rows, state.chosen][:, None, :]).max(axis=2)
        gaps[rows, state.chosen] = -np.inf
        gap_hist[:, j] = gaps.max(axis=1) if M > 1 else 0.0
        step_hist[:, j] = state.delta
        h_hist[:, j] = state.h

    run = run_moe_batched(pool, draws, cfg, observer=record)
    return PhaseTrace(tasks=draws.tasks.copy(), chosen=run.chosen, theta=theta_hist, step=step_hist,
                      grad_gap=gap_hist, h=h_hist, freeze_round=run.freeze_round, w=run.w, T1=cfg.exploration_rounds)


def signal_outputs(theta: np.ndarray, V: np.ndarray) -> np.ndarray:
    """h_m(X_n) on the signal-only matrix X_n = [v_n, 0, ..., 0] (Lemma 1's X~ with beta = 1):
    theta (..., M, d), V (N, d) -> (..., M, N)."""
    return np.einsum("...md,nd->...mn", theta, V)


def signal_softmax(theta: np.ndarray, V: np.ndarray) -> np.ndarray:
    """pi_m(X_n, Theta) (eq. 2) on the signal-only matrices: softmax over experts, (..., M, N)."""
    H = signal_outputs(theta, V)
    z = np.exp(H - H.max(axis=-2, keepdims=True))
    return z / z.sum(axis=-2, keepdims=True)


def expert_sets(theta: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Eq. (11): the set of each expert, argmax_j theta_m^T v_j, (..., M)."""
    return np.argmax(signal_outputs(theta, V), axis=-1)


# ----------------------------------------------------------------------------- measured quantities
#
# Pure functions of a trace (and the pool's signals V), one per quantity the
# router-learning-phase claims measure; each returns one value per replicate.
# Round t's gate is Theta_t = trace.theta[:, t - 1].


def sets_stable(trace: PhaseTrace, V: np.ndarray, first: int, last: int) -> np.ndarray:
    """True where every expert's eq. (11) set is the same at Theta_first, ..., Theta_last."""
    S = expert_sets(trace.theta[:, first - 1:last], V)  # (R, rounds, M)
    return (S == S[:, :1]).all(axis=(1, 2))


def routed_single_task(trace: PhaseTrace, after: int, N: int) -> np.ndarray:
    """True where, in rounds t > after, every expert is routed tasks of a single n only."""
    R, M = trace.R, trace.w.shape[1]
    seen = np.zeros((R, M, N), dtype=bool)
    rows = np.repeat(np.arange(R), trace.T - after)
    seen[rows, trace.chosen[:, after:].ravel(), trace.tasks[:, after:].ravel()] = True
    return (seen.sum(axis=2) <= 1).all(axis=1)


def moved(trace: PhaseTrace, after: int, threshold: float) -> np.ndarray:
    """(R, T - after): the routed expert's squared move in round t > after exceeds ``threshold``."""
    return trace.step[:, after:] > threshold


@dataclass(frozen=True)
class FrozenRouting:
    """Per replicate, the rounds t > T2 after the gate froze, with M_n from eq. (11) on the frozen gate Theta_T2.

    ``chi2``/``df``: Pearson's statistic of the routing counts within each M_n against equal probabilities,
    summed over tasks with |M_n| >= 2 whose expected count per expert is >= ``min_expected`` (df 0: none).
    Gaps are gate outputs on the signals, h_m(v_n) = theta_m^T v_n.
    """

    T2: np.ndarray  # freeze round, 0 = never frozen (then every other field is NaN / False / 0)
    any_outside: np.ndarray  # a task was routed outside M_{n_t}
    outside_share: np.ndarray  # share of rounds routed outside M_{n_t}
    chi2: np.ndarray
    df: np.ndarray
    within_gap: np.ndarray  # mean over n with |M_n| >= 2 of max - min of h_m(v_n) over M_n (NaN: no such n)
    between_gap: np.ndarray  # mean over n of the mean |h_m(v_n) - h_m'(v_n)|, m in M_n, m' outside (NaN: none)
    empty_sets: np.ndarray  # number of tasks with an empty M_n


def frozen_routing(trace: PhaseTrace, V: np.ndarray, min_expected: float = 5.0) -> FrozenRouting:
    R, N = trace.R, V.shape[0]
    any_out, share = np.zeros(R, dtype=bool), np.full(R, np.nan)
    chi2, df = np.zeros(R), np.zeros(R, dtype=np.int64)
    within, between = np.full(R, np.nan), np.full(R, np.nan)
    empty = np.zeros(R, dtype=np.int64)
    for r in range(R):
        T2 = int(trace.freeze_round[r])
        if T2 == 0:
            continue
        H = signal_outputs(trace.theta[r, T2 - 1], V)  # (M, N); no update from round T2 on
        sets = np.argmax(H, axis=1)
        tasks, chosen = trace.tasks[r, T2:], trace.chosen[r, T2:]
        outside = sets[chosen] != tasks
        any_out[r] = bool(outside.any())
        share[r] = float(outside.mean()) if outside.size else np.nan
        w_gaps, b_gaps = [], []
        for n in range(N):
            inside = np.flatnonzero(sets == n)
            empty[r] += inside.size == 0
            if 0 < inside.size < sets.size:
                b_gaps.append(np.abs(H[inside, n][:, None] - np.delete(H[:, n], inside)[None, :]).mean())
            if inside.size < 2:
                continue
            w_gaps.append(H[inside, n].max() - H[inside, n].min())
            picked = chosen[tasks == n]
            counts = np.array([(picked == m).sum() for m in inside], dtype=float)
            expected = counts.sum() / inside.size
            if expected >= min_expected:
                chi2[r] += float(((counts - expected) ** 2 / expected).sum())
                df[r] += inside.size - 1
        within[r] = np.mean(w_gaps) if w_gaps else np.nan
        between[r] = np.mean(b_gaps) if b_gaps else np.nan
    return FrozenRouting(trace.freeze_round.copy(), any_out, share, chi2, df, within, between, empty)


def lemma13_holds(trace: PhaseTrace, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eq. (33) over t = T1+2..T with M_n at Theta_{T1+1}: pi_m(X_n) > pi_m(X_n') for m in M_n, n' != n.
    Returns (holds at every round, share of rounds at which it holds); no round in range counts as holding."""
    T1 = trace.T1
    sets = expert_sets(trace.gate(T1 + 1), V)  # (R, M)
    P = signal_softmax(trace.theta[:, T1 + 1:trace.T], V)  # (R, K, M, N)
    if P.shape[1] == 0:
        return np.ones(trace.R, dtype=bool), np.ones(trace.R)
    own = np.take_along_axis(P, sets[:, None, :, None], axis=3)[..., 0]
    mask = np.arange(V.shape[0])[None, None, None, :] == sets[:, None, :, None]
    others = np.where(mask, -np.inf, P).max(axis=3)
    ok = (own > others).all(axis=2)
    return ok.all(axis=1), ok.mean(axis=1)


def lemma15_holds(trace: PhaseTrace, V: np.ndarray, fixed_sets: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Eq. (40) over t = T1+1..T: on every v_n each expert of M_n beats every expert outside M_n, with M_n at
    Theta_t (or at Theta_{T1+1} with ``fixed_sets``).  Compared on h = theta^T v_n: for fixed n the softmax is
    increasing in h, so the orderings are the same."""
    H = signal_outputs(trace.theta[:, trace.T1:trace.T], V)  # (R, K, M, N)
    sets = np.argmax(H, axis=3)
    if fixed_sets:
        sets = np.broadcast_to(sets[:, :1], sets.shape)
    ok = np.ones(H.shape[:2], dtype=bool)
    for n in range(V.shape[0]):
        inside = sets == n
        low_in = np.where(inside, H[..., n], np.inf).min(axis=2)
        high_out = np.where(inside, -np.inf, H[..., n]).max(axis=2)
        ok &= low_in > high_out
    return ok.all(axis=1), ok.mean(axis=1)


def pi_gap_own_signal(trace: PhaseTrace, V: np.ndarray, t: int) -> np.ndarray:
    """Eq. (35) at Theta_t: mean over experts m (M_n at Theta_t) and n' != n of pi_m(X_n) - pi_m(X_n')."""
    theta = trace.gate(t)
    sets = expert_sets(theta, V)
    P = signal_softmax(theta, V)  # (R, M, N)
    own = np.take_along_axis(P, sets[..., None], axis=2)
    mask = np.arange(V.shape[0])[None, None, :] != sets[..., None]
    return ((own - P) * mask).sum(axis=(1, 2)) / mask.sum(axis=(1, 2))


def signal_step_max(trace: PhaseTrace, V: np.ndarray) -> np.ndarray:
    """max over t = T1+1..T, m, n of |<theta^(m)_{t+1} - theta^(m)_t, v_n>|."""
    T1 = trace.T1
    step = trace.theta[:, T1 + 1:trace.T + 1] - trace.theta[:, T1:trace.T]
    return np.abs(signal_outputs(step, V)).max(axis=(1, 2, 3))


def theta_gap_between(trace: PhaseTrace, V: np.ndarray, t: int) -> np.ndarray:
    """max over m, m' in different eq. (11) sets at Theta_t of ||theta_m - theta_m'||_inf (NaN: a single set)."""
    theta = trace.gate(t)
    sets = expert_sets(theta, V)
    diff = np.abs(theta[:, :, None, :] - theta[:, None, :, :]).max(axis=3)
    out = np.where(sets[:, :, None] != sets[:, None, :], diff, -np.inf).max(axis=(1, 2))
    return np.where(np.isfinite(out), out, np.nan)


def pi_gap_between_max(trace: PhaseTrace, V: np.ndarray) -> np.ndarray:
    """Eq. (38) over t = T1+1..T: max over n, m in M_n, m' outside M_n (sets at Theta_t) of |pi_m(X_n) - pi_m'(X_n)|."""
    theta = trace.theta[:, trace.T1:trace.T]
    P = signal_softmax(theta, V)  # (R, K, M, N)
    sets = expert_sets(theta, V)
    out = np.full(trace.R, -np.inf)
    for n in range(V.shape[0]):
        inside = sets == n
        p = P[..., n]
        hi_in, lo_in = np.where(inside, p, -np.inf).max(axis=2), np.where(inside, p, np.inf).min(axis=2)
        hi_out, lo_out = np.where(inside, -np.inf, p).max(axis=2), np.where(inside, np.inf, p).min(axis=2)
        gap = np.maximum(hi_in - lo_out, hi_out - lo_in)
        out = np.maximum(out, np.where(np.isfinite(gap), gap, -np.inf).max(axis=1))
    return np.where(np.isfinite(out), out, np.nan)


def grad_gap_max(trace: PhaseTrace) -> np.ndarray:
    """Lemma 14's quantity, largest over t = T1+1..T and m != m_t."""
    return trace.grad_gap[:, trace.T1:].max(axis=1)
