"""The bottom line: at most ten sentences a reviewer can attach, each generated from decided entries.

Nothing here is typed by hand about a document; every sentence is assembled from the run:

1. what the document gets right and what falls, from the headline results' verdicts
   (:mod:`moecl_verify.reports.headline`), and, where the pack says so (``Pack.survives``), where the
   document's conclusions survive although its stated setting does not bear them out;
2. one sentence per root cause (:func:`moecl_verify.reports.consequence.root_causes`) that breaks or
   undercuts a headline result, most consequential first: where it is, what holds instead (the slip's own
   text, written by its claim from the run's numbers), the decisive number of the first decided entry it
   rests on, and what it breaks;
3. what the run could not settle.

Every sentence that states a finding says how sure it is (:mod:`moecl_verify.checks.strength`): the verdicts
beside each result they name, a root-cause sentence at its end, in brackets.  A sentence resting on a slip that
holds only under a reading, or may be a transcription artifact, says so in its text, naming the reading; results.json
records the weakest strength of the sentence's parts.

A root-cause sentence needs a decided entry: a slip whose entries are all inconclusive (or that rests on no
entry and is a matter of notation) gives no sentence, so a sentence disappears when its evidence stops
deciding.  The same sentences go to results.json (``findings.bottom_line``) with the slips and entry keys
they rest on, so that automation reads what a reader reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from moecl_verify.checks import kinds, strength
from moecl_verify.checks.entry_key import EntryKey
from moecl_verify.checks.kinds.base import plain
from moecl_verify.checks.model import RunResult
from moecl_verify.reports import consequence, headline
from moecl_verify.reports.anchors import slip_anchor
from moecl_verify.reports.document import pack_of

MAX_SENTENCES = 10
# Root causes named in the bottom line: the few a reader must know; the rest are one click away.
MAX_CAUSES = 4
# Slip classes that a reader of the bottom line need not see unless the measurements back them.
TEXT_CLASSES = frozenset({"notation", "transcription"})
DECIDED = frozenset({"refuted", "confirmed"})


@dataclass(frozen=True)
class Sentence:
    """One sentence of the bottom line, in markdown, with what it rests on."""

    kind: str  # "verdicts", "reading", "holds", "cause" or "open"
    text: str
    slips: tuple[str, ...] = ()
    entries: tuple[EntryKey, ...] = ()
    # The claim whose figure shows the sentence's number, and the kind of that figure ("probability",
    # "scaling", or "" for the claim's first): the report links it; results.json does not need it.
    figure_of: str = ""
    figure_kind: str = ""
    # How sure the sentence is: the weakest of its parts (a key of STRENGTHS, with the reading it names); empty for
    # a sentence that states no finding (what the run could not settle).
    strength: str = ""
    strength_note: str = ""

    def to_json(self) -> dict:
        out = {"kind": self.kind, "text": self.text, "slips": list(self.slips),
               "entries": [k.to_json() for k in self.entries]}
        if self.strength:
            out["strength"] = self.strength
            if self.strength_note:
                out["strength_note"] = self.strength_note
        return out


# A sentence's strength at its end, in the words of checks/strength.py: " *[exact]*".
_LABEL = re.compile(r" \*\[[^\n]*\]\*$")


def label(text: str) -> str:
    """How sure a finding is, as the bottom line writes it after the finding (``text`` is prose: its ``*`` and ``_``
    are kept literal, a table's ``|`` escaped)."""
    return f" *[{plain(text).replace('|', chr(92) + '|')}]*"


def _names(rows, how: bool = False) -> str:
    """The rows' titles joined; with ``how``, each followed by its verdict's strength."""
    titles = [row.item.title + (f" ({row.strength_text})" if how and row.strength_text else "") for row in rows]
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]


def first_clause(text: str, width: int = 170) -> str:
    """The first clause of a slip's text (up to its first semicolon), shortened at a word."""
    first = " ".join(text.split(";")[0].split())
    return first if len(first) <= width else first[: width - 4].rsplit(" ", 1)[0] + " ..."


def _place(location: str) -> str:
    """Where a slip sits, for a sentence: its location up to a semicolon, without a closing remark in
    parentheses (a quotation or a note, which the slip audit keeps)."""
    place = location.split(";")[0].strip()
    # a remark in parentheses that quotes the text (a heading, a phrase) is detail, wherever it stands
    place = re.sub(r"\s*\((?:[^()]|\([^()]*\))*'(?:[^()]|\([^()]*\))*\)", "", place).strip().rstrip(",")
    if place.endswith(")"):
        depth = 0
        for i in range(len(place) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(place[i], 0)
            if depth == 0:
                inner = place[i + 1:-1]
                if "'" in inner or ":" in inner:
                    place = place[:i].rstrip()
                break
    return first_clause(place, 60)


def _verdicts(run: RunResult) -> list[Sentence]:
    document, _ = headline.rows(run)
    chain = pack_of(run).chain
    # the proof chain is not one of the results: its members are counted in a clause of their own
    members = next((row for row in document if row.item is chain and row.verdict != headline.ABSENT), None)
    document = [row for row in document if row.verdict != headline.ABSENT and row.item is not chain]
    if not document:
        return []
    noun = pack_of(run).noun
    groups = {v: [row for row in document if row.verdict == v] for v in headline.HEADLINE_VERDICTS}
    bits = []
    if groups[headline.STANDS]:
        bits.append(f"{_names(groups[headline.STANDS], True)} "
                    f"{'stand' if len(groups[headline.STANDS]) > 1 else 'stands'} "
                    "(every check of the statement confirmed)")
    if groups[headline.PARTLY]:
        bits.append(f"{_names(groups[headline.PARTLY], True)} {'are' if len(groups[headline.PARTLY]) > 1 else 'is'} "
                    "partly confirmed (none refuted)")
    if groups[headline.FALLS]:
        bits.append(f"{_names(groups[headline.FALLS], True)} "
                    f"{'fall' if len(groups[headline.FALLS]) > 1 else 'falls'}")
    if groups[headline.DEPENDS]:
        bits.append(f"{_names(groups[headline.DEPENDS], True)} "
                    f"{'depend' if len(groups[headline.DEPENDS]) > 1 else 'depends'} on how the {noun} is read")
    if not bits:
        return []
    named = [row for v in (headline.STANDS, headline.PARTLY, headline.FALLS, headline.DEPENDS) for row in groups[v]]
    named += [members] if members is not None else []
    how = strength.weakest((row.strength, row.strength_note) for row in named)
    text = ((f"Of the {noun}'s {len(document)} headline results, " if len(document) > 1 else
             f"Of the {noun}'s one headline result, ") + "; ".join(bits) + ".")
    if members is not None:
        # the chain row's "of N members: k fall (ids); ..." -> the counts only, the names being in the status table
        counts = re.sub(r" \([^()]*\)", "", members.evidence)
        total, _, rest = counts.removeprefix("of ").partition(": ")
        parts = rest.split("; ")
        said = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
        text += f" Of the {total} behind them ({members.item.title}), {said} (their statements' verdicts)."
    return [Sentence("verdicts", text, strength=how[0], strength_note=how[1])]


def _reading_holds(run: RunResult) -> list[Sentence]:
    """What holds of an independent reading's claims: those confirmed in full or in part, and the parts that
    stand inside a line that does not (a reader needs what the document gets right beside what it gets wrong)."""
    _, reading = headline.rows(run)
    if not reading:
        return []
    good = (headline.STANDS, headline.PARTLY)
    lines = {v: [row for row in reading if row.verdict == v] for v in good}
    bits, found = [], []
    for verdict, word in ((headline.STANDS, "stand"), (headline.PARTLY, "are partly confirmed (none refuted)")):
        rows = lines[verdict]
        if rows:
            named = " and ".join(f"{row.item.title} ({row.item.statement}"
                                 + (f"; {row.strength_text})" if row.strength_text else ")") for row in rows)
            verb = word if len(rows) > 1 else {"stand": "stands"}.get(word, word.replace("are ", "is ", 1))
            bits.append(f"{named} {verb}")
            found += [(row.strength, row.strength_note) for row in rows]
    by_id = {}
    for row in reading:
        if row.verdict in good or not row.item.parts:
            continue
        entries = [r for r in run.results if headline.matches(r.id, row.item.claims)]
        statement = [r for r in entries if headline.is_statement(r)] or entries
        held = []
        for said, v in headline.part_verdicts(entries, row.item):
            if v not in good:
                continue
            how = headline.verdict_strength(
                run, [r for r in statement if headline.matches(r.id, dict(row.item.parts)[said])], v)
            found.append(how)
            held.append(f'"{said}" {"stands" if v == headline.STANDS else "is partly confirmed"}'
                        + (f" ({strength.short(*how)})" if how[0] else ""))
        if held:
            by_id[row.item.title] = f"in {row.item.title}, " + " and ".join(held)
    bits += list(by_id.values())
    if not bits:
        return []
    how = strength.weakest(found)
    return [Sentence("reading", f"Of the claims of {pack_of(run).reading}, " + "; ".join(bits) + ".",
                     strength=how[0], strength_note=how[1])]


def cause_strength(rc: consequence.RootCause, run: RunResult) -> tuple[tuple[str, str], str]:
    """How sure a root cause's sentence is, as (the weakest (strength, note) of its parts, the words shown): the
    root slip's own strength; its effect's, where another slip of the family states it and is less sure; and that
    of each slip following from it that breaks or undercuts a result and is less sure than the root, since what
    the sentence says it breaks rests on that slip."""
    own = strength.of(rc.slip, run.results)
    parts, words = [own], strength.words(rc.slip, run.results)
    effect_id, effect = rc.effect
    shown = next((r.slip for r in rc.derived if r.slip.id == effect_id), None) if effect else None
    if shown is not None:
        theirs = strength.of(shown, run.results)
        if strength.STRENGTHS.index(theirs[0]) > strength.STRENGTHS.index(own[0]):
            parts.append(theirs)
            words += f"; its effect: {strength.words(shown, run.results)}"
    through: dict[tuple[str, str], list[str]] = {}
    for r in rc.derived:
        theirs = strength.of(r.slip, run.results)
        if (r.breaks or r.undercuts) and strength.STRENGTHS.index(theirs[0]) > strength.STRENGTHS.index(own[0]):
            through.setdefault(theirs, []).append(f"`{r.slip.id}`")
    for theirs, ids in through.items():
        parts.append(theirs)
        words += f"; through {', '.join(ids)}: {strength.text(*theirs)}"
    return strength.weakest(parts), words


def _survives(run: RunResult) -> list[Sentence]:
    """Where the document's conclusions survive (the pack's ``survives``): each sentence the pack assembles from the
    run, kept only when some entry it names is decided, so that it disappears with its evidence."""
    pack = pack_of(run)
    if pack.survives is None:
        return []
    by_key = {r.key: r for r in run.results}
    out = []
    for text, keys in pack.survives(run):
        decided = tuple(k for k in keys if k in by_key and by_key[k].verdict in DECIDED)
        if decided:
            out.append(Sentence("holds", text, (), decided))
    return out


def _causes(run: RunResult, room: int) -> list[Sentence]:
    pack = pack_of(run)
    by_key = {r.key: r for r in run.results}
    depends = {row.item.key: row.verdict == headline.DEPENDS for row in headline.rows(run)[0]}
    out = []
    for rc in consequence.root_causes(run):
        if len(out) >= room:
            break
        if not (rc.breaks or rc.undercuts):
            continue
        slip = rc.slip
        decided = [by_key[k] for k in slip.entries if k in by_key and by_key[k].verdict in DECIDED]
        if slip.entries and not decided:
            continue  # its measurements no longer decide: no sentence
        if not slip.entries and slip.slip_class in TEXT_CLASSES:
            continue
        text = plain(slip.summary or f"{_place(slip.location)}: {first_clause(slip.holds, 120)}")
        if rc.error:
            # one error seen in several findings: its name, then the finding that leads
            text = f"{plain(rc.error.split(':')[0]).rstrip('.')}: {text[:1].lower()}{text[1:]}"
        effect_slip, effect = rc.effect
        shown = next((s for s in (rc.slip, *(r.slip for r in rc.derived)) if s.id == effect_slip), None)
        figure_of = (shown.entries[0].claim if effect and shown is not None and shown.entries else
                     decided[0].id if decided else "")
        figure_kind = ("" if effect or not decided else
                       next((f for f in (kinds.figure_of(decided[0]),) if f in ("probability", "scaling")), ""))
        if effect:
            # its size where the document works says more than the decisive number of a test configuration
            # (an effect measured by ablation says what was removed and what changed: it needs more room)
            measured = shown is not None and bool(shown.ablation) and effect != shown.effect
            if measured:
                # the share's interval and the number of cases stay in the root-cause table: the bottom line keeps
                # the effect and how sure it is, so that it fits the first screen with C1-C6
                effect = re.sub(r" \(\d+(?:\.\d+)?% intervals of the share [^()]*\)", "", effect)
            text += f"; {plain(first_clause(effect, 300 if measured else 190))}"
        elif decided:
            text += f" ({first_clause(headline.entry_evidence(decided[0], pack, named=False), 110)})"
        consequences = []
        if rc.breaks:
            # a result whose verdict depends on the reading is broken under one reading only
            consequences.append("breaks " + ", ".join(
                i.title + (" under that reading" if depends.get(i.key) else "") for i in rc.breaks))
        if rc.undercuts:
            consequences.append("undercuts " + ", ".join(i.title for i in rc.undercuts))
        # the slips that follow from it are counted in the root-cause table
        link = f"[`{slip.id}`](#{slip_anchor(slip.id)})"
        text = text.rstrip(". ") + ". It " + "; ".join(consequences) + f" ({link})."
        text = text[:1].upper() + text[1:]  # a summary may start as a clause ("a higher gate probability ...")
        how, words = cause_strength(rc, run)
        out.append(Sentence("cause", text + label(words), (slip.id,) + tuple(r.slip.id for r in rc.derived),
                            tuple(r.key for r in decided), figure_of, figure_kind, *how))
    return out


def _open(run: RunResult) -> list[Sentence]:
    document, _ = headline.rows(run)
    undecided = [row for row in document if row.verdict == headline.OPEN]
    unreadable = [row for row in document if row.verdict == headline.NOT_CHECKABLE]
    out = []
    if undecided:
        out.append(Sentence("open", f"Not settled by this run: {_names(undecided)} (no check of the statement "
                                    "confirmed or refuted at this budget)."))
    if unreadable:
        # not a matter of budget: the statement says too little, or the run lacks what checking it needs
        out.append(Sentence("open", f"Not checkable: {_names(unreadable)} (the reasons are in "
                                    f"{'its checks' if len(unreadable) == 1 else 'their checks'})."))
    return out


def sentences(run: RunResult) -> list[Sentence]:
    """The bottom line of ``run``: at most :data:`MAX_SENTENCES` sentences."""
    head, tail = _verdicts(run) + _reading_holds(run) + _survives(run), _open(run)
    most = pack_of(run).bottom_line_causes or MAX_CAUSES
    return head + _causes(run, min(most, MAX_SENTENCES - len(head) - len(tail))) + tail


def markdown(run: RunResult, figures: dict | None = None) -> list[str]:
    """The bottom line as report lines (a heading, a short list); empty when the run established nothing.
    ``figures`` (claim id -> path, or list of (path, caption)) adds a link to the figure that shows a
    sentence's number."""
    found = sentences(run)
    if not found:
        return []
    lines = ['<a id="bottom-line"></a>', "", "## Bottom line", ""]
    for s in found:
        shown = (figures or {}).get(s.figure_of) if s.figure_of else None
        paths = [shown] if isinstance(shown, str) else [p for p, _ in shown] if shown else []
        path = next((p for p in paths if s.figure_kind and s.figure_kind in p), paths[0] if paths else None)
        text = s.text
        how = _LABEL.search(text)
        tail = how.group(0) if how else ""
        text = text[: len(text) - len(tail)]
        if path:  # inside the closing parenthesis of the sentence's links where it has one
            text = text[:-2] + f"; [figure]({path}))." if text.endswith(").") else text + f" [Figure]({path})."
        lines.append(f"- {text}{tail}")
    lines.append("")
    return lines


__all__ = ["MAX_CAUSES", "MAX_SENTENCES", "Sentence", "cause_strength", "first_clause", "label", "markdown",
           "sentences"]
