"""The streams' normal draws, compiled: the same numbers as ``Generator.standard_normal``, in about a third of the time.

numba compiles functions that take a :class:`numpy.random.Generator` and call its methods; its
``standard_normal`` runs numpy's own ziggurat on the Generator's bit generator (through its ctypes
interface), so a loop of ``gen.standard_normal()`` consumes the bit stream exactly as numpy's array fill
does and returns the same doubles, in C order.  What it saves is numpy's per-element overhead: on the
machine this was written on, drawing a round's 60 normals took 0.35 of numpy's time
(``bench/bench_engines.py`` reports both floors in one run).  ``tests/unit/numeric/test_sampling.py`` checks equality with numpy bit for bit, and that the
generator's state afterwards is numpy's; every process also checks it once on first use
(:func:`compiled_agrees`) and, should another pair of numba and numpy versions disagree, falls back to
numpy's own fill, so the numbers never depend on the sampler.

:func:`definition1_features` also folds Definition 1's assembly into the fill: each round's d x s block is
sigma_t times the normals, then the signal column ``beta_t v_{n_t}`` overwrites column ``position_t``,
which is what :class:`numeric.streams.DrawStream` did with numpy (scale the whole array, then a fancy-indexed
assignment), with the same products in the same precision, so the arrays are identical.

numba is imported and the functions compiled (or loaded from numba's cache) on first use, as the kernels
are (:mod:`numeric.kernels`); only PCG64-backed generators are passed here (:func:`numeric.seeding.generator_for`),
although numba accepts any bit generator with numpy's ctypes interface.
"""

from __future__ import annotations

import numpy as np

__all__ = ["compiled_agrees", "definition1_features", "standard_normal"]

_compiled: dict = {}


def _fill_normal(gen, out):
    """out (flat) <- gen.standard_normal(), in order."""
    for f in range(out.shape[0]):
        out[f] = gen.standard_normal()


def _fill_definition1(gen, out, sigma, positions, beta, V, tasks):
    """out (B, R, d, s) <- sigma z (z standard normal, C order), then out[b, r, :, positions[b, r]] <-
    beta[b, r] V[tasks[r, b]]."""
    B, R, d, s = out.shape
    for b in range(B):
        for r in range(R):
            for i in range(d):
                for c in range(s):
                    out[b, r, i, c] = gen.standard_normal() * sigma
            p = positions[b, r]
            n = tasks[r, b]
            be = beta[b, r]
            for i in range(d):
                out[b, r, i, p] = be * V[n, i]


def _kernel(fn):
    """``fn`` compiled by numba (cached on disk where possible), once per process."""
    name = fn.__name__
    if name not in _compiled:
        import numba

        try:
            _compiled[name] = numba.njit(cache=True)(fn)
        except RuntimeError:  # no writable cache location: compile in memory
            _compiled[name] = numba.njit(cache=False)(fn)
    return _compiled[name]


_AGREES: list[bool] = []  # whether this process's numba reproduces numpy's normals (checked once)


def compiled_agrees() -> bool:
    """Whether numba's Generator sampler gives numpy's numbers here: 20,000 draws (tail and wedge paths
    included) compared bit for bit once per process, since numba reimplements numpy's ziggurat and another
    pair of versions could disagree.  Where it does not, the streams use numpy's own fill (slower, the same
    numbers), so a run never depends on the sampler it happened to get."""
    if not _AGREES:
        ours, theirs = (np.random.Generator(np.random.PCG64(20_241_201)) for _ in range(2))
        got = np.empty(20_000)
        try:
            _kernel(_fill_normal)(ours, got)
            agrees = got.tobytes() == theirs.standard_normal(20_000).tobytes() and ours.random() == theirs.random()
        except Exception:  # numba without Generator support: numpy's fill
            agrees = False
        _AGREES.append(agrees)
    return _AGREES[0]


def standard_normal(gen: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """``gen.standard_normal(shape)``: the same array, and ``gen`` left in the same state."""
    if not compiled_agrees():
        return gen.standard_normal(shape)
    out = np.empty(shape)
    _kernel(_fill_normal)(gen, out.reshape(-1))
    return out


def definition1_features(gen: np.random.Generator, sigma_t: float, positions: np.ndarray, beta: np.ndarray,
                         V: np.ndarray, tasks: np.ndarray, d: int, s: int) -> np.ndarray:
    """Definition 1's X for B rounds of R replicates, (B, R, d, s): ``sigma_t * gen.standard_normal((B, R, d,
    s))`` with column ``positions[b, r]`` of block (b, r) replaced by ``beta[b, r] * V[tasks[r, b]]``.

    ``positions`` (B, R) int64 in [0, s), ``beta`` (B, R), ``V`` (N, d), ``tasks`` (R, B) int64."""
    B, R = positions.shape
    if not compiled_agrees():
        out = gen.standard_normal((B, R, d, s))
        out *= sigma_t
        b_idx, r_idx = np.indices((B, R), sparse=True)
        out[b_idx, r_idx, :, positions] = beta[..., None] * V[np.asarray(tasks).T]
        return out
    out = np.empty((B, R, d, s))
    _kernel(_fill_definition1)(gen, out, float(sigma_t), np.ascontiguousarray(positions, dtype=np.int64),
                               np.ascontiguousarray(beta, dtype=np.float64), np.ascontiguousarray(V, dtype=np.float64),
                               np.ascontiguousarray(tasks, dtype=np.int64))
    return out
