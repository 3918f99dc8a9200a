"""Compiled engines: numba kernels that advance a block of rounds in place on explicit state arrays.

The numpy engines (:func:`numeric.single_expert.run_batched`, :func:`numeric.moe.run_moe_batched`) loop
over rounds in Python and over replicates in numpy; their per-round overhead dominates at d = 10.  These
kernels loop over replicates and rounds in compiled code, one call per block of rounds of a
:class:`numeric.streams.DrawStream`, and compute the same quantities (the numpy engines stay the
reference they are tested against, in ``tests/unit/numeric/test_kernels.py``):

* :func:`single_expert_block`: eq. 5 (``k = s`` columns of X_t), or its complement form (``k = d - s``
  columns spanning span(X_t)^perp, ``w_t = w_n + P_C (w_{t-1} - w_n)``), then E_t, F_t, G_t (eq. 14-16)
  with run_batched's O(N) bookkeeping: task counts and the running sum of past model errors, errors by
  direct differences ``w - w_n``.
* :func:`moe_block`: Algorithm 1 with top-1 routing ``argmax_m (h_m + lambda U_m)`` (ties to the smaller
  index, as np.argmax), the auxiliary-loss gate gradient in the closed form of
  :func:`numeric.gate.task_loss_gradient` (same operations in the same order), the softmax of
  :func:`numeric.gate.softmax` (max-shifted), early termination with either flag timing and sticky or
  non-sticky marks, ``aux_factor`` "1/t" or "t".  F_t and G_t keep run_moe_batched's pair counts
  (rounds with (m_tau, n_tau) = (m, n)) and, per expert, ``S_m = sum_n pair_counts[m, n] err[m, n]``,
  recomputed for the routed expert only (the others' models and counts did not move): O(N + M) a round.
  And the variants of :class:`numeric.moe.MoEConfig`, as run_moe_batched computes them:
  ``balance="none"`` and ``"bias"`` (the gradient by the softmax chain of
  :func:`numeric.gate.softmax_chain_gradient`; the routing bias in the choice only, its step
  ``b += u sign(1/M - load)`` where the gate is live, the load since round 1 or over a window of rounds);
  ``top_k >= 2`` (the routed set by descending score, ties to the smaller index; every member's eq. 5 step
  on one basis of X_t; the served model ``sum_{m in S} g_m w^(m)`` with the renormalised softmax weights,
  its errors by run_moe_batched's sums over past rounds, PGG, PGN and PNN, against the current models'
  inner products, updated for the routed experts only); ``router="oracle"`` (the task's set, the largest
  noise; no gate); ``record_rounds`` (per round: gate outputs before the update, cumulative loads, eq. 11
  sets after the update, routed sets, routing bias).  Only an observer needs the numpy engine.

Layout.  A kernel advances ``LANES`` replicates together (a group of lanes), round by round through the
block, with every per-replicate quantity stored lane-innermost (e.g. the round's features as Q[c, i, lane]),
so the compiler vectorizes the loops over lanes; each replicate's arithmetic is the same whatever its lane
or group, so results do not depend on R, on the grouping or on the blocks.

Projections use an orthogonal basis of the round's d x k block by modified Gram-Schmidt in small loops
(no np.linalg call per round), kept unnormalised with the inverse squared norms: the projection of a is
sum_c (u_c . a) / ||u_c||^2 u_c.  A column whose residual after orthogonalisation is below 1e-10 of its
own norm is dropped (exactly dependent or zero columns, e.g. Definition 1 with sigma_t = 0): the
projection is then onto the span of the columns, the same minimum-norm step as numpy's pseudo-inverse
fallback.  The numbers differ from the numpy engine's (LU of the Gram matrix by LAPACK) by rounding only;
but without termination Algorithm 1's gate amplifies rounding (about tenfold per 30 rounds at eta = 0.5),
so over long horizons the two engines' trajectories part (equally valid, not the same replicates).
Where the exact dynamics tie or vanish, rounding decides instead: with top_k = M every expert steps alike
and the gate's gradient is zero up to rounding; experts routed together with lambda = 0 keep equal gates,
an exact tie the kernel keeps and numpy's einsum may break.

Compiled with ``@numba.njit(cache=True)``, no fastmath, no parallel (chunks already run in separate
processes), ``error_model="numpy"`` (IEEE division, no zero-division checks in the loops): the result is
a pure function of the inputs.  numba is imported, and the kernels compiled (or loaded from numba's
on-disk cache), on first use, so importing the engines does not pay for it.  Arrays must be C-contiguous
float64 (int64 for tasks, bool for flags), as the wrappers pass them, so each kernel has one compiled
signature.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import math
import tempfile
from pathlib import Path
from typing import NamedTuple

import numpy as np

__all__ = ["ENGINES", "choose_engine", "compile_kernels", "moe_block", "single_expert_block"]

ENGINES = ("numba", "numpy")

# Replicates advanced together in the kernels' inner loops (a run-time value, so the loops over them stay
# loops that the compiler vectorizes).  Each replicate's arithmetic is the same whatever its lane: the
# results do not depend on it.
LANES = 32

# MoEConfig.balance as the kernel's code (a compile-time constant in it).
BALANCE_CODES = {"aux": 0, "none": 1, "bias": 2}
_AUX, _BIAS = BALANCE_CODES["aux"], BALANCE_CODES["bias"]

# Relative residual below which a column counts as dependent on the previous ones (on squared norms).
_DEPENDENT = 1e-20


def choose_engine(engine: str | None, unsupported: str | None) -> str:
    """The engine to run: ``engine`` as asked, or (None) "numba" where the kernels cover the configuration
    and "numpy" otherwise.  ``unsupported`` names what the kernels do not cover (None: all covered);
    asking for "numba" explicitly then is an error."""
    if engine is None:
        return "numpy" if unsupported else "numba"
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES} or None (the default choice), got {engine!r}")
    if engine == "numba" and unsupported:
        raise ValueError(f"engine='numba' does not cover {unsupported}: use engine='numpy' (the reference "
                         f"engine), or leave engine unset to choose it")
    return engine


# ---------------------------------------------------------------------------------------------------------
# Kernel sources.  Plain functions here; compile_kernels() replaces each module global registered by @_jit
# with its numba dispatcher.

_JIT_ORDER: list[str] = []


def _jit(fn):
    _JIT_ORDER.append(fn.__name__)
    return fn


@_jit
def _load_lanes(X, jj, r0, nq, Q, rows):
    """Q[c, i, q] <- X[jj, r0 + q, i, c] for the lanes q < nq: the round's d x k blocks, columns as rows,
    lanes innermost; ``rows[i k + c] = c d + i`` (:func:`_row_map`).

    A transpose of the lanes' (d k)-vectors by 4 x 4 tiles (four lanes' consecutive entries in, four rows'
    consecutive lanes out), which the compiler turns into vector loads, shuffles and stores."""
    F = X.shape[2] * X.shape[3]
    Xf = X[jj].reshape((X.shape[1], F))
    Qf = Q.reshape((F, Q.shape[2]))
    q = 0
    while q + 4 <= nq:
        x0 = Xf[r0 + q]
        x1 = Xf[r0 + q + 1]
        x2 = Xf[r0 + q + 2]
        x3 = Xf[r0 + q + 3]
        f = 0
        while f + 4 <= F:
            a0, a1, a2, a3 = x0[f], x0[f + 1], x0[f + 2], x0[f + 3]
            b0, b1, b2, b3 = x1[f], x1[f + 1], x1[f + 2], x1[f + 3]
            c0, c1, c2, c3 = x2[f], x2[f + 1], x2[f + 2], x2[f + 3]
            e0, e1, e2, e3 = x3[f], x3[f + 1], x3[f + 2], x3[f + 3]
            g0, g1, g2, g3 = rows[f], rows[f + 1], rows[f + 2], rows[f + 3]
            Qf[g0, q], Qf[g0, q + 1], Qf[g0, q + 2], Qf[g0, q + 3] = a0, b0, c0, e0
            Qf[g1, q], Qf[g1, q + 1], Qf[g1, q + 2], Qf[g1, q + 3] = a1, b1, c1, e1
            Qf[g2, q], Qf[g2, q + 1], Qf[g2, q + 2], Qf[g2, q + 3] = a2, b2, c2, e2
            Qf[g3, q], Qf[g3, q + 1], Qf[g3, q + 2], Qf[g3, q + 3] = a3, b3, c3, e3
            f += 4
        while f < F:
            g = rows[f]
            Qf[g, q], Qf[g, q + 1], Qf[g, q + 2], Qf[g, q + 3] = x0[f], x1[f], x2[f], x3[f]
            f += 1
        q += 4
    while q < nq:
        x0 = Xf[r0 + q]
        for f in range(F):
            Qf[rows[f], q] = x0[f]
        q += 1


@_jit
def _row_map(d, k):
    """rows[i k + c] = c d + i: where entry (i, c) of a row-major d x k block goes in :func:`_load_lanes`."""
    rows = np.empty(d * k, dtype=np.int64)
    for i in range(d):
        for c in range(k):
            rows[i * k + c] = c * d + i
    return rows


@_jit
def _basis_lanes(Q, nq, a, coef, sq, inv, acc, nrm):
    """Lane by lane: the columns u_c = Q[c, :, q] made orthogonal (modified Gram-Schmidt without
    normalisation), in place; inv[c, q] <- 1 / ||u_c||^2 (0 where u_c is dropped); coef[c, q] <-
    (u_c . a[:, q]) inv[c, q], the coordinates of the projection of a onto the columns' span,
    sum_c coef_c u_c.

    A column whose residual is below 1e-10 of its own norm (dependent on the previous columns, or zero)
    is dropped, so the projection is onto exactly the span of the columns.  Each u_c's squared norm and
    dot with ``a`` are formed in the sweep that finishes it."""
    k = Q.shape[0]
    d = Q.shape[1]
    for c in range(k):
        if c == 0:
            for q in range(nq):
                nrm[q] = 0.0
                coef[0, q] = 0.0
            for i in range(d):
                for q in range(nq):
                    v = Q[0, i, q]
                    nrm[q] += v * v
                    coef[0, q] += v * a[i, q]
            for q in range(nq):
                sq[0, q] = nrm[q]
        for p in range(c):
            for q in range(nq):
                acc[q] = 0.0
            if p == 0:
                for q in range(nq):
                    sq[c, q] = 0.0
                for i in range(d):
                    for q in range(nq):
                        v = Q[c, i, q]
                        acc[q] += Q[0, i, q] * v
                        sq[c, q] += v * v
            else:
                for i in range(d):
                    for q in range(nq):
                        acc[q] += Q[p, i, q] * Q[c, i, q]
            for q in range(nq):
                acc[q] *= inv[p, q]
            if p < c - 1:
                for i in range(d):
                    for q in range(nq):
                        Q[c, i, q] -= acc[q] * Q[p, i, q]
            else:  # the last sweep finishes u_c
                for q in range(nq):
                    nrm[q] = 0.0
                    coef[c, q] = 0.0
                for i in range(d):
                    for q in range(nq):
                        v = Q[c, i, q] - acc[q] * Q[p, i, q]
                        Q[c, i, q] = v
                        nrm[q] += v * v
                        coef[c, q] += v * a[i, q]
        for q in range(nq):
            keep = nrm[q] > _DEPENDENT * sq[c, q]
            inv[c, q] = 1.0 / nrm[q] if keep else 0.0
            coef[c, q] *= inv[c, q]


@_jit
def _add_projection(Q, nq, coef, w):
    """w[:, q] += sum_c coef[c, q] u_c (the columns of Q), lane by lane."""
    k = Q.shape[0]
    d = Q.shape[1]
    for c in range(k):
        for i in range(d):
            for q in range(nq):
                w[i, q] += coef[c, q] * Q[c, i, q]


@_jit
def _errors_lanes(w, W, tasks_of_lane, counts, nq, acc, past, current):
    """past[q] <- sum_n counts[n, q] ||w[:, q] - w_n||^2, current[q] <- ||w[:, q] - w_{tasks_of_lane[q]}||^2
    (direct differences)."""
    N = W.shape[0]
    d = W.shape[1]
    for q in range(nq):
        past[q] = 0.0
        current[q] = 0.0
    for n in range(N):
        for q in range(nq):
            acc[q] = 0.0
        for i in range(d):
            Wni = W[n, i]
            for q in range(nq):
                diff = w[i, q] - Wni
                acc[q] += diff * diff
        for q in range(nq):
            past[q] += counts[n, q] * acc[q]
            current[q] = acc[q] if tasks_of_lane[q] == n else current[q]


@_jit
def _single_expert_block(X, tasks, W, start, complement, lanes, w, counts, past_self_error,
                         model_error, forgetting, generalization):
    B = X.shape[0]
    R = X.shape[1]
    d = X.shape[2]
    k = X.shape[3]
    N = W.shape[0]
    G = lanes
    Q = np.zeros((k, d, G))
    rows = _row_map(d, k)
    sq = np.empty((k, G))
    inv = np.empty((k, G))
    coef = np.empty((k, G))
    wg = np.empty((d, G))
    tg = np.empty((d, G))
    ag = np.empty((d, G))
    cg = np.empty((N, G))
    pse = np.empty(G)
    acc = np.empty(G)
    nrm = np.empty(G)
    cur = np.empty(G)
    past = np.empty(G)
    ng = np.empty(G, dtype=np.int64)
    for r0 in range(0, R, G):
        nq = min(G, R - r0)
        for q in range(nq):
            for i in range(d):
                wg[i, q] = w[r0 + q, i]
            for m in range(N):
                cg[m, q] = counts[r0 + q, m]
            pse[q] = past_self_error[r0 + q]
        for jj in range(B):
            j = start + jj
            t = j + 1
            # Eq. 5: w <- w + P_X (w_n - w); complement form: w <- w_n + P_C (w - w_n).
            for q in range(nq):
                n = tasks[r0 + q, jj]
                ng[q] = n
                for i in range(d):
                    tg[i, q] = W[n, i]
                    ag[i, q] = wg[i, q] - W[n, i] if complement else W[n, i] - wg[i, q]
            _load_lanes(X, jj, r0, nq, Q, rows)
            _basis_lanes(Q, nq, ag, coef, sq, inv, acc, nrm)
            if complement:
                for i in range(d):
                    for q in range(nq):
                        wg[i, q] = tg[i, q]
            _add_projection(Q, nq, coef, wg)
            # E_t, F_t, G_t with the O(N) bookkeeping (task counts, running sum of past model errors).
            _errors_lanes(wg, W, ng, cg, nq, acc, past, cur)
            for q in range(nq):
                r = r0 + q
                forgetting[r, j] = (past[q] - pse[q]) / (t - 1) if t > 1 else np.nan
                generalization[r, j] = (past[q] + cur[q]) / t
                model_error[r, j] = cur[q]
                cg[ng[q], q] += 1.0
                pse[q] += cur[q]
        for q in range(nq):
            for i in range(d):
                w[r0 + q, i] = wg[i, q]
            for m in range(N):
                counts[r0 + q, m] = cg[m, q]
            past_self_error[r0 + q] = pse[q]


@_jit
def _flags_lanes(h, mt, nq, Gamma, sticky, mk, fz, frd, t, ref, allm):
    """Algorithm 1, lines 7-13, on the live lanes: mark experts within Gamma of the routed one (on the gate
    outputs h (M, lanes)); freeze the gate of a lane when all its experts are marked."""
    M = h.shape[0]
    for q in range(nq):
        ref[q] = h[mt[q], q]
        allm[q] = True
    for m in range(M):
        for q in range(nq):
            close = abs(h[m, q] - ref[q]) <= Gamma
            marked = (mk[m, q] or close) if sticky else close
            marked = mk[m, q] if fz[q] else marked
            mk[m, q] = marked
            allm[q] = allm[q] and marked
    for q in range(nq):
        if allm[q] and not fz[q]:
            fz[q] = True
            frd[q] = t


@_jit
def _coef_lanes(Q, nq, a, coef, inv):
    """coef[c, q] <- (u_c . a[:, q]) inv[c, q] on a basis :func:`_basis_lanes` has already made (the same
    operations as its own coefficients): the projection of a further vector onto the same span.  The other
    experts of a top-k set step on the same X_t, so its basis is built once a round."""
    k = Q.shape[0]
    d = Q.shape[1]
    for c in range(k):
        for q in range(nq):
            coef[c, q] = 0.0
        for i in range(d):
            for q in range(nq):
                coef[c, q] += Q[c, i, q] * a[i, q]
        for q in range(nq):
            coef[c, q] *= inv[c, q]


@_jit
def _gate_outputs_lanes(thg, xb, nq, h):
    """Gate outputs h_m = theta_m^T xbar (eq. 1), lane by lane."""
    M = thg.shape[0]
    d = thg.shape[1]
    for m in range(M):
        for q in range(nq):
            h[m, q] = thg[m, 0, q] * xb[0, q]
        for i in range(1, d):
            for q in range(nq):
                h[m, q] += thg[m, i, q] * xb[i, q]


@_jit
def _route_top1(sc, U, lam, nq, mt, best):
    """Top-1 routing argmax_m (sc_m + lambda U_m) (eq. 1; sc = h, or h + b with the routing bias), ties to
    the smaller index (np.argmax)."""
    M = sc.shape[0]
    for q in range(nq):
        best[q] = sc[0, q] + lam * U[0, q]
        mt[q] = 0
    for m in range(1, M):
        for q in range(nq):
            score = sc[m, q] + lam * U[m, q]
            better = score > best[q]
            best[q] = score if better else best[q]
            mt[q] = m if better else mt[q]


@_jit
def _route_top_k(sc, U, lam, nq, S, score):
    """MoEConfig.top_k: S[:, q] <- the k experts of largest sc_m + lambda U_m, largest first, ties to the
    smaller index and NaN last (the order of numpy's stable argsort of the negated scores)."""
    k = S.shape[0]
    M = sc.shape[0]
    for q in range(nq):
        for m in range(M):
            score[m] = sc[m, q] + lam * U[m, q]
        for s in range(k):
            pick = -1
            top = 0.0
            for m in range(M):
                taken = False
                for p in range(s):
                    taken = taken or S[p, q] == m
                v = score[m]
                if not taken and (pick < 0 or v > top or (top != top and v == v)):
                    pick = m
                    top = v
            S[s, q] = pick


@_jit
def _route_oracle(U, mask, ng, nq, mt):
    """MoEConfig(router="oracle"): the expert of oracle_sets[n_t] with the largest U_m, ties to the smaller
    index (np.argmax of U on the task's set, -inf elsewhere)."""
    M = U.shape[0]
    for q in range(nq):
        n = ng[q]
        top = U[0, q] if mask[n, 0] else -math.inf
        pick = 0
        for m in range(1, M):
            v = U[m, q] if mask[n, m] else -math.inf
            if v > top:
                top = v
                pick = m
        mt[q] = pick


@_jit
def _expert_step(Q, nq, first, mt, r0, w, tg, wn, ag, coef, sq, inv, acc, nrm, delta, counts):
    """Eq. 5 for expert mt[q] of each lane, w <- w + P_X (w_n - w), in place in w (R, M, d); wn[:, q] <- the
    new model, delta[q] <- Delta = ||w_t - w_{t-1}||^2 (eq. 6), counts += 1.  ``first``: orthogonalise the
    round's columns Q in place (the round's first routed expert), else reuse the basis built for it."""
    d = Q.shape[1]
    for q in range(nq):
        r = r0 + q
        m = mt[q]
        for i in range(d):
            wn[i, q] = w[r, m, i]
            ag[i, q] = tg[i, q] - w[r, m, i]
    if first:
        _basis_lanes(Q, nq, ag, coef, sq, inv, acc, nrm)
    else:
        _coef_lanes(Q, nq, ag, coef, inv)
    _add_projection(Q, nq, coef, wn)
    # (w and counts are read and written in place: only the routed experts move.)
    for q in range(nq):
        r = r0 + q
        m = mt[q]
        dl = 0.0
        for i in range(d):
            step = wn[i, q] - w[r, m, i]
            dl += step * step
            w[r, m, i] = wn[i, q]
        delta[q] = dl
        counts[r, m] += 1.0


@_jit
def _errors_top1(wn, W, ng, mt, r0, nq, pair_counts, Sg, pcr, acc, srt, cur, past):
    """E_t, F_t, G_t's sums with top-1 routing (eq. 14-16): cur[q] <- ||w^(m_t) - w_{n_t}||^2, past[q] <-
    sum_{tau < t} ||w^(m_tau) - w_{n_tau}||^2 at the current models, by run_moe_batched's pair counts
    (rounds with (m_tau, n_tau) = (m, n)) and S_m = sum_n pair_counts[m, n] err[m, n], recomputed for the
    routed expert only (the others' models and counts did not move); then round t joins the counts."""
    N = W.shape[0]
    M = Sg.shape[0]
    for q in range(nq):
        r = r0 + q
        m = mt[q]
        for n in range(N):
            pcr[n, q] = pair_counts[r, m, n]
    _errors_lanes(wn, W, ng, pcr, nq, acc, srt, cur)
    for q in range(nq):
        Sg[mt[q], q] = srt[q]
    for q in range(nq):
        past[q] = 0.0
    for m in range(M):
        for q in range(nq):
            past[q] += Sg[m, q]
    for q in range(nq):
        r = r0 + q
        m = mt[q]
        pair_counts[r, m, ng[q]] += 1.0
        Sg[m, q] = srt[q] + cur[q]


@_jit
def _combination_weights(h, S, q, g):
    """g[s] <- the renormalised top-k softmax weight pi_m / sum_{j in S_t} pi_j of m = S[s, q], as
    numeric.gate.softmax on h restricted to S_t (max-shifted)."""
    k = S.shape[0]
    top = h[S[0, q], q]
    for s in range(1, k):
        v = h[S[s, q], q]
        top = v if v > top else top
    tot = 0.0
    for s in range(k):
        g[s] = math.exp(h[S[s, q], q] - top)
        tot += g[s]
    for s in range(k):
        g[s] = g[s] / tot


@_jit
def _dot(a, b):
    """a . b summed in index order (so a . b == b . a exactly)."""
    v = 0.0
    for i in range(a.shape[0]):
        v += a[i] * b[i]
    return v


@_jit
def _errors_top_k(h, S, nq, r0, ng, w, W, task_norms, gram, cross, past_gg, past_gn, past_nn, g, past, cur):
    """E_t, F_t, G_t's sums with top-k routing (MoEConfig.top_k; eq. 14-16 with the served model): round tau
    is served by sum_{m in S_tau} g_m w^(m), g fixed at tau (:func:`_combination_weights`), so, as in
    run_moe_batched, the past rounds' errors at the current models are
    sum_{m,m'} PGG[m, m'] <w_m, w_m'> - 2 sum_{m,n} PGN[m, n] <w_m, w_n> + PNN with PGG = sum_tau g g^T,
    PGN = sum_tau g e_{n_tau}^T, PNN = sum_tau ||w_{n_tau}||^2.  ``gram`` (R, M, M) and ``cross`` (R, M, N)
    hold the current models' inner products; only the routed experts' rows and columns moved.  Lane by lane
    (top-k is not the hot path)."""
    k = S.shape[0]
    M = gram.shape[1]
    N = W.shape[0]
    d = W.shape[1]
    for q in range(nq):
        r = r0 + q
        n = ng[q]
        _combination_weights(h, S, q, g)
        for s in range(k):
            m = S[s, q]
            for m2 in range(M):
                v = _dot(w[r, m], w[r, m2])
                gram[r, m, m2] = v
                gram[r, m2, m] = v
            for n2 in range(N):
                cross[r, m, n2] = _dot(w[r, m], W[n2])
        a = 0.0
        for m in range(M):
            for m2 in range(M):
                a += past_gg[r, m, m2] * gram[r, m, m2]
        b = 0.0
        for m in range(M):
            for n2 in range(N):
                b += past_gn[r, m, n2] * cross[r, m, n2]
        past[q] = a - 2.0 * b + past_nn[r]
        e = 0.0
        for i in range(d):
            u = 0.0
            for s in range(k):
                u += g[s] * w[r, S[s, q], i]
            u = u - W[n, i]
            e += u * u
        cur[q] = e
        for s in range(k):
            for s2 in range(k):
                past_gg[r, S[s, q], S[s2, q]] += g[s] * g[s2]
            past_gn[r, S[s, q], n] += g[s]
        past_nn[r] += task_norms[n]


@_jit
def _softmax_lanes(h, nq, hmax, acc, pi):
    """Softmax of the gate outputs (eq. 2), shifted by the max, lane by lane."""
    M = h.shape[0]
    for q in range(nq):
        hmax[q] = h[0, q]
    for m in range(1, M):
        for q in range(nq):
            hmax[q] = h[m, q] if h[m, q] > hmax[q] else hmax[q]
    for q in range(nq):
        acc[q] = 0.0
    for m in range(M):
        for q in range(nq):
            pi[m, q] = math.exp(h[m, q] - hmax[q])
        for q in range(nq):
            acc[q] += pi[m, q]
    for m in range(M):
        for q in range(nq):
            pi[m, q] = pi[m, q] / acc[q]


@_jit
def _dl_dh_closed(pi, mt, delta, counts, r0, nq, alpha, c_t, t, gc, dh):
    """dL/dh_m of the paper's gate (top-1, auxiliary loss) in the closed form of
    numeric.gate.task_loss_gradient: pi_{m_t} (Delta + alpha M f_t^(m_t) c_t) (1{m = m_t} - pi_m)."""
    M = pi.shape[0]
    for q in range(nq):
        m = mt[q]
        gc[q] = pi[m, q] * (delta[q] + alpha * M * (counts[r0 + q, m] / t) * c_t)
    for m in range(M):
        for q in range(nq):
            direction = -pi[m, q]
            direction = direction + 1.0 if mt[q] == m else direction
            dh[m, q] = gc[q] * direction


@_jit
def _dl_dh_chain(pi, S, deltas, counts, r0, nq, aux, alpha, c_t, t, dpi, csum, dh):
    """dL/dh_m for top-k routing or balance other than "aux", as numeric.gate.softmax_chain_gradient:
    dL/dpi_j = Delta_j (+ alpha M f_j c_t with the auxiliary loss, f_j = counts_j / (k t)) for j in S_t, 0
    elsewhere; dL/dh_m = pi_m dL/dpi_m - pi_m sum_j pi_j dL/dpi_j.  ``dpi`` (M, lanes) is scratch."""
    M = pi.shape[0]
    k = S.shape[0]
    for m in range(M):
        for q in range(nq):
            dpi[m, q] = 0.0
    for s in range(k):
        for q in range(nq):
            m = S[s, q]
            v = deltas[s, q]
            if aux:
                v = deltas[s, q] + alpha * M * (counts[r0 + q, m] / (k * t)) * c_t
            dpi[m, q] = v
    for q in range(nq):
        csum[q] = 0.0
    for m in range(M):
        for q in range(nq):
            dpi[m, q] = pi[m, q] * dpi[m, q]
            csum[q] += dpi[m, q]
    for m in range(M):
        for q in range(nq):
            dh[m, q] = dpi[m, q] - pi[m, q] * csum[q]


@_jit
def _gate_step(thg, xb, dh, eta, fz, nq, tmax, h, acc):
    """Eq. 9 where the gate is live: theta_m <- theta_m - eta dL/dh_m xbar (a frozen gate keeps its
    parameters); theta_max; h <- the updated gate's outputs on the round's data."""
    M = thg.shape[0]
    d = thg.shape[1]
    for m in range(M):
        for q in range(nq):
            acc[q] = 0.0
        for i in range(d):
            for q in range(nq):
                old = thg[m, i, q]
                v = old - eta * (dh[m, q] * xb[i, q])
                v = old if fz[q] else v
                thg[m, i, q] = v
                a = abs(v)  # <= theta_max already on a frozen lane
                tmax[q] = a if (a > tmax[q] or a != a) else tmax[q]
                acc[q] += v * xb[i, q]
        for q in range(nq):
            h[m, q] = acc[q]


@_jit
def _bias_step(S, counts, bias, window_counts, chosen_sets, j, t, window, rate, fz, r0, nq):
    """Loss-free balancing after round t (MoEConfig.balance="bias"): b_m += u sign(1/M - load_m) where the
    gate is live (the bias freezes with the gate); load_m = counts_m / (k t), or with a window W >= 1 the
    routed slots of the last W rounds over k min(t, W) (``window_counts``, kept on every lane)."""
    k = S.shape[0]
    M = bias.shape[1]
    for q in range(nq):
        r = r0 + q
        if window > 0:
            for s in range(k):
                window_counts[r, S[s, q]] += 1.0
            if t > window:  # round t - W leaves the window
                for s in range(k):
                    window_counts[r, chosen_sets[r, j - window, s]] -= 1.0
        if fz[q]:
            continue
        for m in range(M):
            if window > 0:
                load = window_counts[r, m] / (k * min(t, window))
            else:
                load = counts[r, m] / (k * t)
            x = 1.0 / M - load
            sign = 1.0 if x > 0 else (-1.0 if x < 0 else (0.0 if x == 0 else x))  # np.sign (NaN stays NaN)
            bias[r, m] = bias[r, m] + rate * sign


@_jit
def _sets_lanes(thg, V, nq, sg, acc, top):
    """Eq. 11's expert sets: sg[m, q] <- argmax_n theta_m^T v_n, the first maximum (a NaN counting as the
    maximum, as np.argmax)."""
    M = thg.shape[0]
    d = thg.shape[1]
    N = V.shape[0]
    for m in range(M):
        for n in range(N):
            for q in range(nq):
                acc[q] = 0.0
            for i in range(d):
                vi = V[n, i]
                for q in range(nq):
                    acc[q] += thg[m, i, q] * vi
            for q in range(nq):
                v = acc[q]
                better = n == 0 or v > top[q] or (v != v and top[q] == top[q])
                top[q] = v if better else top[q]
                sg[m, q] = n if better else sg[m, q]


@_jit
def _record_round(r0, j, nq, counts, sg, bias, biased, rec_loads, rec_sets, rec_bias):
    """MoEConfig.record_rounds: round t's cumulative loads, eq. 11 sets after the gate update, routing bias."""
    M = counts.shape[1]
    for q in range(nq):
        r = r0 + q
        for m in range(M):
            rec_loads[r, j, m] = counts[r, m]
            rec_sets[r, j, m] = sg[m, q]
            if biased:
                rec_bias[r, j, m] = bias[r, m]


@_jit
def _moe_block(X, tasks, noise, W, V, task_norms, oracle_mask, settings, state, out):
    # The typed records unpacked once (numba passes named tuples by value; the arrays in them are the caller's).
    start, eta, alpha, lam, Gamma = settings.start, settings.eta, settings.alpha, settings.lam, settings.Gamma
    termination, T1, sticky, after_update = settings.termination, settings.T1, settings.sticky, settings.after_update
    aux_is_t, learned, balance, top_k = settings.aux_is_t, settings.learned, settings.balance, settings.top_k
    bias_rate, bias_window, record, lanes = settings.bias_rate, settings.bias_window, settings.record, settings.lanes
    theta, w, counts, pair_counts, expert_past = state.theta, state.w, state.counts, state.pair_counts, state.expert_past
    past_gg, past_gn, past_nn, gram, cross = state.past_gg, state.past_gn, state.past_nn, state.gram, state.cross
    past_self_error, marks, frozen, freeze_round = state.past_self_error, state.marks, state.frozen, state.freeze_round
    theta_max, bias, window_counts = state.theta_max, state.bias, state.window_counts
    chosen, chosen_sets, model_error = out.chosen, out.chosen_sets, out.model_error
    forgetting, generalization = out.forgetting, out.generalization
    rec_h, rec_loads, rec_sets, rec_bias = out.rec_h, out.rec_loads, out.rec_sets, out.rec_bias
    B = X.shape[0]
    R = X.shape[1]
    d = X.shape[2]
    k = X.shape[3]
    M = theta.shape[1]
    N = W.shape[0]
    G = lanes
    K = top_k
    biased = balance == _BIAS
    closed = K == 1 and balance == _AUX  # the paper's gate: task_loss_gradient's closed form
    # Per-lane state (loaded from the (R, ...) arrays for a group of lanes, stored back after the block).
    thg = np.empty((M, d, G))
    Sg = np.empty((M, G))
    pse = np.empty(G)
    mk = np.empty((M, G), dtype=np.bool_)
    fz = np.empty(G, dtype=np.bool_)
    frd = np.empty(G, dtype=np.int64)
    tmax = np.empty(G)
    sg = np.zeros((M, G), dtype=np.int64)  # eq. 11 sets of the current gate (record_rounds)
    # Per-round scratch.
    Q = np.zeros((k, d, G))
    rows = _row_map(d, k)
    sq = np.empty((k, G))
    inv = np.empty((k, G))
    coef = np.empty((k, G))
    xb = np.zeros((d, G))
    xbf = xb.reshape(d * G)
    Qf = Q.reshape((k, d * G))
    tg = np.empty((d, G))
    ag = np.empty((d, G))
    wn = np.empty((d, G))
    h = np.empty((M, G))
    U = np.empty((M, G))
    pi = np.empty((M, G))
    sc = np.empty((M, G))
    dh = np.empty((M, G))
    pcr = np.empty((N, G))
    nrm = np.empty(G)
    acc = np.empty(G)
    best = np.empty(G)
    hmax = np.empty(G)
    srt = np.empty(G)
    cur = np.empty(G)
    past = np.empty(G)
    gc = np.empty(G)
    ref = np.empty(G)
    allm = np.empty(G, dtype=np.bool_)
    ng = np.empty(G, dtype=np.int64)
    S = np.empty((K, G), dtype=np.int64)  # the routed set, top-1 member first
    mt = S[0]
    deltas = np.empty((K, G))
    score = np.empty(M)
    gk = np.empty(K)
    for r0 in range(0, R, G):
        nq = min(G, R - r0)
        for q in range(nq):
            r = r0 + q
            for m in range(M):
                for i in range(d):
                    thg[m, i, q] = theta[r, m, i]
                Sg[m, q] = expert_past[r, m]
                mk[m, q] = marks[r, m]
            pse[q] = past_self_error[r]
            fz[q] = frozen[r]
            frd[q] = freeze_round[r]
            tmax[q] = theta_max[r]
        if record:
            _sets_lanes(thg, V, nq, sg, acc, best)
        for jj in range(B):
            j = start + jj
            t = j + 1
            for q in range(nq):
                n = tasks[r0 + q, jj]
                ng[q] = n
                for i in range(d):
                    tg[i, q] = W[n, i]
                for m in range(M):
                    U[m, q] = noise[jj, r0 + q, m]
            _load_lanes(X, jj, r0, nq, Q, rows)
            # Gate outputs h_m = theta_m^T xbar, xbar = sum_i X_{t,i} (eq. 1).
            for f in range(d * G):  # flat over (i, lane): every lane, live or not, in one loop per column
                xbf[f] = 0.0
            for c in range(k):
                for f in range(d * G):
                    xbf[f] += Qf[c, f]
            _gate_outputs_lanes(thg, xb, nq, h)
            if record:
                for q in range(nq):
                    for m in range(M):
                        rec_h[r0 + q, j, m] = h[m, q]
            # Routing: the oracle's sets, or the gate's scores (plus the bias, for the choice only).
            if not learned:
                _route_oracle(U, oracle_mask, ng, nq, mt)
            else:
                scores = h
                if biased:
                    for m in range(M):
                        for q in range(nq):
                            sc[m, q] = h[m, q] + bias[r0 + q, m]
                    scores = sc
                if K == 1:
                    _route_top1(scores, U, lam, nq, mt, best)
                else:
                    _route_top_k(scores, U, lam, nq, S, score)
            for s in range(K):
                for q in range(nq):
                    chosen_sets[r0 + q, j, s] = S[s, q]
            # Every routed expert takes eq. 5's step on (X_t, y_t), on one basis of X_t.
            for s in range(K):
                _expert_step(Q, nq, s == 0, S[s], r0, w, tg, wn, ag, coef, sq, inv, acc, nrm, deltas[s], counts)
            # E_t, F_t, G_t.
            if K == 1:
                _errors_top1(wn, W, ng, mt, r0, nq, pair_counts, Sg, pcr, acc, srt, cur, past)
            else:
                _errors_top_k(h, S, nq, r0, ng, w, W, task_norms, gram, cross, past_gg, past_gn, past_nn, gk,
                              past, cur)
            for q in range(nq):
                r = r0 + q
                forgetting[r, j] = (past[q] - pse[q]) / (t - 1) if t > 1 else np.nan
                generalization[r, j] = (past[q] + cur[q]) / t
                model_error[r, j] = cur[q]
                chosen[r, j] = mt[q]
                pse[q] += cur[q]
            if learned:
                # Gate update (eq. 9) where the gate is live; termination flags (Algorithm 1, lines 7-13).
                checking = termination and t > T1
                if checking and not after_update:
                    _flags_lanes(h, mt, nq, Gamma, sticky, mk, fz, frd, t, ref, allm)
                live = False
                for q in range(nq):
                    live = live or not fz[q]
                if live:
                    _softmax_lanes(h, nq, hmax, acc, pi)
                    c_t = float(t) if aux_is_t else 1.0 / t
                    if closed:
                        _dl_dh_closed(pi, mt, deltas[0], counts, r0, nq, alpha, c_t, t, gc, dh)
                    else:
                        _dl_dh_chain(pi, S, deltas, counts, r0, nq, balance == _AUX, alpha, c_t, t, sc, acc, dh)
                    _gate_step(thg, xb, dh, eta, fz, nq, tmax, h, acc)
                if biased:
                    _bias_step(S, counts, bias, window_counts, chosen_sets, j, t, bias_window, bias_rate, fz, r0, nq)
                if live and checking and after_update:
                    _flags_lanes(h, mt, nq, Gamma, sticky, mk, fz, frd, t, ref, allm)
                if live and record:  # a frozen lane's gate did not move: its sets stand
                    _sets_lanes(thg, V, nq, sg, acc, best)
            if record:
                _record_round(r0, j, nq, counts, sg, bias, biased, rec_loads, rec_sets, rec_bias)
        for q in range(nq):
            r = r0 + q
            for m in range(M):
                for i in range(d):
                    theta[r, m, i] = thg[m, i, q]
                expert_past[r, m] = Sg[m, q]
                marks[r, m] = mk[m, q]
            past_self_error[r] = pse[q]
            frozen[r] = fz[q]
            freeze_round[r] = frd[q]
            theta_max[r] = tmax[q]


_compiled = False


def compile_kernels() -> None:
    """Import numba and compile the kernels (or load them from numba's cache); idempotent."""
    global _compiled
    if _compiled:
        return
    import numba

    g = globals()
    # Every global is replaced before anything compiles (numba compiles on first call), so the kernels'
    # calls to the helpers resolve to the helpers' dispatchers.
    for name in _JIT_ORDER:
        # error_model="numpy": IEEE division (inf/nan) without Python's zero-division checks in the loops.
        try:
            g[name] = numba.njit(cache=True, error_model="numpy")(g[name])
        except RuntimeError:  # no writable cache location at all: compile in memory, in every process
            g[name] = numba.njit(cache=False, error_model="numpy")(g[name])
    _compiled = True


_WARM: set[str] = set()  # kernels already called once in this process


@contextlib.contextmanager
def _first_call_lock(name: str):
    """An exclusive inter-process lock for a kernel's first call in a process, which compiles it or loads it
    from numba's on-disk cache: processes started together (a pool of workers, a test session) then compile
    it once and the others load the result, instead of each compiling a copy.  No lock (and no error) where
    the temporary directory is not writable."""
    tag = hashlib.sha256(f"{Path(__file__).resolve()}:{name}".encode()).hexdigest()[:16]
    try:
        handle = open(Path(tempfile.gettempdir()) / f"moecl-verify-numba-{tag}.lock", "a")
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _call(name: str, kernel, *args) -> None:
    """Call a compiled kernel; its first call in this process under :func:`_first_call_lock`."""
    if name in _WARM:
        kernel(*args)
        return
    with _first_call_lock(name):
        kernel(*args)
    _WARM.add(name)


def _c(a: np.ndarray, dtype=np.float64) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=dtype)


def single_expert_block(X, tasks, W, start, complement, w, counts, past_self_error,
                        model_error, forgetting, generalization) -> None:
    """Advance the single expert over one block of rounds, in place.

    ``X`` (B, R, d, k) round-major features (a DrawBlock's ``X.swapaxes(0, 1)``), ``tasks`` (R, B),
    ``W`` (N, d), ``start`` the block's first round (0-based), ``complement`` whether X holds bases of
    span(X_t)^perp.  State ``w`` (R, d), ``counts`` (R, N), ``past_self_error`` (R,) is updated; columns
    ``start .. start + B - 1`` of ``model_error``, ``forgetting``, ``generalization`` (R, T) are written.
    State and outputs must be C-contiguous float64 (they are written in place)."""
    compile_kernels()
    _call("single_expert_block", _single_expert_block, _c(X), _c(tasks, np.int64), _c(W), int(start),
          bool(complement), LANES, w, counts, past_self_error, model_error, forgetting, generalization)


class MoeSettings(NamedTuple):
    """The scalars of one block of Algorithm 1 (:func:`moe_block`): the block's first round, the gate's step sizes
    and noise (eq. 1, 9), the termination rule (Algorithm 1, lines 7-13) and its reading, the router and balancing
    options of :class:`numeric.moe.MoEConfig` as codes, whether per-round records are kept, and the lane width."""

    start: int
    eta: float
    alpha: float
    lam: float
    Gamma: float
    termination: bool
    T1: int
    sticky: bool
    after_update: bool
    aux_is_t: bool
    learned: bool
    balance: int
    top_k: int
    bias_rate: float
    bias_window: int
    record: bool
    lanes: int


class MoeState(NamedTuple):
    """Algorithm 1's state across blocks, per replicate (written in place): the gate, the experts, the loads and
    pair counts, the sums F_t and G_t need, the top-k combination's Gram sums, the termination marks, the bias."""

    theta: np.ndarray
    w: np.ndarray
    counts: np.ndarray
    pair_counts: np.ndarray
    expert_past: np.ndarray
    past_gg: np.ndarray
    past_gn: np.ndarray
    past_nn: np.ndarray
    gram: np.ndarray
    cross: np.ndarray
    past_self_error: np.ndarray
    marks: np.ndarray
    frozen: np.ndarray
    freeze_round: np.ndarray
    theta_max: np.ndarray
    bias: np.ndarray
    window_counts: np.ndarray


class MoeOutputs(NamedTuple):
    """What one block writes (columns ``start ..`` of each (R, T, ...) array): routing, errors, and the per-round
    records kept on request."""

    chosen: np.ndarray
    chosen_sets: np.ndarray
    model_error: np.ndarray
    forgetting: np.ndarray
    generalization: np.ndarray
    rec_h: np.ndarray
    rec_loads: np.ndarray
    rec_sets: np.ndarray
    rec_bias: np.ndarray


def _empty(ndim: int, dtype=np.float64) -> np.ndarray:
    """A placeholder for an array an option leaves unused (the kernel keeps one signature)."""
    return np.zeros((0,) * ndim, dtype=dtype)


def moe_block(X, tasks, noise, W, start, *, eta, alpha, lam, Gamma, termination, T1, sticky, after_update,
              aux_is_t, theta, w, counts, pair_counts, expert_past, past_self_error, marks, frozen,
              freeze_round, theta_max, chosen, model_error, forgetting, generalization, chosen_sets, V,
              oracle_mask=None, balance="aux", top_k=1, bias_rate=0.0, bias_window=None, bias=None,
              window_counts=None, combined=None, records=None) -> None:
    """Advance Algorithm 1 over one block of rounds, in place.

    ``X`` (B, R, d, s), ``tasks`` (R, B), ``noise`` (B, R, M) Uniform[0, 1), ``W`` and ``V`` (N, d).  State:
    ``theta``, ``w`` (R, M, d), ``counts`` (R, M), ``pair_counts`` (R, M, N), ``expert_past`` (R, M),
    ``past_self_error`` (R,), ``marks`` (R, M) bool, ``frozen`` (R,) bool, ``freeze_round`` (R,) int64,
    ``theta_max`` (R,); outputs ``chosen`` (R, T) int64, ``chosen_sets`` (R, T, top_k) int64 and the (R, T)
    trajectories.

    The options of :class:`numeric.moe.MoEConfig`: ``oracle_mask`` (N, M) bool, the oracle's sets (None:
    the learned router); ``balance`` and ``top_k``; with "bias", ``bias_rate``, ``bias_window`` and state
    ``bias``, ``window_counts`` (R, M); with top_k >= 2, ``combined``: state ``past_gg``, ``gram`` (R, M, M),
    ``past_gn``, ``cross`` (R, M, N), ``past_nn`` (R,), zero at round 1; ``records``: the per-round
    ``h``, ``loads`` (R, T, M), ``sets`` (R, T, M) int64 and, with "bias", ``bias`` (R, T, M)."""
    compile_kernels()
    R, M = counts.shape
    N = W.shape[0]
    learned = oracle_mask is None
    mask = np.zeros((N, M), dtype=np.bool_) if learned else _c(oracle_mask, np.bool_)
    biased = balance == "bias"
    # The kernel writes without bounds checks: every array an option writes must be there.
    if biased and (bias is None or window_counts is None):
        raise ValueError("balance='bias' needs the state arrays bias and window_counts")
    if not biased:
        bias, window_counts = _empty(2), _empty(2)
    combined = combined or {}
    rec = records or {}
    missing = ([name for name in ("past_gg", "past_gn", "past_nn", "gram", "cross") if name not in combined]
               if top_k > 1 else [])
    if records is not None:
        missing += [name for name in ("h", "loads", "sets") + (("bias",) if biased else ()) if name not in rec]
    if missing or chosen_sets.shape != chosen.shape + (top_k,):
        raise ValueError(f"moe_block: missing arrays {missing} or chosen_sets not (R, T, top_k)")
    W = _c(W)
    settings = MoeSettings(
        start=int(start), eta=float(eta), alpha=float(alpha), lam=float(lam), Gamma=float(Gamma),
        termination=bool(termination), T1=min(int(T1), 2**62), sticky=bool(sticky), after_update=bool(after_update),
        aux_is_t=bool(aux_is_t), learned=bool(learned), balance=BALANCE_CODES[balance], top_k=int(top_k),
        bias_rate=float(bias_rate), bias_window=int(bias_window or 0), record=records is not None, lanes=LANES)
    state = MoeState(
        theta=theta, w=w, counts=counts, pair_counts=pair_counts, expert_past=expert_past,
        past_gg=combined.get("past_gg", _empty(3)), past_gn=combined.get("past_gn", _empty(3)),
        past_nn=combined.get("past_nn", _empty(1)), gram=combined.get("gram", _empty(3)),
        cross=combined.get("cross", _empty(3)), past_self_error=past_self_error, marks=marks, frozen=frozen,
        freeze_round=freeze_round, theta_max=theta_max, bias=bias, window_counts=window_counts)
    out = MoeOutputs(
        chosen=chosen, chosen_sets=chosen_sets, model_error=model_error, forgetting=forgetting,
        generalization=generalization, rec_h=rec.get("h", _empty(3)), rec_loads=rec.get("loads", _empty(3)),
        rec_sets=rec.get("sets", _empty(3, np.int64)), rec_bias=rec.get("bias", _empty(3)) if biased else _empty(3))
    _call("moe_block", _moe_block, _c(X), _c(tasks, np.int64), _c(noise), W, _c(V), np.einsum("nd,nd->n", W, W),
          mask, settings, state, out)
