"""The streams' normal draws, compiled: the same numbers as ``Generator.standard_normal``, in about a third of the time.

numba compiles functions that take a :class:`numpy.random.Generator` and call its methods; its
``standard_normal`` runs numpy's own ziggurat on the Generator's bit generator (through its ctypes
interface), so a loop of ``gen.standard_normal()`` consumes the bit stream exactly as numpy's array fill
does and returns the same doubles, in C order.  What it saves is numpy's per-element overhead: on the
machine this was written on, drawing a round's 60 normals took 0.35 of numpy's time
(``bench/bench_engines.py`` reports both floors in one run).  ``tests/unit/numeric/test_sampling.py`` checks equality with numpy bit for bit, and that the
generator's state afterwards is numpy's.

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

__all__ = ["definition1_features", "standard_normal"]

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


def standard_normal(gen: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """``gen.standard_normal(shape)``: the same array, and ``gen`` left in the same state."""
    out = np.empty(shape)
    _kernel(_fill_normal)(gen, out.reshape(-1))
    return out


def definition1_features(gen: np.random.Generator, sigma_t: float, positions: np.ndarray, beta: np.ndarray,
                         V: np.ndarray, tasks: np.ndarray, d: int, s: int) -> np.ndarray:
    """Definition 1's X for B rounds of R replicates, (B, R, d, s): ``sigma_t * gen.standard_normal((B, R, d,
    s))`` with column ``positions[b, r]`` of block (b, r) replaced by ``beta[b, r] * V[tasks[r, b]]``.

    ``positions`` (B, R) int64 in [0, s), ``beta`` (B, R), ``V`` (N, d), ``tasks`` (R, B) int64."""
    B, R = positions.shape
    out = np.empty((B, R, d, s))
    _kernel(_fill_definition1)(gen, out, float(sigma_t), np.ascontiguousarray(positions, dtype=np.int64),
                               np.ascontiguousarray(beta, dtype=np.float64), np.ascontiguousarray(V, dtype=np.float64),
                               np.ascontiguousarray(tasks, dtype=np.int64))
    return out
