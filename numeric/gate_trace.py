"""Algorithm 1 replayed with the gate's per-round state recorded, and the quantities measured on it.

:func:`numeric.moe.run_moe_batched` keeps the final gate and, on request, the
per-round gate outputs and sets.  The exploration lemmas (1, 5, 7, 8, 9;
Appendices C-E) speak about per-round quantities it does not keep: the gate
parameters theta_t^(m) at every round, the two parts of the task-loss gradient
(eq. 26-30), the routing fractions f_t^(m) at t = T1, and the part of the gate
output that the noise columns of X_t contribute (Lemma 1).  The
router-learning-phase claims (Propositions 1 and 3, Lemmas 13-15) need the
gate Theta_t at every round (orderings of softmax outputs), the routed
expert's step (the experts stop changing after T1?) and the gradient gaps of
Lemma 14.  :func:`run_gate_trace` runs the engine itself on the same
:class:`numeric.moe.MoEDraws` with a per-round observer
(:class:`numeric.moe.RoundState`) that records all of them (the gradient's
factors and the feature columns on request: ``factors``); the observer only
reads the round's arrays, so what it records never changes the trajectory.

Same draws, same trajectory: a claim's chunk draws with
:func:`numeric.moe.draw_moe_chunk`, exactly as :func:`numeric.moe.simulate_moe`
does, so a trace and a ``MoERun`` of the same ``(seed, key, chunk_size)``
describe the same replicates: bit for bit with the numpy engine (a trace is the numpy engine with an
observer; tested), up to rounding with the compiled one (which parts from it over long runs without
termination, see :mod:`numeric.kernels`).

The second half of the module holds the quantities the router-learning-phase claims measure on a trace
(expert sets, orderings' margins, gaps), one value (or one value per round) per replicate; whether a
statement holds is the claim's to say.

Only the learned router is traced (the lemmas are about it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from moecl_verify.numeric.draws import ReplicateRounds
from moecl_verify.numeric.moe import MoEConfig, MoEDraws, RoundState, run_moe_batched
from moecl_verify.numeric.pool import TaskPool

__all__ = [
    "FrozenRouting", "GateTrace", "eq33_margin", "eq40_margin", "expert_sets", "frozen_routing", "grad_gap_max",
    "moved", "pi_gap_between_max", "pi_gap_own_signal", "routed_single_task", "run_gate_trace", "sets_stable",
    "signal_columns", "signal_outputs", "signal_softmax", "signal_step_max", "theta_gap_between",
]

_FACTORS = ("pi", "xbar", "coef_loc", "coef_aux", "counts", "noise_sum", "beta")


@dataclass(frozen=True, eq=False)
class GateTrace(ReplicateRounds):
    """Per replicate r and round t = j + 1 (column j):

    * ``tasks``, ``chosen`` (R, T): n_t and the routed expert m_t;
    * ``theta`` (R, T + 1, M, d): ``theta[:, j]`` is theta_t (Theta_t), the gate
      that routes round t (before its update; Theta_1 = Theta_0 = 0);
      ``theta[:, T]`` the final gate;
    * ``h`` (R, T, M): gate outputs at round t (eq. 1);
    * ``delta`` (R, T): Delta_t = ||w_t^(m_t) - w_{t-1}^(m_t)||^2 (eq. 6), the
      routed expert's move in round t (every other expert does not move, eq. 5);
    * ``grad_gap`` (R, T): max over m != m_t of ||grad_{theta_m} L_task -
      grad_{theta_{m_t}} L_task||_inf in round t (Lemma 14's quantity), for the
      gradient eq. (9) would apply (also after a freeze, when it is not applied);
    * ``applied`` (R, T): whether round t's gate update was applied (False
      once the gate is frozen by early termination);
    * ``freeze_round`` (R,): 0 = never frozen; ``w`` (R, M, d) the final experts;
    * ``eta`` and ``T1`` (the exploration rounds) of the configuration;

    and, recorded with ``factors`` (else None):

    * ``pi`` (R, T, M): the softmax at round t (eq. 2);
    * ``xbar`` (R, T, d): sum_i X_{t,i};
    * ``coef_loc``, ``coef_aux`` (R, T): the scalar factors of the two parts of
      grad_{theta_k} L_task = (coef_loc + coef_aux) (1{k = m_t} - pi_k) xbar,
      coef_loc = pi_{m_t} Delta_t and coef_aux = pi_{m_t} alpha M f_t^(m_t) c_t
      (c_t = 1/t derived, or t as printed in Lemma 4's proof);
    * ``counts`` (R, T, M): routing counts up to and including round t, so
      f_t^(m) = counts / t (eq. 7);
    * ``noise_sum`` (R, T, d): the sum of the s - 1 noise columns of X_t
      (Definition 1), i.e. ``xbar - beta_t v_{n_t}``; ``beta`` (R, T) the
      signal's coefficient; both None for Gaussian features (no signal column).
    """

    tasks: np.ndarray
    chosen: np.ndarray
    theta: np.ndarray
    h: np.ndarray
    delta: np.ndarray
    grad_gap: np.ndarray
    applied: np.ndarray
    freeze_round: np.ndarray
    w: np.ndarray
    eta: float
    T1: int
    pi: np.ndarray | None = None
    xbar: np.ndarray | None = None
    coef_loc: np.ndarray | None = None
    coef_aux: np.ndarray | None = None
    counts: np.ndarray | None = None
    noise_sum: np.ndarray | None = None
    beta: np.ndarray | None = None

    def gate(self, t: int) -> np.ndarray:
        """Theta_t (R, M, d), t = 1..T + 1."""
        if not 1 <= t <= self.T + 1:
            raise ValueError(f"t must be in [1, {self.T + 1}], got {t}")
        return self.theta[:, t - 1]

    def _factors(self) -> None:
        if self.pi is None:
            raise ValueError("the gradient's factors were not recorded (run_gate_trace(..., factors=True))")

    def direction_abs(self) -> np.ndarray:
        """|1{k = m_t} - pi_k| (R, T, M): the softmax factor shared by both gradient parts."""
        self._factors()
        d = -self.pi.copy()
        r, j = np.indices(self.chosen.shape, sparse=True)
        d[r, j, self.chosen] += 1.0
        return np.abs(d)

    def grad_inf(self, part: str = "task") -> np.ndarray:
        """||grad_{theta_k} L_part||_inf per round and expert (R, T, M), part in task/loc/aux.

        Both parts are the nonnegative scalar times the same vector
        (1{k = m_t} - pi_k) xbar, so the infinity norm factorizes.
        """
        self._factors()
        coef = {"task": self.coef_loc + self.coef_aux, "loc": self.coef_loc, "aux": self.coef_aux}[part]
        xinf = np.abs(self.xbar).max(axis=-1)
        return (coef * xinf)[..., None] * self.direction_abs()

    def gradient(self, j: int) -> np.ndarray:
        """The full task-loss gradient (R, M, d) of round t = j + 1, from the recorded factors."""
        self._factors()
        d = -self.pi[:, j].copy()
        d[np.arange(self.R), self.chosen[:, j]] += 1.0
        coef = self.coef_loc[:, j] + self.coef_aux[:, j]
        return (coef[:, None] * d)[:, :, None] * self.xbar[:, j][:, None, :]

    @staticmethod
    def concatenate(traces: Sequence["GateTrace"]) -> "GateTrace":
        if not traces:
            raise ValueError("traces must be non-empty")
        first = traces[0]
        joined = {}
        for name in ("tasks", "chosen", "theta", "h", "delta", "grad_gap", "applied", "freeze_round", "w",
                     *_FACTORS):
            parts = [getattr(t, name) for t in traces]
            joined[name] = None if parts[0] is None else np.concatenate(parts)
        return GateTrace(**joined, eta=first.eta, T1=first.T1)


def signal_columns(X: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Locate the Definition-1 signal column of every X (..., d, s) given its task's signal V (..., d).

    The signal column is beta v (beta > 0); a Gaussian noise column is
    parallel to v with probability zero, so the column of largest
    |cos(X_i, v)| is the signal.  Returns (position, beta, noise_sum) where
    noise_sum = sum of the other columns.
    """
    vv = np.einsum("...d,...d->...", V, V)
    proj = np.einsum("...ds,...d->...s", X, V)
    norms = np.sqrt(np.einsum("...ds,...ds->...s", X, X))
    cos = np.abs(proj) / (norms * np.sqrt(vv)[..., None])
    pos = np.argmax(cos, axis=-1)
    signal = np.take_along_axis(X, pos[..., None, None], axis=-1)[..., 0]
    beta = np.take_along_axis(proj, pos[..., None], axis=-1)[..., 0] / vv
    return pos, beta, X.sum(axis=-1) - signal


def run_gate_trace(pool: TaskPool, draws: MoEDraws, cfg: MoEConfig, *, factors: bool = True,
                   definition1: bool = True) -> GateTrace:
    """Algorithm 1 on ``draws`` (:func:`numeric.moe.run_moe_batched` itself), recording the gate per round.

    ``factors`` says whether the gradient's factors and the feature columns are recorded (``pi``, ``xbar``,
    ``coef_loc``, ``coef_aux``, ``counts``; ``noise_sum`` and ``beta`` too if ``definition1``, i.e. if the
    features carry a signal column).  What is recorded never changes the trajectory.
    """
    if cfg.router != "learned":
        raise ValueError("run_gate_trace traces the learned router only")
    if cfg.top_k != 1 or cfg.balance != "aux":
        # the recorded coefficients and steps are those of Algorithm 1 (top-1, auxiliary loss in the gradient)
        raise ValueError("run_gate_trace follows Algorithm 1 only (top_k = 1, balance = 'aux')")
    if draws.M != cfg.M or draws.X.shape[2] != pool.d:
        raise ValueError("draws do not match the pool or the config")
    R, T, M, d = draws.R, draws.T, cfg.M, pool.d
    rows = np.arange(R)
    c_of = {"1/t": lambda t: 1.0 / t, "t": lambda t: float(t)}[cfg.aux_factor]
    out = {
        "chosen": np.empty((R, T), dtype=np.int64),
        "theta": np.empty((R, T + 1, M, d)),
        "h": np.empty((R, T, M)),
        "delta": np.empty((R, T)),
        "grad_gap": np.empty((R, T)),
        "applied": np.empty((R, T), dtype=bool),
    }
    if factors:
        out.update({
            "pi": np.empty((R, T, M)),
            "coef_loc": np.empty((R, T)),
            "coef_aux": np.empty((R, T)),
            "counts": np.empty((R, T, M)),
        })

    def record(state: RoundState) -> None:
        j, m_t, grad = state.j, state.chosen, state.grad
        out["theta"][:, j] = state.theta
        out["theta"][:, j + 1] = state.theta_next
        out["applied"][:, j] = state.applied
        out["chosen"][:, j] = m_t
        out["h"][:, j] = state.h
        out["delta"][:, j] = state.delta
        # Lemma 14: ||grad_m - grad_{m_t}||_inf, largest over m != m_t.
        gaps = np.abs(grad - grad[rows, m_t][:, None, :]).max(axis=2)
        gaps[rows, m_t] = -np.inf
        out["grad_gap"][:, j] = gaps.max(axis=1) if M > 1 else 0.0
        if factors:
            pi_chosen = state.pi[rows, m_t]
            out["pi"][:, j] = state.pi
            out["coef_loc"][:, j] = pi_chosen * state.delta
            out["coef_aux"][:, j] = pi_chosen * cfg.alpha * M * (state.counts[rows, m_t] / state.t) * c_of(state.t)
            out["counts"][:, j] = state.counts

    run = run_moe_batched(pool, draws, cfg, observer=record)
    if factors:
        out["xbar"] = draws.X.sum(axis=-1)
        if definition1:
            _, out["beta"], out["noise_sum"] = signal_columns(draws.X, pool.V[draws.tasks])
    return GateTrace(tasks=draws.tasks.copy(), freeze_round=run.freeze_round, w=run.w, eta=float(cfg.eta),
                     T1=cfg.exploration_rounds, **out)


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
# router-learning-phase claims measure; each returns one value (or one per round) per replicate.
# Round t's gate is Theta_t = trace.theta[:, t - 1].


def sets_stable(trace: GateTrace, V: np.ndarray, first: int, last: int) -> np.ndarray:
    """True where every expert's eq. (11) set is the same at Theta_first, ..., Theta_last."""
    S = expert_sets(trace.theta[:, first - 1:last], V)  # (R, rounds, M)
    return (S == S[:, :1]).all(axis=(1, 2))


def routed_single_task(trace: GateTrace, after: int, N: int) -> np.ndarray:
    """True where, in rounds t > after, every expert is routed tasks of a single n only."""
    R, M = trace.R, trace.w.shape[1]
    seen = np.zeros((R, M, N), dtype=bool)
    rows = np.repeat(np.arange(R), trace.T - after)
    seen[rows, trace.chosen[:, after:].ravel(), trace.tasks[:, after:].ravel()] = True
    return (seen.sum(axis=2) <= 1).all(axis=1)


def moved(trace: GateTrace, after: int, threshold: float) -> np.ndarray:
    """(R, T - after): the routed expert's squared move in round t > after exceeds ``threshold``."""
    return trace.delta[:, after:] > threshold


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


def frozen_routing(trace: GateTrace, V: np.ndarray, min_expected: float = 5.0) -> FrozenRouting:
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


def eq33_margin(trace: GateTrace, V: np.ndarray) -> np.ndarray:
    """Eq. (33)'s margin at each round t = T1+2..T, with M_n at Theta_{T1+1}: the least, over experts m (m in
    M_n), of pi_m(X_n) - max_{n' != n} pi_m(X_n'); (R, T - T1 - 1), no column when the range is empty."""
    T1 = trace.T1
    sets = expert_sets(trace.gate(T1 + 1), V)  # (R, M)
    P = signal_softmax(trace.theta[:, T1 + 1:trace.T], V)  # (R, K, M, N)
    if P.shape[1] == 0:
        return np.empty((trace.R, 0))
    own = np.take_along_axis(P, sets[:, None, :, None], axis=3)[..., 0]
    mask = np.arange(V.shape[0])[None, None, None, :] == sets[:, None, :, None]
    others = np.where(mask, -np.inf, P).max(axis=3)
    return (own - others).min(axis=2)


def eq40_margin(trace: GateTrace, V: np.ndarray, fixed_sets: bool = False) -> np.ndarray:
    """Eq. (40)'s margin at each round t = T1+1..T, with M_n at Theta_t (or at Theta_{T1+1} with
    ``fixed_sets``): the least, over n, of the lowest gate output on v_n of an expert in M_n minus the highest of
    an expert outside M_n (+inf where M_n or its complement is empty); (R, T - T1).  Compared on h = theta^T v_n:
    for fixed n the softmax is increasing in h, so the orderings are the same."""
    H = signal_outputs(trace.theta[:, trace.T1:trace.T], V)  # (R, K, M, N)
    sets = np.argmax(H, axis=3)
    if fixed_sets:
        sets = np.broadcast_to(sets[:, :1], sets.shape)
    out = np.full(H.shape[:2], np.inf)
    for n in range(V.shape[0]):
        inside = sets == n
        low_in = np.where(inside, H[..., n], np.inf).min(axis=2)
        high_out = np.where(inside, -np.inf, H[..., n]).max(axis=2)
        out = np.minimum(out, low_in - high_out)
    return out


def pi_gap_own_signal(trace: GateTrace, V: np.ndarray, t: int) -> np.ndarray:
    """Eq. (35) at Theta_t: mean over experts m (M_n at Theta_t) and n' != n of pi_m(X_n) - pi_m(X_n')."""
    theta = trace.gate(t)
    sets = expert_sets(theta, V)
    P = signal_softmax(theta, V)  # (R, M, N)
    own = np.take_along_axis(P, sets[..., None], axis=2)
    mask = np.arange(V.shape[0])[None, None, :] != sets[..., None]
    return ((own - P) * mask).sum(axis=(1, 2)) / mask.sum(axis=(1, 2))


def signal_step_max(trace: GateTrace, V: np.ndarray) -> np.ndarray:
    """max over t = T1+1..T, m, n of |<theta^(m)_{t+1} - theta^(m)_t, v_n>|."""
    T1 = trace.T1
    step = trace.theta[:, T1 + 1:trace.T + 1] - trace.theta[:, T1:trace.T]
    return np.abs(signal_outputs(step, V)).max(axis=(1, 2, 3))


def theta_gap_between(trace: GateTrace, V: np.ndarray, t: int) -> np.ndarray:
    """max over m, m' in different eq. (11) sets at Theta_t of ||theta_m - theta_m'||_inf (NaN: a single set)."""
    theta = trace.gate(t)
    sets = expert_sets(theta, V)
    diff = np.abs(theta[:, :, None, :] - theta[:, None, :, :]).max(axis=3)
    out = np.where(sets[:, :, None] != sets[:, None, :], diff, -np.inf).max(axis=(1, 2))
    return np.where(np.isfinite(out), out, np.nan)


def pi_gap_between_max(trace: GateTrace, V: np.ndarray) -> np.ndarray:
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


def grad_gap_max(trace: GateTrace) -> np.ndarray:
    """Lemma 14's quantity, largest over t = T1+1..T and m != m_t."""
    return trace.grad_gap[:, trace.T1:].max(axis=1)
