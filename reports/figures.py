"""Figures drawn from results only: Monte Carlo against each form's formula.

For every claim whose entries carry a per-horizon table, one PNG
(``fig_<claim id with dots as underscores>.png``) with one panel per feature
model: the Monte Carlo mean with its 99% band (observed ± 2.576 s.e.) against
the horizon, and each form's formula (stated / corrected / derived) as a line
with markers.  Reads a RunResult; never simulates.

Deterministic: the Agg canvas is used explicitly (no pyplot, no global
backend), matplotlib's default style is applied regardless of the user's
matplotlibrc, and the PNG carries no ``Software`` metadata, so the same
results give byte-identical files on the same matplotlib.
"""

from __future__ import annotations

from pathlib import Path

from moecl_verify.checks.model import FORMS, RunResult

Z99 = 2.576
DPI = 100
FORM_STYLE = {
    "stated": {"color": "#d62728", "marker": "s", "linestyle": "--"},
    "corrected": {"color": "#ff7f0e", "marker": "^", "linestyle": "-."},
    "derived": {"color": "#2ca02c", "marker": "o", "linestyle": "-"},
}


def figure_name(claim_id: str) -> str:
    return f"fig_{claim_id.replace('.', '_')}.png"


def _hname(horizons: list[dict]) -> str:
    return "t" if "t" in horizons[0] else "T"


def plottable(run: RunResult) -> list[str]:
    """Claim ids (in run order) with at least one entry carrying a horizons table."""
    seen: list[str] = []
    for res in run.results:
        if res.horizons and res.id not in seen and all(
            ("t" in h or "T" in h) and h.get("expected") is not None and h.get("observed") is not None
            for h in res.horizons
        ):
            seen.append(res.id)
    return [cid for cid in seen if _curve_like(run, cid)]


def _curve_like(run: RunResult, claim_id: str) -> bool:
    """A formula-against-horizon picture makes sense only for closed forms over several horizons:
    not for paired differences (formula identically 0) nor for entries that one panel cannot tell
    apart (two entries with the same form and features)."""
    entries = [r for r in run.results if r.id == claim_id and r.horizons]
    keys = [(r.form, r.config.get("features", "-")) for r in entries]
    return (
        len(set(keys)) == len(keys)
        and all(len(r.horizons) >= 2 for r in entries)
        and any(h["expected"] != 0 for r in entries for h in r.horizons)
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


def _draw_claim(run: RunResult, claim_id: str, path: Path) -> Path:
    import matplotlib.style
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    entries = [r for r in run.results if r.id == claim_id and r.horizons]
    features = []
    for r in entries:
        f = r.config.get("features", "-")
        if f not in features:
            features.append(f)
    claim = next((c for c in run.claims if c.get("id") == claim_id), None)
    quantity = _quantity_label(claim)
    hname = _hname(entries[0].horizons)

    with matplotlib.style.context("default"):
        fig = Figure(figsize=(5.6 * len(features), 4.8), dpi=DPI, layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(1, len(features), squeeze=False)[0]
        for ax, feat in zip(axes, features):
            group = [r for r in entries if r.config.get("features", "-") == feat]
            # Monte Carlo series: forms of one feature model normally share the
            # simulation; draw each distinct one once.
            series: list[tuple[tuple, list[str]]] = []
            for r in group:
                key = tuple((h[hname], h["observed"], h.get("stderr") or 0.0) for h in r.horizons)
                for k, forms in series:
                    if k == key:
                        forms.append(r.form)
                        break
                else:
                    series.append((key, [r.form]))
            for k, forms in series:
                xs = [p[0] for p in k]
                ys = [p[1] for p in k]
                half = [Z99 * p[2] for p in k]
                label = "Monte Carlo mean, 99% band"
                if len(series) > 1:
                    label += f" ({', '.join(forms)})"
                ax.fill_between(
                    xs, [y - e for y, e in zip(ys, half)], [y + e for y, e in zip(ys, half)],
                    color="#1f77b4", alpha=0.25, linewidth=0,
                )
                ax.errorbar(xs, ys, yerr=half, color="#1f77b4", marker=".", linestyle=":", capsize=3, label=label)
            for form in FORMS:
                for r in group:
                    if r.form != form:
                        continue
                    style = FORM_STYLE.get(form, {})
                    ax.plot(
                        [h[hname] for h in r.horizons],
                        [h["expected"] for h in r.horizons],
                        label=f"{form} formula ({r.verdict})",
                        markersize=5,
                        **style,
                    )
            ax.set_title(f"{feat} features")
            ax.set_xlabel(f"horizon {hname} (tasks)")
            ax.set_ylabel(f"{quantity} (formula, Monte Carlo mean)")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
        budget = run.meta.get("budget")
        replicates = run.meta.get("replicates")
        fig.suptitle(
            f"{claim_id}: formula vs Monte Carlo against the horizon\n"
            f"(budget {budget}, {replicates} replicates, seed {run.meta.get('seed')})"
        )
        fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    return path


def relative_paths(run: RunResult) -> dict[str, str]:
    """{claim id: figure file name} for the figures :func:`write` draws (for report links)."""
    from moecl_verify.reports import artifact_figures, scaling_figures

    paths = {cid: figure_name(cid) for cid in plottable(run)}
    paths.update(artifact_figures.relative_paths(run))
    paths.update(scaling_figures.relative_paths(run))
    return paths


def write(run: RunResult, out_dir: Path) -> list[Path]:
    """Draw every plottable claim and every experiment artifact into ``out_dir``; returns the written paths."""
    from moecl_verify.reports import artifact_figures, scaling_figures

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    drawn = [_draw_claim(run, cid, out_dir / figure_name(cid)) for cid in plottable(run)]
    return drawn + artifact_figures.write(run, out_dir) + scaling_figures.write(run, out_dir)
