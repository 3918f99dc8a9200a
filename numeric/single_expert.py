"""Monte Carlo simulator for continual learning with a single expert (M = 1).

Model (paper Section 3): each round t = 1..T draws a task n_t uniformly from
the pool, a feature matrix X_t (see ``numeric.draws``), sets
``y_t = X_t^T w_{n_t}`` and updates the expert by eq. 5 from ``w_0 = 0``.

Metrics, with ``E_tau(w) = ||w - w_{n_tau}||_2^2``:

* model error (eq. 14):      ``E_t(w_t)``;
* forgetting (eq. 15):       ``F_t = 1/(t-1) sum_{tau<t} (E_tau(w_t) - E_tau(w_tau))``,
  for t >= 2 (NaN at t = 1, where the sum is empty);
* generalization (eq. 16 with T = t):  ``G_t = 1/t sum_{tau<=t} E_tau(w_t)``.

Indexing: arrays are (R, T); rounds are 1-based in the paper, so column
``j`` holds round ``t = j + 1``.  ``SingleExpertRun.at(t)`` does the shift.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np

from moecl_verify.numeric.chunks import Chunk, ChunkRunner, chunk_sizes, default_runner
from moecl_verify.numeric.draws import ReplicateRounds, SingleExpertDraws
from moecl_verify.numeric import kernels
from moecl_verify.numeric.expert import complement_update, min_norm_update
from moecl_verify.numeric.pool import TaskPool
from moecl_verify.numeric.streams import BLOCK_ROUNDS, DrawBlock, DrawStream

__all__ = [
    "SingleExpertRun",
    "run_batched",
    "run_reference",
    "simulate_single_expert",
]


@dataclass(frozen=True, eq=False)
class SingleExpertRun(ReplicateRounds):
    """Trajectories of R replicates over T rounds.

    ``tasks``, ``model_error``, ``forgetting``, ``generalization`` are (R, T),
    column j = round t = j + 1; ``forgetting[:, 0]`` is NaN (F_1 undefined).
    ``final_w`` is (R, d), the expert after round T.
    """

    tasks: np.ndarray
    model_error: np.ndarray
    forgetting: np.ndarray
    generalization: np.ndarray
    final_w: np.ndarray

    def at(self, t: int) -> dict[str, np.ndarray]:
        """Per-replicate values at paper round ``t`` (1-based, 1 <= t <= T)."""
        if isinstance(t, bool) or not isinstance(t, numbers.Integral) or not 1 <= t <= self.T:
            raise ValueError(f"t must be an integer round in [1, {self.T}], got {t!r}")
        j = int(t) - 1
        return {
            "task": self.tasks[:, j],
            "model_error": self.model_error[:, j],
            "forgetting": self.forgetting[:, j],
            "generalization": self.generalization[:, j],
        }

    @staticmethod
    def concatenate(runs: Sequence["SingleExpertRun"]) -> "SingleExpertRun":
        """Stack runs along the replicate axis, in the given order."""
        if not runs:
            raise ValueError("runs must be non-empty")
        return SingleExpertRun(
            tasks=np.concatenate([r.tasks for r in runs]),
            model_error=np.concatenate([r.model_error for r in runs]),
            forgetting=np.concatenate([r.forgetting for r in runs]),
            generalization=np.concatenate([r.generalization for r in runs]),
            final_w=np.concatenate([r.final_w for r in runs]),
        )


def _check_compatible(pool: TaskPool, draws: SingleExpertDraws | DrawStream) -> None:
    if isinstance(draws, DrawStream):
        if draws.pool is not pool and not np.array_equal(draws.pool.W, pool.W):
            raise ValueError("the draw stream was built on another pool")
        if draws.M is not None:
            raise ValueError("the draw stream carries routing noise: it is Algorithm 1's, not the single expert's")
        return
    if draws.X.shape[2] != pool.d:
        raise ValueError(f"draws have d = {draws.X.shape[2]}, pool has d = {pool.d}")
    if draws.tasks.size and (draws.tasks.min() < 0 or draws.tasks.max() >= pool.N):
        raise ValueError(f"draws.tasks must lie in [0, {pool.N - 1}]")


def blocks_of(draws: SingleExpertDraws | DrawStream) -> Iterator[DrawBlock]:
    """Materialised draws as one block, a stream block by block (:mod:`numeric.streams`)."""
    if isinstance(draws, DrawStream):
        return draws.blocks()
    return iter([DrawBlock(start=0, tasks=draws.tasks, X=draws.X, noise=getattr(draws, "noise", None))])


def is_complement(draws: SingleExpertDraws | DrawStream) -> bool:
    if isinstance(draws, DrawStream):
        return draws.features == "gaussian_complement"
    return bool(getattr(draws, "complement", False))


def round_major_blocks(draws) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray | None]]:
    """The draws as the compiled kernels take them: ``(start, tasks (R, B), X (B, R, d, k), noise (B, R, M)
    or None)``, C-contiguous.  A stream's blocks are round-major already (no copy); materialised draws are
    copied :data:`numeric.streams.BLOCK_ROUNDS` rounds at a time."""
    if isinstance(draws, DrawStream):
        for block in draws.blocks():
            noise = None if block.noise is None else np.ascontiguousarray(block.noise.swapaxes(0, 1))
            yield (block.start, np.ascontiguousarray(block.tasks, dtype=np.int64),
                   np.ascontiguousarray(block.X.swapaxes(0, 1)), noise)
        return
    noise_all = getattr(draws, "noise", None)
    for start in range(0, draws.T, BLOCK_ROUNDS):
        stop = min(start + BLOCK_ROUNDS, draws.T)
        noise = None if noise_all is None else np.ascontiguousarray(noise_all[:, start:stop].swapaxes(0, 1))
        yield (start, np.ascontiguousarray(draws.tasks[:, start:stop], dtype=np.int64),
               np.ascontiguousarray(draws.X[:, start:stop].swapaxes(0, 1)), noise)


def _run_batched_numba(pool: TaskPool, draws: SingleExpertDraws | DrawStream) -> SingleExpertRun:
    """:func:`run_batched` by the compiled kernel (:func:`numeric.kernels.single_expert_block`)."""
    R, T = draws.R, draws.T
    W = np.ascontiguousarray(pool.W, dtype=np.float64)
    complement = is_complement(draws)
    w = np.zeros((R, pool.d))
    counts = np.zeros((R, pool.N))
    past_self_error = np.zeros(R)
    tasks = np.empty((R, T), dtype=np.int64)
    model_error = np.empty((R, T))
    forgetting = np.empty((R, T))
    generalization = np.empty((R, T))
    for start, block_tasks, X, _ in round_major_blocks(draws):
        tasks[:, start:start + block_tasks.shape[1]] = block_tasks
        kernels.single_expert_block(X, block_tasks, W, start, complement, w, counts, past_self_error,
                                    model_error, forgetting, generalization)
    return SingleExpertRun(tasks=tasks, model_error=model_error, forgetting=forgetting,
                           generalization=generalization, final_w=w)


def run_batched(pool: TaskPool, draws: SingleExpertDraws | DrawStream, engine: str | None = None) -> SingleExpertRun:
    """Advance all R replicates together; Python loops over rounds only.

    ``draws`` are materialised (:class:`SingleExpertDraws`) or streamed block by block
    (:class:`numeric.streams.DrawStream`, memory O(R * block * d * s) whatever T is); the same draws give
    the same trajectories either way.

    ``engine``: "numpy" (this function's own loop, the reference) or "numba" (the compiled kernel of
    :mod:`numeric.kernels`: the same quantities, equal up to rounding); None (default) takes "numba",
    which covers every feature model.

    Keeps ``err[r, n] = ||w_t - w_n||^2`` for every pool task, per-replicate
    task counts, and the running sum of past model errors, so F_t and G_t
    cost O(N) per round instead of the O(t) sums in eq. 15-16:

        sum_{tau<t}  E_tau(w_t) = sum_n count_{t-1}[n] * err_t[n]
        sum_{tau<t}  E_tau(w_tau) = running sum of model errors.
    """
    _check_compatible(pool, draws)
    if kernels.choose_engine(engine, None) == "numba":
        return _run_batched_numba(pool, draws)
    R, T = draws.R, draws.T
    W = pool.W
    rows = np.arange(R)
    complement = is_complement(draws)

    w = np.zeros((R, pool.d))
    counts = np.zeros((R, pool.N))  # float: exact up to 2**53 and avoids casts in the dot
    past_self_error = np.zeros(R)
    tasks = np.empty((R, T), dtype=np.int64)
    model_error = np.empty((R, T))
    forgetting = np.empty((R, T))
    generalization = np.empty((R, T))
    diff = np.empty((R, pool.N, pool.d))

    for block in blocks_of(draws):
        tasks[:, block.start:block.start + block.size] = block.tasks
        truths = W[block.tasks]  # (R, B, d)
        # Labels y_t = X_t^T w_{n_t} do not depend on the expert: form a block's at once.
        y_block = None if complement else np.einsum("rtds,rtd->rts", block.X, truths)
        for jj in range(block.size):
            j = block.start + jj
            t = j + 1
            n_t = block.tasks[:, jj]
            if complement:
                w = complement_update(w, block.X[:, jj], truths[:, jj])
            else:
                w = min_norm_update(w, block.X[:, jj], y_block[:, jj])

            # Direct differences, not ||w||^2 - 2<w, w_n> + ||w_n||^2, which
            # cancels badly when w is close to a ground truth.
            np.subtract(w[:, None, :], W[None, :, :], out=diff)
            err = np.einsum("rnd,rnd->rn", diff, diff)
            current = err[rows, n_t]

            past_at_current = np.einsum("rn,rn->r", counts, err)
            forgetting[:, j] = (past_at_current - past_self_error) / (t - 1) if t > 1 else np.nan
            generalization[:, j] = (past_at_current + current) / t
            model_error[:, j] = current

            counts[rows, n_t] += 1.0
            past_self_error += current

    return SingleExpertRun(
        tasks=tasks,
        model_error=model_error,
        forgetting=forgetting,
        generalization=generalization,
        final_w=w,
    )


def run_reference(pool: TaskPool, draws: SingleExpertDraws) -> SingleExpertRun:
    """Plain per-replicate, per-round loop straight from eq. 5, 14, 15, 16.

    Slow on purpose (O(t) work per round for F_t and G_t); a test oracle for
    :func:`run_batched`, sharing no bookkeeping with it.
    """
    if isinstance(draws, DrawStream):
        draws = draws.materialize()
    _check_compatible(pool, draws)
    R, T = draws.R, draws.T
    W = pool.W
    complement = is_complement(draws)
    model_error = np.empty((R, T))
    forgetting = np.empty((R, T))
    generalization = np.empty((R, T))
    final_w = np.empty((R, pool.d))

    for r in range(R):
        w = np.zeros(pool.d)
        truths_so_far = np.empty((T, pool.d))  # w_{n_tau} for tau = 1..t
        own_error = np.empty(T)  # E_tau(w_tau)
        for j in range(T):
            t = j + 1
            X = draws.X[r, j]
            truth = W[draws.tasks[r, j]]
            if complement:
                # The draws hold a basis of span(X_t)'s complement: rebuild a basis of span(X_t) itself.
                X = np.linalg.svd(X, full_matrices=True)[0][:, X.shape[1]:]
            y = X.T @ truth
            # eq. 5
            w = w + X @ np.linalg.solve(X.T @ X, y - X.T @ w)

            truths_so_far[j] = truth
            errors_now = np.sum((w - truths_so_far[:t]) ** 2, axis=1)  # E_tau(w_t), tau <= t
            own_error[j] = errors_now[j]

            model_error[r, j] = errors_now[j]  # eq. 14
            if t == 1:
                forgetting[r, j] = np.nan
            else:  # eq. 15
                forgetting[r, j] = np.sum(errors_now[:j] - own_error[:j]) / (t - 1)
            generalization[r, j] = np.sum(errors_now) / t  # eq. 16
        final_w[r] = w

    return SingleExpertRun(
        tasks=draws.tasks.copy(),
        model_error=model_error,
        forgetting=forgetting,
        generalization=generalization,
        final_w=final_w,
    )


def simulate_single_expert(
    pool: TaskPool,
    *,
    R: int,
    T: int,
    s: int,
    features: str = "gaussian",
    sigma_t: float = 0.1,
    beta_max: float = 1.0,
    seed: int = 0,
    key: Sequence[str | int] = (),
    chunk_size: int = 256,
    progress: Callable[[int, int], object] | None = None,
    runner: ChunkRunner | None = None,
    engine: str | None = None,
) -> SingleExpertRun:
    """Simulate R replicates in chunks of ``chunk_size``, each streamed in blocks of rounds.

    Chunk i (0-based) holds replicates ``[i*chunk_size, min((i+1)*chunk_size, R))``
    and draws from the keyed streams of :class:`numeric.streams.DrawStream`
    (``generator_for(seed, *key, "chunk", i, <kind>)``); results are
    concatenated in chunk order.  The output is a function of
    (pool, R, T, s, features, sigma_t, beta_max, seed, key, chunk_size) only;
    changing ``chunk_size`` changes the streams, the horizon T does not (the
    first T rounds are the same for any longer horizon).

    Memory per chunk: one block of draws, ``8 * chunk_size * BLOCK_ROUNDS * d * s``
    bytes, plus the (chunk_size, T) trajectories.  ``progress(done_replicates, R)``
    is called after each chunk if given.  ``runner`` (:mod:`numeric.chunks`)
    decides where chunks run and whether they are cached; the result does not
    depend on it.  ``engine`` as in :func:`run_batched`; the engine chosen is an argument of every chunk
    (so of its cache key).
    """
    engine = kernels.choose_engine(engine, None)
    sizes = chunk_sizes(R, chunk_size)
    if progress is not None and not callable(progress):
        raise ValueError("progress must be callable(done_replicates, total_replicates) or None")
    if isinstance(key, (str, bytes)):
        raise ValueError("key must be a sequence of str/int parts, not a bare string")

    chunks = [
        Chunk(_single_chunk, dict(pool=pool, size=size, T=T, s=s, features=features, sigma_t=sigma_t,
                                  beta_max=beta_max, seed=seed, key=tuple(key), index=i, engine=engine), size=size)
        for i, size in enumerate(sizes)
    ]
    results = (runner or default_runner()).run(chunks, progress)
    return SingleExpertRun.concatenate([SingleExpertRun(**a) for a in results])


def _single_chunk(*, pool, size, T, s, features, sigma_t, beta_max, seed, key, index, engine) -> dict:
    """One chunk of :func:`simulate_single_expert` as flat arrays (cacheable, picklable)."""
    draws = DrawStream(pool=pool, R=size, T=T, s=s, seed=seed, key=key, index=index, features=features,
                       sigma_t=sigma_t, beta_max=beta_max)
    run = run_batched(pool, draws, engine=engine)
    return {name: getattr(run, name) for name in ("tasks", "model_error", "forgetting", "generalization", "final_w")}
