"""Draws streamed in blocks of rounds, from one keyed stream per kind of random number.

A simulation of T rounds used to materialise all of its draws, (R, T, d, s) at once, so a long horizon
forced small chunks of replicates.  A :class:`DrawStream` instead yields the draws of ``block`` rounds at
a time, so memory is O(R * block * d * s) whatever T is.

Streams.  Each kind of random number has its own generator, ``generator_for(seed, *key, "chunk", index,
<kind>)`` with kind in ``"tasks"``, ``"features"``, ``"positions"``, ``"beta"``, ``"noise"``, and each
draws its rounds in order, round-major ((rounds, R, ...) per call).  numpy's ``random`` and
``standard_normal`` fill arrays sequentially, so drawing rounds 1..T in blocks gives the same numbers as
drawing them in one call.  Hence (tested in ``tests/unit/numeric/test_streams.py``):

* the draws do not depend on ``block`` (a memory knob, not part of the stream);
* the first T rounds are the same for every horizon T' >= T, which is what common random numbers along a
  sigma0 sweep need (a smaller sigma0 runs longer, on the same first rounds);
* the kinds do not shift each other: changing the task schedule leaves the features alone.

Per round t (0-based j), R replicates:

* tasks: ``U = tasks.random(R)`` mapped by the inverse CDF of the :class:`TaskSchedule` in force (uniform
  over [N] when none is given, the paper's setting); a prescribed sequence draws nothing;
* ``"gaussian"``: ``features.standard_normal((R, d, s))``, the columns of X_t;
* ``"definition1"`` (Definition 1): the same normals times sigma_t, then the signal column
  ``beta_t v_{n_t}`` at position ``floor(s * positions.random(R))`` with ``beta_t = C (1 - beta.random(R))``
  in (0, C];
* ``"gaussian_complement"``: ``features.standard_normal((R, d, d - s))``, a basis of the orthogonal
  complement of span(X_t).  For Gaussian X_t, span(X_t) is a uniformly random s-dimensional subspace, so
  the span of d - s Gaussian vectors is distributed as its complement; the single expert's update depends
  on X_t only through span(X_t) (eq. 5 is the projection onto {w : X_t^T w = X_t^T w_n}), so the
  trajectories have the same law with 40 normals per round instead of 60 at d = 10, s = 6.  A separate
  feature model, since the draws differ; only the single expert takes it (the gate of Algorithm 1 reads
  sum_i X_{t,i}, which the span does not determine);
* Algorithm 1's routing noise: ``noise.random((R, M))``, Uniform[0, 1) (scaled by lambda in the dynamics).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from moecl_verify.numeric.draws import MoEDraws, SingleExpertDraws, TaskSchedule, check_int
from moecl_verify.numeric.pool import TaskPool
from moecl_verify.numeric.sampling import definition1_features, standard_normal
from moecl_verify.numeric.seeding import generator_for

__all__ = ["BLOCK_ROUNDS", "STREAM_FEATURE_MODELS", "DrawBlock", "DrawStream"]

# Rounds per block: large enough that the per-block calls vanish against the per-round work, small enough
# that a block of 1000 replicates at d = 10, s = 6 stays near 30 MB.
BLOCK_ROUNDS = 64
STREAM_FEATURE_MODELS = ("definition1", "gaussian", "gaussian_complement")


@dataclass(frozen=True, eq=False)
class DrawBlock:
    """Rounds ``start .. start + size - 1`` (0-based) of R replicates.

    ``tasks`` (R, size) int64; ``X`` (R, size, d, k) float64 with k = s, or k = d - s for
    ``gaussian_complement`` (then X holds complement bases); ``noise`` (R, size, M) or None.  The arrays are
    views of round-major buffers, so ``X[:, j]`` is contiguous."""

    start: int
    tasks: np.ndarray
    X: np.ndarray
    noise: np.ndarray | None

    @property
    def size(self) -> int:
        return int(self.tasks.shape[1])


@dataclass(frozen=True, eq=False)
class DrawStream:
    """The draws of one chunk of R replicates over T rounds, produced block by block.

    A pure function of its fields: ``pool``, ``R``, ``T``, ``s``, ``features`` (one of
    :data:`STREAM_FEATURE_MODELS`), ``sigma_t``, ``beta_max`` (Definition 1 only), ``M`` (routing noise
    per expert, None for the single expert), ``task_probs`` (a TaskSchedule or None: uniform), ``tasks``
    (a prescribed (T,) or (R, T) sequence, or None), ``seed``, ``key``, ``index`` (the chunk).
    ``block`` only sets how many rounds are in memory at once."""

    pool: TaskPool
    R: int
    T: int
    s: int
    seed: int
    key: tuple
    index: int = 0
    features: str = "definition1"
    sigma_t: float = 0.1
    beta_max: float = 1.0
    M: int | None = None
    task_probs: object = None
    tasks: np.ndarray | None = None
    block: int = BLOCK_ROUNDS

    def __post_init__(self) -> None:
        if self.features not in STREAM_FEATURE_MODELS:
            raise ValueError(f"features must be one of {STREAM_FEATURE_MODELS}, got {self.features!r}")
        check_int("R", self.R, 1)
        check_int("T", self.T, 1)
        check_int("block", self.block, 1)
        if self.pool.d < 2:
            raise ValueError(f"s must satisfy 1 <= s < d, impossible with d = {self.pool.d}")
        check_int("s", self.s, 1, self.pool.d - 1)
        if self.M is not None:
            check_int("M", self.M, 1)
            if self.features == "gaussian_complement":
                raise ValueError("gaussian_complement draws a basis of span(X_t)'s complement, which fixes the "
                                 "single expert's update but not the gate's input sum_i X_t,i: use gaussian for MoE")
        sigma_t, beta_max = float(self.sigma_t), float(self.beta_max)
        if not (math.isfinite(sigma_t) and sigma_t >= 0):
            raise ValueError(f"sigma_t must be finite and >= 0, got {self.sigma_t!r}")
        if not (math.isfinite(beta_max) and beta_max > 0):
            raise ValueError(f"beta_max must be finite and > 0, got {self.beta_max!r}")
        if isinstance(self.key, (str, bytes)):
            raise ValueError("key must be a sequence of str/int parts, not a bare string")
        object.__setattr__(self, "key", tuple(self.key))
        schedule = self.task_probs
        if schedule is not None:
            if self.tasks is not None:
                raise ValueError("give either tasks (a prescribed sequence) or task_probs (a schedule), not both")
            if not isinstance(schedule, TaskSchedule):
                raise ValueError(f"task_probs must be a TaskSchedule or None, got {type(schedule).__name__}")
            if schedule.N != self.pool.N:
                raise ValueError(f"task_probs lists {schedule.N} tasks, the pool has N = {self.pool.N}")
        if self.tasks is not None:
            tasks = np.broadcast_to(np.asarray(self.tasks, dtype=np.int64), (self.R, self.T)).copy()
            if tasks.min() < 0 or tasks.max() >= self.pool.N:
                raise ValueError(f"tasks must index the pool, i.e. lie in [0, {self.pool.N - 1}]")
            object.__setattr__(self, "tasks", tasks)

    @property
    def d(self) -> int:
        return self.pool.d

    @property
    def columns(self) -> int:
        """Columns per round's feature array: s, or d - s for the complement basis."""
        return self.pool.d - self.s if self.features == "gaussian_complement" else self.s

    def _generator(self, kind: str) -> np.random.Generator:
        return generator_for(self.seed, *self.key, "chunk", self.index, kind)

    def blocks(self) -> Iterator[DrawBlock]:
        """The draws, ``block`` rounds at a time, in round order."""
        R, d, k = self.R, self.pool.d, self.columns
        schedule = self.task_probs if self.task_probs is not None else TaskSchedule.uniform(self.pool.N)
        gens = {kind: self._generator(kind) for kind in ("tasks", "features", "positions", "beta", "noise")}
        for start in range(0, self.T, self.block):
            size = min(self.block, self.T - start)
            if self.tasks is not None:
                tasks = self.tasks[:, start:start + size]
            else:
                u = gens["tasks"].random((size, R))
                tasks = schedule.tasks_from_uniforms(u.T, start)
            if self.features == "definition1":
                positions = np.minimum((self.s * gens["positions"].random((size, R))).astype(np.int64), self.s - 1)
                beta = self.beta_max * (1.0 - gens["beta"].random((size, R)))
                X = definition1_features(gens["features"], self.sigma_t, positions, beta, self.pool.V, tasks, d, k)
            else:
                X = standard_normal(gens["features"], (size, R, d, k))
            noise = None if self.M is None else gens["noise"].random((size, R, self.M)).swapaxes(0, 1)
            yield DrawBlock(start=start, tasks=np.ascontiguousarray(tasks), X=X.swapaxes(0, 1), noise=noise)

    def materialize(self):
        """All T rounds at once, as the engines' reference loops take them: SingleExpertDraws (M None) or
        MoEDraws; ``X`` is (R, T, d, k) with k as in :attr:`columns`."""
        blocks = list(self.blocks())
        tasks = np.concatenate([b.tasks for b in blocks], axis=1)
        X = np.concatenate([b.X for b in blocks], axis=1)
        if self.M is None:
            return SingleExpertDraws(tasks=tasks, X=X, complement=self.features == "gaussian_complement")
        return MoEDraws(tasks, X, np.concatenate([b.noise for b in blocks], axis=1))
