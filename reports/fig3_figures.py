"""Figure 3 reproduced, drawn from the ``fig3_curves`` artifact of results.json.

One row per task definition, four panels per row: forgetting F_t and generalization error G_t against the
round, with and without termination, one curve per M (M = 1, the single network, in every panel), the
mean over replicates with a 99% band (mean +- 2.576 s.e.).  A line under the panels gives the epochs
check the artifact carries (final errors at the chosen and at twice the epochs per round).  When the run
could not compute Figure 3 (the optional networks extra missing), the figure says why instead.

Deterministic: the Agg canvas is used explicitly (no pyplot, no global backend), matplotlib's default
style is applied regardless of the user's matplotlibrc, and the PNG carries no ``Software`` metadata.
Never simulates.
"""

from __future__ import annotations

import math
from pathlib import Path

Z99 = 2.576
DPI = 100
COLORS = {1: "#7f7f7f", 4: "#1f77b4", 7: "#d62728"}
CELLS = (("forgetting", True), ("forgetting", False), ("generalization", True), ("generalization", False))


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def _band(ax, xs, mean, se, color, label) -> None:
    """The mean as a line and mean +- Z99 s.e. as a shaded band, skipping rounds without a value."""
    pts = [(x, m, s) for x, m, s in zip(xs, mean, se) if m is not None]
    if not pts:
        return
    x = [p[0] for p in pts]
    band = [(p[0], p[1], p[2]) for p in pts if p[2] is not None and math.isfinite(p[2])]
    if band:
        ax.fill_between([b[0] for b in band], [b[1] - Z99 * b[2] for b in band], [b[1] + Z99 * b[2] for b in band],
                        color=color, alpha=0.2, linewidth=0)
    ax.plot(x, [p[1] for p in pts], color=color, label=label, linewidth=1.4)


def check_line(check: dict | None) -> str:
    """The epochs check as one sentence (empty when the artifact carries none)."""
    if not check:
        return ""
    e1, e2 = check["epochs"]
    parts = []
    for short in ("F_T", "G_T"):
        a, b = check[short]
        change, se = check.get(f"{short} change"), check.get(f"{short} change stderr")
        tail = f" (change {change:+.3g}" + (f" ± {se:.2g})" if se is not None else ")") if change is not None else ""
        parts.append(f"{short} {a:.3g} at {e1} vs {b:.3g} at {e2} epochs{tail}")
    return (f"epochs check ({check['definition']}, M = {check['M']}, with termination, {check['replicates']} "
            f"replicate{'s' if check['replicates'] != 1 else ''}): " + "; ".join(parts))


def build_fig3(data: dict, subtitle: str):
    """Figure 3 from the ``fig3_curves`` artifact as a matplotlib Figure (drawn, not saved), in matplotlib's
    default style whatever the user's matplotlibrc says."""
    import matplotlib.style

    with matplotlib.style.context("default"):
        return _build(data, subtitle)


def _build(data: dict, subtitle: str):
    if not data.get("available", True) or not data.get("definitions"):
        fig = _figure(8, 2.5)
        fig.text(0.5, 0.5, "Figure 3 not computed: " + data.get("reason", "no data in this run"), ha="center",
                 va="center", wrap=True, fontsize=10)
        fig.suptitle(f"Figure 3 reproduced\n{subtitle}", fontsize=11)
        return fig
    rows = data["definitions"]
    fig = _figure(17, 3.3 * len(rows) + 1.6)
    axes = fig.subplots(len(rows), len(CELLS), squeeze=False)
    for row, block in zip(axes, rows):
        for ax, (metric, termination) in zip(row, CELLS):
            for series in block["series"]:
                if series["termination"] != termination:
                    continue
                M = series["M"]
                _band(ax, data["rounds"], series[metric], series[metric + "_stderr"], COLORS.get(M, "k"),
                      "single network (M = 1)" if M == 1 else f"M = {M}")
            ax.set_title(f"tasks: {block['definition']}, {metric}\n({'with' if termination else 'without'} "
                         "termination)", fontsize=9)
            ax.set_xlabel("round t", fontsize=8)
            ax.set_ylabel("$F_t$" if metric == "forgetting" else "$G_t$", fontsize=9)
            ax.tick_params(labelsize=8)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
    head = (f"Figure 3 reproduced: mean with 99% band over {data.get('replicates', '?')} replicates, "
            f"{data.get('epochs', '?')} epochs per round; data: {data.get('data', '?')}\n{subtitle}")
    fig.suptitle(head, fontsize=11)
    fig.subplots_adjust(left=0.04, right=0.99, top=1 - 1.0 / fig.get_figheight(), bottom=0.9 / fig.get_figheight(),
                        hspace=0.55, wspace=0.25)
    line = check_line(data.get("epoch_check"))
    if line:
        fig.text(0.5, 0.15 / fig.get_figheight(), line, ha="center", va="bottom", fontsize=8)
    return fig


def draw_fig3(data: dict, path: Path, subtitle: str) -> Path:
    """Draw Figure 3 from the ``fig3_curves`` artifact into ``path`` (PNG) and return ``path``."""
    import matplotlib.style

    path = Path(path)
    with matplotlib.style.context("default"):
        build_fig3(data, subtitle).savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    return path
