"""The gate's task loss and its gradient, derived from eq. 2, 6, 7, 8 (sympy).

Model (Section 3.3).  Gate outputs ``h_m = sum_i theta_m^T X_{t,i} = theta_m^T xbar``
with ``xbar = sum_i X_{t,i}``; softmax ``pi_m = exp(h_m) / sum_k exp(h_k)``
(eq. 2, read as the softmax of the noiseless outputs).  Round t's task loss
as a function of the current gate ``Theta_t`` (eq. 8):

* ``L_tr`` does not depend on ``Theta`` (eq. 3);
* ``L_loc = sum_m pi_m Delta_m`` with ``Delta_m = ||w_t^(m) - w_{t-1}^(m)||^2``,
  zero for every expert but the routed one ``m_t`` (eq. 6);
* ``L_aux = alpha M sum_m f_t^(m) P_t^(m)`` with
  ``P_t^(m) = (1/t) sum_{tau<=t} pi_m(X_tau, Theta_tau) 1{m_tau = m}`` (eq. 7).
  The routing fractions ``f_t^(m)`` are counts, and the terms tau < t of
  ``P_t^(m)`` were evaluated at past gates, so only the tau = t term depends on
  ``Theta_t``.

Derived gradient (checked symbolically by :func:`derived_matches_closed_form`):

    grad_{theta_k} L_task = pi_{m_t} (Delta + alpha M f_t^(m_t) / t) (1{k = m_t} - pi_k) xbar.

Lemma 4's proof (Appendix D) prints the auxiliary part as
``alpha M t f_t^(m_t) d pi_{m_t} / d theta_k`` although its own previous line
says ``d P_t^(m_t) / d theta = (1/t) d pi_{m_t} / d theta``: the printed factor
is ``t`` where the derivation gives ``1/t`` (ratio ``t^2``,
:func:`lemma4_aux_factor_ratio`).  Lemma 5 then uses ``alpha M / T_1``, i.e.
the ``1/t`` factor.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

alpha, Delta, t_sym, f_sym = sp.symbols("alpha Delta t f", positive=True)


def _setup(M: int, d: int, chosen: int):
    theta = sp.Matrix(M, d, lambda m, j: sp.Symbol(f"theta_{m}_{j}", real=True))
    xbar = sp.Matrix(d, 1, lambda j, _: sp.Symbol(f"x_{j}", real=True))
    past = [sp.Symbol(f"Ppast_{m}", nonnegative=True) for m in range(M)]
    fracs = [sp.Symbol(f"f_{m}", nonnegative=True) for m in range(M)]
    h = [sum(theta[m, j] * xbar[j] for j in range(d)) for m in range(M)]
    z = sum(sp.exp(hk) for hk in h)
    pi = [sp.exp(hm) / z for hm in h]
    loss_loc = pi[chosen] * Delta
    P = [(past[m] + (pi[m] if m == chosen else 0)) / t_sym for m in range(M)]
    loss_aux = alpha * M * sum(fracs[m] * P[m] for m in range(M))
    return theta, xbar, pi, fracs, loss_loc + loss_aux


def task_loss_gradient_symbolic(M: int = 3, d: int = 2, chosen: int = 0):
    """sympy's gradient of L_loc + L_aux with respect to each theta_k (M x d)."""
    theta, xbar, pi, fracs, loss = _setup(M, d, chosen)
    return sp.Matrix(M, d, lambda k, j: sp.diff(loss, theta[k, j])), theta, xbar, pi, fracs


def closed_form_gradient(pi, xbar, chosen: int, delta, frac_chosen, t, alpha_, M: int):
    """The derived closed form, for any array-like pi and xbar (sympy or numbers)."""
    coef = pi[chosen] * (delta + alpha_ * M * frac_chosen / t)
    return [[coef * ((1 if k == chosen else 0) - pi[k]) * xj for xj in xbar] for k in range(M)]


@lru_cache(maxsize=None)
def derived_matches_closed_form(M: int = 3, d: int = 2, chosen: int = 0) -> bool:
    """True when sympy's gradient equals the closed form identically."""
    grad, theta, xbar, pi, fracs = task_loss_gradient_symbolic(M, d, chosen)
    closed = closed_form_gradient(pi, list(xbar), chosen, Delta, fracs[chosen], t_sym, alpha, M)
    return all(sp.simplify(grad[k, j] - closed[k][j]) == 0 for k in range(M) for j in range(d))


@lru_cache(maxsize=None)
def gradients_sum_to_zero(M: int = 3, d: int = 2, chosen: int = 0) -> bool:
    """Lemma 4's statement, sum_k grad_{theta_k} L_task = 0, decided by sympy."""
    grad, *_ = task_loss_gradient_symbolic(M, d, chosen)
    return all(sp.simplify(sum(grad[k, j] for k in range(M))) == 0 for j in range(d))


def lemma4_aux_factor_ratio() -> sp.Expr:
    """(Lemma 4's printed aux gradient) / (derived aux gradient) = t^2."""
    printed = alpha * sp.Symbol("M") * t_sym * f_sym
    derived = alpha * sp.Symbol("M") * f_sym / t_sym
    return sp.simplify(printed / derived)
