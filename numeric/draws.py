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
   task sequence is prescribed (``tasks=``), in which case nothing is drawn.
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

__all__ = ["FEATURE_MODELS", "SingleExpertDraws", "draw_single_expert"]

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
    feature matrices ``X`` (R, T, d, s) float64.  Column j is round t = j + 1."""

    tasks: np.ndarray
    X: np.ndarray

    def __post_init__(self) -> None:
        tasks = np.asarray(self.tasks, dtype=np.int64)
        X = np.asarray(self.X, dtype=np.float64)
        if tasks.ndim != 2:
            raise ValueError(f"tasks must have shape (R, T), got {tasks.shape}")
        if X.ndim != 4 or X.shape[:2] != tasks.shape:
            raise ValueError(f"X must have shape (R, T, d, s) with (R, T) = {tasks.shape}, got {X.shape}")
        object.__setattr__(self, "tasks", tasks)
        object.__setattr__(self, "X", X)


def _check_int(name: str, value: object, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


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
) -> SingleExpertDraws:
    """Draw R independent replicates of T rounds (order: see module docstring).

    ``sigma_t`` and ``beta_max`` only matter for ``features="definition1"``.
    ``sigma_t = 0`` is accepted but with s >= 2 it makes X_t rank deficient,
    which the eq. 5 update cannot handle.
    """
    if features not in FEATURE_MODELS:
        raise ValueError(f"features must be one of {FEATURE_MODELS}, got {features!r}")
    R = _check_int("R", R, 1)
    T = _check_int("T", T, 1)
    if pool.d < 2:
        raise ValueError(f"s must satisfy 1 <= s < d, impossible with d = {pool.d}")
    s = _check_int("s", s, 1, pool.d - 1)
    sigma_t = float(sigma_t)
    if not (math.isfinite(sigma_t) and sigma_t >= 0):
        raise ValueError(f"sigma_t must be finite and >= 0, got {sigma_t!r}")
    beta_max = float(beta_max)
    if not (math.isfinite(beta_max) and beta_max > 0):
        raise ValueError(f"beta_max must be finite and > 0, got {beta_max!r}")

    if tasks is None:
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
