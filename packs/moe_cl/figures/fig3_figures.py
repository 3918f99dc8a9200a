"""Figure 3 reproduced, drawn from the ``fig3_curves`` artifact of results.json.

One row per task definition, four panels per row: forgetting F_t and generalization error G_t against the
round, with and without termination, one curve per M (M = 1, the single network, in every panel), the
mean over replicates with a 99% band (mean +- 2.576 s.e.).  A last row draws the epochs checks the
artifact carries (the mean curves of one configuration at the chosen and at twice the epochs per round),
and a line under the panels gives their final values and status.  When the run
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


def _checks(check) -> list:
    """The artifact's epochs checks as a list (one check, as older results carry it, or a list of them)."""
    if not check:
        return []
    return [check] if isinstance(check, dict) else list(check)


def check_line(check) -> str:
    """The epochs checks as one sentence each, joined (empty when the artifact carries none)."""
    lines = []
    for c in _checks(check):
        e1, e2 = c["epochs"]
        parts = []
        for short in ("F_T", "G_T"):
            a, b = c[short]
            change, se = c.get(f"{short} change"), c.get(f"{short} change stderr")
            tail = f" (change {change:+.3g}" + (f" ± {se:.2g})" if se is not None else ")") if change is not None else ""
            parts.append(f"{short} {a:.3g} at {e1} vs {b:.3g} at {e2} epochs{tail}")
        if c.get("within-round change") is not None:
            parts.insert(0, f"within rounds, epochs {e1 + 1}-{e2} change the routed expert's error by "
                            f"{c['within-round change']:.1%} ± {c['within-round change stderr']:.1%}")
        status = f": {c['status']}" if c.get("status") else ""
        lines.append(f"epochs check{status} ({c['definition']}, M = {c['M']}, with termination, {c['replicates']} "
                     f"replicate{'s' if c['replicates'] != 1 else ''}): " + "; ".join(parts))
    return "\n".join(lines)


def _draw_checks(axes, checks: list, rounds: list) -> None:
    """The epochs check's mean curves at both epochs, one panel per checked definition and metric."""
    cells = [(c, metric) for c in checks for metric in ("forgetting", "generalization")]
    for ax, (c, metric) in zip(axes, cells):
        for curve, epochs, style in zip(c["curves"][metric], c["epochs"], ("-", "--")):
            pts = [(x, y) for x, y in zip(rounds, curve) if y is not None]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=COLORS[4], linewidth=1.4,
                    label=f"{epochs} epochs per round")
        ax.set_title(f"epochs check: tasks {c['definition']}, {metric}\n(M = {c['M']}, with termination, "
                     f"{c['replicates']} replicates; {c.get('status', '')})", fontsize=9)
        ax.set_xlabel("round t", fontsize=8)
        ax.set_ylabel("$F_t$" if metric == "forgetting" else "$G_t$", fontsize=9)
        ax.tick_params(labelsize=8)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes[len(cells):]:
        ax.set_axis_off()


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
    checks = [c for c in _checks(data.get("epoch_check")) if c.get("curves")]
    n_rows = len(rows) + (1 if checks else 0)
    fig = _figure(17, 3.3 * n_rows + 1.6 + 0.15 * len(checks))
    axes = fig.subplots(n_rows, len(CELLS), squeeze=False)
    if checks:
        _draw_checks(list(axes[-1]), checks[: len(CELLS) // 2], data["rounds"])
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
    line = check_line(data.get("epoch_check"))
    bottom = 0.9 + 0.15 * line.count("\n")
    fig.subplots_adjust(left=0.04, right=0.99, top=1 - 1.0 / fig.get_figheight(), bottom=bottom / fig.get_figheight(),
                        hspace=0.55, wspace=0.25)
    if line:
        fig.text(0.5, 0.1 / fig.get_figheight(), line, ha="center", va="bottom", fontsize=8)
    return fig


def draw_fig3(data: dict, path: Path, subtitle: str) -> Path:
    """Draw Figure 3 from the ``fig3_curves`` artifact into ``path`` (PNG) and return ``path``."""
    import matplotlib.style

    path = Path(path)
    with matplotlib.style.context("default"):
        build_fig3(data, subtitle).savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    return path
