"""report.md: a reader's view of a results file.  Reads results; computes nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from moecl_verify.checks import ablation, kinds, strength
from moecl_verify.checks.kinds.base import cell as _cell
from moecl_verify.checks.kinds.base import plain
from moecl_verify.checks.kinds.base import number as num
from moecl_verify.checks.kinds.base import p_text as pval
from moecl_verify.checks.model import VERDICTS, RunResult
from moecl_verify.reports import bottom_line, consequence, headline, math_text, requests, statements, symbols
from moecl_verify.reports.anchors import anchor, section_anchor, slip_anchor
from moecl_verify.reports.document import derived_uses, pack_of

VERDICT_WORDS = {
    "confirmed": "an exact check (sympy or rational arithmetic) proves the statement on what it covers, or the "
                 "Monte Carlo agrees with it at a resolution that would have exposed an error",
    "refuted": "an exact counterexample, or a Monte Carlo disagreement beyond the stated false-fail rate",
    "inconclusive": "no disagreement found, but the run was too small to exclude one",
    "not_checkable": "the statement cannot be checked as written (reason given)",
}


def _features(res) -> str:
    label, features = res.key.label, res.key.features
    if label and features:
        return f"{features}, {label}"
    return label or features or "—"


def _target(res) -> str:
    if res.kind == "qualitative":
        return "Δ > 0"
    if res.kind == "symbolic identity":
        return "exact (sympy)"
    if res.kind == "precondition audit":
        return "exact (arithmetic)"
    return num(res.expected)


def _observed(res) -> str:
    if res.observed is None:
        return "—"
    prefix = "Δ = " if res.kind == "qualitative" else ""
    return f"{prefix}{num(res.observed)} ± {num(res.stderr, 2)}"


def evidence_type(res) -> str:
    """The kind of evidence that decided an entry (inferred for results written before it was recorded)."""
    if res.evidence_type:
        return res.evidence_type
    if res.p_value is None and res.false_fail_rate is None:
        return "exact"
    return {"scaling": "scaling", "qualitative": "criterion", "probability": "proportion"}.get(res.kind, "mean")


def _evidence_tables(add, run: RunResult) -> None:
    by_type: dict[str, list] = {}
    for res in sorted(run.results, key=lambda r: pack_of(run).key(r.id)):
        by_type.setdefault(evidence_type(res), []).append(res)
    for tag, table in kinds.TABLES.items():
        rows = by_type.get(tag, [])
        if not rows:
            continue
        columns = ("claim", "form", "features / part", "verdict", *table.columns, "p", "false-fail rate",
                   table.resolution)
        add(f"### {table.title.format(x=pack_of(run).swept)}")
        add("")
        add("| " + " | ".join(columns) + " |")
        add("|" + "---|" * len(columns))
        for r in rows:
            add(f"| `{r.id}` | {r.form} | {_features(r)} | **{r.verdict}** | {' | '.join(table.cells(r))} | "
                f"{pval(r.p_value)} | {num(r.false_fail_rate, 2)} | {num(r.min_detectable, 3)} |")
        add("")
    # Entries of a kind this installation does not have (a file of a pack that is not installed, whose pack
    # added its own kind): listed with the numbers every entry has, under the kind's name.
    for tag in sorted(set(by_type) - set(kinds.tags())):
        add(f"### Evidence of kind `{tag}` (its pack is not installed here: the common columns only)")
        add("")
        add("| claim | form | features / part | verdict | observed | p | false-fail rate | smallest detectable |")
        add("|---|---|---|---|---|---|---|---|")
        for r in by_type[tag]:
            add(f"| `{r.id}` | {r.form} | {_features(r)} | **{r.verdict}** | {_observed(r)} | {pval(r.p_value)} | "
                f"{num(r.false_fail_rate, 2)} | {num(r.min_detectable, 3)} |")
        add("")
    exact = by_type.get("exact", [])
    if exact:
        add("### Exact entries (sympy, rational arithmetic, exhaustive search, or a stated reason; no sampling)")
        add("")
        add("| claim | form | part | verdict | statement checked |")
        add("|---|---|---|---|---|")
        for r in exact:
            add(f"| `{r.id}` | {r.form} | {_features(r)} | **{r.verdict}** | {statement_cell(r.formula)} |")
        add("")


def statement_cell(formula: str) -> str:
    """An entry's statement in a table cell: inline math for a formula, text for a sentence, "—" for none.

    The formula's own ``|`` are escaped for the table; the table rule takes the escape off before the math
    sees the formula, so the converter gets it as written (``\\|`` stays a norm).  A sentence's ``$`` is
    escaped so that it is not read as math."""
    if not formula or not formula.strip():
        return "—"
    if math_text.is_prose(formula):
        return _cell(math_text.prose(formula).strip().replace("$", "\\$"))
    return _cell(math_text.inline(formula))


def _figure_list(figures, claim_id: str, kind: str, swept: str = "x") -> list[tuple[str, str]]:
    """A claim's figures as (path, caption); a bare path gets the caption of its kind."""
    value = (figures or {}).get(claim_id)
    if not value:
        return []
    if isinstance(value, str):
        caption = (f"measured quantity against {swept} on log-log axes, with the fitted slope (solid) and the claimed "
                   "slope (dashed)" if kind == "scaling" else
                   "each form's formula against the Monte Carlo mean with its 99% band")
        return [(value, caption)]
    return [tuple(v) for v in value]


def _link(claim_id: str) -> str:
    return f"[`{claim_id}`](#{anchor(claim_id)})"


def _why(row, roots, run: RunResult | None = None) -> str:
    """The root causes with a slip in the row's claims, itself or one that follows from it (a result that falls
    says why): first the cause of the very entry the line quotes, then the most consequential; "–" where none
    has.  The cause says how sure it is (``run`` gives the entries a slip without a declared strength takes it
    from)."""
    if row.verdict not in (headline.FALLS, headline.DEPENDS):
        return "–"
    causes = why_causes(row, roots)
    if not causes:
        return "–"
    first = causes[0]
    # the slip's whole text is one link away, in the slip audit
    said = _short(first.summary or bottom_line.first_clause(first.holds, 120), 120)
    text = f"[`{first.id}`](#{slip_anchor(first.id)}): {_cell(said)}"
    return (text + (f" (and {len(causes) - 1} more)" if len(causes) > 1 else "")
            + bottom_line.label(cell_words(first, roots, run)))


def cause_words(slip, roots, run: RunResult | None) -> str:
    """How sure a root cause is, in the bottom line's words (with its effect's and its derived slips' where they
    are less sure)."""
    rc = next((rc for rc in roots if rc.slip.id == slip.id), None)
    results = run.results if run is not None else ()
    if rc is None or run is None:
        return strength.words(slip, results)
    return bottom_line.cause_strength(rc, run)[1]


def cell_words(slip, roots, run: RunResult | None) -> str:
    """How sure a cause is, in a table cell: the label alone of the least sure of its parts, as the bottom line
    weighs them (:func:`bottom_line.cause_strength`), e.g. "rests on a reading"; the reading, and which part is
    less sure, are named in the bottom line's sentence and the slip audit, so that the tables stay short."""
    rc = next((rc for rc in roots if rc.slip.id == slip.id), None)
    if rc is None or run is None:
        return strength.short(*strength.of(slip, run.results if run is not None else ()))
    return strength.short(*bottom_line.cause_strength(rc, run)[0])


def why_causes(row, roots) -> list:
    """The root-cause slips behind a headline line, the one explaining its decisive entry first."""
    def family(rc):
        return (rc.slip, *(d.slip for d in rc.derived))

    touching = [rc for rc in roots if any(headline.matches(s.id, row.item.claims) for s in family(rc))]
    decisive = [rc for rc in touching if row.decisive_key is not None
                and any(row.decisive_key in s.entries for s in family(rc))]

    def shown(rc):
        # a cluster is named by the finding of it that bears on this line (the one resting on its decisive
        # check, else one in its claims), not by its lead, which may be about another result
        faces = [s for s in family(rc) if s.id in rc.ids]
        return next((s for s in faces if row.decisive_key is not None and row.decisive_key in s.entries),
                    next((s for s in faces if headline.matches(s.id, row.item.claims)), rc.slip))

    return [shown(rc) for rc in decisive + [rc for rc in touching if rc not in decisive]]


def _finding(row, roots, run: RunResult | None = None) -> str:
    """What the run found on a line, in a sentence or three: each part's verdict, why it falls (its root
    cause, linked), what an undecided line could have detected, and what it was measured on."""
    bits = []
    if row.by_part:
        bits.append(_cell(f"By part: {row.by_part}."))
    if row.verdict in (headline.FALLS, headline.DEPENDS):
        causes = why_causes(row, roots)
        if causes:
            first = causes[0]
            said = first.summary or bottom_line.first_clause(first.holds, 120)
            # the strength after the cell's escapes: its emphasis is markup, not the cause's text
            bits.append(_cell(f"Why: {said} ([`{first.id}`](#{slip_anchor(first.id)})"
                              + (f", and {len(causes) - 1} more" if len(causes) > 1 else "") + ")")
                        + bottom_line.label(cell_words(first, roots, run)) + ".")
    if row.verdict == headline.NOT_CHECKABLE:
        bits.append(_cell(bottom_line.first_clause(row.evidence, 160) + "."))
    if row.resolution:
        bits.append(_cell(row.resolution[0].upper() + row.resolution[1:] + "."))
    if row.item.scope:
        bits.append(_cell(f"Measured on {row.item.scope}."))
    return " ".join(bits) or "–"


def _verdict_cell(row) -> str:
    """A line's verdict, with how sure it is where something decided it."""
    return f"**{row.verdict}**" + (f" ({_cell(row.strength_text)})" if row.strength_text else "")


def _finding_table(add, rows, roots, run: RunResult | None = None) -> None:
    add("| claim | the reading states | verdict | what the run found |")
    add("|---|---|---|---|")
    for row in rows:
        # the item's claims as it names them (a prefix stands for its family), each linked to its first claim
        links = _links(row.item.claims, row.claim_ids)
        found = _finding(row, roots, run)
        if links:
            found = (found if found != "–" else "") + f" Details: {links}."
        add(f"| **{row.item.title}** | {_cell(row.item.statement)} | {_verdict_cell(row)} | {found.strip()} |")
    add("")


def _links(patterns, claim_ids) -> str:
    """The first claim a line's evidence comes from, linked, and how many more its section holds: every claim is
    one click away in the details, and the line stays short."""
    first = next((c for p in patterns for c in claim_ids if headline.matches(c, (p,))), None)
    if first is None:
        return ""
    more = len(claim_ids) - 1
    return f"[`{first}`](#{anchor(first)})" + (f" and {more} more" if more else "")


def _headline_table(add, rows, first_column: str, statement_column: str, roots=(),
                    run: RunResult | None = None) -> None:
    add(f"| {first_column} | {statement_column} | verdict | decisive evidence | why (root cause) | details |")
    add("|---|---|---|---|---|---|")
    for row in rows:
        links = _links(row.item.claims, row.claim_ids) or "none"
        add(f"| **{row.item.title}** | {_cell(row.item.statement)} | {_verdict_cell(row)} | {_cell(row.evidence)} | "
            f"{_why(row, roots, run)} | {links} |")
    add("")


def headline_markdown(run: RunResult) -> str:
    """The bottom line, the "What stands and what falls" section and the root causes of the slips."""
    lines: list[str] = list(bottom_line.markdown(run))
    _headline(lines.append, run)
    _slip_overview(lines.append, run)
    return symbols.spell("\n".join(lines).rstrip("\n"), pack_of(run).symbols)


def _headline(add, run: RunResult) -> None:
    pack = pack_of(run)
    noun = pack.noun
    document, reading = headline.rows(run)
    roots = consequence.root_causes(run)
    add("## What stands and what falls")
    add("")
    legend = (f"**falls** = a check of the statement as printed refuted under every reading of the statement; "
              f"**depends on the reading** = refuted under one reading the {noun} leaves open, not another (the label "
              "in parentheses says how sure the refutation is, and names a reading of the model it rests on where the "
              f"{noun} is silent); **stands** = every check "
              "confirmed; **partly confirmed** = some confirmed, none refuted; **open** = none decided. Proof steps, "
              "corrections and derived forms are reported below but do not decide these lines.")
    if reading:
        titles = [row.item.title for row in reading]
        span = f"{titles[0]}-{titles[-1]}" if len(titles) > 1 else titles[0]
        add(f"The claims {pack.reading} of the {noun} lists ({span}), then the {noun}'s own headline results:")
        add("")
        _finding_table(add, reading, roots, run)
    add(legend)
    add("")
    add(f"The {noun}'s headline results, with the check that decides each (a check is one measurement, derivation "
        "or search of one statement in one setting; its section in the details gives the whole configuration):")
    add("")
    # the proof chain is not a result: its members are judged one by one in the status table below
    _headline_table(add, [row for row in document if row.item is not pack.chain], "result", f"the {noun} claims",
                    roots, run)
    status = statements.section(run, lambda slip_id: f"[`{slip_id}`](#{slip_anchor(slip_id)})")
    if status:
        add('<a id="statement-status"></a>')
        add("")
        for line in status:
            add(line)
    if pack.source_note:
        # A reader must know the state of the text checked before trusting a notation slip.
        add(pack.source_note)
        add("")
    beyond = headline.open_rows(run)
    if beyond:
        add(f"{pack.beyond_title}: questions the {noun} leaves open, each answered by a hypothesis stated before it "
            f"was tested and decided under the same error control (details in [{pack.beyond_title}]"
            f"(#{section_anchor(pack.beyond_title)})):")
        add("")
        add("| question | answer (hypothesis in the details) | evidence | details |")
        add("|---|---|---|---|")
        for row in beyond:
            add(f"| {_cell(row.question)} | {_cell(row.answer)} | {_cell(row.evidence)} | {_link(row.claim_id)} |")
        add("")
    add("The same table as CSV and LaTeX, for citing: `headline.csv`, `headline.tex`.")
    add("")


# The main document's root causes: the first this many of the ranked roots that touch a headline result and are
# not possibly an artifact of the text; every other slip is listed in the details (proof hygiene, notation).
MAIN_CAUSES = 6


def main_causes(run: RunResult) -> tuple[list, list]:
    """(the root causes the main document tables, the other root causes), both in rank order."""
    roots = consequence.root_causes(run)
    main, rest = [], []
    for rc in roots:
        text_only = rc.slip.slip_class in SOURCE_CLASSES or strength.of(rc.slip, run.results)[0] == "transcription"
        if len(main) < MAIN_CAUSES and (rc.breaks or rc.undercuts) and not text_only:
            main.append(rc)
        else:
            rest.append(rc)
    return main, rest


def _request_link(slip_ids, asked) -> str:
    """What the authors are asked about ``slip_ids``: the first request with a corrected statement resting on one
    of them, else the first request, linked; "" for none."""
    mine = [(number, r) for number, r in enumerate(asked, 1) if set(r.evidence) & set(slip_ids)]
    if not mine:
        return ""
    number, r = next(((n, r) for n, r in mine if r.latex), mine[0])
    return (f"Corrected in [request {number}](#{requests.ANCHOR})." if r.latex else
            f"Asked in [request {number}](#{requests.ANCHOR}).")


def _slip_overview(add, run: RunResult) -> None:
    add('<a id="slips-by-consequence"></a>')
    add("")
    add("## Root causes")
    add("")
    roots = consequence.root_causes(run)
    if not roots:
        add("No slip was established by this run.")
        add("")
        return
    main, rest = main_causes(run)
    pack = pack_of(run)
    asked = requests.of(run)
    hygiene = [rc for rc in rest if not _is_text(rc.slip, run)]
    text = [rc for rc in rest if _is_text(rc.slip, run)]
    add(f"The {len(main)} errors that explain most of what falls, each with the findings it explains, ranked by how "
        f"much of the headline discrepancy it names removing it explains (the same runs with that error alone "
        f"removed; a cause no run removed comes after those measured), then by what they break. The other {len(rest)} are in the details: [proof hygiene](#{OTHER_ANCHOR}) "
        f"({len(hygiene)}: wrong constants, exponents, steps and lemmas, each with the results it touches) and "
        f"[notation and transcription](#{OTHER_ANCHOR}) ({len(text)}: check each against the original); every slip "
        "and its evidence is in the [slip audit](#slip-audit)."
        + (f" Effects are stated at {pack.configuration}." if pack.configuration else ""))
    add("")
    add(f"| # | the error | what holds instead | size at the {pack.noun}'s configuration, or the deciding measurement | "
        "how sure | it breaks |")
    add("|---|---|---|---|---|---|")
    by_key = {r.key: r for r in run.results}
    for i, rc in enumerate(main, 1):
        s = rc.slip
        summary = _short(plain(rc.error or s.summary or first_sentence(s.holds)), 240)
        width = 120 if rc.members else 200  # a cluster's row also names its other findings
        holds = " ".join(s.holds.split())
        holds = holds if len(holds) <= width else holds[:width - 3].rsplit(" ", 1)[0] + "..."
        request = _request_link((s.id, *(r.slip.id for r in rc.derived)), asked)
        first = next((by_key[k] for k in s.entries if k in by_key), None)
        evidence = headline.entry_evidence(first, pack) if first is not None else "the text (no measurement)"
        effect = _effect_cell(rc)
        size = effect if effect != "–" else _cell(_short(evidence, 240))
        # a cluster's other findings, each by its claim (its slip's id is in the link and in the details)
        seen = "".join(f", [`{consequence.claim_of_id(m)}`](#{slip_anchor(m)})" for m in rc.members)
        later = len(rc.derived) - len(rc.members)
        follows = f"; {later} slip{'s follow' if later > 1 else ' follows'} from {'them' if rc.members else 'it'}" if later else ""
        breaks = ", ".join(item.title for item in rc.breaks) or "–"
        if rc.undercuts:
            breaks += "; undercuts " + ", ".join(item.title for item in rc.undercuts)
        holds = holds if holds.endswith((".", "...")) or not request else holds + "."
        add(f"| {i} | {_cell(summary)} ([`{s.id}`](#{slip_anchor(s.id)}){seen}{follows}) | {_cell(holds)}"
            f"{f' {request}' if request else ''} | {size} | "
            f"{_cell(cause_words(s, roots, run))} | {breaks} |")
    add("")


OTHER_ANCHOR = "other-slips"


def _is_text(slip, run: RunResult) -> bool:
    return slip.slip_class in SOURCE_CLASSES or strength.of(slip, run.results)[0] == "transcription"


def _other_section(add, run: RunResult) -> None:
    """The root causes the main document does not table, in two lists, each with the slips that follow from it."""
    _, rest = main_causes(run)
    if not rest:
        return
    add(f'<a id="{OTHER_ANCHOR}"></a>')
    add("")
    add("## Other slips: proof hygiene, notation and transcription")
    add("")
    caveat = pack_of(run).slip_caveat
    roots = consequence.root_causes(run)
    for title, rows in (("Proof hygiene", [rc for rc in rest if not _is_text(rc.slip, run)]),
                        ("Notation and transcription", [rc for rc in rest if _is_text(rc.slip, run)])):
        if not rows:
            continue
        add(f"### {title}")
        add("")
        if title.startswith("Notation") and caveat:
            add(caveat)
            add("")
        for rc in rows:
            s = rc.slip
            follows = (" (" + ", ".join(f"[`{r.slip.id}`](#{slip_anchor(r.slip.id)})" for r in rc.derived)
                       + " follow from it)") if rc.derived else ""
            what = plain(s.summary or first_sentence(s.holds))
            touches = "; ".join(([f"breaks {', '.join(i.title for i in rc.breaks)}"] if rc.breaks else []) +
                                ([f"undercuts {', '.join(i.title for i in rc.undercuts)}"] if rc.undercuts else []))
            add(f"- [`{s.id}`](#{slip_anchor(s.id)}) ({s.slip_class}; {cause_words(s, roots, run)}): "
                f"{what}{follows}.{f' It {touches}.' if touches else ''}")
        add("")


def first_sentence(text: str) -> str:
    """A slip's text up to its first semicolon or full stop, whole."""
    cut = re.split(r";\s|\.\s(?=[A-Z])", " ".join(text.split()), maxsplit=1)[0]
    return cut.rstrip(".")


def _effect_cell(rc) -> str:
    """A root cause's size at the document's configuration, naming the slip that states it when that is one
    following from the root; "–" where no slip of the family says."""
    slip_id, text = rc.effect
    if not text:
        return "–"
    shown = next((r.slip for r in rc.derived if r.slip.id == slip_id), None)
    # an ablation's sentence names the quantity it moved: the slip it sits on adds nothing but length
    via = ("" if slip_id == rc.slip.id or (shown is not None and shown.ablation)
           else f" (through [`{slip_id}`](#{slip_anchor(slip_id)}))")
    return _cell(text) + via


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3].rsplit(" ", 1)[0] + " ..."


def _run_section(add, run: RunResult) -> None:
    meta = run.meta
    counts = run.counts()
    add("## The run")
    add("")
    add("| verdict | checks |")
    add("|---|---|")
    for v in VERDICTS:
        add(f"| {v} | {counts[v]} |")
    add("")
    add("What the verdicts mean: " + "; ".join(f"**{k}**: {v}" for k, v in VERDICT_WORDS.items()) + ".")
    add("")
    versions = ", ".join(f"{k} {v}" for k, v in meta.get("versions", {}).items())
    # What a budget buys is the pack's (its sizes differ by experiment): each entry's configuration says it.
    add(f"- budget `{meta.get('budget')}`, seed {meta.get('seed')}; each check's configuration states its own "
        "replicates")
    add(f"- family-wise false-fail rate {meta.get('family_false_fail_rate')} over every sampled check (Holm across "
        "the run, Bonferroni across the horizons or settings within a check); exact checks carry no rate; power for "
        f"the smallest detectable discrepancy {meta.get('power')}")
    add(f"- {len(meta.get('claims', []))} claims: " + ", ".join(f"`{c}`" for c in
                                                              pack_of(run).in_order(meta.get("claims", []))))
    add(f"- {versions}")
    if meta.get("simulation"):
        add(f"- simulation: {meta['simulation']}")
    add(f"- readings chosen for {len(run.interpretations)} ambiguous points: see [Interpretations](#interpretations)")
    add("")


# Slip classes that the state of the source can explain.
SOURCE_CLASSES = ("notation", "transcription")


@dataclass(frozen=True)
class Section:
    """One section of the report's details: its anchor, its title and its markdown."""

    anchor: str
    title: str
    text: str


@dataclass(frozen=True)
class Report:
    """The report in two parts: the main body a reader reads from the top (bottom line, what stands and what
    falls, root causes, the run), and the details it links into, section by section."""

    main: str
    details: tuple[Section, ...]

    def whole(self) -> str:
        """Main body and details as one document (every link local)."""
        return "\n".join([self.main.rstrip("\n"), *(d.text.rstrip("\n") for d in self.details)]) + "\n"

    def main_file(self, details_name: str) -> str:
        """report.md: the main body, its links into the details pointing at ``details_name``."""
        return _cross_link(self.main, details_name)

    def details_file(self, main_name: str, title: str) -> str:
        """report-details.md: the details, with a title, their links into the main body pointing at ``main_name``."""
        text = "\n".join([f"# {title}", "", *(d.text.rstrip("\n") + "\n" for d in self.details)])
        return _cross_link(text, main_name)


_ANCHOR = re.compile(r'^<a id="([^"]+)"></a>$', re.M)
_LOCAL_LINK = re.compile(r"\]\(#([^)\s]+)\)")


def _cross_link(text: str, other: str) -> str:
    """``text`` with each link to an anchor it does not hold pointed at the file ``other``."""
    here = set(_ANCHOR.findall(text))
    return _LOCAL_LINK.sub(lambda m: m.group(0) if m.group(1) in here else f"]({other}#{m.group(1)})", text)


def render(run: RunResult, figures: dict | None = None) -> str:
    """The whole report as one document; ``figures`` maps claim ids to image paths relative to report.md, or to
    lists of (path, caption)."""
    return render_parts(run, figures).whole()


def render_parts(run: RunResult, figures: dict | None = None) -> Report:
    """The report's main body and its detail sections (:class:`Report`)."""
    lines: list[str] = []
    add = lines.append
    pack = pack_of(run)
    noun = pack.noun
    spell = lambda text: symbols.spell(text, pack.symbols)  # noqa: E731
    add(f"# moecl-verify report: *{pack.title}*")
    add("")
    counts = run.counts()
    summary = ", ".join(f"{n} {v.replace('_', ' ')}" for v, n in counts.items() if n)
    add(f"{len(run.results)} checks ({summary}) over {len(run.claims)} claims; {len(run.slips)} slips. "
        f"Budget `{run.meta.get('budget')}`, seed {run.meta.get('seed')}.")
    add("")
    for line in bottom_line.markdown(run, figures):
        add(line)
    _headline(add, run)
    _slip_overview(add, run)
    for line in requests.section(run):
        add(line)
    _run_section(add, run)
    by_id = {c["id"]: c for c in run.claims}
    ordered = pack.in_order(by_id)
    sections = [("claims", f"Claims, in the {noun}'s order", [c for c in ordered if not pack.is_beyond(c)])]
    beyond = [c for c in ordered if pack.is_beyond(c)]
    details = []
    for anchor_id, title, claim_ids in sections:
        if claim_ids:
            details.append(Section(anchor_id, title, spell(_claims_text(run, anchor_id, title, claim_ids, figures))))
    if beyond:
        title = pack.beyond_title
        intro = (f"Experiments on questions the {noun} leaves open. They are not statements of the {noun}: each "
                 "states its hypothesis before it is tested, as a criterion with a direction, and is decided under "
                 "the run's error control, with the effect size reported either way.")
        details.append(Section(section_anchor(title), title,
                               spell(_claims_text(run, section_anchor(title), title, beyond, figures, intro))))
    for anchor_id, title, writer in ((OTHER_ANCHOR, "Other slips", _other_section),
                                     ("slip-audit", "Slip audit", _slips_section),
                                     ("verdicts-by-kind-of-evidence", "Verdicts, by kind of evidence", _kinds_section),
                                     ("scaling-fits", "Scaling fits", _scaling_section),
                                     ("derived-bounds", "Derived bounds and where they decide", _derived_section),
                                     ("interpretations", "Interpretations", _interpretations_section)):
        part: list[str] = []
        writer(part.append, run)
        if part:
            details.append(Section(anchor_id, title, spell("\n".join(part))))
    links = ", ".join(f"[{d.title.lower() if i else d.title}](#{d.anchor})" for i, d in enumerate(details))
    add(f"Details: {links}.")
    add("")
    return Report(spell("\n".join(lines)), tuple(details))


def _claims_text(run, anchor_id: str, title: str, claim_ids, figures, intro: str = "") -> str:
    lines: list[str] = [f'<a id="{anchor_id}"></a>', "", f"## {title}", ""]
    if intro:
        lines += [intro, ""]
    by_id = {c["id"]: c for c in run.claims}
    pack = pack_of(run)
    for claim_id in claim_ids:
        claim = by_id[claim_id]
        _claim_section(lines.append, claim, [r for r in run.results if r.id == claim_id],
                       _figure_list(figures, claim_id, claim["kind"], pack.swept))
    return "\n".join(lines)


def _kinds_section(add, run: RunResult) -> None:
    add('<a id="verdicts-by-kind-of-evidence"></a>')
    add("")
    add("## Verdicts, by kind of evidence")
    add("")
    add(f"One table per kind of evidence, so that every column means one thing; rows in the {pack_of(run).noun}'s "
        "order. Every entry except the exact ones faced the run's Holm threshold (`false-fail rate`); `p` is its "
        "p-value against the claim.")
    add("")
    _evidence_tables(add, run)


def _interpretations_section(add, run: RunResult) -> None:
    add('<a id="interpretations"></a>')
    add("")
    add("## Interpretations")
    add("")
    add(f"The reading chosen for every point the {pack_of(run).noun} leaves ambiguous or garbled.")
    add("")
    add("| id | where | the question | reading chosen | option |")
    add("|---|---|---|---|---|")
    for it in run.interpretations:
        add(f"| {it.id} | {_cell(it.location)} | {_cell(it.issue)} | {_cell(it.choice)} | {it.option or ''} |")
    add("")


def entry_label(res) -> str:
    """What distinguishes an entry within its claim: form, feature model (when one applies), part, pool."""
    bits = [f"{res.form} form"]
    if res.key.features:
        bits.append(f"{res.key.features} features")
    if res.key.label:
        bits.append(res.key.label)
    return ", ".join(bits)


def _claim_section(add, claim: dict, results, figures: list[tuple[str, str]]) -> None:
    add(f'<a id="{anchor(claim["id"])}"></a>')
    add("")
    add(f"## `{claim['id']}`: {claim['summary']}")
    add("")
    add(f"Source: {claim['source']}. Kind: {claim['kind']}.")
    add("")
    # An experiment beyond the document states a hypothesis of its own, not a statement of the document.
    add("The experiment's hypothesis:" if claim["kind"] == "experiment" else "As stated:")
    add("")
    add(math_text.display(claim["statement"]))
    add("")
    add("Preconditions: " + "; ".join(claim["preconditions"]).rstrip(".") + ".")
    add("")
    if claim.get("notes"):
        add(f"> {plain(claim['notes'])}")
        add("")
    shown = set()
    for res in results:
        if (res.form, res.formula) in shown or not res.formula:
            continue
        shown.add((res.form, res.formula))
        add(f"- **{res.form}** form ({res.source}):")
        add("")
        add(f"  {math_text.display(res.formula)}")
        add("")
        if res.difference:
            add(f"  {res.form} − derived = {math_text.inline(res.difference)}")
            add("")
    for number, (path, caption) in enumerate(figures, 1):
        # The caption is said once, below the figure; the alt text only names the figure (a screen reader
        # would otherwise read the caption twice).
        suffix = f" {number}" if len(figures) > 1 else ""
        add(f"![figure{suffix} of {claim['id']}]({path})")
        add("")
        add(f"*Figure: {caption.rstrip().rstrip('.')}.*")
        add("")
    for res in results:
        add(f"### `{res.id}`: {entry_label(res)}: **{res.verdict}**")
        add("")
        add(plain(res.evidence))
        add("")
        if res.horizons:
            hname = next(iter(res.horizons[0]))  # the case column: t, T or a labelled case
            add(f"| {hname} | formula | Monte Carlo ± s.e. | z | p | min detectable |")
            add("|---|---|---|---|---|---|")
            for h in res.horizons:
                add(
                    f"| {h[hname]} | {num(h['expected'])} | {num(h['observed'])} ± {num(h['stderr'], 2)} | "
                    f"{num(h['z'], 3)} | {pval(h['p_value'])} | {num(h['min_detectable'], 3)} |"
                )
            add("")
        scalars = {k: v for k, v in res.config.items() if not _is_table(v)}
        cfg = ", ".join(f"{k}={_value(v)}" for k, v in scalars.items())
        add(f"Configuration: {_cell(cfg)}.")
        add("")
        for key, rows in res.config.items():
            if _is_table(rows):
                add(f"{key}:")
                add("")
                add("| " + " | ".join(rows[0]) + " |")
                add("|" + "---|" * len(rows[0]))
                for row in rows:
                    add("| " + " | ".join(_cell(_value(v)) for v in row.values()) + " |")
                add("")


def _value(v) -> str:
    """A configuration value as a reader reads it: a mean with its standard error as "m ± se (n = k)", numbers
    to four digits, lists and records element by element."""
    if isinstance(v, float):
        return num(v)
    if isinstance(v, dict):
        if "mean" in v and "stderr" in v:
            n = f" (n = {v['n']})" if v.get("n") is not None else ""
            return f"{num(v['mean'])} ± {num(v['stderr'], 2)}{n}"
        return "{" + ", ".join(f"{k}: {_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return str(v)


def _scaling_section(add, run: RunResult) -> None:
    """One row per scaling entry: the law, the fitted exponent with its interval, both ends' local exponents."""
    rows = [r for r in run.results if r.kind == "scaling" and r.config.get("exponent_interval")]
    if not rows:
        return
    x = pack_of(run).swept
    add('<a id="scaling-fits"></a>')
    add("")
    add("## Scaling fits")
    add("")
    add(f"Exponent of {x} fitted by least squares on log-log axes, with its 99% bootstrap interval (replicates "
        f"resampled within each {x}); local exponents over the three largest and the three smallest {x} show "
        "whether the sweep has reached the asymptotic regime (a bend toward the claim withdraws a refutation). Budgets "
        f"differ in replicates per {x} and, for some claims, in how far the sweep reaches: each row gives its own "
        f"{x} range.")
    add("")
    add(f"| claim | entry | law | claimed k | fitted k [99% interval] | local k (large → small {x}) | constant C | "
        f"{x} range | verdict |")
    add("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        cfg = r.config
        low, high = cfg["exponent_interval"]
        local = cfg.get("local_exponents")
        local_text = f"{local[0]:.2f} → {local[1]:.2f}" if local else "—"
        span = cfg.get(f"{x}_range")
        span_text = f"[{span[0]:.3g}, {span[1]:.3g}]" if span else "—"
        add(f"| `{r.id}` | {r.key.label or '—'} | {cfg.get('law', '—')} | {num(r.expected, 3)} | "
            f"{num(r.observed, 3)} [{num(low, 3)}, {num(high, 3)}] | {local_text} | {num(cfg.get('fitted_constant'), 3)} | "
            f"{span_text} | **{r.verdict}** |")
    add("")


def _is_table(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _derived_section(add, run: RunResult) -> None:
    """The bounds the pack derives once (``Pack.derived_bounds``): each with its statement, reading, assumptions and
    checked steps, then every statement it decides, with the relation, whether the applicability derivation checks,
    the verdict of the entry it made in this run, and the derivation.  Nothing when the pack declares none or
    none of its bounds decides a claim of the run."""
    found = derived_uses(run)
    if not found:
        return
    claims = {c["id"] for c in run.claims}
    add('<a id="derived-bounds"></a>')
    add("")
    add("## Derived bounds and where they decide")
    add("")
    add(f"Bounds the tool derives once from the {pack_of(run).noun}'s own definitions, every step an exact check, "
        "and the statements each one decides. A use says how (implies, contradicts, does not apply) and why the "
        "bound applies there; its entry's verdict is the run's.")
    add("")
    for b, rows in found:
        add(f"### {b.id}")
        add("")
        add(f"- **Statement**: {plain(b.statement)}" + (f" ({plain(b.source)})" if b.source else ""))
        add(f"- **Reading**: {plain(b.reading)}")
        if b.assumptions:
            add(f"- **Assumptions**: {plain('; '.join(b.assumptions))}")
        add(f"- **Steps** ({'all checked' if b.checked else 'NOT all checked'}):")
        for text, ok in b.steps:
            add(f"  - {'✓' if ok else '✗'} {plain(text)}")
        add("")
        add("| claim | entry | relation | applicability checked | verdict in this run |")
        add("|---|---|---|---|---|")
        for u, verdict in rows:
            verdict = verdict.replace("_", " ")
            target = f"[`{u.claim_id}`](#{anchor(u.claim_id)})" if u.claim_id in claims else f"`{u.claim_id}`"
            add(f"| {target} | {_cell(u.part)} | {u.relation} | {'yes' if u.checked else 'no'} | {verdict} |")
        add("")
        for u in b.uses:
            add(f"- `{u.claim_id}`, {plain(u.part)}" + (f" (reading `{u.reading}`)" if u.reading else "") + ": "
                + plain(u.derivation() + (f" {u.conclusion}" if u.conclusion else "")))
        add("")


def _slips_section(add, run: RunResult) -> None:
    add('<a id="slip-audit"></a>')
    add("")
    add("## Slip audit")
    add("")
    if not run.slips:
        add("No slip was established by this run.")
        add("")
        return
    add(f"Each entry is a discrepancy between what the {pack_of(run).noun} states and what holds, with the evidence, in the order "
        "of consequence (the table [Root causes](#slips-by-consequence) groups them).")
    add("")
    present = {t.id for t in run.slips}
    for r in consequence.ranked_slips(run):
        s = r.slip
        add(f'<a id="{slip_anchor(s.id)}"></a>')
        add("")
        add(f"### {s.id} ({s.slip_class})")
        add("")
        add(f"- **Where**: {s.location}")
        add(f"- **Strength**: {plain(strength.words(s, run.results))}")
        if r.breaks or r.undercuts:
            add("- **Consequence**: " + "; ".join(
                [f"breaks {', '.join(i.title for i in r.breaks)}"] * bool(r.breaks)
                + [f"undercuts {', '.join(i.title for i in r.undercuts)}"] * bool(r.undercuts)))
        if s.causes:
            add("- **Follows from**: " + ", ".join(
                f"[`{c}`](#{slip_anchor(c)})" if c in present else f"`{c}` (not established by this run)"
                for c in s.causes))
        explains = [t.id for t in run.slips if s.id in t.causes]
        if explains:
            add("- **Explains**: " + ", ".join(f"[`{c}`](#{slip_anchor(c)})" for c in explains))
        add(f"- **Stated**: {plain(s.stated)}")
        add(f"- **Holds**: {plain(s.holds)}")
        add(f"- **Evidence**: {plain(s.evidence)}")
        if s.effect:
            add(f"- **Effect at the {pack_of(run).noun}'s configuration**: {plain(s.effect)}")
        if s.ablation:  # the causes' shares, each record in results.json (slips[].ablation)
            add(f"- **Measured by ablation**: {plain(ablation.explained(s.ablation))}")
        if pack_of(run).slip_caveat and s.slip_class in SOURCE_CLASSES:
            add(f"- **Source**: {pack_of(run).slip_caveat}")
        add("")


DETAILS_FILE = "report-details.md"


def write(run: RunResult, path: Path, figures: dict[str, str] | None = None) -> list[Path]:
    """report.md (the main body) at ``path`` and report-details.md beside it (the sections it links into)."""
    report = render_parts(run, figures)
    details = path.with_name(DETAILS_FILE)
    path.write_text(report.main_file(details.name), encoding="utf-8")
    details.write_text(report.details_file(path.name, f"moecl-verify report, details: *{pack_of(run).title}*"),
                       encoding="utf-8")
    asked = requests.write(run, path.with_name(requests.FILE), details.name)
    return [path, details] + ([asked] if asked else [])
