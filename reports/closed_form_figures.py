"""Closed forms against the horizon: each form's formula against the Monte Carlo mean.

For every claim with expected-value entries over several horizons whose
formula is not identically 0 (e.g. closed forms in the horizon), one PNG
``fig_<claim id>.png`` with one panel per feature model (and configuration):
the Monte Carlo mean with its 99% band (mean ± 2.576 s.e.) against the
horizon, and each tested form's formula (stated / corrected / derived) as a
line with markers.  Paired differences (formula 0) are drawn by
:mod:`reports.estimate_figures` instead.
"""

from __future__ import annotations

import functools

from moecl_verify.checks import kinds
from moecl_verify.checks.model import FORMS, RunResult
from moecl_verify.reports import panel_figures as kit

FORM_STYLE = {
    "stated": {"color": "#d62728", "marker": "s", "linestyle": "--"},
    "corrected": {"color": "#ff7f0e", "marker": "^", "linestyle": "-."},
    "derived": {"color": "#2ca02c", "marker": "o", "linestyle": "-"},
}
CAPTION = (
    "Closed form against the horizon: each tested form's formula (stated, corrected, derived: lines with "
    "markers, the verdict in the legend) and the Monte Carlo mean of the measured quantity with its 99% band "
    "(mean ± 2.576 s.e.), one panel per feature model."
)


def _hname(res) -> str:
    return "t" if "t" in res.horizons[0] else "T"


def accepts(res) -> bool:
    """An expected-value entry over at least two numeric horizons whose formula is not identically 0."""
    rows = res.horizons or []
    return (
        kinds.figure_of(res) != "margin"
        and len(rows) >= 2
        and all(("t" in h or "T" in h) and h.get("expected") is not None and h.get("observed") is not None
                for h in rows)
        and any(h["expected"] != 0 for h in rows)
    )


def _quantity_label(claim: dict | None) -> str:
    """The left-hand side of the statement as mathtext, if mathtext can draw it."""
    if not claim or "=" not in claim.get("statement", ""):
        return "value"
    lhs = claim["statement"].split("=", 1)[0].strip()
    try:
        from matplotlib.mathtext import MathTextParser

        MathTextParser("path").parse(f"${lhs}$")
    except Exception:  # noqa: BLE001 - any LaTeX mathtext cannot draw: fall back to words
        return "value"
    return f"${lhs}$"


def _panels(entries: list) -> list[tuple[str, list]]:
    labelled = kit.label_entries(entries)
    order: dict[str, list] = {}
    for item in labelled:
        order.setdefault(item.panel, []).append(item.res)
    return list(order.items())


def _monte_carlo(group: list) -> list[tuple[tuple, list[str]]]:
    """Distinct Monte Carlo series of a panel: forms of one feature model normally share the simulation."""
    series: list[tuple[tuple, list[str]]] = []
    for r in group:
        h = _hname(r)
        key = tuple((row[h], row["observed"], row.get("stderr") or 0.0) for row in r.horizons)
        for k, forms in series:
            if k == key:
                forms.append(r.form)
                break
        else:
            series.append((key, [r.form]))
    return series


def build(run: RunResult, claim_id: str):
    """The closed-form figure of ``claim_id`` (drawn, not saved)."""
    entries = [r for r in run.results if r.id == claim_id and accepts(r)]
    # The replicates the claim's entries record (one number when they agree), not a budget-wide figure.
    counts = sorted({r.config["replicates"] for r in entries if isinstance(r.config.get("replicates"), int)})
    replicates = f", {counts[0]} replicates" if len(counts) == 1 else ""
    claim = next((c for c in run.claims if c.get("id") == claim_id), None)
    quantity = _quantity_label(claim)
    panels = _panels(entries)
    plans = []
    for title, group in panels:
        mc = _monte_carlo(group)
        labels = [
            "Monte Carlo mean, 99% band" + (f" ({', '.join(forms)})" if len(mc) > 1 else "") for _, forms in mc
        ]
        forms = [r for form in FORMS for r in group if r.form == form]
        labels += [f"{r.form} formula ({r.verdict})" for r in forms]
        plans.append((title or "all entries", mc, forms, labels))
    with kit.style():
        fig, axes, grid = kit.panel_grid(
            len(plans), titles=[kit.wrap(p[0], 48) for p in plans], legend_labels=[p[3] for p in plans],
            ncols_max=2, axes_w=4.2, axes_h=3.0,
            title=f"{claim_id}: formula vs Monte Carlo against the horizon\n"
                  f"(budget {run.meta.get('budget')}{replicates}, seed {run.meta.get('seed')})",
        )
        from matplotlib.ticker import MaxNLocator

        for ax, (_, mc, forms, labels) in zip(axes, plans):
            for (key, _), label in zip(mc, labels):
                xs = [p[0] for p in key]
                ys = [p[1] for p in key]
                half = [kit.Z99 * p[2] for p in key]
                ax.fill_between(xs, [y - e for y, e in zip(ys, half)], [y + e for y, e in zip(ys, half)],
                                color="#1f77b4", alpha=0.25, linewidth=0)
                ax.errorbar(xs, ys, yerr=half, color="#1f77b4", marker=".", linestyle=":", capsize=3, label=label)
            for r in forms:
                h = _hname(r)
                ax.plot([row[h] for row in r.horizons], [row["expected"] for row in r.horizons],
                        label=f"{r.form} formula ({r.verdict})", markersize=5, **FORM_STYLE.get(r.form, {}))
            h = _hname(forms[0]) if forms else "t"
            ax.set_xlabel(f"horizon {h} (tasks)", fontsize=9)
            ax.set_ylabel(f"{quantity} (formula, Monte Carlo mean)", fontsize=9)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(True, alpha=0.3)
            kit.legend_below(ax, grid, labels)
    return fig


def claims(run: RunResult) -> list[str]:
    """Claim ids (run order) with at least one closed-form entry."""
    return list(dict.fromkeys(r.id for r in run.results if accepts(r)))


def specs(run: RunResult) -> list[kit.FigureSpec]:
    out = []
    for cid in claims(run):
        first = next(i for i, r in enumerate(run.results) if r.id == cid and accepts(r))
        out.append(kit.FigureSpec((cid,), kit.file_name(cid), CAPTION, functools.partial(build, run, cid), first))
    return out
