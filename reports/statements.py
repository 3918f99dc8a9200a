"""The per-statement status table: every lemma, proposition, corollary and theorem of the document
(``Pack.statements``), each with one status, the results whose proofs use it, and whether correcting it changes a
headline result.

The status, from the statement's own entries (not its proof steps) and the slips of its claims:

* *holds*: every entry of the statement confirmed, no slip in its proof;
* *holds with a corrected constant or step*: the statement confirmed, with a slip in a constant or a step of its
  proof; *false as printed, holds with a corrected constant*: refuted only by a wrong constant, an inequality's
  direction or a step, so that a corrected form stands;
* *false*: an entry of the statement refuted under every reading, by a slip that is not a constant or a
  direction; *false under one reading*: refuted under one reading the text leaves open;
* *not checkable*: the text cannot be checked as written; *not settled*: nothing decided at this budget.

"Changes a headline result" follows the cause graph: the headline results that the statement's slips, or the
slips that follow from them, break.
"""

from __future__ import annotations

from dataclasses import dataclass

from moecl_verify.checks import causes
from moecl_verify.checks.model import RunResult
from moecl_verify.reports import consequence, headline
from moecl_verify.reports.document import pack_of

HOLDS = "holds"
CORRECTED = "holds with a corrected constant or step"
FALSE_CORRECTABLE = "false as printed, holds with a corrected constant"
FALSE = "false"
FALSE_ONE_READING = "false under one reading"
NOT_CHECKABLE = "not checkable"
NOT_SETTLED = "not settled"
STATUSES = (HOLDS, CORRECTED, FALSE_CORRECTABLE, FALSE, FALSE_ONE_READING, NOT_CHECKABLE, NOT_SETTLED)
# Slips after which a corrected form of the statement still stands (its constant, the direction of one inequality,
# one step of its proof), and those that say nothing about the statement's truth.
CORRECTABLE = frozenset({"wrong constant or exponent", "inequality direction", "false intermediate step"})
TEXT_ONLY = frozenset({"notation", "transcription"})


@dataclass(frozen=True)
class StatusRow:
    """One statement's line: its title and what it says, its status (one of :data:`STATUSES`), the headline
    results whose proofs use it, those that correcting it changes, its slips, and whether it is itself a headline
    result."""

    title: str
    statement: str
    status: str
    used_by: tuple[str, ...]
    changes: tuple[str, ...]
    slips: tuple[str, ...]
    headline: bool = False


def _status(verdict: str, own_slips) -> str:
    classes = {s.slip_class for s in own_slips} - TEXT_ONLY
    if verdict == headline.FALLS:
        refuting = {s.slip_class for s in own_slips if s.entries and any(k.is_statement for k in s.entries)}
        return FALSE_CORRECTABLE if refuting and refuting <= CORRECTABLE else FALSE
    if verdict == headline.DEPENDS:
        return FALSE_ONE_READING
    if verdict in (headline.STANDS, headline.PARTLY):
        return CORRECTED if classes else (HOLDS if verdict == headline.STANDS else NOT_SETTLED)
    if verdict == headline.NOT_CHECKABLE:
        return NOT_CHECKABLE
    return NOT_SETTLED


def rows(run: RunResult) -> list[StatusRow]:
    pack = pack_of(run)
    summaries = {c["id"]: c.get("summary", "") for c in run.claims}
    graph = causes.graph(run.slips)
    by_result = {item.key: item.title for item in pack.headline}
    out = []
    for item in pack.statements:
        entries = [r for r in run.results if headline.matches(r.id, item.claims) and r.key.role == "statement"]
        if not entries:
            continue
        own = [s for s in run.slips if headline.matches(consequence.claim_of(s), item.claims)]
        family = {s.id: s for s in own}
        for s in own:
            family.update({d.id: d for d in graph.derived(s.id)})
        changes = tuple(dict.fromkeys(i.title for s in family.values() for i in consequence.consequence(s, pack).breaks
                                      if i.key != item.key))
        used_by = tuple(by_result[key] for key, groups in pack.proof_uses.items()
                        if key != item.key and any(headline.matches(g, item.claims) for g in groups))
        statement = item.statement or next((summaries[c] for c in item.claims if summaries.get(c)), "")
        out.append(StatusRow(item.title, statement, _status(headline.summarize(entries), own), used_by, changes,
                             tuple(s.id for s in own), item.key in by_result))
    return out


def section(run: RunResult, slip_link) -> list[str]:
    """The table in markdown (empty where the pack lists no statements); ``slip_link(slip_id)`` gives a link."""
    table = rows(run)
    if not table:
        return []
    counts = {s: sum(r.status == s for r in table) for s in STATUSES}
    said = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    out = [f"Every statement of the {pack_of(run).noun}, one status each ({said}):", "",
           "| statement | what it says | status | used by | correcting it changes | slips |",
           "|---|---|---|---|---|---|"]
    for r in table:
        links = ", ".join(slip_link(s) for s in r.slips[:3]) + (f" and {len(r.slips) - 3} more" if len(r.slips) > 3 else "")
        changes = ", ".join(r.changes) or ("– (a headline result itself)" if r.headline else "no headline result")
        out.append(f"| **{r.title}** | {r.statement} | {r.status} | {', '.join(r.used_by) or '–'} | {changes} | "
                   f"{links or '–'} |")
    out.append("")
    return out


__all__ = ["CORRECTED", "FALSE", "FALSE_CORRECTABLE", "HOLDS", "NOT_CHECKABLE", "NOT_SETTLED", "STATUSES", "StatusRow", "rows", "section"]
