"""The median of X ~ Uniform(0, 1) is 1/2, and the slip "its median is 2/5", checked by the pack's own kind of
evidence (a sign test over ``ctx.sizes`` draws, moecl_toy_pack.sign_kind) and exactly (sympy solves
P(X <= m) = 1/2).  Written with the typed authoring module (moecl_verify.authoring), where var.py uses the
machinery's constructors directly: both are the same claims to the run."""

from __future__ import annotations

import sympy as sp

from moecl_verify.authoring import ClaimKind, Verdict, claim, exact, generator_for, register
from moecl_toy_pack.sign_kind import SignEvidence

SOURCE = "the median of a uniform variable"
MEDIANS = {"median.half": sp.Rational(1, 2), "median.slip": sp.Rational(2, 5)}
RESOLUTION = 0.05  # a confirmed median has P(X > m) within 0.05 of 1/2


def _measure(claim_id: str):
    m = MEDIANS[claim_id]

    def measure(ctx) -> list:
        x = sp.Symbol("x")
        median = sp.solve(sp.Eq(sp.integrate(1, (x, 0, sp.Symbol("m"))), sp.Rational(1, 2)), sp.Symbol("m"))[0]
        solved = exact(claim_id=claim_id, source=SOURCE, kind=ClaimKind.PROBABILITY, part="exact",
                       verdict=Verdict.CONFIRMED if median == m else Verdict.REFUTED,
                       evidence=f"sympy: P(X <= m) = m = 1/2 at m = {median}; stated m = {m}",
                       statement=f"median = {m}")
        draws = generator_for(ctx.seed, "toy", claim_id).uniform(size=int(ctx.sizes))
        sign = SignEvidence(claim_id=claim_id, source=SOURCE, kind="probability", form="stated",
                            config={"part": "sign test", "stated_median": float(m)},
                            above=int((draws > float(m)).sum()), trials=int(ctx.sizes), resolution=RESOLUTION,
                            formula=f"P(X > {m}) = 1/2")
        return [solved, sign]

    return measure


register(__name__, claim(id="median.half", source=SOURCE, kind=ClaimKind.PROBABILITY,
                         statement=r"\mathrm{median}(X) = 1/2", preconditions=("X ~ Uniform(0, 1)",),
                         measure=_measure("median.half"), summary="the median of a uniform variable"))
register(__name__, claim(id="median.slip", source=SOURCE, kind=ClaimKind.PROBABILITY,
                         statement=r"\mathrm{median}(X) = 2/5", preconditions=("X ~ Uniform(0, 1)",),
                         measure=_measure("median.slip"), summary="the median of a uniform variable, slipped"))
