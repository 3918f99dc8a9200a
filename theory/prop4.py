"""Proposition 4 (Section 5): one expert's expected forgetting and generalization.

The paper states, for ``M = 1`` and any ``t in {2, ..., T}``, with
``r = 1 - s/d``:

eq. (17)  E[F_t] = 1/(t-1) sum_{tau=1}^{t-1} ( r^{t-tau}/N sum_n ||w_n||^2
                        + (r^tau - r^t)/N^2 sum_{n=n'} ||w_n' - w_n||^2 )

eq. (18)  E[G_T] = r^T/N sum_n ||w_n||^2 + (1 - r^T)/N^2 sum_{n=n'} ||w_n' - w_n||^2

Writing ``S = (1/N) sum_n ||w_n||^2`` and ``D = (1/N^2) sum_{n != n'} ||.||^2``
(see :mod:`theory.readings` for the ``n = n'`` subscript) both are functions of
``(r, S, D, t)`` only.

Three forms are kept for each quantity:

* ``stated``: the main text as written.
* ``corrected`` (eq. 17 only): the main text with ``r^{t-tau}`` read as
  ``r^t - r^tau``, the coefficient that Appendix H's proof produces and that
  eq. 19 (Theorem 1) reduces to at ``M = 1``.  This is a repair, so it is
  reported as a slip, never silently used.
* ``derived``: what follows from eq. 5 and eq. 14-16 under assumption A1
  (:mod:`theory.single_expert`).
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from moecl_verify.theory import single_expert
from moecl_verify.theory.closed_form import ClosedForm, difference
from moecl_verify.theory.symbols import D, S, T, generic_branch, r, t, tau

_EQ17_READING = (
    "sum_{n=n'} read as sum over n != n' (the literal n = n' sum is zero); "
    "pool entering only through S and D"
)


def forgetting_summand_stated() -> sp.Expr:
    """The tau-th summand of eq. 17 as written: r^(t-tau) S + (r^tau - r^t) D."""
    return r ** (t - tau) * S + (r**tau - r**t) * D


def forgetting_summand_corrected() -> sp.Expr:
    """The tau-th summand with r^(t-tau) read as r^t - r^tau (Appendix H, eq. 19)."""
    return (r**t - r**tau) * S + (r**tau - r**t) * D


def _average_over_tau(summand: sp.Expr) -> sp.Expr:
    return sp.simplify(generic_branch(sp.summation(summand, (tau, 1, t - 1))) / (t - 1))


@lru_cache(maxsize=None)
def forgetting_stated() -> ClosedForm:
    return ClosedForm(
        name="E[F_t]",
        form="stated",
        expr=_average_over_tau(forgetting_summand_stated()),
        source="Proposition 4, eq. (17)",
        reading=_EQ17_READING,
    )


@lru_cache(maxsize=None)
def forgetting_corrected() -> ClosedForm:
    return ClosedForm(
        name="E[F_t]",
        form="corrected",
        expr=_average_over_tau(forgetting_summand_corrected()),
        source="Proposition 4, eq. (17), coefficient of S as in Appendix H",
        reading=_EQ17_READING + "; r^{t-tau} read as r^t - r^tau",
    )


@lru_cache(maxsize=None)
def forgetting_derived() -> ClosedForm:
    return ClosedForm(
        name="E[F_t]",
        form="derived",
        expr=single_expert.expected_forgetting(),
        source="derived from eq. 5, 14, 15 under assumption A1 (Lemma 16 recursion)",
    )


@lru_cache(maxsize=None)
def generalization_stated() -> ClosedForm:
    return ClosedForm(
        name="E[G_T]",
        form="stated",
        expr=r**T * S + (1 - r**T) * D,
        source="Proposition 4, eq. (18)",
        reading="sum_{n=n'} read as sum over n != n'",
    )


@lru_cache(maxsize=None)
def generalization_derived() -> ClosedForm:
    return ClosedForm(
        name="E[G_T]",
        form="derived",
        expr=single_expert.expected_generalization(),
        source="derived from eq. 5, 14, 16 under assumption A1 (Lemma 16 recursion)",
    )


@lru_cache(maxsize=None)
def forgetting_summand_gap(form: str) -> sp.Expr:
    """(paper's summand) - (derived summand) for eq. 17, simplified.

    For the corrected reading this is ``-(1 - r)(1 - r^(t-tau)) D``: exactly the
    terms l = tau that Appendix H counts with gap D although the task is the
    same one (gap 0).
    """
    paper = {"stated": forgetting_summand_stated, "corrected": forgetting_summand_corrected}[form]()
    return sp.factor(sp.simplify(paper - single_expert.forgetting_term()))


@lru_cache(maxsize=None)
def forgetting_gap(form: str) -> sp.Expr:
    paper = {"stated": forgetting_stated, "corrected": forgetting_corrected}[form]()
    return difference(paper, forgetting_derived())


@lru_cache(maxsize=None)
def generalization_gap() -> sp.Expr:
    """(eq. 18) - (derived) = (1 - r^T) D / T: the l = i terms again."""
    return difference(generalization_stated(), generalization_derived())


# Readable forms of the gaps, as a reviewer would write them.  They are claims
# about the sympy differences above, asserted by :func:`readable_gaps_hold` and
# by the tests, so the report never prints a simplification nobody checked.
SAME_TASK_SUMMAND = (1 - r) * (1 - r ** (t - tau)) * D
"""derived - corrected, per summand of eq. 17: the l = tau term counted as D."""

SAME_TASK_FORGETTING = D * ((1 - r) - (r - r**t) / (t - 1))
"""derived - corrected for E[F_t] as a whole (t >= 2)."""

SAME_TASK_GENERALIZATION = (1 - r**T) * D / T
"""eq. (18) - derived for E[G_T]."""

# How a reviewer writes them; :func:`readable_gaps_hold` checks the expressions
# above, and tests check that these strings name the same expressions.
READABLE_TEXT = {
    "summand": "(1 - r)(1 - r^(t-tau)) D",
    "forgetting": "D ((1 - r) - (r - r^t)/(t - 1))",
    "generalization": "(1 - r^T) D / T",
}


@lru_cache(maxsize=None)
def readable_gaps_hold() -> bool:
    """True when the readable gaps equal the sympy differences identically."""
    checks = (
        -forgetting_summand_gap("corrected") - SAME_TASK_SUMMAND,
        -forgetting_gap("corrected") - SAME_TASK_FORGETTING,
        generalization_gap() - SAME_TASK_GENERALIZATION,
    )
    return all(sp.simplify(expr) == 0 for expr in checks)
