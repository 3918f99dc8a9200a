"""Expected errors of one expert, derived from eq. 5 and eq. 14-16 (what follows).

Setting: one expert (M = 1), ``w_0 = 0``, task ``n_t`` uniform on ``[N]`` and
independent across rounds, and the minimum-norm update of eq. 5,

    w_t = (I - P_t) w_{t-1} + P_t w_{n_t},    P_t = X_t (X_t^T X_t)^{-1} X_t^T.

For any fixed past round index ``i`` write ``e_t(i) = ||w_t - w_{n_i}||^2``.
Because ``(I - P_t) P_t = 0`` the two parts of ``w_t - w_{n_i}`` are orthogonal:

    e_t(i) = ||(I - P_t)(w_{t-1} - w_{n_i})||^2 + ||P_t (w_{n_t} - w_{n_i})||^2.

**Assumption A1 (the only one used).**  ``E[P_t | past, n_t, n_i] = (s/d) I_d``.
Then ``E||P_t u||^2 = u^T E[P_t] u = (s/d)||u||^2`` for every ``u`` fixed by the
conditioning, which is the step the proof of Lemma 16 (Appendix I.1) attributes
to "the rotational symmetry of the standard normal distribution".  A1 holds
when the column space of ``X_t`` is uniformly (Haar) distributed and independent
of the task, e.g. for i.i.d. Gaussian columns (feature model ``gaussian``).  It
fails for Definition 1, whose column space always contains ``v_{n_t}``:
there ``E[P_t | n_t] = P_v + (s-1)/(d-1) (I - P_v)`` with ``P_v`` the projection
onto ``v_{n_t}`` (see :func:`definition1_projection_gain`).

Under A1 the one-step expectation recursion (the paper's eq. 42 with M = 1) is

    E[e_t(i)] = r E[e_{t-1}(i)] + (1 - r) E||w_{n_t} - w_{n_i}||^2,   e_0(i) = ||w_{n_i}||^2,

and with tasks i.i.d. uniform, ``E||w_{n_l} - w_{n_i}||^2 = D`` for ``l != i``
but ``= 0`` for ``l = i`` (the same task).  That last case is what separates
the derivation below from the paper's Appendix H.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from moecl_verify.theory.symbols import D, S, T, generic_branch, i, l, r, t, tau


def pair_gap(l_index: sp.Expr, i_index: sp.Expr) -> sp.Expr:
    """E||w_{n_l} - w_{n_i}||^2 for i.i.d. uniform tasks: D if l != i, 0 if l = i."""
    return sp.Piecewise((0, sp.Eq(l_index, i_index)), (D, True))


@lru_cache(maxsize=None)
def expected_error(t_: sp.Expr, i_: sp.Expr) -> sp.Expr:
    """Closed form of E[e_t(i)] = E||w_t - w_{n_i}||^2 for 1 <= i <= t (under A1).

    Unrolling the recursion from ``e_0(i) = ||w_{n_i}||^2`` (mean S) gives
    ``r^t S + sum_{l=1}^t (1-r) r^(t-l) E||w_{n_l} - w_{n_i}||^2``; sympy sums the
    geometric series over all l with the gap D, and the l = i term, which is 0
    and not D, is then taken back out.
    """
    all_l = sp.summation((1 - r) * r ** (t_ - l) * D, (l, 1, t_))
    return generic_branch(r ** t_ * S + all_l - (1 - r) * r ** (t_ - i_) * D)


def expected_error_by_recursion(t_: int, i_: int, r_val, S_val, D_val):
    """E[e_t(i)] by iterating the one-step recursion literally (no closed form).

    Exact when given sympy Rationals or ``fractions.Fraction``; used by tests
    as an independent oracle for :func:`expected_error`.
    """
    e = S_val
    for step in range(1, t_ + 1):
        gap = 0 if step == i_ else D_val
        e = r_val * e + (1 - r_val) * gap
    return e


@lru_cache(maxsize=None)
def forgetting_term() -> sp.Expr:
    """E[e_t(tau)] - E[e_tau(tau)], the tau-th summand of E[F_t] (eq. 15)."""
    return sp.simplify(expected_error(t, tau) - expected_error(tau, tau))


@lru_cache(maxsize=None)
def expected_forgetting() -> sp.Expr:
    """E[F_t] = 1/(t-1) sum_{tau=1}^{t-1} (E[e_t(tau)] - E[e_tau(tau)]), t >= 2."""
    total = sp.summation(forgetting_term(), (tau, 1, t - 1))
    return sp.simplify(generic_branch(total) / (t - 1))


@lru_cache(maxsize=None)
def expected_generalization() -> sp.Expr:
    """E[G_T] = 1/T sum_{i=1}^{T} E[e_T(i)] (eq. 16)."""
    total = sp.summation(expected_error(T, i), (i, 1, T))
    return sp.simplify(generic_branch(total) / T)


def definition1_projection_gain(d_: int, s_: int) -> tuple[sp.Rational, sp.Rational]:
    """E||P_t u||^2 / ||u||^2 under Definition 1, for u along / orthogonal to v_{n_t}.

    The column space of X_t is span(v_{n_t}) plus s-1 Gaussian directions, whose
    component orthogonal to v_{n_t} is uniform in the (d-1)-dimensional
    complement.  Hence the gain is 1 along v_{n_t} and (s-1)/(d-1) orthogonal to
    it, against the s/d that assumption A1 needs in every direction.
    """
    return sp.Integer(1), sp.Rational(s_ - 1, d_ - 1)
