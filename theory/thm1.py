"""Theorem 1 (Section 5.1, M > N) as stated: the bounds eq. (19) and (20).

With L_t^(m) = t f_t^(m) the number of tasks routed to expert m up to round t,
and S, D as in :mod:`theory.prop4`:

eq. (19), t in {2, ..., T1}:
    E[F_t] < 1/(t-1) sum_{tau<t} ( (r^{L_t^(m_tau)} - r^{L_tau^(m_tau)}) S
                                   + (r^{L_tau^(m_tau)} - r^{L_t^(m_tau)}) D )
eq. (20):
    E[G_T] < 1/T sum_{tau<=T} ( r^{L_{T1}^(m_tau)} S + (1 - r^{L_{T1}^(m_tau)}) D )

The paper adds: "if M = 1 in Theorem 1, L_t^(m_tau) becomes t, so eq. (19)
and eq. (20) specialize to eq. (17) and eq. (18)".  The summands below are
functions of the counts (symbols ``L_t``, ``L_tau``, ``L_T1``), so the
specialization is a substitution that sympy can decide.
"""

from __future__ import annotations

import sympy as sp

from moecl_verify.theory.symbols import D, S, T, r, t, tau

L_t, L_tau, L_T1 = sp.symbols("L_t L_tau L_T1", integer=True, positive=True)
T1 = sp.Symbol("T_1", integer=True, positive=True)


def eq19_summand() -> sp.Expr:
    """The tau-th summand of eq. (19)'s right-hand side, as printed."""
    return (r**L_t - r**L_tau) * S + (r**L_tau - r**L_t) * D


def eq19_summand_derived() -> sp.Expr:
    """The tau-th summand of eq. (19) as it follows from the model: one expert's derived forgetting term
    (:func:`theory.single_expert.forgetting_term`, assumption A1, tasks i.i.d. uniform and independent of the
    routing) between the expert's L_tau-th and L_t-th updates.  The expert of round tau is an independent single
    expert on its own subsequence of rounds, so its t and tau become the counts L_t^(m_tau) and L_tau^(m_tau).
    It differs from the printed summand by Appendix H's same-task term only (:func:`eq19_same_task_gap`)."""
    from moecl_verify.theory import single_expert

    return single_expert.forgetting_term().subs({t: L_t, tau: L_tau}, simultaneous=True)


def eq19_same_task_gap() -> sp.Expr:
    """Derived minus printed summand of eq. (19): (1 - r)(1 - r^(L_t - L_tau)) D, the terms between a task and
    itself that the proof counts as D (as in Proposition 4's Appendix H); 0 when the expert was not routed again
    after round tau (L_t = L_tau)."""
    return sp.factor(sp.simplify(eq19_summand_derived() - eq19_summand()))


EQ19_SAME_TASK_GAP = (1 - r) * (1 - r ** (L_t - L_tau)) * D
"""The readable form of :func:`eq19_same_task_gap`, checked by :func:`eq19_gap_reads_as_written`."""


def eq19_gap_reads_as_written() -> bool:
    return sp.simplify(eq19_same_task_gap() - EQ19_SAME_TASK_GAP) == 0


def eq20_summand() -> sp.Expr:
    """The tau-th summand of eq. (20)'s right-hand side, as printed."""
    return r**L_T1 * S + (1 - r**L_T1) * D


def eq19_at_one_expert() -> sp.Expr:
    """M = 1: every task goes to the one expert, so L_t = t and L_tau = tau."""
    return eq19_summand().subs({L_t: t, L_tau: tau})


def eq20_at_one_expert() -> sp.Expr:
    """M = 1: L_{T1} = T1 (T1 = ceil(1/eta) exploration rounds), the same for every tau."""
    return eq20_summand().subs({L_T1: T1})


def eq18_summand() -> sp.Expr:
    """Eq. (18) written as the average over tau of a constant summand."""
    return r**T * S + (1 - r**T) * D


def t2_same_expert_gap() -> sp.Expr:
    """eq. (19)'s summand minus the derived expected forgetting at t = 2 when rounds 1 and 2 share an expert.

    With different experts both are 0 (expert m_1 untouched, L_2 = L_1 = 1).
    With the same expert L_2 = 2, L_1 = 1, and under A1 the derived
    E[e_2(1) - e_1(1)] comes from :mod:`theory.single_expert`.  The result,
    -(1 - r)^2 D, makes E[RHS - F_2] = -P(m_2 = m_1) (1 - r)^2 D < 0 whenever
    D > 0 and the two rounds can share an expert.
    """
    from moecl_verify.theory import single_expert

    rhs = eq19_summand().subs({L_t: 2, L_tau: 1})
    derived = single_expert.expected_error(sp.Integer(2), sp.Integer(1)) - single_expert.expected_error(
        sp.Integer(1), sp.Integer(1)
    )
    return sp.factor(sp.simplify(rhs - derived))
