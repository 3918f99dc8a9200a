"""Figures of the experiments beyond the paper (``open.*``), drawn from their results.json artifacts.

Each ``open.*`` claim stores one artifact (:func:`packs.moe_cl.experiments.open_questions.curves_panels`): panels
of one quantity each (routing purity, an error) against the round, per regime and group of variants, with
the mean over replicates and its 99% band (mean +- 2.576 s.e.) for every variant, the chance level of the
routing on the purity panels, and vertical lines at the end of exploration and at the round where the
schedule changes. :func:`draw_open` draws one artifact into one PNG. A panel may also carry ``references``
(several dashed lines, as ``reference``) and ``spans`` (shaded ranges of rounds, ``x0``, ``x1``, ``label``):
:mod:`.c2_figures` draws its panels this way. Never simulates; deterministic (the Agg canvas and the default
style of :mod:`reports.panel_figures`, no metadata in the PNG).
"""

from __future__ import annotations

from pathlib import Path

from moecl_verify.reports import panel_figures as kit

REFERENCE_STYLE = {"color": "black", "linewidth": 1.0, "linestyle": "--"}
VLINE_STYLE = {"color": "#555555", "linewidth": 0.9, "linestyle": ":"}
SPAN_STYLE = {"color": "#999999", "alpha": 0.15, "linewidth": 0}
REFERENCE_DASHES = ("--", "-.")  # a second reference line is told apart by its dashes


def _references(panel: dict) -> list[dict]:
    return ([panel["reference"]] if panel.get("reference") else []) + list(panel.get("references", []))


def _labels(panel: dict) -> list[str]:
    """Every labelled thing of a panel, in legend order: the series, the references, the shaded spans."""
    return ([s["label"] for s in panel["series"]] + [r["label"] for r in _references(panel)]
            + [s["label"] for s in panel.get("spans", [])])


def _points(x: list, mean: list, lower: list, upper: list) -> tuple[list, list, list, list]:
    """The rounds where the mean and its band are defined (None marks a window without data)."""
    keep = [i for i, (m, lo, hi) in enumerate(zip(mean, lower, upper)) if m is not None and lo is not None
            and hi is not None]
    return [x[i] for i in keep], [mean[i] for i in keep], [lower[i] for i in keep], [upper[i] for i in keep]


def _draw_panel(ax, grid, panel: dict, xlabel: str) -> None:
    for span in panel.get("spans", []):
        ax.axvspan(span["x0"], span["x1"], label=span["label"], **SPAN_STYLE)
    for i, series in enumerate(panel["series"]):
        x, mean, lower, upper = _points(panel["x"], series["mean"], series["lower"], series["upper"])
        color = kit.COLORS[i % len(kit.COLORS)]
        ax.fill_between(x, lower, upper, color=color, alpha=0.18, linewidth=0)
        ax.plot(x, mean, color=color, linewidth=1.3, label=series["label"])
    for i, reference in enumerate(_references(panel)):
        x, y, _, _ = _points(panel["x"], reference["y"], reference["y"], reference["y"])
        ax.plot(x, y, label=reference["label"], **{**REFERENCE_STYLE,
                                                   "linestyle": REFERENCE_DASHES[i % len(REFERENCE_DASHES)]})
    for line in panel.get("vlines", []):
        ax.axvline(line["x"], **VLINE_STYLE)
        ax.annotate(line["label"], xy=(line["x"], 1.0), xycoords=("data", "axes fraction"), xytext=(2, -9),
                    textcoords="offset points", fontsize=7, color=VLINE_STYLE["color"])
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_ylabel(panel["ylabel"], fontsize=9)
    ax.grid(True, alpha=0.3)
    kit.legend_below(ax, grid, _labels(panel))


def build_open(claim_id: str, data: dict):
    """The figure of one ``open.*`` artifact, drawn but not saved (tests inspect it)."""
    panels = data["panels"]
    for panel in panels:
        count = len(_labels(panel))
        if count > kit.MAX_SERIES:
            raise ValueError(f"{claim_id}: panel {panel['title']!r} has {count} series, at most {kit.MAX_SERIES}")
    legend_labels = [_labels(p) for p in panels]
    title = (f"{claim_id}: mean over replicates with 99% band (± {kit.Z99} s.e.), task pool {data.get('pool', 0)}"
             f" (pool seed {data.get('pool_seed', '-')})")
    with kit.style():
        fig, axes, grid = kit.panel_grid(
            len(panels), titles=[kit.wrap(p["title"], 46) for p in panels], legend_labels=legend_labels,
            ncols_max=int(data.get("ncols", 3)), axes_w=3.8, axes_h=2.4, title=title)
        for ax, panel in zip(axes, panels):
            _draw_panel(ax, grid, panel, data.get("xlabel", "round t"))
    return fig


def draw_open(claim_id: str, data: dict, path: Path) -> Path:
    """Draw the artifact ``data`` of claim ``claim_id`` into the PNG ``path`` and return the path."""
    return kit.save(build_open(claim_id, data), Path(path))


CAPTION = ("{claim}: each variant's routing purity and errors against the round, mean over replicates with its 99% "
           "band (± 2.576 s.e.); dashed: the chance level of the routing on purity panels; dotted: the end of "
           "exploration and the round where the schedule changes; one quantity per panel")


# Panels in one figure: more make a figure a reviewer cannot paste (two regimes of six quantities were 2,700
# pixels tall).
MAX_PANELS = 6


def parts(data: dict) -> list[dict]:
    """The artifact cut into figures of at most :data:`MAX_PANELS` panels, in order (the panels come grouped by
    regime, so each part holds whole regimes where they fit)."""
    panels = data["panels"]
    if len(panels) <= MAX_PANELS:
        return [data]
    return [{**data, "panels": panels[i:i + MAX_PANELS]} for i in range(0, len(panels), MAX_PANELS)]


def specs(run) -> list[kit.FigureSpec]:
    """One figure per ``open.*`` artifact (``open_<question>``), listed under its claim; an artifact of more
    than :data:`MAX_PANELS` panels gives one figure per part (``..._curves_1.png``, ``..._curves_2.png``)."""
    out = []
    for name, data in sorted(run.artifacts.items()):
        if not (name.startswith("open_") and isinstance(data, dict) and data.get("claim")):
            continue
        claim_id = data["claim"]
        pieces = parts(data)
        for k, piece in enumerate(pieces, 1):
            file = f"fig_{name}_curves.png" if len(pieces) == 1 else f"fig_{name}_curves_{k}.png"
            caption = CAPTION.format(claim=claim_id) + (f" (part {k} of {len(pieces)})" if len(pieces) > 1 else "")
            out.append(kit.FigureSpec((claim_id,), file, caption,
                                      lambda claim_id=claim_id, piece=piece: build_open(claim_id, piece)))
    return out
