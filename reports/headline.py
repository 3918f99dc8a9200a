"""What stands and what falls: a document's headline results, one line each (the pack declares them).

Reads a RunResult and computes nothing new: each headline result gathers the
entries of the claims that measure it, and its verdict is a summary of their
verdicts under fixed rules (``summarize``):

* only the *statement* is summarized: entries in the ``stated`` form whose key's
  role is the statement, not a proof step (:mod:`moecl_verify.checks.entry_key`).
  A false proof step is a slip, but it does not make the statement false;
* ``falls``: some statement entry is refuted, under every reading the document
  leaves open (entries without a reading count for every reading);
* ``depends on the reading``: refuted under one reading, not under another;
* ``stands``: every statement entry confirmed;
* ``partly confirmed``: some confirmed, none refuted, the rest inconclusive or
  not checkable;
* ``open``: nothing confirmed, nothing refuted;
* ``not checkable``: every statement entry is not checkable;
* ``not in this run``: no entry measures it.

A pack may also declare the claims of an independent reading of its document
(``Pack.reading_headline``), each measured by the entries that reading names.
"""

from __future__ import annotations

import re

import csv
import io
from dataclasses import dataclass
from typing import Mapping

from moecl_verify.checks import kinds, strength
from moecl_verify.checks.kinds.base import measured_sentence
from moecl_verify.checks.model import RunResult
from moecl_verify.checks.pack import HeadlineItem, Pack
from moecl_verify.reports.document import pack_of

FALLS, DEPENDS, STANDS, PARTLY, OPEN, NOT_CHECKABLE, ABSENT = (
    "falls", "depends on the reading", "stands", "partly confirmed", "open", "not checkable", "not in this run")
HEADLINE_VERDICTS = (FALLS, DEPENDS, STANDS, PARTLY, OPEN, NOT_CHECKABLE, ABSENT)
PLURAL = {FALLS: "fall", DEPENDS: "depend on the reading", STANDS: "stand", PARTLY: "partly confirmed", OPEN: "open",
          NOT_CHECKABLE: "not checkable", ABSENT: "not in this run"}


@dataclass(frozen=True)
class HeadlineRow:
    """One line of the headline table."""

    item: HeadlineItem
    verdict: str
    evidence: str
    claim_ids: tuple[str, ...]
    counts: tuple[tuple[str, int], ...]
    # The entry the evidence quotes (a refutation for a line that falls), so that the line's "why" names the
    # root cause of that very entry.
    decisive_key: object = None
    # The verdict of each part of a result that says several things ("part: verdict; ..."), and what an
    # undecided line could have detected; both also inside ``evidence``, kept apart for the short table.
    by_part: str = ""
    resolution: str = ""
    # How sure the line's verdict is (:func:`verdict_strength`): a key of STRENGTHS and its note; empty for a line
    # that nothing decided.
    strength: str = ""
    strength_note: str = ""

    @property
    def strength_text(self) -> str:
        """The strength beside the verdict in a list or a cell ("Monte Carlo", "rests on a reading: ..."); empty
        where the line states no finding."""
        return strength.short(self.strength, self.strength_note) if self.strength else ""


def matches(claim_id: str, patterns) -> bool:
    return any(claim_id == p or claim_id.startswith(p + ".") for p in patterns)


def is_statement(res) -> bool:
    """An entry of the statement as printed, not of a proof step, a correction or a derivation (its key)."""
    return res.key.is_statement


def reading(res):
    return res.key.reading


def summarize(entries) -> str:
    """The headline verdict of a set of entries (rules in the module docstring)."""
    if not entries:
        return ABSENT
    statement = [r for r in entries if is_statement(r)] or list(entries)
    verdicts = [r.verdict for r in statement]
    if "refuted" in verdicts:
        refuted_under = {reading(r) for r in statement if r.verdict == "refuted"}
        readings = {reading(r) for r in statement} - {None}
        if None not in refuted_under and readings - refuted_under:
            return DEPENDS
        return FALLS
    if all(v == "confirmed" for v in verdicts):
        return STANDS
    if "confirmed" in verdicts:
        return PARTLY
    if all(v == "not_checkable" for v in verdicts):
        return NOT_CHECKABLE
    return OPEN


def _num(x, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}g}"


def _where(res, pack: Pack | None = None) -> str:
    """Where an entry sits, for the main body: its part and its feature model, in the pack's words where it gives
    them (``Pack.words``).  The task pool and the hidden constant are left to the entry's section: they are
    repetitions of one setting, not quantities of the document."""
    words = pack.words if pack is not None else {}
    part = res.key.part
    if len(part) > 80:  # the entry's whole name heads its section, one link away
        part = part[:77].rsplit(" ", 1)[0].rstrip(",;:") + " ..."
    return ", ".join(b for b in (part, words.get(res.key.features or "", res.key.features)) if b)


def entry_evidence(res, pack: Pack | None = None, named: bool = True, width: int = 170) -> str:
    """The decisive number of one entry, in its own units (``pack`` names the swept parameter's symbol),
    after the entry's name unless ``named`` is False."""
    kind = res.evidence_type or "mean"
    if width <= 0:  # the check's name alone: its number is in its section, and the line says enough
        return f"`{res.id}`"
    where = _where(res, pack)
    prefix = "" if not named else f"`{res.id}` ({where}): " if where else f"`{res.id}`: "
    if kind == kinds.EXACT:
        instance = res.config.get("counterexample") if isinstance(res.config, dict) else None
        if isinstance(instance, dict) and instance.get("premises") is not None and res.verdict == "refuted":
            # a structured counterexample is shown whole, in the document's quantities (the premises it meets are
            # named in the entry's section and in its slip)
            return prefix + instance_text(instance, premises=False)
        text = " ".join((res.evidence or "").split())
        return prefix + (text if len(text) <= width else text[:width - 3].rsplit(" ", 1)[0] + " ...")
    # Every other kind says its decisive number itself (checks/kinds: its Table's sentence); a kind this
    # installation does not have, by the numbers every entry has.
    table = kinds.TABLES.get(kind)
    symbols = {pack.swept: pack.swept_symbol} if pack is not None and pack.swept else {}
    return prefix + (table.decisive if table is not None else measured_sentence)(res, symbols)


def _short_reading(text: str) -> str:
    """A reading's name up to its first parenthesis or semicolon."""
    return re.split(r" \(|;", text, maxsplit=1)[0].strip()


def instance_text(instance: dict, premises: bool = True) -> str:
    """A structured counterexample (``config["counterexample"]``) in words: its vectors as ``x_1 = (..)``, its
    sequences as ``x = (..)``, its numbers as ``x = v``, then the premises it satisfies.  Generic: the keys are
    the document's quantities as the pack stored them."""
    vectors, sequences, numbers = [], [], []
    for key, value in instance.items():
        # the two sides follow from the rest (their difference is the slack, which is shown)
        if key in ("premises", "slack_searched", "lhs", "rhs"):
            continue
        if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
            vectors += [f"{key}_{i} = ({', '.join(map(str, v))})" for i, v in enumerate(value, 1)]
        elif isinstance(value, list):
            sequences.append(f"{key} = ({', '.join(map(str, value))})")
        elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
            numbers.append(f"{key} = {value}")
    names = [p.get("name", "") for p in instance.get("premises") or () if isinstance(p, dict)]
    if not premises:
        return "exact counterexample inside the premises: " + ", ".join(vectors + sequences + numbers)
    text = "exact counterexample: " + ", ".join(vectors + sequences + numbers)
    return text + (f"; inside the premises: {', '.join(names)}" if names else "")


def _strength(res) -> tuple:
    """Order refutations by how decisive they are: entries that hold under every reading first, then
    exact ones, then the smallest p-value."""
    exact = (res.evidence_type or "") == kinds.EXACT
    one_reading = reading(res) is not None
    return (one_reading, 0 if exact else 1, res.p_value if res.p_value is not None else 1.0)


def decisive(entries, verdict: str, patterns: tuple[str, ...] = (), pack: Pack | None = None, width: int = 170) -> str:
    """The line's evidence: counts and the entry that decides it.  Refutations are taken from the first of
    ``patterns`` (the item's claims, most pertinent first) that has one, else in the document's order (the
    pack's)."""
    statement = [r for r in entries if is_statement(r)] or list(entries)
    n = len(statement)
    if verdict == ABSENT:
        return "no entry in this run"
    refuted = _refuted_first(statement, patterns, pack)
    confirmed = [r for r in statement if r.verdict == "confirmed"]
    if verdict == FALLS:
        return f"{len(refuted)} of {n} checks refuted; " + entry_evidence(refuted[0], pack, width=width)
    if verdict == DEPENDS:
        held = [r for r in statement if r.verdict != "refuted" and reading(r) is not None
                and reading(r) not in {reading(x) for x in refuted}]
        # a reading named by its first clause: its whole wording is in the entry's section
        text = (f"refuted read as \"{_short_reading(reading(refuted[0]))}\": "
                + entry_evidence(refuted[0], pack, width=width))
        if held:
            text += f"; read as \"{_short_reading(reading(held[0]))}\": {held[0].verdict}"
        return text
    if verdict == STANDS:
        return f"all {n} checks confirmed; " + entry_evidence(confirmed[0], pack)
    if verdict == PARTLY:
        rest = [r for r in statement if r.verdict != "confirmed"]
        return (f"{len(confirmed)} of {n} checks confirmed, {len(rest)} {rest[0].verdict.replace('_', ' ')}; "
                + entry_evidence(rest[0], pack) + _resolution(rest[0]))
    if verdict == NOT_CHECKABLE:
        return entry_evidence(statement[0], pack)
    return f"{n} checks, none decided; " + entry_evidence(statement[0], pack) + _resolution(statement[0])


def _refuted_first(statement, patterns: tuple[str, ...], pack: Pack | None) -> list:
    """The refuted entries, the decisive one first: the first claim of ``patterns`` (else in the document's
    order) with a refutation, then its most decisive entry."""
    order = pack.key if pack is not None else (lambda claim_id: ())

    def pertinence(r) -> int:
        return next((i for i, p in enumerate(patterns) if matches(r.id, (p,))), len(patterns))

    return sorted((r for r in statement if r.verdict == "refuted"),
                  key=lambda r: (pertinence(r), order(r.id), _strength(r)))


def decisive_entry(entries, patterns: tuple[str, ...] = (), pack: Pack | None = None):
    """The refutation a falling line quotes (None when nothing is refuted)."""
    statement = [r for r in entries if is_statement(r)] or list(entries)
    refuted = _refuted_first(statement, patterns, pack)
    return refuted[0] if refuted else None


def _resolution(res) -> str:
    """What an undecided entry could have seen: the smallest discrepancy its run would have detected, and at
    how many replicates, so that "open" reads as what it is."""
    if res.min_detectable is None:
        return ""
    replicates = res.config.get("replicates")
    at = f" with {replicates} replicates" if isinstance(replicates, int) else ""
    return f"; the run could have detected a discrepancy of {_num(res.min_detectable, 2)} or more{at}"


def entry_strength(run: RunResult, res) -> tuple[str, str]:
    """How sure a verdict on one entry is: exact or Monte Carlo by its evidence, weakened to a reading or a possible
    transcription artifact where a slip resting on the entry declares one (checks/strength.py)."""
    on = [s for s in run.slips if res.key in s.entries]
    # A possible transcription artifact weakens a refutation only when it is its sole explanation: where another
    # slip on the same entry holds whatever the original printed (say a step of the derivation), the entry
    # falls either way.  A reading is kept: the measurement itself was made under it.
    unconditional = any(s.strength not in strength.CONDITIONAL for s in on)
    declared = [strength.of(s, run.results) for s in on if s.strength in strength.CONDITIONAL
                and not (s.strength == "transcription" and unconditional)]
    return strength.weakest([(strength.of_entries([res]), ""), *declared])


def verdict_strength(run: RunResult, statement, verdict: str, decisive_key=None) -> tuple[str, str]:
    """How sure a line's (or a part's) verdict on its statement entries is: a line that falls is as sure as its
    surest refutation (one sure refutation is enough to make it fall, whichever the line quotes: a refutation that
    may be a transcription artifact beside one that is not leaves the line falling either way), a line that stands
    or is partly confirmed as its least sure confirmation; ``("", "")`` for a line nothing decided.
    ``decisive_key`` is kept for callers that name the quoted entry; it does not weaken the line."""
    if verdict in (FALLS, DEPENDS):
        refuted = [r for r in statement if r.verdict == "refuted"]
        found = [entry_strength(run, r) for r in refuted]
        return min(found, key=lambda s: strength.STRENGTHS.index(s[0])) if found else ("", "")
    if verdict in (STANDS, PARTLY):
        return strength.weakest(entry_strength(run, r) for r in statement if r.verdict == "confirmed")
    return "", ""


def part_verdicts(entries, item: HeadlineItem) -> list[tuple[str, str]]:
    """(what the part says, its verdict) for each part of ``item``; a part is judged on the entries the line is
    judged on: the statement's, where the line has any."""
    judged = [r for r in entries if is_statement(r)] or entries
    return [(said, summarize([r for r in judged if matches(r.id, claims)])) for said, claims in item.parts]


def _row(run: RunResult, item: HeadlineItem, pack: Pack) -> HeadlineRow:
    entries = [r for r in run.results if matches(r.id, item.claims)]
    verdict = summarize(entries)
    ids = tuple(pack.in_order({r.id for r in entries}))
    counts = {}
    for r in entries:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    # a line judged part by part already says much: it names its decisive check, whose number is in its section
    evidence = decisive(entries, verdict, item.claims, pack, width=0 if item.parts else 170)
    per_part = ""
    statement = [r for r in entries if is_statement(r)] or entries
    if item.parts:
        bits = []
        for said, part in part_verdicts(entries, item):
            how = verdict_strength(run, [r for r in statement if matches(r.id, dict(item.parts)[said])], part)
            bits.append(f"{said}: {part}" + (f" ({strength.short(*how)})" if how[0] else ""))
        per_part = "; ".join(bits)
        evidence = f"By part: {per_part}. {evidence}"
    if verdict == FALLS and not item.parts:
        # a line that falls says which of its claims stand
        by_claim: dict[str, list] = {}
        for r in statement:
            by_claim.setdefault(r.id, []).append(r)
        summaries = {c["id"]: c.get("summary", "") for c in run.claims}
        standing = [(cid, summarize(rs)) for cid, rs in by_claim.items() if summarize(rs) in (STANDS, PARTLY)]
        if standing and len(by_claim) > 1:
            evidence += "; what stands: " + "; ".join(
                f"{(summaries.get(cid) or cid).rstrip('.')} ({v})" for cid, v in standing)
    first = decisive_entry(entries, item.claims, pack)
    undecided = [r for r in statement if r.verdict == "inconclusive"]
    resolution = ""
    if undecided and verdict in (PARTLY, OPEN):
        r = undecided[0]
        where = _where(r, pack)
        decided = sum(1 for x in statement if x.verdict in ("confirmed", "refuted"))
        resolution = (f"{decided} of {len(statement)} checks decided; `{r.id}`{f' ({where})' if where else ''} is not: "
                      + _resolution(r).lstrip("; ").replace("the run could", "it could"))
    how = verdict_strength(run, statement, verdict, first.key if first is not None else None)
    return HeadlineRow(item, verdict, evidence, ids, tuple(sorted(counts.items())),
                       first.key if first is not None else None, per_part, resolution, *how)


def chain_row(run: RunResult, pack: Pack) -> HeadlineRow:
    """A chain of claims (a proof's lemmas) summarized in one line: how many fall, depend on a reading,
    stand."""
    chain = pack.chain
    per_member: dict[str, list[str]] = {}
    for member in chain.claims:
        # a member's statement, not the steps of its proof (registered apart, ``<id>.step1``, ..., or not)
        entries = [r for r in run.results if matches(r.id, (member,)) and r.key.role == "statement"]
        if entries:
            per_member.setdefault(summarize(entries), []).append(member)
    total = sum(len(v) for v in per_member.values())
    if not total:
        return HeadlineRow(chain, ABSENT, "no entry in this run", (), ())
    parts = [f"{len(per_member[v])} {PLURAL[v] if len(per_member[v]) > 1 else v} ({', '.join(per_member[v])})"
             for v in HEADLINE_VERDICTS if per_member.get(v)]
    verdict = next(v for v in HEADLINE_VERDICTS if per_member.get(v))
    ids = tuple(pack.in_order({r.id for r in run.results if matches(r.id, chain.claims) and r.key.role == "statement"}))
    members = [r for r in run.results if matches(r.id, chain.claims) and r.key.role == "statement"]
    how = verdict_strength(run, members, verdict)
    return HeadlineRow(chain, verdict, f"of {total} {chain.unit}: " + "; ".join(parts), ids, (), None, "", "", *how)


def rows(run: RunResult) -> tuple[list[HeadlineRow], list[HeadlineRow]]:
    """(the document's headline results with its chain last, the claims of an independent reading)."""
    pack = pack_of(run)
    document = [_row(run, item, pack) for item in pack.headline]
    if pack.chain is not None:
        document.append(chain_row(run, pack))
    reading_rows = [_row(run, item, pack) for item in pack.reading_headline]
    return document, reading_rows


# Experiments beyond the document (the pack's ``beyond`` group): a stated hypothesis, tested part by part;
# the answer follows its entries (:func:`answer_of`).


@dataclass(frozen=True)
class OpenRow:
    """One question beyond the document: the question, its hypothesis, the answer in one sentence, the evidence."""

    claim_id: str
    question: str
    hypothesis: str
    verdict: str
    answer: str
    evidence: str


# What each part of a hypothesis did, in words that follow its entries' verdicts.
PART_WORDS = {STANDS: "held", FALLS: "failed", PARTLY: "held where decided", OPEN: "not settled",
              NOT_CHECKABLE: "not checkable", DEPENDS: "depends on the reading", ABSENT: "not in this run"}


def _span(entries) -> str:
    """The range of the measured differences (every case of every entry; the entry's own number where it has
    no cases), as the answer quotes it."""
    values = [h["observed"] for r in entries for h in (r.horizons or []) if h.get("observed") is not None]
    values = values or [r.observed for r in entries if r.observed is not None]
    if not values:
        return ""
    low, high = min(values), max(values)
    return f"margin {_num(low, 2)}" if low == high else f"margins from {_num(low, 2)} to {_num(high, 2)}"


def answer_of(entries) -> str:
    """A hypothesis's answer, part by part (an entry's part names the part and its setting; pools are pooled):
    whether it held, and the measured differences, so the direction can be read from the numbers."""
    parts: dict[str, list] = {}
    for r in entries:
        parts.setdefault(r.key.part or r.id, []).append(r)
    out = []
    for part, group in parts.items():
        span = _span(group)
        pools = len({r.key.pool for r in group})
        where = f" over {pools} pools" if pools > 1 else ""
        out.append(f"{part}: {PART_WORDS[summarize(group)]}" + (f" ({span}{where})" if span else ""))
    return "; ".join(out)


def _setting_of(part: str) -> tuple[str, str]:
    """(aspect, setting) of a beyond entry's part: "purity, paper regime" -> ("purity", "paper regime")."""
    aspect, _, setting = part.partition(", ")
    return aspect, setting


def _magnitudes(entries, sign: float) -> str:
    values = [sign * h["observed"] for r in entries for h in (r.horizons or []) if h.get("observed") is not None]
    values = values or [sign * r.observed for r in entries if r.observed is not None]
    if not values:
        return "size not measured"
    low, high = min(values), max(values)
    if low <= 0:  # some cases of a decided entry went the other way, undecided: quote the largest
        return f"up to {_num(high, 2)}"
    return _num(low, 2) if _num(low, 2) == _num(high, 2) else f"{_num(low, 2)}–{_num(high, 2)}"


def _joined(settings: list[str]) -> str:
    return settings[0] if len(settings) == 1 else ", ".join(settings[:-1]) + " and " + settings[-1]


def answer_sentence(entries, phrases: Mapping[str, tuple[str, str]]) -> str:
    """A question's answer in words, aspect by aspect, whose direction follows the decided entries: an
    aspect that held says ``phrases[aspect][0]``, one whose opposite held significantly ``phrases[aspect][1]``,
    each with the size of the differences; settings that disagree are named; an undecided setting says "not
    settled" with its range.  Aspects without phrases fall back to :func:`answer_of`'s words."""
    aspects: dict[str, dict[str, list]] = {}
    for r in entries:
        aspect, setting = _setting_of(r.key.part or r.id)
        aspects.setdefault(aspect, {}).setdefault(setting, []).append(r)
    out = []
    for aspect, settings in aspects.items():
        if aspect not in phrases:
            out.append(answer_of([r for group in settings.values() for r in group]))
            continue
        held_text, failed_text = phrases[aspect]
        by_outcome: dict[str, list[str]] = {}
        for setting, group in settings.items():
            verdicts = {r.verdict for r in group}
            outcome = ("failed" if "refuted" in verdicts and "confirmed" not in verdicts else
                       "held" if "confirmed" in verdicts and "refuted" not in verdicts else
                       "mixed" if "refuted" in verdicts else "open")
            by_outcome.setdefault(outcome, []).append(setting)
        bits = []
        for outcome in ("held", "failed", "mixed", "open"):
            names = by_outcome.get(outcome)
            if not names:
                continue
            group = [r for n in names for r in settings[n]]
            where = "" if len(by_outcome) == 1 or not all(names) else f" in the {_joined(names)}"
            if outcome == "held":
                decided = [r for r in group if r.verdict == "confirmed"]
                bits.append(held_text.format(span=_magnitudes(decided, 1.0)) + where
                            + ("" if len(decided) == len(group) else " where decided"))
            elif outcome == "failed":
                decided = [r for r in group if r.verdict == "refuted"]
                bits.append(failed_text.format(span=_magnitudes(decided, -1.0)) + where
                            + ("" if len(decided) == len(group) else " where decided"))
            elif outcome == "mixed":
                bits.append(f"{aspect}: opposite directions across task pools{where} ({_span(group)})")
            else:
                bits.append(f"{aspect}: not settled{where} ({_span(group)})")
        out.append("; ".join(bits))
    text = "; ".join(out)
    return text[:1].upper() + text[1:] + "." if text else ""


def open_rows(run: RunResult) -> list[OpenRow]:
    out = []
    pack = pack_of(run)
    for claim in sorted((c for c in run.claims if pack.is_beyond(c["id"])), key=lambda c: pack.key(c["id"])):
        entries = [r for r in run.results if r.id == claim["id"]]
        verdict = summarize(entries)
        statement = [r for r in entries if is_statement(r)] or entries
        phrases = pack.answers.get(claim["id"])
        answer = answer_sentence(statement, phrases) if phrases else answer_of(statement)
        facts = pack.answer_facts.get(claim["id"])
        if facts is not None:
            said = facts(statement)
            answer = f"{said} {answer}" if said else answer
        out.append(OpenRow(claim["id"], claim.get("summary", ""), claim.get("statement", ""), verdict,
                           answer, decisive(entries, verdict, pack=pack)))
    return out


def items_touching(claim_id: str, pack: Pack) -> list[HeadlineItem]:
    """The document's headline results whose measuring claims include ``claim_id``."""
    chain = (pack.chain,) if pack.chain is not None else ()
    return [item for item in (*pack.headline, *chain) if matches(claim_id, item.claims)]


def _table_rows(run: RunResult):
    paper, reviewer = rows(run)
    for row in paper + reviewer:
        yield (row.item.group, row.item.title, row.item.statement, row.verdict, row.evidence.replace("`", ""),
               " ".join(row.claim_ids))
    beyond = pack_of(run).beyond_title.lower()
    for row in open_rows(run):
        yield (beyond, row.question, row.hypothesis, row.answer, row.evidence.replace("`", ""),
               row.claim_id)


HEADER = ("group", "result", "claim", "verdict", "decisive evidence", "entries")


def to_csv(run: RunResult) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows(_table_rows(run))
    return buffer.getvalue()


LATEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIALS.get(ch, ch) for ch in text)


def to_latex(run: RunResult) -> str:
    """The headline table as a LaTeX ``tabular`` (booktabs rules; unicode left to the document's encoding)."""
    lines = [f"% What stands and what falls: {pack_of(run).title} (moecl-verify)",
             r"\begin{tabular}{p{0.16\linewidth}p{0.30\linewidth}p{0.12\linewidth}p{0.34\linewidth}}",
             r"\toprule",
             r"Result & Claim & Verdict & Decisive evidence \\",
             r"\midrule"]
    for group, title, statement, verdict, evidence, _ids in _table_rows(run):
        lines.append(" & ".join(latex_escape(x) for x in (title, statement, verdict, evidence)) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)
