"""A closed form with its provenance, printable and evaluable.

Evaluation goes through mpmath (``sympy.lambdify(..., "mpmath")``) at 30
digits so that sums of nearly cancelling powers of ``r`` at large horizons do not
lose precision before they are compared with Monte Carlo means.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import mpmath
import sympy as sp


@dataclass(frozen=True)
class ClosedForm:
    """One formula: the paper's (``stated``/``corrected``) or ours (``derived``).

    ``source`` cites the paper's equation or the derivation; ``reading`` records
    any choice made while transcribing garbled text.
    """

    name: str
    form: str
    expr: sp.Expr
    source: str
    reading: str = ""
    variables: tuple[sp.Symbol, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.variables:
            ordered = tuple(sorted(self.expr.free_symbols, key=lambda s_: s_.name))
            object.__setattr__(self, "variables", ordered)

    @property
    def latex(self) -> str:
        return sp.latex(self.expr)

    @property
    def pretty(self) -> str:
        return sp.pretty(self.expr, use_unicode=True)

    @cached_property
    def _fn(self):
        return sp.lambdify(self.variables, self.expr, modules="mpmath")

    def evaluate(self, **values) -> float:
        """Evaluate at the given symbol values (keyword = symbol name)."""
        missing = [v.name for v in self.variables if v.name not in values]
        if missing:
            raise ValueError(f"{self.name}: missing values for {', '.join(missing)}")
        with mpmath.workdps(30):
            args = [mpmath.mpf(values[v.name]) for v in self.variables]
            return float(self._fn(*args))


def difference(a: ClosedForm, b: ClosedForm) -> sp.Expr:
    """``a - b`` simplified and factored, so a report can name the differing term."""
    return sp.factor(sp.simplify(a.expr - b.expr))
