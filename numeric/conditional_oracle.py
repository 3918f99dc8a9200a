"""Expected errors given the routing: the recursion of Lemma 16 (eq. 42), evaluated exactly.

Given who was routed where (tasks n_1..n_T and experts m_1..m_T) and the pool,
the expectation over the feature matrices of every model error follows, under
assumption A1 (E[P_t | everything else] = (s/d) I) and with the routing
independent of the features, from one recursion per expert and reference
task n:

    E||w^(m)_t - w_n||^2 = r E||w^(m)_{t-1} - w_n||^2 + (1 - r) ||w_{n_t} - w_n||^2   if m_t = m,
                         = E||w^(m)_{t-1} - w_n||^2                                  otherwise,

from ||w^(m)_0 - w_n||^2 = ||w_n||^2.  This is eq. (42) with the ground truth
w_{n_{tau(l)}} inside the sum (the printed w^(m_i)_{tau(l)} is a notation slip).
From it the conditional expectations of F_t (eq. 15) and G_t (eq. 16) follow
without sampling features.  Batched over replicates.
"""

from __future__ import annotations

import numpy as np


def conditional_errors(W: np.ndarray, tasks: np.ndarray, chosen: np.ndarray, M: int, r: float) -> dict[str, np.ndarray]:
    """E[F_t | routing], E[G_t | routing], E[E_t | routing] for every replicate and round.

    W (N, d); tasks, chosen (R, T) int.  Returns arrays (R, T) keyed like
    :class:`numeric.moe.MoERun` (``forgetting`` is NaN at t = 1).
    """
    R, T = tasks.shape
    N = W.shape[0]
    rows = np.arange(R)
    gaps = np.einsum("ind,ind->in", W[:, None, :] - W[None, :, :], W[:, None, :] - W[None, :, :])  # (N, N)
    expected = np.broadcast_to(np.einsum("nd,nd->n", W, W), (R, M, N)).copy()
    pair_counts = np.zeros((R, M, N))
    # past = sum_{m,n} pair_counts[m, n] expected[m, n]: kept up to date from the one expert row that changes
    # each round (O(R N) per round instead of O(R M N)).
    past = np.zeros(R)
    past_self = np.zeros(R)
    forgetting = np.empty((R, T))
    generalization = np.empty((R, T))
    model_error = np.empty((R, T))
    for j in range(T):
        t = j + 1
        n_t, m_t = tasks[:, j], chosen[:, j]
        old = expected[rows, m_t]
        new = r * old + (1 - r) * gaps[n_t]
        expected[rows, m_t] = new
        past += np.einsum("rn,rn->r", pair_counts[rows, m_t], new - old)
        current = new[rows, n_t]
        forgetting[:, j] = (past - past_self) / (t - 1) if t > 1 else np.nan
        generalization[:, j] = (past + current) / t
        model_error[:, j] = current
        pair_counts[rows, m_t, n_t] += 1.0
        past += current
        past_self += current
    return {"forgetting": forgetting, "generalization": generalization, "model_error": model_error}
