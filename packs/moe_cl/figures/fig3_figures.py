"""Figure 3 reproduced, drawn from the ``fig3_curves`` artifact of results.json.

The artifact is drawn as one figure per task definition (:func:`parts`, at most :data:`MAX_PANELS` panels
each, files ``fig_fig3_curves_1.png``, ``fig_fig3_curves_2.png``, ... in the artifact's order of
definitions).  A figure's first row holds four panels: forgetting F_t and generalization error G_t against
the round, with and without termination, one curve per M (M = 1, the single network, in every panel), the
mean over replicates with a 99% band (mean +- 2.576 s.e.).  When the artifact carries an epochs check on
that definition (the mean curves of one configuration at the chosen and at twice the epochs per round), a
second row draws it under the with-termination panels, and a line under the panels gives its final values
and status.  Epochs checks on a definition the artifact has no curves for get figures of their own.  When
the run could not compute Figure 3 (the optional networks extra missing), one figure
(``fig_fig3_curves.png``) says why instead.

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
METRICS = ("forgetting", "generalization")  # an epochs check's panels
# Panels in one figure: more make a figure a reviewer cannot paste into a review.  A task definition's four
# panels and its epochs check's two fit in one.
MAX_PANELS = 6
FILE = "fig_fig3_curves.png"


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


def _style_axes(ax, metric: str) -> None:
    ax.set_xlabel("round t", fontsize=8)
    ax.set_ylabel("$F_t$" if metric == "forgetting" else "$G_t$", fontsize=9)
    ax.tick_params(labelsize=8)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)


def _draw_check(ax, c: dict, metric: str, rounds: list) -> None:
    """One epochs check's mean curves of one metric at both epochs per round."""
    for curve, epochs, style in zip(c["curves"][metric], c["epochs"], ("-", "--")):
        pts = [(x, y) for x, y in zip(rounds, curve) if y is not None]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=COLORS[4], linewidth=1.4,
                label=f"{epochs} epochs per round")
    ax.set_title(f"epochs check: tasks {c['definition']}, {metric}\n(M = {c['M']}, with termination, "
                 f"{c['replicates']} replicates; {c.get('status', '')})", fontsize=9)
    _style_axes(ax, metric)


def _draw_block(axes, block: dict, rounds: list) -> None:
    """One task definition's four panels: F_t and G_t, with and without termination, a curve per M."""
    for ax, (metric, termination) in zip(axes, CELLS):
        for series in block["series"]:
            if series["termination"] != termination:
                continue
            M = series["M"]
            _band(ax, rounds, series[metric], series[metric + "_stderr"], COLORS.get(M, "k"),
                  "single network (M = 1)" if M == 1 else f"M = {M}")
        ax.set_title(f"tasks: {block['definition']}, {metric}\n({'with' if termination else 'without'} "
                     "termination)", fontsize=9)
        _style_axes(ax, metric)


def _not_computed(data: dict) -> bool:
    return not data.get("available", True) or not (data.get("definitions") or _checks(data.get("epoch_check")))


def parts(data: dict) -> list[dict]:
    """The artifact cut into figures of at most :data:`MAX_PANELS` panels, in order: one per task definition
    (its four panels and the epochs check on it, if any: six panels), then the epochs checks on definitions the
    artifact has no curves for, three to a figure.  Each part is the artifact with its own ``definitions`` and
    ``epoch_check`` (a list) and, when there are several, ``part`` = (its number, how many).  An artifact that
    says Figure 3 was not computed is one part, as it is."""
    if _not_computed(data):
        return [data]
    checks = _checks(data.get("epoch_check"))
    used: set[int] = set()
    pieces = []
    for block in data.get("definitions") or []:
        own = next((i for i, c in enumerate(checks) if i not in used and c.get("definition") == block["definition"]),
                   None)
        if own is not None:
            used.add(own)
        pieces.append({**data, "definitions": [block], "epoch_check": [] if own is None else [checks[own]]})
    rest = [c for i, c in enumerate(checks) if i not in used]
    per = MAX_PANELS // len(METRICS)
    pieces += [{**data, "definitions": [], "epoch_check": rest[i:i + per]} for i in range(0, len(rest), per)]
    if len(pieces) == 1:
        return pieces
    return [{**piece, "part": (k, len(pieces))} for k, piece in enumerate(pieces, 1)]


def file_name(part: dict) -> str:
    """``fig_fig3_curves.png`` for a single part, ``fig_fig3_curves_<k>.png`` for part k of several."""
    if not part.get("part"):
        return FILE
    return FILE.replace(".png", f"_{part['part'][0]}.png")


def _what(part: dict) -> str:
    """What one part draws, for its title and caption: the task definitions, or the epochs checks, it holds."""
    blocks = part.get("definitions") or []
    if blocks:
        text = "tasks: " + ", ".join(b["definition"] for b in blocks)
    else:
        text = "epochs checks on tasks: " + ", ".join(c["definition"] for c in _checks(part.get("epoch_check")))
    if part.get("part"):
        k, n = part["part"]
        text += f", part {k} of {n}"
    return text


def caption(part: dict) -> str:
    """The caption of one part's figure: what it draws, and how its epochs check is read."""
    if _not_computed(part):
        return ("The paper's Figure 3 was not computed in this run: "
                + part.get("reason", "the run holds no data for it").rstrip(".") + ".")
    blocks = part.get("definitions") or []
    checks = _checks(part.get("epoch_check"))
    drawn = [c for c in checks if c.get("curves")]
    text = f"The paper's Figure 3, reproduced from this run on small convolutional experts ({_what(part)})"
    if blocks:
        text += (": F_t and G_t against the round for M = 1, 4, 7, with termination and without (top row); mean "
                 "over replicates with its 99% band (± 2.576 s.e.).")
    else:
        text += "."
    if drawn:
        where = "The bottom row is" if blocks else "Each panel is"
        text += (f" {where} the epochs check: the mean curves of M = {drawn[0]['M']} with termination at the "
                 "chosen and at twice the epochs per round on the same replicates (the line under the panels gives "
                 "the final values).")
    if checks:
        text += (" An epochs check is settled when the extra epochs change the routed expert's error within a round "
                 "by at most 10% and neither final value is still changing.")
    elif blocks:
        text += " The run made no epochs check on this task definition."
    return text


def build_fig3(data: dict, subtitle: str):
    """One part of Figure 3 (see :func:`parts`) as a matplotlib Figure (drawn, not saved), in matplotlib's
    default style whatever the user's matplotlibrc says.  Refuses a part of more than :data:`MAX_PANELS`
    panels (a whole artifact of several task definitions is drawn part by part)."""
    import matplotlib.style

    with matplotlib.style.context("default"):
        return _build(data, subtitle)


def panel_count(part: dict) -> int:
    """The panels one part draws: four per task definition, two per epochs check with curves."""
    if _not_computed(part):
        return 0
    drawn = [c for c in _checks(part.get("epoch_check")) if c.get("curves")]
    return len(CELLS) * len(part.get("definitions") or []) + len(METRICS) * len(drawn)


def _build(data: dict, subtitle: str):
    if _not_computed(data):
        fig = _figure(8, 2.5)
        fig.text(0.5, 0.5, "Figure 3 not computed: " + data.get("reason", "no data in this run"), ha="center",
                 va="center", wrap=True, fontsize=10)
        fig.suptitle(f"Figure 3 reproduced\n{subtitle}", fontsize=11)
        return fig
    if panel_count(data) > MAX_PANELS:
        raise ValueError(f"Figure 3: {panel_count(data)} panels in one figure, at most {MAX_PANELS}; draw it by "
                         "parts (fig3_figures.parts)")
    blocks = data.get("definitions") or []
    checks = [c for c in _checks(data.get("epoch_check")) if c.get("curves")]
    cells = [(c, metric) for c in checks for metric in METRICS]
    if blocks and len(checks) == 1:
        # Under the with-termination panels of forgetting and generalization, the configuration it checks.
        positions = [(len(blocks), 0), (len(blocks), 2)]
    else:
        positions = [(len(blocks) + i // len(CELLS), i % len(CELLS)) for i in range(len(cells))]
    n_rows = max([len(blocks)] + [row + 1 for row, _ in positions])
    line = check_line(data.get("epoch_check"))
    fig = _figure(17, 3.3 * n_rows + 1.6 + 0.15 * line.count("\n"))
    if n_rows:  # else epochs checks without curves: their line alone
        grid = fig.add_gridspec(n_rows, len(CELLS))
        for row, block in enumerate(blocks):
            _draw_block([fig.add_subplot(grid[row, col]) for col in range(len(CELLS))], block, data["rounds"])
        for (c, metric), (row, col) in zip(cells, positions):
            _draw_check(fig.add_subplot(grid[row, col]), c, metric, data["rounds"])
    head = (f"Figure 3 reproduced ({_what(data)}): mean with 99% band over {data.get('replicates', '?')} "
            f"replicates, {data.get('epochs', '?')} epochs per round; data: {data.get('data', '?')}\n{subtitle}")
    fig.suptitle(head, fontsize=11)
    bottom = (0.9 if line else 0.6) + 0.15 * line.count("\n")
    fig.subplots_adjust(left=0.04, right=0.99, top=1 - 1.0 / fig.get_figheight(), bottom=bottom / fig.get_figheight(),
                        hspace=0.55, wspace=0.25)
    if line:
        fig.text(0.5, 0.1 / fig.get_figheight(), line, ha="center", va="bottom", fontsize=8)
    return fig


def draw_fig3(data: dict, path: Path, subtitle: str) -> Path:
    """Draw one part of Figure 3 (see :func:`parts`) into ``path`` (PNG) and return ``path``."""
    import matplotlib.style

    path = Path(path)
    with matplotlib.style.context("default"):
        build_fig3(data, subtitle).savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    return path
