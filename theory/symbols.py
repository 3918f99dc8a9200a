"""The paper's scalar symbols, shared by every theory module.

Assumptions carried by the symbols themselves:

* ``r = 1 - s/d`` is the overparameterization ratio of Section 5 (defined just
  before Proposition 4).  With ``1 <= s < d`` it lies in ``[0, 1)``; sympy cannot
  declare an interval, so ``r`` is declared positive and the ``r = 1`` branches
  that sympy's geometric sums produce are removed by :func:`generic_branch`.
* ``S = (1/N) sum_n ||w_n||^2`` and ``D = (1/N^2) sum_{n != n'} ||w_n' - w_n||^2``
  are the two pool statistics through which Proposition 4 depends on the
  ground-truth pool ``W``.  ``D`` is the paper's ``(1/N^2) sum_{n=n'}`` read as a
  sum over ``n != n'`` (the literal ``n = n'`` sum is identically zero; see
  :mod:`theory.readings`).
"""

from __future__ import annotations

import sympy as sp

r = sp.Symbol("r", positive=True)
S = sp.Symbol("S", nonnegative=True)
D = sp.Symbol("D", nonnegative=True)

# Rounds are positive integers; tau and i index past rounds, l the rounds in a sum.
t = sp.Symbol("t", integer=True, positive=True)
T = sp.Symbol("T", integer=True, positive=True)
tau = sp.Symbol("tau", integer=True, positive=True)
i = sp.Symbol("i", integer=True, positive=True)
l = sp.Symbol("l", integer=True, positive=True)  # noqa: E741 - the paper's index

d = sp.Symbol("d", integer=True, positive=True)
s = sp.Symbol("s", integer=True, positive=True)
N = sp.Symbol("N", integer=True, positive=True)


def generic_branch(expr: sp.Expr) -> sp.Expr:
    """Replace every ``Piecewise`` by its last (catch-all) branch.

    sympy's closed form of a geometric sum splits off ``r = 1``.  Because
    ``r = 1 - s/d < 1`` whenever ``s >= 1``, the catch-all branch is the one that
    applies; this helper refuses any Piecewise whose last condition is not
    ``True`` rather than guess.
    """

    def pick(pw: sp.Piecewise) -> sp.Expr:
        last = pw.args[-1]
        if last.cond is not sp.true:
            raise ValueError(f"Piecewise without a catch-all branch: {pw}")
        return last.expr

    return expr.replace(lambda e: isinstance(e, sp.Piecewise), pick)
