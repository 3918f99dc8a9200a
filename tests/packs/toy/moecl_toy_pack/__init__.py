"""A toy pack: two statements of a textbook identity about the variance, one true and one false.

It exists to show that a document plugs into moecl-verify without any change to the machinery, with a kind
of evidence of its own (:mod:`moecl_toy_pack.sign_kind`, a sign test for a median): this package
lives outside moecl_verify and is found through the entry-point group ``moecl_verify.packs`` like any
other pack (the tests give it a distribution's metadata on a temporary path).
"""

from __future__ import annotations

from moecl_verify.checks.kinds import register_kind
from moecl_verify.checks.pack import HeadlineItem, Pack
from moecl_toy_pack import sign_kind

# The pack's own kind of evidence (a sign test), registered when the pack loads, in every process that loads it.
register_kind(sign_kind)

PACK = Pack(
    name="toy",
    title="A textbook identity: the variance of a uniform variable",
    source="any probability textbook: Var(X) = E[X^2] - (E[X])^2",
    claims="moecl_toy_pack.claims",
    noun="textbook",
    order=("var", "median"),
    headline=(HeadlineItem("var", "The variance identity", "Var(X) = E[X^2] - (E[X])^2", ("var.true",),
                           "textbook"),),
    budgets={"smoke": 4_000, "standard": 40_000, "full": 400_000},
)
