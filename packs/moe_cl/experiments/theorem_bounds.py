"""The right-hand sides of Theorems 1 and 2 evaluated at realized routing counts (numpy, per replicate).

Eq. (19) and (20) (Theorem 1) and eq. (22) (Theorem 2) are functions of the routing counts L_t^(m), the
number of tasks routed to expert m up to round t.  Given a simulation's routed experts ``chosen[r, t]``,
these functions give each replicate's right-hand side, to be paired with its realized F_t or G_T.  Used by
the theorems' own configurations and by Figure 2's (:mod:`packs.moe_cl.entries.theorems_at_fig2`).  The
symbolic summands are in :mod:`theory.thm1`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

from moecl_verify.theory import thm1 as theory_thm1
from moecl_verify.theory.symbols import D as D_, S as S_, r as r_


def cumulative_counts(chosen: np.ndarray, M: int) -> np.ndarray:
    """L[r, j, m]: tasks routed to expert m in rounds 1..j+1 (inclusive)."""
    onehot = np.zeros(chosen.shape + (M,))
    np.put_along_axis(onehot, chosen[..., None], 1.0, axis=-1)
    return np.cumsum(onehot, axis=1)


def eq19_rhs(chosen: np.ndarray, M: int, t: int, r: float, S: float, D: float) -> np.ndarray:
    """Eq. (19)'s right-hand side at each replicate's realized counts."""
    L = cumulative_counts(chosen[:, :t], M)
    rows = np.arange(chosen.shape[0])[:, None]
    taus = np.arange(t - 1)[None, :]
    m_tau = chosen[:, : t - 1]
    L_t = L[rows, t - 1, m_tau]
    L_tau = L[rows, taus, m_tau]
    return ((r**L_t - r**L_tau) * S + (r**L_tau - r**L_t) * D).mean(axis=1)


@lru_cache(maxsize=None)
def _eq19_derived_summand():
    return sp.lambdify((theory_thm1.L_t, theory_thm1.L_tau, r_, S_, D_), theory_thm1.eq19_summand_derived(), "numpy")


def eq19_rhs_derived(chosen: np.ndarray, M: int, t: int, r: float, S: float, D: float) -> np.ndarray:
    """Eq. (19)'s right-hand side with the summand that follows from the model (theory.thm1.eq19_summand_derived:
    Appendix H's same-task term 0, not D), at each replicate's realized counts: the derived form in place of the
    printed one, the ablation of the same-task gap."""
    L = cumulative_counts(chosen[:, :t], M)
    rows = np.arange(chosen.shape[0])[:, None]
    taus = np.arange(t - 1)[None, :]
    m_tau = chosen[:, : t - 1]
    summand = _eq19_derived_summand()(L[rows, t - 1, m_tau], L[rows, taus, m_tau], r, S, D)
    return np.broadcast_to(summand, m_tau.shape).mean(axis=1)


def eq20_rhs(chosen: np.ndarray, M: int, T1: int, r: float, S: float, D: float) -> np.ndarray:
    """Eq. (20)'s right-hand side at each replicate's realized counts."""
    L_T1 = cumulative_counts(chosen[:, :T1], M)[:, -1]  # (R, M)
    L = np.take_along_axis(L_T1, chosen, axis=1)  # (R, T): L_T1 of the expert of each round
    return (r**L * S + (1 - r**L) * D).mean(axis=1)


def psi(W: np.ndarray, K: int) -> tuple[float, float]:
    """Psi1 (within a task's own cluster) and Psi2 (to a uniformly chosen cluster), as Theorem 2 defines them."""
    N = W.shape[0]
    clusters = [np.flatnonzero(np.arange(N) % K == k) for k in range(K)]
    sq = np.einsum("ijd,ijd->ij", W[:, None] - W[None], W[:, None] - W[None])
    to_cluster = np.array([[sq[n, members].mean() for members in clusters] for n in range(N)])  # (N, K)
    psi1 = float(np.mean([to_cluster[n, n % K] for n in range(N)]))
    psi2 = float(to_cluster.mean())
    return psi1, psi2


def eq22_rhs(chosen, M, T1, r, S, D, psi1, psi2) -> np.ndarray:
    L = cumulative_counts(chosen, M)
    L_T = np.take_along_axis(L[:, -1], chosen, axis=1)  # (R, T): L_T of each round's expert
    L_T1 = np.take_along_axis(L[:, T1 - 1], chosen, axis=1)
    inner = (r ** (L_T - L_T1) * (1 - r**L_T1))[:, :T1].mean(axis=1)  # the inner average over tau' <= T1
    first = (r**L_T).mean(axis=1) * (S + inner * D)
    late = (1 - r ** (L_T - L_T1))[:, T1:].sum(axis=1) / chosen.shape[1]
    return first + (psi2 + psi1) * late
