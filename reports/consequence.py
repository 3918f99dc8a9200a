"""Which headline results a slip breaks, and the slips ranked by it.

A slip *breaks* a headline result when it sits in one of the claims that
measure that result (its id begins with the claim's id).  It *undercuts* a
result when it sits in a claim the result's proof relies on, as the pack reads
it from its document (``Pack.proof_uses``).  Slips are ranked by consequence: a
false statement in a headline result first, then by how many headline results
a slip touches, then by class (``SEVERITY``), then in the document's order.
"""

from __future__ import annotations

from dataclasses import dataclass

from moecl_verify.checks.model import RunResult, Slip
from moecl_verify.checks.pack import HeadlineItem, Pack
from moecl_verify.reports.document import pack_of
from moecl_verify.reports.headline import matches

# Slip classes, most consequential for the document's conclusions first.
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

@dataclass(frozen=True)
class RankedSlip:
    slip: Slip
    breaks: tuple[HeadlineItem, ...]
    undercuts: tuple[HeadlineItem, ...]


def claim_of(slip: Slip) -> str:
    """The claim id a slip belongs to: the longest dotted prefix of its id (``a.eq1.fails`` -> ``a``)."""
    return slip.id.split(".")[0]


def consequence(slip: Slip, pack: Pack) -> RankedSlip:
    prefix = claim_of(slip)
    breaks = tuple(item for item in pack.headline if matches(slip.id, item.claims))
    undercuts = tuple(item for item in pack.headline
                      if prefix in pack.proof_uses.get(item.key, ()) and item not in breaks)
    return RankedSlip(slip, breaks, undercuts)


def _rank_key(ranked: RankedSlip, pack: Pack) -> tuple:
    slip = ranked.slip
    severity = SEVERITY.index(slip.slip_class) if slip.slip_class in SEVERITY else len(SEVERITY)
    breaking = bool(ranked.breaks) and slip.slip_class in BREAKING
    return (0 if breaking else 1, -(len(ranked.breaks) + len(ranked.undercuts)), severity,
            pack.key(claim_of(slip)), slip.id)


def ranked_slips(run: RunResult) -> list[RankedSlip]:
    pack = pack_of(run)
    return sorted((consequence(s, pack) for s in run.slips), key=lambda ranked: _rank_key(ranked, pack))
