"""How sure a finding is: one of :data:`~moecl_verify.checks.model.STRENGTHS` for every slip, and the words a report
shows beside it.

A claim declares the strength of a slip only where the entries cannot say it: the finding holds under a reading of
a text that is silent or garbled (``strength="reading"``, ``strength_note`` naming the reading), or it may come from
the text checked rather than from the document (``strength="transcription"``).  Every other slip gets its strength
from its own evidence (:func:`derived`):

* every decisive entry exact (sympy, rational arithmetic, an exhaustive search, a stated reason): ``exact``;
* some decisive entry sampled (a mean, a criterion, a proportion or a scaling fit, decided under the run's Holm
  family): ``monte_carlo``, a disagreement at the configuration that entry states.

The decisive entries are the slip's entries that the run decided (refuted or confirmed); where none is decided, all
of them.  A slip that rests on no entry states a reason read off the text or derived from it, which is exact.  A
slip whose entries are all missing from the run (a results file cut down by hand) is not called exact on evidence
the reader cannot see: it reads as Monte Carlo.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from moecl_verify.checks.model import STRENGTH_LABELS, STRENGTHS, ClaimResult, Slip

DECIDED = frozenset({"refuted", "confirmed"})
# Strengths the entries cannot give: a claim declares them, and they weaken every finding that rests on the slip.
CONDITIONAL = ("reading", "transcription")


def is_sampled(res: ClaimResult) -> bool:
    """Whether an entry was decided on samples (inferred, for a file written before evidence types were
    recorded, from the false-fail rate and p-value only sampled entries carry)."""
    if res.evidence_type:
        return res.evidence_type != "exact"
    return res.p_value is not None or res.false_fail_rate is not None


def of_entries(entries: Iterable[ClaimResult]) -> str:
    """``exact`` or ``monte_carlo``: the strength of a finding that rests on ``entries`` (its decided ones, else
    all)."""
    entries = list(entries)
    decided = [r for r in entries if r.verdict in DECIDED] or entries
    return "monte_carlo" if any(is_sampled(r) for r in decided) else "exact"


def derived(slip: Slip, results: Iterable[ClaimResult]) -> str:
    """The strength ``slip``'s own evidence gives it (module docstring), whatever it declares."""
    if not slip.entries:
        return "exact"
    by_key = {r.key: r for r in results}
    found = [by_key[k] for k in slip.entries if k in by_key]
    return of_entries(found) if found else "monte_carlo"


def of(slip: Slip, results: Iterable[ClaimResult]) -> tuple[str, str]:
    """(strength, note) of ``slip``: as declared, else derived from its entries in ``results``."""
    if slip.strength:
        return slip.strength, slip.strength_note
    return derived(slip, results), slip.strength_note


def words(slip: Slip, results: Iterable[ClaimResult]) -> str:
    """The words shown beside ``slip`` (:func:`text`); a Monte Carlo finding some of whose decided entries are exact
    says how many, so that an exact counterexample among sampled disagreements is not read as sampled."""
    kind, note = of(slip, results)
    out = text(kind, note)
    if kind == "monte_carlo":
        by_key = {r.key: r for r in results}
        decided = [by_key[k] for k in slip.entries if k in by_key and by_key[k].verdict in DECIDED]
        exact = sum(not is_sampled(r) for r in decided)
        if exact:
            out += f"; {exact} of its {len(decided)} decided checks exact"
    return out


def settle(slips: Iterable[Slip], results: Iterable[ClaimResult]) -> tuple[Slip, ...]:
    """``slips`` with every undeclared strength filled in from the entries (:func:`derived`), so that a results
    file states each slip's strength and a reader of ``run.slips`` sees it."""
    results = tuple(results)
    return tuple(s if s.strength else replace(s, strength=derived(s, results)) for s in slips)


def weakest(strengths: Iterable[tuple[str, str]]) -> tuple[str, str]:
    """The weakest of several (strength, note) pairs (the order of STRENGTHS; the first note among equals):
    a finding assembled from several parts is only as sure as its least sure part.  ``("", "")`` for none."""
    found = [s for s in strengths if s[0]]
    if not found:
        return "", ""
    rank = max(STRENGTHS.index(k) for k, _ in found)
    return next(s for s in found if STRENGTHS.index(s[0]) == rank)


def text(strength: str, note: str = "") -> str:
    """The words shown beside a finding: "exact", "Monte Carlo at the stated configuration", "rests on a reading:
    the termination rule", "possibly a transcription artifact (check against the original: ...)"."""
    label = STRENGTH_LABELS[strength]
    if strength == "reading":
        return f"{label}: {note}"
    if strength == "transcription":
        return f"{label} (check against the original{': ' + note if note else ''})"
    return f"{label} ({note})" if note else label


def short(strength: str, note: str = "") -> str:
    """The words beside a name in a list or a table cell: the label alone ("Monte Carlo" for the one that says
    "at the stated configuration"); the reading or what to check is named once, in the finding's own sentence
    (:func:`text`), so that a table does not repeat it in every cell."""
    return "Monte Carlo" if strength == "monte_carlo" else STRENGTH_LABELS[strength]


__all__ = ["CONDITIONAL", "derived", "is_sampled", "of", "of_entries", "settle", "short", "text", "weakest", "words"]
