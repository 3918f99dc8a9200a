"""The gating network in numpy: outputs, noisy top-1 routing, softmax, task-loss gradient.

All functions are batched over leading axes.  Equation numbers are the paper's
(Section 3.3); the gradient is the one derived in :mod:`theory.gate` from the
losses, not the one printed in the proof of Lemma 4.
"""

from __future__ import annotations

import numpy as np

AUX_FACTORS = ("1/t", "t")


def gate_outputs(theta: np.ndarray, xbar: np.ndarray) -> np.ndarray:
    """h_m(X_t, theta_m) = sum_i theta_m^T X_{t,i} = theta_m^T xbar.  theta (..., M, d), xbar (..., d)."""
    return np.einsum("...md,...d->...m", theta, xbar)


def softmax(h: np.ndarray) -> np.ndarray:
    """pi_m = exp(h_m) / sum_k exp(h_k) (eq. 2), shifted by the max for stability."""
    z = np.exp(h - h.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def route(h: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """Top-1 routing of eq. (1): argmax_m (h_m + r_m), r_m ~ Uniform[0, lambda] given as ``noise``."""
    return np.argmax(h + noise, axis=-1)


def task_loss_gradient(
    pi: np.ndarray,
    chosen: np.ndarray,
    delta: np.ndarray,
    frac_chosen: np.ndarray,
    t: int,
    alpha: float,
    xbar: np.ndarray,
    aux_factor: str = "1/t",
) -> np.ndarray:
    """grad_{theta_k} L_task for every expert k (see :mod:`theory.gate`).

        pi_{m_t} (Delta + alpha M f_t^(m_t) c_t) (1{k = m_t} - pi_k) xbar,

    with ``c_t = 1/t`` as derived from eq. 7, or ``c_t = t`` to reproduce the
    factor printed in the proof of Lemma 4 (``aux_factor="t"``; for studying
    that slip only).  pi (R, M), chosen (R,), delta (R,), frac_chosen (R,),
    xbar (R, d) -> (R, M, d).
    """
    R, M = pi.shape
    rows = np.arange(R)
    c_t = {"1/t": 1.0 / t, "t": float(t)}[aux_factor]
    pi_chosen = pi[rows, chosen]
    coef = pi_chosen * (delta + alpha * M * frac_chosen * c_t)
    direction = -pi
    direction[rows, chosen] += 1.0
    return (coef[:, None] * direction)[:, :, None] * xbar[:, None, :]


def softmax_chain_gradient(pi: np.ndarray, dL_dpi: np.ndarray, xbar: np.ndarray) -> np.ndarray:
    """grad_{theta_k} L for a loss that reaches the gate only through pi = softmax(h), h_m = theta_m^T xbar.

    By the softmax Jacobian d pi_j / d h_k = pi_j (1{j = k} - pi_k):
    dL/dh_k = pi_k dL/dpi_k - pi_k sum_j pi_j dL/dpi_j, and grad_{theta_k} = dL/dh_k xbar.
    With dL/dpi nonzero at the routed expert only this is :func:`task_loss_gradient`; the general form
    serves top-k routing and the variants without the auxiliary loss.
    pi (R, M), dL_dpi (R, M), xbar (R, d) -> (R, M, d).
    """
    coef = pi * dL_dpi
    dL_dh = coef - pi * coef.sum(axis=-1, keepdims=True)
    return dL_dh[:, :, None] * xbar[:, None, :]


def task_loss(
    theta: np.ndarray,
    xbar: np.ndarray,
    chosen: int,
    delta: float,
    fracs: np.ndarray,
    past_prob_sums: np.ndarray,
    t: int,
    alpha: float,
) -> float:
    """L_loc + L_aux of one replicate as a function of its gate theta (M, d).

    ``fracs`` are f_t^(m) (M,), ``past_prob_sums`` the sums over tau < t of
    pi_m(X_tau, Theta_tau) 1{m_tau = m}.  L_tr is omitted: it does not depend
    on theta.  Used to check :func:`task_loss_gradient` by finite differences.
    """
    M = theta.shape[0]
    pi = softmax(gate_outputs(theta, xbar))
    loss_loc = pi[chosen] * delta
    P = past_prob_sums.astype(float).copy()
    P[chosen] += pi[chosen]
    loss_aux = alpha * M * float(np.dot(fracs, P / t))
    return float(loss_loc + loss_aux)
