"""Algorithm 1 replayed with the gate's per-round state recorded (for the exploration lemmas).

:func:`numeric.moe.run_moe_batched` keeps the final gate and, on request, the
per-round gate outputs.  Lemmas 1, 5, 7, 8 and 9 (Appendices C-E) speak about
per-round quantities it does not keep: the gate parameters theta_t^(m) at
every round, the two parts of the task-loss gradient (eq. 26-30), the
routing fractions f_t^(m) at t = T1, and the part of the gate output that the
noise columns of X_t contribute (Lemma 1).  This module runs the engine on
the same :class:`numeric.moe.MoEDraws` with a per-round observer that records them.

Same draws, same trajectory: a claim's chunk draws with
:func:`numeric.moe.draw_moe_chunk`, exactly as :func:`numeric.moe.simulate_moe`
does, so a trace and a ``MoERun`` of the same ``(seed, key, chunk_size)``
describe the same replicates: bit for bit with the numpy engine (a trace is the numpy engine with an
observer; tested), up to rounding with the compiled one (which parts from it over long runs without
termination, see :mod:`numeric.kernels`).

Only the learned router is traced (the lemmas are about it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from moecl_verify.numeric.draws import ReplicateRounds
from moecl_verify.numeric.moe import MoEConfig, MoEDraws, RoundState, run_moe_batched
from moecl_verify.numeric.pool import TaskPool

__all__ = ["GateTrace", "run_gate_trace", "signal_columns"]


@dataclass(frozen=True, eq=False)
class GateTrace(ReplicateRounds):
    """Per replicate r and round t = j + 1 (column j):

    * ``tasks``, ``chosen`` (R, T): n_t and the routed expert m_t;
    * ``theta`` (R, T + 1, M, d): ``theta[:, j]`` is theta_t, the gate that
      routes round t (before its update); ``theta[:, T]`` the final gate;
    * ``h``, ``pi`` (R, T, M): gate outputs and softmax at round t (eq. 1-2);
    * ``xbar`` (R, T, d): sum_i X_{t,i};
    * ``noise_sum`` (R, T, d): the sum of the s - 1 noise columns of X_t
      (Definition 1), i.e. ``xbar - beta_t v_{n_t}``; ``beta`` (R, T) the
      signal's coefficient; both None for Gaussian features (no signal column);
    * ``delta`` (R, T): Delta_t = ||w_t^(m_t) - w_{t-1}^(m_t)||^2 (eq. 6);
    * ``coef_loc``, ``coef_aux`` (R, T): the scalar factors of the two parts of
      grad_{theta_k} L_task = (coef_loc + coef_aux) (1{k = m_t} - pi_k) xbar,
      coef_loc = pi_{m_t} Delta_t and coef_aux = pi_{m_t} alpha M f_t^(m_t) c_t
      (c_t = 1/t derived, or t as printed in Lemma 4's proof);
    * ``counts`` (R, T, M): routing counts up to and including round t, so
      f_t^(m) = counts / t (eq. 7);
    * ``applied`` (R, T): whether round t's gate update was applied (False
      once the gate is frozen by early termination);
    * ``freeze_round`` (R,): 0 = never frozen.
    """

    tasks: np.ndarray
    chosen: np.ndarray
    theta: np.ndarray
    h: np.ndarray
    pi: np.ndarray
    xbar: np.ndarray
    noise_sum: np.ndarray | None
    beta: np.ndarray | None
    delta: np.ndarray
    coef_loc: np.ndarray
    coef_aux: np.ndarray
    counts: np.ndarray
    applied: np.ndarray
    freeze_round: np.ndarray
    eta: float

    def direction_abs(self) -> np.ndarray:
        """|1{k = m_t} - pi_k| (R, T, M): the softmax factor shared by both gradient parts."""
        d = -self.pi.copy()
        r, j = np.indices(self.chosen.shape, sparse=True)
        d[r, j, self.chosen] += 1.0
        return np.abs(d)

    def grad_inf(self, part: str = "task") -> np.ndarray:
        """||grad_{theta_k} L_part||_inf per round and expert (R, T, M), part in task/loc/aux.

        Both parts are the nonnegative scalar times the same vector
        (1{k = m_t} - pi_k) xbar, so the infinity norm factorizes.
        """
        coef = {"task": self.coef_loc + self.coef_aux, "loc": self.coef_loc, "aux": self.coef_aux}[part]
        xinf = np.abs(self.xbar).max(axis=-1)
        return (coef * xinf)[..., None] * self.direction_abs()

    def gradient(self, j: int) -> np.ndarray:
        """The full task-loss gradient (R, M, d) of round t = j + 1, from the recorded factors."""
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
        for name in ("tasks", "chosen", "theta", "h", "pi", "xbar", "noise_sum", "beta", "delta", "coef_loc",
                     "coef_aux", "counts", "applied", "freeze_round"):
            parts = [getattr(t, name) for t in traces]
            joined[name] = None if parts[0] is None else np.concatenate(parts)
        return GateTrace(**joined, eta=first.eta)


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


def run_gate_trace(pool: TaskPool, draws: MoEDraws, cfg: MoEConfig, *, definition1: bool = True) -> GateTrace:
    """Algorithm 1 on ``draws`` (:func:`numeric.moe.run_moe_batched` itself), recording the gate per round.

    ``definition1`` says whether the features carry a signal column (then
    ``noise_sum`` and ``beta`` are recorded).
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
        "pi": np.empty((R, T, M)),
        "delta": np.empty((R, T)),
        "coef_loc": np.empty((R, T)),
        "coef_aux": np.empty((R, T)),
        "counts": np.empty((R, T, M)),
        "applied": np.empty((R, T), dtype=bool),
    }

    def record(state: RoundState) -> None:
        j, m_t = state.j, state.chosen
        pi_chosen = state.pi[rows, m_t]
        out["theta"][:, j] = state.theta
        out["theta"][:, j + 1] = state.theta_next
        out["applied"][:, j] = state.applied
        out["chosen"][:, j] = m_t
        out["h"][:, j] = state.h
        out["pi"][:, j] = state.pi
        out["delta"][:, j] = state.delta
        out["coef_loc"][:, j] = pi_chosen * state.delta
        out["coef_aux"][:, j] = pi_chosen * cfg.alpha * M * (state.counts[rows, m_t] / state.t) * c_of(state.t)
        out["counts"][:, j] = state.counts

    run = run_moe_batched(pool, draws, cfg, observer=record)
    noise_sum = beta = None
    if definition1:
        _, beta, noise_sum = signal_columns(draws.X, pool.V[draws.tasks])
    return GateTrace(tasks=draws.tasks.copy(), xbar=draws.X.sum(axis=-1), noise_sum=noise_sum, beta=beta,
                     freeze_round=run.freeze_round, eta=float(cfg.eta), **out)
