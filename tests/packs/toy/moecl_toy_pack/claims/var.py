"""Var(X) = E[X^2] - (E[X])^2, and the slip Var(X) = E[X^2] + (E[X])^2, for X ~ Uniform(0, 1).

Each statement gets two entries: an exact one (sympy integrates both sides) and a Monte Carlo one (the
sample mean of (X - 1/2)^2 over ``ctx.sizes`` draws against the statement's right-hand side).
"""

from __future__ import annotations

import sympy as sp

from moecl_verify.checks.model import Slip, exact_result
from moecl_verify.checks.kinds.mean import HorizonTest, Measurement
from moecl_verify.checks.registry import Claim, register
from moecl_verify.checks.stats import mean_test
from moecl_verify.numeric.seeding import generator_for

SOURCE = "the variance identity"
x = sp.Symbol("x")
SECOND = sp.integrate(x**2, (x, 0, 1))  # E[X^2] = 1/3
MEAN = sp.integrate(x, (x, 0, 1))  # E[X] = 1/2
VARIANCE = sp.integrate((x - MEAN) ** 2, (x, 0, 1))  # Var(X) = 1/12
STATEMENTS = {"var.true": (SECOND - MEAN**2, r"\mathrm{Var}(X) = E[X^2] - (E[X])^2"),
              "var.false": (SECOND + MEAN**2, r"\mathrm{Var}(X) = E[X^2] + (E[X])^2")}


def _measure(claim_id: str):
    rhs, latex = STATEMENTS[claim_id]

    def measure(ctx) -> list:
        holds = sp.simplify(VARIANCE - rhs) == 0
        exact = exact_result(claim_id, SOURCE, "symbolic identity", "exact", "confirmed" if holds else "refuted",
                             f"sympy: Var(X) = {VARIANCE}, the right-hand side = {rhs}", latex)
        draws = generator_for(ctx.seed, "toy", claim_id).uniform(size=int(ctx.sizes))
        monte_carlo = Measurement(claim_id=claim_id, source=SOURCE, kind="expected-value identity", form="stated",
                                  config={"features": "-", "draws": int(ctx.sizes)},
                                  tests=(HorizonTest(1, mean_test((draws - 0.5) ** 2, float(rhs))),),
                                  scale=1.0, formula=latex, horizon_name="case")
        return [exact, monte_carlo]

    return measure


def _slips(results) -> list:
    if any(r.verdict == "refuted" for r in results):
        return [Slip("var.false.sign", SOURCE, "false statement", "Var(X) = E[X^2] + (E[X])^2",
                     "Var(X) = E[X^2] - (E[X])^2", "sympy: 1/3 + 1/4 = 7/12, while Var(X) = 1/12")]
    return []


register(__name__, Claim(id="var.true", source=SOURCE, kind="expected-value identity", statement=STATEMENTS["var.true"][1],
               preconditions=("X ~ Uniform(0, 1)",), measure=_measure("var.true"),
               summary="the variance identity"))
register(__name__, Claim(id="var.false", source=SOURCE, kind="expected-value identity", statement=STATEMENTS["var.false"][1],
               preconditions=("X ~ Uniform(0, 1)",), measure=_measure("var.false"), slips=_slips,
               summary="the variance identity with the sign slipped"))
