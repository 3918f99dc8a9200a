"""report.md: a reader's view of a results file.  Reads results; computes nothing."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from moecl_verify.checks.model import VERDICTS, RunResult

VERDICT_WORDS = {
    "confirmed": "the Monte Carlo agrees with the formula, at a resolution that would have exposed an error",
    "refuted": "the Monte Carlo disagrees with the formula beyond the stated false-fail rate",
    "inconclusive": "no disagreement found, but the run was too small to exclude one",
    "not_checkable": "the statement cannot be checked as written (reason given)",
}


def num(x, digits: int = 4) -> str:
    if x is None:
        return "—"
    if x == 0:
        return "0"
    return f"{x:.{digits}g}"


def pval(p) -> str:
    if p is None:
        return "—"
    return "< 1e-300" if p == 0 else f"{p:.2g}"


def _features(res) -> str:
    part = res.config.get("part")
    features = res.config.get("features", "—")
    if part and features not in ("-", "—"):
        return f"{features}, {part}"
    return part if part else features


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


EVIDENCE_TABLES = {
    "mean": ("Means against formulas",
             "| claim | form | features / part | verdict | formula | Monte Carlo mean ± s.e. | p | false-fail rate | "
             "min detectable |",
             lambda r: f"{num(r.expected)} | {num(r.observed)} ± {num(r.stderr, 2)}"),
    "criterion": ("Criteria of qualitative claims (margin Δ > 0 in every case; the least favourable case shown)",
                  "| claim | form | features / part | verdict | criterion | least margin Δ ± s.e. | p | false-fail rate | "
                  "min detectable Δ |",
                  lambda r: f"{_cell(r.formula) or 'Δ > 0'} | {num(r.observed)} ± {num(r.stderr, 2)}"),
    "proportion": ("Probabilities (counts of an event; the smallest sigma0 shown)",
                   "| claim | form | features / part | verdict | claimed | probability ± s.e. | p | false-fail rate | "
                   "resolved to ± |",
                   lambda r: f"{_cell(r.config.get('null', num(r.expected)))} | {num(r.observed)} ± {num(r.stderr, 2)}"),
    "scaling": ("Scaling laws in sigma0 (fitted exponent with its bootstrap standard error)",
                "| claim | form | features / part | verdict | law | fitted exponent ± s.e. | p | false-fail rate | "
                "tolerance |",
                lambda r: f"{r.config.get('law', '—')} | {num(r.observed, 3)} ± {num(r.stderr, 2)}"),
}


def _evidence_tables(add, run: RunResult) -> None:
    by_type: dict[str, list] = {}
    for res in run.results:
        by_type.setdefault(evidence_type(res), []).append(res)
    for kind, (title, header, cells) in EVIDENCE_TABLES.items():
        rows = by_type.get(kind, [])
        if not rows:
            continue
        add(f"### {title}")
        add("")
        add(header)
        add("|" + "---|" * header.count(" | ") + "---|")
        for r in rows:
            add(f"| `{r.id}` | {r.form} | {_features(r)} | **{r.verdict}** | {cells(r)} | {pval(r.p_value)} | "
                f"{num(r.false_fail_rate, 2)} | {num(r.min_detectable, 3)} |")
        add("")
    exact = by_type.get("exact", [])
    if exact:
        add("### Exact entries (sympy, rational arithmetic, exhaustive search, or a stated reason; no sampling)")
        add("")
        add("| claim | form | part | verdict | statement checked |")
        add("|---|---|---|---|---|")
        for r in exact:
            add(f"| `{r.id}` | {r.form} | {_features(r)} | **{r.verdict}** | {_cell(r.formula) or '—'} |")
        add("")


def render(run: RunResult, figures: dict[str, str] | None = None) -> str:
    """The report; ``figures`` maps claim ids to image paths relative to report.md."""
    meta = run.meta
    lines: list[str] = []
    add = lines.append
    add("# moecl-verify report: *Theory on Mixture-of-Experts in Continual Learning*")
    add("")
    counts = run.counts()
    add("## Summary")
    add("")
    add("| verdict | entries |")
    add("|---|---|")
    for v in VERDICTS:
        add(f"| {v} | {counts[v]} |")
    add("")
    by_class = Counter(s.slip_class for s in run.slips)
    if by_class:
        add("Slips found, by class: " + "; ".join(f"{k}: {n}" for k, n in sorted(by_class.items())) + ".")
    else:
        add("No slips found in this run.")
    add("")
    versions = ", ".join(f"{k} {v}" for k, v in meta.get("versions", {}).items())
    add(
        f"Run: claims {', '.join(meta.get('claims', []))}; budget `{meta.get('budget')}` "
        f"({meta.get('replicates')} replicates per configuration for the closed-form checks; each entry's "
        f"configuration states its own); seed {meta.get('seed')}; "
        f"family-wise false-fail rate {meta.get('family_false_fail_rate')} for the Monte Carlo entries (Holm across "
        f"entries, Bonferroni across horizons or cases within an entry; symbolic entries are exact); power for "
        f"`min detectable` {meta.get('power')}; {versions}."
    )
    add("")
    add("Interpretations chosen for ambiguous points (details at the end):")
    add("")
    for it in run.interpretations:
        add(f"- **{it.id}**: {it.choice}")
    add("")
    add("## Verdicts")
    add("")
    add("One table per kind of evidence, so that every column means one thing. Every entry except the exact ones "
        "faced the run's Holm threshold (`false-fail rate`); `p` is its p-value against the claim.")
    add("")
    _evidence_tables(add, run)
    add("What the verdicts mean: " + "; ".join(f"**{k}**: {v}" for k, v in VERDICT_WORDS.items()) + ".")
    add("")
    _scaling_section(add, run)
    for claim in run.claims:
        _claim_section(add, claim, [r for r in run.results if r.id == claim["id"]], (figures or {}).get(claim["id"]))
    _slips_section(add, run)
    add("## Interpretations")
    add("")
    add("| id | where | the question | reading chosen | option |")
    add("|---|---|---|---|---|")
    for it in run.interpretations:
        add(f"| {it.id} | {it.location} | {it.issue} | {it.choice} | {it.option or '—'} |")
    add("")
    return "\n".join(lines)


def _claim_section(add, claim: dict, results, figure: str | None = None) -> None:
    add(f"## `{claim['id']}`: {claim['summary']}")
    add("")
    add(f"Source: {claim['source']}. Kind: {claim['kind']}.")
    add("")
    add("As stated:")
    add("")
    add(f"$$ {claim['statement']} $$")
    add("")
    add("Preconditions: " + "; ".join(claim["preconditions"]).rstrip(".") + ".")
    add("")
    if claim.get("notes"):
        add(f"> {claim['notes']}")
        add("")
    shown_forms = set()
    for res in results:
        if res.form in shown_forms:
            continue
        shown_forms.add(res.form)
        add(f"- **{res.form}** form ({res.source}):")
        add("")
        add(f"  $$ {res.formula} $$")
        add("")
        if res.difference:
            add(f"  {res.form} − derived $= {res.difference}$")
            add("")
    if figure:
        caption = ("measured quantity against sigma0 on log-log axes, with the fitted slope (solid) and the claimed "
                   "slope (dashed)" if claim["kind"] == "scaling" else
                   "each form's formula against the Monte Carlo mean with its 99% band")
        add(f"![{claim['id']}: {caption}]({figure})")
        add("")
    for res in results:
        add(f"### {res.form} form, {_features(res)} features: **{res.verdict}**")
        add("")
        add(res.evidence)
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
        cfg = ", ".join(f"{k}={v if not isinstance(v, float) else num(v)}" for k, v in scalars.items())
        add(f"Configuration: {cfg}.")
        add("")
        for key, rows in res.config.items():
            if _is_table(rows):
                add(f"{key}:")
                add("")
                add("| " + " | ".join(rows[0]) + " |")
                add("|" + "---|" * len(rows[0]))
                for row in rows:
                    add("| " + " | ".join(num(v) if isinstance(v, float) else str(v) for v in row.values()) + " |")
                add("")


def _scaling_section(add, run: RunResult) -> None:
    """One row per scaling entry: the law, the fitted exponent with its interval, both ends' local exponents."""
    rows = [r for r in run.results if r.kind == "scaling" and r.config.get("exponent_interval")]
    if not rows:
        return
    add("## Scaling fits")
    add("")
    add("Exponent of sigma0 fitted by least squares on log-log axes, with its 99% bootstrap interval (replicates "
        "resampled within each sigma0); local exponents over the three largest and the three smallest sigma0 show "
        "whether the sweep has reached the asymptotic regime (a bend toward the claim withdraws a refutation). Every "
        "budget sweeps the same sigma0 range; budgets differ in replicates per sigma0.")
    add("")
    add("| claim | entry | law | claimed k | fitted k [99% interval] | local k (large → small sigma0) | constant C | sigma0 range | verdict |")
    add("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        cfg = r.config
        low, high = cfg["exponent_interval"]
        local = cfg.get("local_exponents")
        local_text = f"{local[0]:.2f} → {local[1]:.2f}" if local else "—"
        span = cfg.get("sigma0_range")
        span_text = f"[{span[0]:.3g}, {span[1]:.3g}]" if span else "—"
        add(f"| `{r.id}` | {cfg.get('part', '—')} | {cfg.get('law', '—')} | {num(r.expected, 3)} | "
            f"{num(r.observed, 3)} [{num(low, 3)}, {num(high, 3)}] | {local_text} | {num(cfg.get('fitted_constant'), 3)} | "
            f"{span_text} | **{r.verdict}** |")
    add("")


def _is_table(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


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


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _slips_section(add, run: RunResult) -> None:
    add("## Slip audit")
    add("")
    if not run.slips:
        add("No slip was established by this run.")
        add("")
        return
    add("Each entry is a discrepancy between what the paper states and what holds, with the evidence. "
        "Overview, most consequential class first:")
    add("")
    add("| slip | class | where | what holds instead |")
    add("|---|---|---|---|")
    for s in sorted(run.slips, key=lambda s: (SEVERITY.index(s.slip_class) if s.slip_class in SEVERITY
                                              else len(SEVERITY), s.id)):
        holds = s.holds if len(s.holds) <= 160 else s.holds[:157].rstrip() + "..."
        add(f"| `{s.id}` | {s.slip_class} | {_cell(s.location)} | {_cell(holds)} |")
    add("")
    for s in run.slips:
        add(f"### {s.id} ({s.slip_class})")
        add("")
        add(f"- **Where**: {s.location}")
        add(f"- **Stated**: {s.stated}")
        add(f"- **Holds**: {s.holds}")
        add(f"- **Evidence**: {s.evidence}")
        add("")


def write(run: RunResult, path: Path, figures: dict[str, str] | None = None) -> Path:
    path.write_text(render(run, figures), encoding="utf-8")
    return path
