"""The chapter's MoE layer, as far as its routing, weights and auxiliary loss go: exact and fast.

Chapter 1.5 defines the gate G(x) = softmax(W_g x + b_g) (its "数值稳定性分析" states g_i = e^{z_i} / sum_j
e^{z_j} with z = W_g x + b_g), the top-K selection of the K largest gate probabilities, the unified weights

    g~_i(x) = g_i(x)                                                     (dense)
    g~_i(x) = g_i(x) * 1[i in TopK(G(x), K)] / sum_{j in TopK} g_j(x)      (normalised sparse)

the output y = sum_i g~_i(x) E_i(x), the frequencies f_i = (1/BT) sum_t 1[i in TopK(G(x_t), K)] and mean
probabilities P_i = (1/BT) sum_t g_i(x_t), and an auxiliary loss built from them (its formula is missing; the
claims read it as Switch Transformer's alpha N sum_i f_i P_i, Fedus et al. 2021, eq. 4).

Two versions of each piece: *exact* (sympy expressions for symbolic logits, ``Fraction`` for rational
probabilities), which the claims' refutations and identities use, and *fast* (numpy float64), which the
finite-difference and sampled checks use.  Ties in top-K are broken toward the lower index: the chapter does
not say, and no verdict depends on it except at exact ties, which the sampled checks meet with probability 0.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import numpy as np
import sympy as sp

# ---------------------------------------------------------------------------------------------- exact


def softmax_exact(z: Sequence) -> tuple:
    """g_i = e^{z_i} / sum_j e^{z_j} as sympy expressions (z symbols or exact numbers)."""
    exps = [sp.exp(v) for v in z]
    total = sp.Add(*exps)
    return tuple(e / total for e in exps)


def top_k(scores: Sequence, K: int) -> tuple[int, ...]:
    """The indices of the K largest scores, largest first, ties toward the lower index (exact comparison: the
    scores are Fractions, ints or comparable sympy numbers)."""
    if not 1 <= K <= len(scores):
        raise ValueError(f"K must be in 1..{len(scores)}, got {K}")
    return tuple(sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:K])


def sparse_weights(g: Sequence, K: int, normalise: bool = True, selected: Sequence[int] | None = None) -> tuple:
    """The chapter's g~: g_i on the top-K (or on ``selected``, for symbolic g whose order is fixed by the
    caller), 0 elsewhere, divided by the selected mass when ``normalise`` (exact: works for Fractions and sympy)."""
    chosen = set(top_k(g, K) if selected is None else selected)
    mass = sum((g[j] for j in chosen), start=0 * g[0])
    return tuple((g[i] / mass if normalise else g[i]) if i in chosen else 0 * g[i] for i in range(len(g)))


def frequencies(gates: Sequence[Sequence], K: int) -> tuple[Fraction, ...]:
    """f_i = (1/BT) sum_t 1[i in TopK(G(x_t), K)], exactly, for rows of exact gate probabilities."""
    n_tokens, n_experts = len(gates), len(gates[0])
    counts = [0] * n_experts
    for g in gates:
        for i in top_k(g, K):
            counts[i] += 1
    return tuple(Fraction(c, n_tokens) for c in counts)


def mean_probabilities(gates: Sequence[Sequence]) -> tuple:
    """P_i = (1/BT) sum_t g_i(x_t), exactly."""
    n_tokens = len(gates)
    return tuple(sum((g[i] for g in gates), start=0 * gates[0][i]) / n_tokens for i in range(len(gates[0])))


def aux_loss_switch(f: Sequence, P: Sequence, alpha=1):
    """Switch Transformer's L_aux = alpha N sum_i f_i P_i (Fedus et al. 2021, eq. 4)."""
    return alpha * len(f) * sum((a * b for a, b in zip(f, P)), start=0 * P[0])


def aux_loss_per_k(f: Sequence, P: Sequence, K: int, alpha=1):
    """The same loss with the frequencies rescaled by N/K (DeepSeekMoE, Dai et al. 2024: f'_i = N f_i / K,
    L = alpha sum_i f'_i P_i), so that balanced routing gives f'_i = 1 for every K."""
    N = len(f)
    return alpha * sum((Fraction(N, K) * a * b for a, b in zip(f, P)), start=0 * P[0])


# ---------------------------------------------------------------------------------------------- fast (numpy)


def softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise softmax with the maximum subtracted (float64)."""
    z = np.asarray(z, dtype=float)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def top_k_mask(G: np.ndarray, K: int) -> np.ndarray:
    """Boolean (BT, N): the K largest of each row, ties toward the lower index (a stable sort of -G)."""
    G = np.atleast_2d(G)
    order = np.argsort(-G, axis=1, kind="stable")[:, :K]
    mask = np.zeros(G.shape, dtype=bool)
    np.put_along_axis(mask, order, True, axis=1)
    return mask


def sparse_weights_np(G: np.ndarray, K: int, normalise: bool = True) -> np.ndarray:
    """g~ for each row of G (BT, N)."""
    G = np.atleast_2d(G)
    W = np.where(top_k_mask(G, K), G, 0.0)
    return W / W.sum(axis=1, keepdims=True) if normalise else W


def aux_loss_np(Z: np.ndarray, K: int, alpha: float = 1.0) -> float:
    """alpha N sum_i f_i P_i from the logits Z (BT, N)."""
    G = softmax(Z)
    f = top_k_mask(G, K).mean(axis=0)
    P = G.mean(axis=0)
    return float(alpha * G.shape[1] * np.dot(f, P))


def aux_loss_logit_grad_np(Z: np.ndarray, K: int, alpha: float = 1.0) -> np.ndarray:
    """dL_aux/dz (BT, N) with f held at its value (its derivative is 0 wherever the top-K sets are unique):
    dL/dg_{t,i} = alpha N f_i / BT, through the softmax dg_i/dz_k = g_i (delta_ik - g_k), so
    dL/dz_{t,k} = (alpha N / BT) g_{t,k} (f_k - sum_i f_i g_{t,i})."""
    G = softmax(Z)
    BT, N = G.shape
    f = top_k_mask(G, K).mean(axis=0)
    return alpha * N / BT * G * (f[None, :] - (G * f[None, :]).sum(axis=1, keepdims=True))


def weight_jacobian(logits: Sequence, K: int, normalise: bool = True) -> tuple[tuple, tuple]:
    """(g~ at ``logits``, the matrix d g~_i / d z_k there), exact: sympy differentiates the weights of symbolic
    logits with the selection fixed at the top-K of ``logits`` (the derivative wherever that selection is
    locally constant, i.e. away from ties at the K-th place)."""
    N = len(logits)
    z = sp.symbols(f"z1:{N + 1}", real=True)
    selected = top_k([sp.nsimplify(v) for v in softmax_exact(logits)], K)
    w = sparse_weights(softmax_exact(z), K, normalise, selected)
    at = dict(zip(z, logits))
    values = tuple(sp.simplify(v.subs(at)) for v in w)
    return values, tuple(tuple(sp.simplify(sp.diff(wi, zk).subs(at)) for zk in z) for wi in w)


def vanishes(expr) -> bool:
    """Whether a sympy expression is identically 0: expanded, then as one cancelled fraction (fast for the
    rational functions of exponentials and tanh the gradients are), then by ``simplify`` as the last resort."""
    expanded = sp.expand(expr)
    if expanded == 0:
        return True
    if sp.cancel(sp.together(expanded)) == 0:
        return True
    return sp.simplify(expr) == 0
