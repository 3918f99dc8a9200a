"""The median of X ~ Uniform(0, 1) is 1/2, and the slip "its median is 2/5", checked by the pack's own kind of
evidence (a sign test over ``ctx.sizes`` draws, moecl_toy_pack.sign_kind) and exactly (sympy solves
P(X <= m) = 1/2)."""

from __future__ import annotations

import sympy as sp

from moecl_verify.checks.model import exact_result
from moecl_verify.checks.registry import Claim, register
from moecl_verify.numeric.seeding import generator_for
from moecl_toy_pack.sign_kind import SignEvidence

SOURCE = "the median of a uniform variable"
MEDIANS = {"median.half": sp.Rational(1, 2), "median.slip": sp.Rational(2, 5)}
RESOLUTION = 0.05  # a confirmed median has P(X > m) within 0.05 of 1/2


def _measure(claim_id: str):
    m = MEDIANS[claim_id]

    def measure(ctx) -> list:
        x = sp.Symbol("x")
        median = sp.solve(sp.Eq(sp.integrate(1, (x, 0, sp.Symbol("m"))), sp.Rational(1, 2)), sp.Symbol("m"))[0]
        exact = exact_result(claim_id, SOURCE, "probability", "exact", "confirmed" if median == m else "refuted",
                             f"sympy: P(X <= m) = m = 1/2 at m = {median}; stated m = {m}", f"median = {m}")
        draws = generator_for(ctx.seed, "toy", claim_id).uniform(size=int(ctx.sizes))
        sign = SignEvidence(claim_id=claim_id, source=SOURCE, kind="probability", form="stated",
                            config={"part": "sign test", "stated_median": float(m)},
                            above=int((draws > float(m)).sum()), trials=int(ctx.sizes), resolution=RESOLUTION,
                            formula=f"P(X > {m}) = 1/2")
        return [exact, sign]

    return measure


register(__name__, Claim(id="median.half", source=SOURCE, kind="probability", statement=r"\mathrm{median}(X) = 1/2",
                         preconditions=("X ~ Uniform(0, 1)",), measure=_measure("median.half"),
                         summary="the median of a uniform variable"))
register(__name__, Claim(id="median.slip", source=SOURCE, kind="probability", statement=r"\mathrm{median}(X) = 2/5",
                         preconditions=("X ~ Uniform(0, 1)",), measure=_measure("median.slip"),
                         summary="the median of a uniform variable, slipped"))
