"""What stands and what falls: the paper's headline results, one line each.

Reads a RunResult and computes nothing new: each headline result gathers the
entries of the claims that measure it, and its verdict is a summary of their
verdicts under fixed rules (``summarize``):

* only the *statement* is summarized: entries in the ``stated`` form that are
  not a proof step (``part`` beginning "proof", or a ``.step`` claim).  A
  false proof step is a slip, but it does not make the statement false;
* ``falls``: some statement entry is refuted, under every reading the paper
  leaves open (entries without a reading count for every reading);
* ``depends on the reading``: refuted under one reading, not under another;
* ``stands``: every statement entry confirmed;
* ``partly confirmed``: some confirmed, none refuted, the rest inconclusive or
  not checkable;
* ``open``: nothing confirmed, nothing refuted;
* ``not checkable``: every statement entry is not checkable;
* ``not in this run``: no entry measures it.

The claims measuring the reviewer's claims C1-C6 follow an independent
reviewer's reading of the paper (its table of claims and the evidence it names
for each).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from moecl_verify.checks.model import RunResult
from moecl_verify.reports.order import in_paper_order, paper_key

FALLS, DEPENDS, STANDS, PARTLY, OPEN, NOT_CHECKABLE, ABSENT = (
    "falls", "depends on the reading", "stands", "partly confirmed", "open", "not checkable", "not in this run")
HEADLINE_VERDICTS = (FALLS, DEPENDS, STANDS, PARTLY, OPEN, NOT_CHECKABLE, ABSENT)
PLURAL = {FALLS: "fall", DEPENDS: "depend on the reading", STANDS: "stand", PARTLY: "partly confirmed", OPEN: "open",
          NOT_CHECKABLE: "not checkable", ABSENT: "not in this run"}


@dataclass(frozen=True)
class HeadlineItem:
    """A result the reader wants judged in one line, and the claims that measure it.

    ``claims`` are claim ids or prefixes (``thm1`` covers ``thm1.*``)."""

    key: str
    title: str
    statement: str
    claims: tuple[str, ...]
    group: str  # "paper" or "reviewer"


PAPER_ITEMS = (
    HeadlineItem("prop1", "Proposition 1", "after exploration (T1 rounds) the expert sets are fixed and experts stop "
                 "changing", ("prop1",), "paper"),
    HeadlineItem("prop2", "Proposition 2", "if the gate keeps training, gate-output gaps shrink to O(σ0^1.75) (the "
                 "specialization is lost)", ("prop2",), "paper"),
    HeadlineItem("prop3", "Proposition 3", "gate training terminates by T2 and then routes each task inside its set, "
                 "uniformly", ("prop3",), "paper"),
    HeadlineItem("prop4", "Proposition 4", "one expert's expected forgetting and generalization error, eq. (17)-(18)",
                 ("prop4",), "paper"),
    HeadlineItem("thm1", "Theorem 1", "MoE's forgetting and generalization error bounds, eq. (19)-(20), M ≥ N",
                 ("thm1",), "paper"),
    HeadlineItem("thm2", "Theorem 2", "the bounds with fewer experts than tasks, eq. (21)-(22), M < N",
                 ("thm2",), "paper"),
    HeadlineItem("fig2", "Figure 2", "termination drives errors to near zero; MoE beats one expert; M = 20 no "
                 "better than M = 10", ("fig2",), "paper"),
    HeadlineItem("fig3", "Figure 3", "the insights hold for deep networks on real data", ("fig3",), "paper"),
    HeadlineItem("fig4", "Figure 4", "a threshold Γ ≤ λ balances load within expert sets", ("fig4",), "paper"),
    HeadlineItem("fig5", "Figure 5", "errors are robust to the threshold Γ; balanced load lowers generalization error",
                 ("fig5",), "paper"),
)

LEMMA_CHAIN = HeadlineItem(
    "lemmas", "Lemmas 1-16, Corollary 1", "the proof chain behind Propositions 1-3 and Theorems 1-2",
    tuple(f"lemma{i}" for i in range(1, 17)) + ("cor1",), "paper")

REVIEWER_ITEMS = (
    # Routing correctness (Proposition 3 (b)) before the experts' stillness (Proposition 1 (b)).
    HeadlineItem("C1", "C1", "experts specialize into task sets and routing becomes correct after O(M/η) rounds",
                 ("prop3", "prop1"), "reviewer"),
    # Two parts: what continued training does to the errors (Figure 2's criterion) and to the routing itself
    # (c2: purity with against without termination, both regimes).  Proposition 2's rates (its own row) are not
    # used here: a gap shrinking more slowly than sigma0^1.75 still shrinks, so a wrong exponent does not
    # refute "destroys the specialization".
    HeadlineItem("C2", "C2", "continued gate training under the balancing loss destroys the specialization",
                 ("c2", "fig2.no_termination_higher"), "reviewer"),
    HeadlineItem("C3", "C3", "terminating gate updates gives correct routing with balanced load within each set",
                 ("prop3", "fig4.balance"), "reviewer"),
    HeadlineItem("C4", "C4", "MoE lowers forgetting and generalization error relative to one expert",
                 ("c4", "fig2.moe_beats_single"), "reviewer"),
    HeadlineItem("C5", "C5", "experts beyond what the tasks need do not help and delay convergence",
                 ("c5", "fig2.more_experts_no_gain"), "reviewer"),
    HeadlineItem("C6", "C6", "the insights carry to deep networks", ("fig3",), "reviewer"),
)


@dataclass(frozen=True)
class HeadlineRow:
    """One line of the headline table."""

    item: HeadlineItem
    verdict: str
    evidence: str
    claim_ids: tuple[str, ...]
    counts: tuple[tuple[str, int], ...]


def matches(claim_id: str, patterns) -> bool:
    return any(claim_id == p or claim_id.startswith(p + ".") for p in patterns)


def is_statement(res) -> bool:
    """An entry of the statement as printed, not of a proof step, a correction or a derivation."""
    part = str(res.config.get("part") or "").lower()
    return (res.form == "stated" and ".step" not in res.id
            and not part.startswith(("proof", "derived")) and "proof step" not in part)


def reading(res):
    return res.config.get("reading")


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


def _where(res) -> str:
    bits = [str(res.config.get("part") or "")]
    if res.config.get("features") not in (None, "-", "—"):
        bits.append(str(res.config["features"]))
    if res.config.get("pool") is not None and "pool" not in bits[0]:
        bits.append(f"pool {res.config['pool']}")
    return ", ".join(b for b in bits if b)


def least_margin(res) -> dict | None:
    """The case of a criterion entry with the smallest margin Delta, when it is not the decisive case (the
    case with the smallest z, which the entry's ``observed`` reports); None when they coincide."""
    name = "case" if any("case" in h for h in res.horizons or ()) else "horizon"
    cases = [h for h in res.horizons or () if isinstance(h.get("observed"), (int, float))]
    if not cases or res.observed is None:
        return None
    least = min(cases, key=lambda h: h["observed"])
    if least["observed"] >= res.observed:
        return None
    return {"case": least.get(name, least.get("t")), "observed": least["observed"], "stderr": least.get("stderr")}


def decisive_count(res) -> dict | None:
    """The counts behind a proportion entry's probability (successes, trials and the 99% Wilson interval of
    the row it reports); None when the entry does not carry them."""
    rows = res.config.get("probabilities")
    if not isinstance(rows, list) or res.observed is None:
        return None
    for row in rows:
        if isinstance(row, dict) and row.get("probability") == res.observed and "successes" in row:
            return row
    return None


def count_text(row: dict) -> str:
    """``k/n = p, 99% Wilson [lo, hi]``: a proportion as a reviewer reads it."""
    return (f"{row['successes']}/{row['trials']} = {_num(row['probability'])}, 99% Wilson interval "
            f"[{_num(row['low'])}, {_num(row['high'])}]")


def entry_evidence(res) -> str:
    """The decisive number of one entry, in its own units."""
    kind = res.evidence_type or "mean"
    where = _where(res)
    prefix = f"`{res.id}` ({where}): " if where else f"`{res.id}`: "
    if kind == "exact":
        text = " ".join((res.evidence or "").split())
        return prefix + (text if len(text) <= 170 else text[:167].rsplit(" ", 1)[0] + " ...")
    if kind == "criterion":
        text = f"decisive case (smallest z) Δ = {_num(res.observed)} ± {_num(res.stderr, 2)} (claimed Δ > 0)"
        least = least_margin(res)
        if least is not None:
            text += f"; least margin Δ = {_num(least['observed'])} ({least['case']})"
        return prefix + text
    if kind == "proportion":
        claimed = res.config.get("null") or f"P = {_num(res.expected)}"
        row = decisive_count(res)
        measured = count_text(row) if row else f"{_num(res.observed)} ± {_num(res.stderr, 2)}"
        return prefix + f"P(event) = {measured}; claimed: {claimed}"
    if kind == "scaling":
        cfg = res.config
        interval = cfg.get("exponent_interval")
        span = cfg.get("sigma0_range")
        text = f"fitted exponent {_num(res.observed)}"
        if interval:
            text += f" [{_num(interval[0])}, {_num(interval[1])}]"
        text += f" against {cfg.get('law', _num(res.expected))}"
        if span:
            text += f" over σ0 in [{span[0]:.3g}, {span[1]:.3g}]"
        return prefix + text
    return prefix + f"measured {_num(res.observed)} ± {_num(res.stderr, 2)} against the formula's {_num(res.expected)}"


def _strength(res) -> tuple:
    """Order refutations by how decisive they are: entries that hold under every reading first, then
    exact ones, then the smallest p-value."""
    exact = (res.evidence_type or "") == "exact"
    one_reading = reading(res) is not None or "reading" in str(res.config.get("part") or "")
    return (one_reading, 0 if exact else 1, res.p_value if res.p_value is not None else 1.0)


def decisive(entries, verdict: str, patterns: tuple[str, ...] = ()) -> str:
    """The line's evidence: counts and the entry that decides it.  Refutations are taken from the first of
    ``patterns`` (the item's claims, most pertinent first) that has one, else in the paper's order."""
    statement = [r for r in entries if is_statement(r)] or list(entries)
    n = len(statement)
    if verdict == ABSENT:
        return "no entry in this run"
    # The first claim (in the paper's order) with a refutation, then its most decisive entry.
    def pertinence(r) -> int:
        return next((i for i, p in enumerate(patterns) if matches(r.id, (p,))), len(patterns))

    refuted = sorted((r for r in statement if r.verdict == "refuted"),
                     key=lambda r: (pertinence(r), paper_key(r.id), _strength(r)))
    confirmed = [r for r in statement if r.verdict == "confirmed"]
    if verdict == FALLS:
        return f"{len(refuted)} of {n} entries refuted; " + entry_evidence(refuted[0])
    if verdict == DEPENDS:
        held = [r for r in statement if r.verdict != "refuted" and reading(r) is not None
                and reading(r) not in {reading(x) for x in refuted}]
        text = f"refuted read as \"{reading(refuted[0])}\": " + entry_evidence(refuted[0])
        if held:
            text += f"; read as \"{reading(held[0])}\": {held[0].verdict}"
        return text
    if verdict == STANDS:
        return f"all {n} entries confirmed; " + entry_evidence(confirmed[0])
    if verdict == PARTLY:
        rest = [r for r in statement if r.verdict != "confirmed"]
        return (f"{len(confirmed)} of {n} entries confirmed, {len(rest)} {rest[0].verdict.replace('_', ' ')}; "
                + entry_evidence(rest[0]))
    if verdict == NOT_CHECKABLE:
        return entry_evidence(statement[0])
    return f"{n} entries, none decided; " + entry_evidence(statement[0])


def _row(run: RunResult, item: HeadlineItem) -> HeadlineRow:
    entries = [r for r in run.results if matches(r.id, item.claims)]
    verdict = summarize(entries)
    ids = tuple(in_paper_order({r.id for r in entries}))
    counts = {}
    for r in entries:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    return HeadlineRow(item, verdict, decisive(entries, verdict, item.claims), ids, tuple(sorted(counts.items())))


def lemma_chain_row(run: RunResult) -> HeadlineRow:
    """The lemmas summarized in one line: how many fall, depend on a reading, stand."""
    per_lemma: dict[str, list[str]] = {}
    for lemma in LEMMA_CHAIN.claims:
        # a lemma's statement, not the separately registered steps of its proof (lemma11.step1, ...)
        entries = [r for r in run.results if matches(r.id, (lemma,)) and ".step" not in r.id]
        if entries:
            per_lemma.setdefault(summarize(entries), []).append(lemma)
    total = sum(len(v) for v in per_lemma.values())
    if not total:
        return HeadlineRow(LEMMA_CHAIN, ABSENT, "no entry in this run", (), ())
    parts = [f"{len(per_lemma[v])} {PLURAL[v] if len(per_lemma[v]) > 1 else v} ({', '.join(per_lemma[v])})"
             for v in HEADLINE_VERDICTS if per_lemma.get(v)]
    verdict = next(v for v in HEADLINE_VERDICTS if per_lemma.get(v))
    ids = tuple(in_paper_order({r.id for r in run.results if matches(r.id, LEMMA_CHAIN.claims) and ".step" not in r.id}))
    return HeadlineRow(LEMMA_CHAIN, verdict, f"of {total} lemmas: " + "; ".join(parts), ids, ())


def rows(run: RunResult) -> tuple[list[HeadlineRow], list[HeadlineRow]]:
    """(the paper's headline results with the lemma chain last, the reviewer's claims C1-C6)."""
    paper = [_row(run, item) for item in PAPER_ITEMS] + [lemma_chain_row(run)]
    reviewer = [_row(run, item) for item in REVIEWER_ITEMS]
    return paper, reviewer


# Experiments beyond the paper (``open.*``): a stated hypothesis, tested; the answer follows its entries.
ANSWERS = {STANDS: "yes: the hypothesis held in every case tested",
           FALLS: "no: the hypothesis failed in some cases",
           PARTLY: "in part: the hypothesis held in some cases, none contradicted it",
           OPEN: "not settled at this budget", NOT_CHECKABLE: "not checkable here", ABSENT: "not in this run",
           DEPENDS: "depends on the reading"}


@dataclass(frozen=True)
class OpenRow:
    """One question beyond the paper: the question, its hypothesis, the answer in one sentence, the evidence."""

    claim_id: str
    question: str
    hypothesis: str
    verdict: str
    answer: str
    evidence: str


def open_rows(run: RunResult) -> list[OpenRow]:
    out = []
    for claim in sorted((c for c in run.claims if c["id"].startswith("open.")), key=lambda c: paper_key(c["id"])):
        entries = [r for r in run.results if r.id == claim["id"]]
        verdict = summarize(entries)
        statement = [r for r in entries if is_statement(r)] or entries
        tally = ", ".join(f"{sum(r.verdict == v for r in statement)} {v.replace('_', ' ')}"
                          for v in ("confirmed", "refuted", "inconclusive", "not_checkable")
                          if any(r.verdict == v for r in statement))
        answer = ANSWERS[verdict] + (f" ({tally} of {len(statement)} cases)" if statement else "")
        out.append(OpenRow(claim["id"], claim.get("summary", ""), claim.get("statement", ""), verdict,
                           answer, decisive(entries, verdict)))
    return out


def items_touching(claim_id: str) -> list[HeadlineItem]:
    """The headline results whose measuring claims include ``claim_id``."""
    return [item for item in (*PAPER_ITEMS, LEMMA_CHAIN) if matches(claim_id, item.claims)]


def _table_rows(run: RunResult):
    paper, reviewer = rows(run)
    for row in paper + reviewer:
        yield (row.item.group, row.item.title, row.item.statement, row.verdict, row.evidence.replace("`", ""),
               " ".join(row.claim_ids))
    for row in open_rows(run):
        yield ("beyond the paper", row.question, row.hypothesis, row.answer, row.evidence.replace("`", ""),
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
    lines = [r"% What stands and what falls: Theory on Mixture-of-Experts in Continual Learning (moecl-verify)",
             r"\begin{tabular}{p{0.16\linewidth}p{0.30\linewidth}p{0.12\linewidth}p{0.34\linewidth}}",
             r"\toprule",
             r"Result & Claim & Verdict & Decisive evidence \\",
             r"\midrule"]
    for group, title, statement, verdict, evidence, _ids in _table_rows(run):
        lines.append(" & ".join(latex_escape(x) for x in (title, statement, verdict, evidence)) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)
