"""Which headline results a slip breaks, and the slips ranked by it.

A slip *breaks* a headline result when it sits in one of the claims that
measure that result (its id begins with the claim's id).  It *undercuts* a
result when it sits in a lemma the result's proof relies on.  Which proofs rely
on which lemmas is read from the paper (``PROOF_USES``): the lemmas each proof
names, and the preliminary lemmas of the appendix that holds the proof.
Slips are ranked by consequence: a false statement in a headline result
first, then by how many headline results a slip touches, then by class
(``SEVERITY``), then in the paper's order.
"""

from __future__ import annotations

from dataclasses import dataclass

from moecl_verify.checks.model import RunResult, Slip
from moecl_verify.reports.headline import PAPER_ITEMS, HeadlineItem, matches
from moecl_verify.reports.order import paper_key

# Slip classes, most consequential for the paper's conclusions first.
SEVERITY = (
    "false statement",
    "wrong constant or exponent",
    "inequality direction",
    "false intermediate step",
    "unstated assumption",
    "inconsistency between sections",
    "experiment outside preconditions",
    "transcription",
    "notation",
)
# A slip of these classes in a headline claim makes the claim's statement wrong, not only its proof.
BREAKING = frozenset({"false statement", "wrong constant or exponent", "inequality direction"})

# Headline result -> the lemmas its proof uses.  Appendix E (proof E.8 of Proposition 1) prepares
# Lemmas 7-13 and its final proof cites Lemmas 1, 6, 9, 10, 12 and 13, and Lemma 5 through the
# auxiliary loss; Appendix F (proof F.3 of Proposition 2) prepares Lemmas 14-15 and cites Lemmas 5
# and 13; Lemma 3 (an expert given its previous task again does not move) is what Proposition 1's
# "experts stop changing" and Theorem 1's late-phase identity rest on; eq. (42) of Lemma 16 is the
# recursion the proofs of Proposition 4 and Theorem 1 start from.
PROOF_USES = {
    "prop1": ("lemma1", "lemma3", "lemma5", "lemma6", "lemma7", "lemma8", "lemma9", "lemma10", "lemma11",
              "lemma12", "lemma13"),
    "prop2": ("lemma5", "lemma13", "lemma14", "lemma15"),
    "prop4": ("lemma16",),
    "thm1": ("lemma3", "lemma16"),
}


@dataclass(frozen=True)
class RankedSlip:
    slip: Slip
    breaks: tuple[HeadlineItem, ...]
    undercuts: tuple[HeadlineItem, ...]


def claim_of(slip: Slip) -> str:
    """The claim id a slip belongs to: the longest dotted prefix of its id (``thm1.eq19.bound_fails`` -> ``thm1``)."""
    return slip.id.split(".")[0]


def consequence(slip: Slip) -> RankedSlip:
    prefix = claim_of(slip)
    breaks = tuple(item for item in PAPER_ITEMS if matches(slip.id, item.claims))
    undercuts = tuple(item for item in PAPER_ITEMS
                      if prefix in PROOF_USES.get(item.key, ()) and item not in breaks)
    return RankedSlip(slip, breaks, undercuts)


def _rank_key(ranked: RankedSlip) -> tuple:
    slip = ranked.slip
    severity = SEVERITY.index(slip.slip_class) if slip.slip_class in SEVERITY else len(SEVERITY)
    breaking = bool(ranked.breaks) and slip.slip_class in BREAKING
    return (0 if breaking else 1, -(len(ranked.breaks) + len(ranked.undercuts)), severity,
            paper_key(claim_of(slip)), slip.id)


def ranked_slips(run: RunResult) -> list[RankedSlip]:
    return sorted((consequence(s) for s in run.slips), key=_rank_key)
