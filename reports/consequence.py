"""Which headline results a slip breaks, the slips ranked by it, and the root causes.

A slip *breaks* a headline result when it sits in one of the claims that
measure that result (its id begins with the claim's id).  It *undercuts* a
result when it sits in a claim the result's proof relies on, as the pack reads
it from its document (``Pack.proof_uses``).  Slips are ranked by consequence: a
false statement in a headline result first, then by how many headline results
a slip touches, then by class (``SEVERITY``), then in the document's order.

A *root cause* is a slip that follows from no other slip of the run (:mod:`moecl_verify.checks.causes`);
it carries the slips that follow from it, and breaks or undercuts every headline result that it or any of
them does.  Root causes the pack declares one error seen from different sides (a cluster) are one root cause.
Root causes are ranked first by how much of the headline discrepancies their ablations explain, then as
slips are, with more derived slips first among equals.
"""

from __future__ import annotations

from dataclasses import dataclass

from moecl_verify.checks import ablation, causes
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
    return claim_of_id(slip.id)


def claim_of_id(slip_id: str) -> str:
    return slip_id.split(".")[0]


def consequence(slip: Slip, pack: Pack) -> RankedSlip:
    prefix = claim_of(slip)
    inside = tuple(item for item in pack.headline if matches(slip.id, item.claims))
    # A slip resting only on entries that are not the statement (proof steps, corrections, derived forms) leaves
    # the result's statement standing: it undercuts the result, as a slip in a lemma its proof uses does.
    in_statement = not slip.entries or any(key.is_statement for key in slip.entries)
    breaks = inside if in_statement else ()
    undercuts = tuple(item for item in pack.headline
                      if (prefix in pack.proof_uses.get(item.key, ()) or item in inside) and item not in breaks)
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


@dataclass(frozen=True)
class RootCause:
    """A slip no other slip of the run explains, with the slips that follow from it (ranked) and the
    headline results the whole family breaks or undercuts.

    Where the pack declares a cluster (:class:`moecl_verify.checks.causes.Cluster`), the root causes of one
    cluster are one ``RootCause``: ``slip`` is the first of them in the cluster's order, ``members`` the ids of
    the others (their slips and those following from them are among ``derived``), and ``error`` the
    cluster's sentence."""

    slip: Slip
    derived: tuple[RankedSlip, ...]
    breaks: tuple[HeadlineItem, ...]
    undercuts: tuple[HeadlineItem, ...]
    members: tuple[str, ...] = ()
    error: str = ""

    @property
    def ids(self) -> tuple[str, ...]:
        """The ids of the slips this cause stands for: its own and its cluster's other roots."""
        return (self.slip.id, *self.members)

    def _own_records(self) -> list:
        family = (self.slip, *(r.slip for r in self.derived))
        return [(s, a) for s in family for a in getattr(s, "ablation", ()) or () if a.cause in self.ids and a.alone]

    @property
    def explained(self) -> float | None:
        """How much of the headline discrepancies removing this cause explains: the median, over the ablations
        of this very cause (alone, not jointly with others) that moved their quantity, of the share removed,
        held to [0, 1] (a removal that turns a failure into room explains all of it); None where no ablation of
        it moved anything.  The root causes are ranked by it."""
        shares = sorted(min(1.0, max(0.0, a.share)) for _, a in self._own_records()
                        if a.moved and a.share is not None)
        if not shares:
            return None
        mid = len(shares) // 2
        return shares[mid] if len(shares) % 2 else (shares[mid - 1] + shares[mid]) / 2

    @property
    def effect(self) -> tuple[str, str]:
        """How large the cause is at the document's own configuration, as (slip id, text): what an ablation of
        this very cause measured on a slip of its family, where one did; else the root's own effect, else that of
        the first slip following from it that states one (a false lemma shows its size in
        the result it breaks); ``("", "")`` where no slip of the family says.  Ablations govern
        (:func:`moecl_verify.checks.ablation.effect_for`): a cause whose ablation moved nothing gets no effect,
        and a discrepancy that other causes' ablations explain lends this cause only what remains without them."""
        family = (self.slip, *(r.slip for r in self.derived))
        # a measured effect first: the first slip of the family holding an ablation of this very cause
        own = self._own_records()
        if own:
            s, record = own[0]
            text = ablation.effect_for(record.cause, s)
            return (s.id, text) if text else ("", "")
        for s in family:
            text = ablation.effect_for(self.slip.id, s)
            if text is None:
                continue
            return (s.id, text) if text else ("", "")
        return "", ""


def _merge(group: list[RootCause], cluster, order: dict) -> RootCause:
    lead, others = group[0], group[1:]
    derived: dict[str, RankedSlip] = {}
    for rc in group:
        for r in rc.derived:
            derived.setdefault(r.slip.id, r)
    ranked_others = [RankedSlip(rc.slip, rc.breaks, rc.undercuts) for rc in others]
    for r in ranked_others:
        derived.setdefault(r.slip.id, r)
    breaks = tuple(dict.fromkeys(item for rc in group for item in rc.breaks))
    undercuts = tuple(dict.fromkeys(item for rc in group for item in rc.undercuts if item not in breaks))
    return RootCause(lead.slip, tuple(sorted(derived.values(), key=lambda r: order[r.slip.id])), breaks, undercuts,
                     tuple(rc.slip.id for rc in others), cluster.error)


def root_causes(run: RunResult) -> list[RootCause]:
    """The run's root causes, clusters merged, ranked: by how much of the headline discrepancies their
    ablations explain (:attr:`RootCause.explained`), then a false statement in a headline result first, then
    by how many headline results they touch, how many slips follow from them, their class and the document's
    order."""
    pack = pack_of(run)
    cause_graph = causes.graph(run.slips)
    ranked = {s.id: consequence(s, pack) for s in run.slips}
    order = {r.slip.id: i for i, r in enumerate(ranked_slips(run))}
    out = []
    for root in cause_graph.roots:
        derived = tuple(sorted((ranked[s.id] for s in cause_graph.derived(root.id)), key=lambda r: order[r.slip.id]))
        family = (ranked[root.id],) + derived
        breaks = tuple(dict.fromkeys(item for r in family for item in r.breaks))
        undercuts = tuple(dict.fromkeys(item for r in family for item in r.undercuts if item not in breaks))
        out.append(RootCause(root, derived, breaks, undercuts))
    for cluster in getattr(pack, "clusters", ()):
        by_id = {rc.slip.id: rc for rc in out}
        group = [by_id[i] for i in cluster.ids if i in by_id]
        if len(group) < 2:
            continue
        merged = _merge(group, cluster, order)
        out = [merged if rc is group[0] else rc for rc in out if rc not in group[1:]]

    def rank(rc: RootCause) -> tuple:
        family = (rc.slip,) + tuple(r.slip for r in rc.derived)
        breaking = any(r.breaks and r.slip.slip_class in BREAKING for r in (ranked[s.id] for s in family))
        severity = min(SEVERITY.index(s.slip_class) if s.slip_class in SEVERITY else len(SEVERITY) for s in family)
        return (-(rc.explained or 0.0), 0 if breaking else 1, -(len(rc.breaks) + len(rc.undercuts)),
                -len(rc.derived), severity, order[rc.slip.id])

    return sorted(out, key=rank)
