"""Random task sequences and feature matrices for the single-expert simulator.

Feature models
--------------
``"definition1"`` (the paper's Definition 1): for round t with task n_t, one
column of X_t in R^{d x s} equals ``beta_t * v_{n_t}``, at a position drawn
uniformly among the s columns, with ``beta_t ~ Uniform(0, C]`` (C = beta_max);
the other s - 1 columns are i.i.d. ``N(0, sigma_t^2 I_d)``.

``"gaussian"``: all s columns i.i.d. ``N(0, I_d)``.

Draw order (fixed, so a Generator state determines the draws)
--------------------------------------------------------------
1. ``tasks = rng.integers(0, N, size=(R, T))``  (uniform over [N]), unless a
   task sequence is prescribed (``tasks=``), in which case nothing is drawn,
   or a :class:`TaskSchedule` is given (``task_probs=``), in which case
   ``U = rng.random((R, T))`` is drawn, one uniform per (replicate, round),
   and mapped to tasks by the inverse CDF of the phase in force.  The number
   of draws does not depend on the schedule's phases, so changing them does
   not shift the feature streams that follow.
2. features:
   * gaussian:    ``rng.standard_normal((R, T, d, s))``;
   * definition1: ``rng.standard_normal((R, T, d, s))`` (scaled by sigma_t;
     the signal column overwrites one of them), then
     ``positions = rng.integers(0, s, size=(R, T))``, then
     ``U = rng.random((R, T))`` and ``beta = C * (1 - U)``, which lies in
     (0, C] and is never 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from moecl_verify.numeric.pool import TaskPool

__all__ = ["FEATURE_MODELS", "MoEDraws", "SingleExpertDraws", "TaskSchedule", "draw_single_expert"]

FEATURE_MODELS = ("definition1", "gaussian")


class ReplicateRounds:
    """Mixin for records with ``tasks`` of shape (R, T): replicates and rounds."""

    @property
    def R(self) -> int:
        return int(self.tasks.shape[0])

    @property
    def T(self) -> int:
        return int(self.tasks.shape[1])


@dataclass(frozen=True, eq=False)
class SingleExpertDraws(ReplicateRounds):
    """Task indices ``tasks`` (R, T) int64 (0-based into the pool) and
    feature matrices ``X`` (R, T, d, s) float64.  Column j is round t = j + 1.

    ``complement``: X holds, instead, bases (R, T, d, d - s) of the orthogonal
    complement of span(X_t) (the ``gaussian_complement`` feature model of
    :mod:`numeric.streams`)."""

    tasks: np.ndarray
    X: np.ndarray
    complement: bool = False

    def __post_init__(self) -> None:
        tasks = np.asarray(self.tasks, dtype=np.int64)
        X = np.asarray(self.X, dtype=np.float64)
        if tasks.ndim != 2:
            raise ValueError(f"tasks must have shape (R, T), got {tasks.shape}")
        if X.ndim != 4 or X.shape[:2] != tasks.shape:
            raise ValueError(f"X must have shape (R, T, d, s) with (R, T) = {tasks.shape}, got {X.shape}")
        object.__setattr__(self, "tasks", tasks)
        object.__setattr__(self, "X", X)


@dataclass(frozen=True, eq=False)
class MoEDraws(ReplicateRounds):
    """tasks (R, T), features X (R, T, d, s), routing noise U (R, T, M) in [0, 1)."""

    tasks: np.ndarray
    X: np.ndarray
    noise: np.ndarray

    @property
    def M(self) -> int:
        return int(self.noise.shape[2])


def check_int(name: str, value: object, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


PROBABILITY_TOLERANCE = 1e-9  # how far a phase's probabilities may sum from 1


def _check_probabilities(name: str, probs: object) -> tuple[float, ...]:
    try:
        values = tuple(float(p) for p in probs)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a sequence of numbers, got {probs!r}") from None
    if not values:
        raise ValueError(f"{name} must list at least one task's probability")
    if not all(math.isfinite(p) and p >= 0 for p in values):
        raise ValueError(f"{name} must be finite and >= 0, got {values!r}")
    if abs(math.fsum(values) - 1.0) > PROBABILITY_TOLERANCE:
        raise ValueError(f"{name} must sum to 1 (within {PROBABILITY_TOLERANCE:g}), got sum {math.fsum(values)!r}")
    return values


def _inverse_cdf(probs: tuple[float, ...]) -> np.ndarray:
    """Cumulative probabilities for ``np.searchsorted(cdf, u, side="right")`` with u in [0, 1).

    From the last task of positive probability on, the CDF is set to exactly 1, so a
    rounding shortfall of the sum can never select a trailing task of probability 0
    (e.g. a task that has not arrived yet); ``side="right"`` skips inner zeros."""
    cdf = np.cumsum(np.asarray(probs, dtype=np.float64))
    last = int(np.flatnonzero(np.asarray(probs) > 0)[-1])
    cdf[last:] = 1.0
    return cdf


@dataclass(frozen=True)
class TaskSchedule:
    """How often each of the N tasks arrives, phase by phase.

    ``phases`` is a tuple of ``(start_round, probabilities)``: from round
    ``start_round`` (1-based) until the next phase starts, each round's task is
    drawn independently with ``probabilities`` over the N tasks.  The first
    phase starts at round 1 and the start rounds increase strictly.  Unequal
    frequencies, a drift of the frequencies and a task that first arrives late
    are schedules; the paper's setting (tasks uniform over [N], Section 3.1) is
    :meth:`uniform`, though ``task_probs=None`` is how draws of the paper's
    setting are made (with ``rng.integers``, the draws of earlier versions).
    """

    phases: tuple[tuple[int, tuple[float, ...]], ...]

    def __post_init__(self) -> None:
        try:
            raw = [tuple(phase) for phase in self.phases]
        except TypeError:
            raise ValueError(f"TaskSchedule phases must be (start_round, probabilities) pairs, "
                             f"got {self.phases!r}") from None
        if not raw:
            raise ValueError("TaskSchedule phases must not be empty")
        phases = []
        for i, phase in enumerate(raw):
            if len(phase) != 2:
                raise ValueError(f"TaskSchedule phase {i} must be a (start_round, probabilities) pair, got {phase!r}")
            start = check_int(f"TaskSchedule phase {i} start round", phase[0], 1)
            probs = _check_probabilities(f"TaskSchedule phase {i} probabilities", phase[1])
            if phases and start <= phases[-1][0]:
                raise ValueError(f"TaskSchedule phase start rounds must increase, got {start} after {phases[-1][0]}")
            if phases and len(probs) != len(phases[0][1]):
                raise ValueError(f"TaskSchedule phase {i} lists {len(probs)} tasks, phase 0 lists {len(phases[0][1])}")
            phases.append((start, probs))
        if phases[0][0] != 1:
            raise ValueError(f"TaskSchedule's first phase must start at round 1, got {phases[0][0]}")
        object.__setattr__(self, "phases", tuple(phases))

    @property
    def N(self) -> int:
        return len(self.phases[0][1])

    def probabilities_at(self, t: int) -> tuple[float, ...]:
        """The task probabilities in force at round t (1-based)."""
        return [probs for start, probs in self.phases if start <= t][-1]

    @staticmethod
    def uniform(N: int) -> "TaskSchedule":
        """Every task with probability 1/N in every round (the paper's setting)."""
        N = check_int("N", N, 1)
        return TaskSchedule(((1, (1.0 / N,) * N),))

    @staticmethod
    def zipf(N: int, exponent: float) -> "TaskSchedule":
        """p_n proportional to (n + 1)^(-exponent), n = 0..N-1: task 0 the most frequent; exponent 0 is uniform."""
        N = check_int("N", N, 1)
        a = float(exponent)
        if not (math.isfinite(a) and a >= 0):
            raise ValueError(f"zipf exponent must be finite and >= 0, got {exponent!r}")
        weights = (np.arange(N) + 1.0) ** -a
        return TaskSchedule(((1, tuple(float(p) for p in weights / weights.sum())),))

    @staticmethod
    def with_rare(N: int, share: float) -> "TaskSchedule":
        """Task N-1 with probability ``share`` in every round, the other N-1 tasks share the rest equally."""
        N = check_int("N", N, 2)
        share = float(share)
        if not (math.isfinite(share) and 0 <= share <= 1):
            raise ValueError(f"rare task share must be in [0, 1], got {share!r}")
        return TaskSchedule(((1, ((1.0 - share) / (N - 1),) * (N - 1) + (share,)),))

    def _split(self, t: int) -> list[tuple[int, tuple[float, ...]]]:
        """The phases with a boundary at round t (a phase starting at t, the probabilities unchanged)."""
        phases = list(self.phases)
        if all(start != t for start, _ in phases):
            phases.append((t, self.probabilities_at(t)))
            phases.sort(key=lambda phase: phase[0])
        return phases

    def swap_at(self, t: int) -> "TaskSchedule":
        """From round t on, the probabilities in force reversed (task n takes task N-1-n's): frequent and rare
        tasks swap, a drift of the task distribution."""
        t = check_int("swap round", t, 1)
        return TaskSchedule(tuple((start, probs[::-1] if start >= t else probs) for start, probs in self._split(t)))

    def new_task_at(self, t: int) -> "TaskSchedule":
        """Task N-1 first arrives at round t: before t its probability is 0 and the other tasks' are renormalized;
        from t on the schedule is unchanged (task N-1 has its share)."""
        t = check_int("new task round", t, 1)
        if self.N < 2:
            raise ValueError("a task arriving late needs N >= 2 tasks")
        phases = []
        for start, probs in self._split(t):
            if start < t:
                rest = math.fsum(probs[:-1])
                if rest <= 0:
                    raise ValueError(f"the schedule gives only the last task before round {t}, it cannot arrive late")
                probs = tuple(p / rest for p in probs[:-1]) + (0.0,)
            phases.append((start, probs))
        return TaskSchedule(tuple(phases))

    def sample(self, rng: np.random.Generator, R: int, T: int) -> np.ndarray:
        """Tasks (R, T) int64: ``U = rng.random((R, T))``, one uniform per (replicate, round), mapped by the
        inverse CDF of the phase in force at each round."""
        return self.tasks_from_uniforms(rng.random((R, T)), 0)

    def tasks_from_uniforms(self, u: np.ndarray, start: int) -> np.ndarray:
        """Tasks (R, B) int64 from uniforms ``u`` (R, B) in [0, 1) of rounds ``start .. start + B - 1``
        (0-based), each mapped by the inverse CDF of the phase in force at its round."""
        R, B = u.shape
        tasks = np.empty((R, B), dtype=np.int64)
        bounds = [first - 1 for first, _ in self.phases] + [start + B]
        for (first, probs), end in zip(self.phases, bounds[1:]):
            lo, hi = max(first - 1, start), min(end, start + B)
            if lo < hi:
                drawn = np.searchsorted(_inverse_cdf(probs), u[:, lo - start:hi - start], side="right")
                tasks[:, lo - start:hi - start] = np.minimum(drawn, self.N - 1)
        return tasks


def draw_single_expert(
    rng: np.random.Generator,
    pool: TaskPool,
    *,
    R: int,
    T: int,
    s: int,
    features: str = "gaussian",
    sigma_t: float = 0.1,
    beta_max: float = 1.0,
    tasks: np.ndarray | None = None,
    task_probs: TaskSchedule | None = None,
) -> SingleExpertDraws:
    """Draw R independent replicates of T rounds (order: see module docstring).

    ``sigma_t`` and ``beta_max`` only matter for ``features="definition1"``.
    ``sigma_t = 0`` is accepted but with s >= 2 it makes X_t rank deficient,
    which the eq. 5 update cannot handle.  ``task_probs`` draws the tasks from
    a :class:`TaskSchedule` instead of uniformly (``None``: uniform, with the
    same generator calls as ever).
    """
    if features not in FEATURE_MODELS:
        raise ValueError(f"features must be one of {FEATURE_MODELS}, got {features!r}")
    R = check_int("R", R, 1)
    T = check_int("T", T, 1)
    if pool.d < 2:
        raise ValueError(f"s must satisfy 1 <= s < d, impossible with d = {pool.d}")
    s = check_int("s", s, 1, pool.d - 1)
    sigma_t = float(sigma_t)
    if not (math.isfinite(sigma_t) and sigma_t >= 0):
        raise ValueError(f"sigma_t must be finite and >= 0, got {sigma_t!r}")
    beta_max = float(beta_max)
    if not (math.isfinite(beta_max) and beta_max > 0):
        raise ValueError(f"beta_max must be finite and > 0, got {beta_max!r}")

    if task_probs is not None:
        if tasks is not None:
            raise ValueError("give either tasks (a prescribed sequence) or task_probs (a schedule), not both")
        if not isinstance(task_probs, TaskSchedule):
            raise ValueError(f"task_probs must be a TaskSchedule or None, got {type(task_probs).__name__}")
        if task_probs.N != pool.N:
            raise ValueError(f"task_probs lists {task_probs.N} tasks, the pool has N = {pool.N}")
        tasks = task_probs.sample(rng, R, T)
    elif tasks is None:
        tasks = rng.integers(0, pool.N, size=(R, T), dtype=np.int64)
    else:
        # A prescribed task sequence (for experiments on a given schedule); the
        # features are drawn as usual, and no task draw is consumed.
        tasks = np.broadcast_to(np.asarray(tasks, dtype=np.int64), (R, T)).copy()
        if tasks.min() < 0 or tasks.max() >= pool.N:
            raise ValueError(f"tasks must index the pool, i.e. lie in [0, {pool.N - 1}]")
    X = rng.standard_normal((R, T, pool.d, s))
    if features == "definition1":
        X *= sigma_t
        positions = rng.integers(0, s, size=(R, T), dtype=np.int64)
        beta = beta_max * (1.0 - rng.random((R, T)))
        signal = beta[..., None] * pool.V[tasks]  # (R, T, d)
        r_idx, t_idx = np.indices((R, T), sparse=True)
        # Advanced indices separated by a slice put the broadcast axes first,
        # so X[r, t, :, pos] has shape (R, T, d) and matches `signal`.
        X[r_idx, t_idx, :, positions] = signal
    return SingleExpertDraws(tasks=tasks, X=X)
