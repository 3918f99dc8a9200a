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

Compiled with ``@numba.njit(cache=True)``, no fastmath, no parallel (chunks already run in separate
processes), ``error_model="numpy"`` (IEEE division, no zero-division checks in the loops): the result is
a pure function of the inputs.  numba is imported, and the kernels compiled (or loaded from numba's
on-disk cache), on first use, so importing the engines does not pay for it.  Arrays must be C-contiguous
float64 (int64 for tasks, bool for flags), as the wrappers pass them, so each kernel has one compiled
signature.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ENGINES", "choose_engine", "compile_kernels", "moe_block", "single_expert_block"]

ENGINES = ("numba", "numpy")

# Replicates advanced together in the kernels' inner loops (a run-time value, so the loops over them stay
# loops that the compiler vectorizes).  Each replicate's arithmetic is the same whatever its lane: the
# results do not depend on it.
LANES = 32

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
def _moe_block(X, tasks, noise, W, start, eta, alpha, lam, Gamma, termination, T1, sticky, after_update,
               aux_is_t, lanes, theta, w, counts, pair_counts, expert_past, past_self_error, marks, frozen,
               freeze_round, theta_max, chosen, model_error, forgetting, generalization):
    B = X.shape[0]
    R = X.shape[1]
    d = X.shape[2]
    k = X.shape[3]
    M = theta.shape[1]
    N = W.shape[0]
    G = lanes
    # Per-lane state (loaded from the (R, ...) arrays for a group of lanes, stored back after the block).
    thg = np.empty((M, d, G))
    Sg = np.empty((M, G))
    pse = np.empty(G)
    mk = np.empty((M, G), dtype=np.bool_)
    fz = np.empty(G, dtype=np.bool_)
    frd = np.empty(G, dtype=np.int64)
    tmax = np.empty(G)
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
    pcr = np.empty((N, G))
    nrm = np.empty(G)
    acc = np.empty(G)
    best = np.empty(G)
    hmax = np.empty(G)
    delta = np.empty(G)
    srt = np.empty(G)
    cur = np.empty(G)
    past = np.empty(G)
    gc = np.empty(G)
    ref = np.empty(G)
    allm = np.empty(G, dtype=np.bool_)
    ng = np.empty(G, dtype=np.int64)
    mt = np.empty(G, dtype=np.int64)
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
            for m in range(M):
                for q in range(nq):
                    h[m, q] = thg[m, 0, q] * xb[0, q]
                for i in range(1, d):
                    for q in range(nq):
                        h[m, q] += thg[m, i, q] * xb[i, q]
            # Top-1 routing argmax_m (h_m + lambda U_m), ties to the smaller index (np.argmax).
            for q in range(nq):
                best[q] = h[0, q] + lam * U[0, q]
                mt[q] = 0
            for m in range(1, M):
                for q in range(nq):
                    score = h[m, q] + lam * U[m, q]
                    better = score > best[q]
                    best[q] = score if better else best[q]
                    mt[q] = m if better else mt[q]
            # The routed expert's eq. 5 step, w <- w + P_X (w_n - w).
            # (w, counts and pair_counts are read and written in place: only the routed expert's move.)
            for q in range(nq):
                r = r0 + q
                m = mt[q]
                for i in range(d):
                    wn[i, q] = w[r, m, i]
                    ag[i, q] = tg[i, q] - w[r, m, i]
                for n in range(N):
                    pcr[n, q] = pair_counts[r, m, n]
            _basis_lanes(Q, nq, ag, coef, sq, inv, acc, nrm)
            _add_projection(Q, nq, coef, wn)
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
            # E_t, F_t, G_t: only the routed expert's errors changed; S_m = sum_n pair_counts[m, n] err[m, n].
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
                forgetting[r, j] = (past[q] - pse[q]) / (t - 1) if t > 1 else np.nan
                generalization[r, j] = (past[q] + cur[q]) / t
                model_error[r, j] = cur[q]
                chosen[r, j] = m
                pse[q] += cur[q]
            # Gate update (eq. 9) where the gate is live; termination flags (Algorithm 1, lines 7-13).
            checking = termination and t > T1
            if checking and not after_update:
                _flags_lanes(h, mt, nq, Gamma, sticky, mk, fz, frd, t, ref, allm)
            live = False
            for q in range(nq):
                live = live or not fz[q]
            if not live:
                continue
            # Softmax (eq. 2), shifted by the max.
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
            # numeric.gate.task_loss_gradient: pi_{m_t} (Delta + alpha M f_t^(m_t) c_t) (1{k = m_t} - pi_k) xbar.
            c_t = float(t) if aux_is_t else 1.0 / t
            for q in range(nq):
                m = mt[q]
                gc[q] = pi[m, q] * (delta[q] + alpha * M * (counts[r0 + q, m] / t) * c_t)
            for m in range(M):
                for q in range(nq):
                    direction = -pi[m, q]
                    direction = direction + 1.0 if mt[q] == m else direction
                    best[q] = gc[q] * direction
                    acc[q] = 0.0
                for i in range(d):
                    for q in range(nq):
                        old = thg[m, i, q]
                        v = old - eta * (best[q] * xb[i, q])
                        v = old if fz[q] else v  # a frozen gate keeps its parameters
                        thg[m, i, q] = v
                        a = abs(v)  # <= theta_max already on a frozen lane
                        tmax[q] = a if (a > tmax[q] or a != a) else tmax[q]
                        acc[q] += v * xb[i, q]
                for q in range(nq):
                    h[m, q] = acc[q]  # the updated gate's outputs on the round's data
            if checking and after_update:
                _flags_lanes(h, mt, nq, Gamma, sticky, mk, fz, frd, t, ref, allm)
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
    _single_expert_block(_c(X), _c(tasks, np.int64), _c(W), int(start), bool(complement), LANES, w, counts,
                         past_self_error, model_error, forgetting, generalization)


def moe_block(X, tasks, noise, W, start, *, eta, alpha, lam, Gamma, termination, T1, sticky, after_update,
              aux_is_t, theta, w, counts, pair_counts, expert_past, past_self_error, marks, frozen,
              freeze_round, theta_max, chosen, model_error, forgetting, generalization) -> None:
    """Advance Algorithm 1 (top-1, auxiliary loss, learned router) over one block of rounds, in place.

    ``X`` (B, R, d, s), ``tasks`` (R, B), ``noise`` (B, R, M) Uniform[0, 1), ``W`` (N, d).  State:
    ``theta``, ``w`` (R, M, d), ``counts`` (R, M), ``pair_counts`` (R, M, N), ``expert_past`` (R, M),
    ``past_self_error`` (R,), ``marks`` (R, M) bool, ``frozen`` (R,) bool, ``freeze_round`` (R,) int64,
    ``theta_max`` (R,); outputs ``chosen`` (R, T) int64 and the (R, T) trajectories."""
    compile_kernels()
    _moe_block(_c(X), _c(tasks, np.int64), _c(noise), _c(W), int(start), float(eta), float(alpha), float(lam),
               float(Gamma), bool(termination), min(int(T1), 2**62), bool(sticky), bool(after_update), bool(aux_is_t), LANES,
               theta, w, counts, pair_counts, expert_past, past_self_error, marks, frozen, freeze_round,
               theta_max, chosen, model_error, forgetting, generalization)
