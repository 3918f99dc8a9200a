"""A toy pack: two statements of a textbook identity about the variance, one true and one false.

It exists to show that a document plugs into moecl-verify without any change to the machinery: this package
lives outside moecl_verify and is found through the entry-point group ``moecl_verify.packs`` like any
other pack (the tests give it a distribution's metadata on a temporary path).
"""

from __future__ import annotations

from moecl_verify.checks.pack import HeadlineItem, Pack

PACK = Pack(
    name="toy",
    title="A textbook identity: the variance of a uniform variable",
    source="any probability textbook: Var(X) = E[X^2] - (E[X])^2",
    claims="moecl_toy_pack.claims",
    noun="textbook",
    order=("var",),
    headline=(HeadlineItem("var", "The variance identity", "Var(X) = E[X^2] - (E[X])^2", ("var.true",),
                           "textbook"),),
    budgets={"smoke": 4_000, "standard": 40_000, "full": 400_000},
)
