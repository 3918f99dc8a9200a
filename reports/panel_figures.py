"""The drawing kit shared by the figure modules.

A grid of panels laid out by hand with the legends under each panel (outside
the data), plain tick labels on log axes, a bounded number of series per
panel, and deterministic PNGs.  Also :class:`FigureSpec`, what every figure
module hands to :mod:`reports.figures`: the file, the claims it illustrates,
its caption, and a function that builds the Figure without saving it (tests
inspect the matplotlib objects through it).

Why by hand: matplotlib's constrained layout measures every tick label again
and doubles the cost of a figure, and a report draws some fifty of them;
margins computed from the text that goes into them are fast and equally
deterministic.  Why plain log tick labels: mathtext labels such as
``$10^{-2}$`` are parsed anew for every figure and were the largest single
cost of drawing one.

Determinism: the Agg canvas is used explicitly (no pyplot, no global
backend), matplotlib's default style is applied regardless of the user's
matplotlibrc (callers wrap their drawing in :func:`style`), and the PNG
carries no ``Software`` metadata.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

Z99 = 2.576  # two-sided 99% normal quantile: every band and error bar in the report is +- Z99 s.e.
DPI = 100
FONT = 8  # points: tick labels and legends
MAX_SERIES = 6  # labelled series per panel, reference lines included
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
MARKERS = ("o", "s", "^", "D", "v", "P")
REFERENCE = {"color": "black", "linewidth": 1.0, "linestyle": "-", "zorder": 1}
# Rough text metrics at FONT points, in inches: enough to reserve room for labels without measuring them.
CHAR_W = 0.068
LINE_H = 0.19


@dataclass(frozen=True)
class FigureSpec:
    """One figure file: the claims whose sections show it, its caption, and how to draw it.

    ``first_entry`` is the index in ``run.results`` of the first entry drawn (-1 for the reproduced paper
    figures), so a claim's figures can be listed in the order its entries come.
    """

    claims: tuple[str, ...]
    file: str
    caption: str
    build: Callable[[], object]  # -> matplotlib Figure, drawn but not saved
    first_entry: int = -1


@dataclass(frozen=True)
class Grid:
    """Geometry of a figure of equal panels, in inches."""

    n: int
    ncols: int
    axes_w: float = 3.6
    axes_h: float = 2.5
    left: float = 0.8  # y tick labels and y label
    right: float = 0.25
    top: float = 0.6  # the figure title
    title_h: float = 0.3  # each panel's title
    below: float = 0.5  # x tick labels and x label, before the legend
    legend_h: float = 0.4
    wspace: float = 0.45

    @property
    def nrows(self) -> int:
        return math.ceil(self.n / self.ncols)

    @property
    def cell_h(self) -> float:
        return self.title_h + self.axes_h + self.below + self.legend_h

    @property
    def size(self) -> tuple[float, float]:
        width = self.left + self.ncols * self.axes_w + (self.ncols - 1) * (self.wspace + self.left) + self.right
        return width, self.top + self.nrows * self.cell_h + 0.1


def style():
    """Context manager: matplotlib's default style, whatever the user's matplotlibrc says."""
    import matplotlib.style

    return matplotlib.style.context("default")


def wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width=width, break_long_words=False)) or text


def legend_rows(labels: list[str], ncol: int) -> int:
    return math.ceil(len(labels) / max(1, ncol))


def legend_columns(labels: list[str], axes_w: float) -> int:
    """Two columns when the labels fit side by side under a panel, else one."""
    longest = max((len(s) for s in labels), default=0)
    return 2 if len(labels) > 1 and 2 * (longest * CHAR_W + 0.45) <= axes_w + 0.6 else 1


def panel_grid(n: int, *, titles: list[str], legend_labels: list[list[str]], ncols_max: int = 3,
               axes_w: float = 3.6, axes_h: float = 2.5, left: float = 0.8, right: float = 0.25, title: str = ""):
    """A figure with ``n`` panels; room is reserved above each panel for its (wrapped) title and below it for
    the x labels and a legend of the given labels.  Returns (figure, axes list, grid)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    ncols = min(ncols_max, max(1, n))
    title_lines = max((t.count("\n") + 1 for t in titles if t), default=0)
    rows = max((legend_rows(lab, legend_columns(lab, axes_w)) for lab in legend_labels), default=0)
    grid = Grid(n=n, ncols=ncols, axes_w=axes_w, axes_h=axes_h, left=left, right=right,
                top=0.12 + LINE_H * 1.1 * (title.count("\n") + 1),
                title_h=0.12 + 0.17 * title_lines, legend_h=0.1 + LINE_H * rows)
    width, height = grid.size
    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    axes = []
    for i in range(n):
        row, col = divmod(i, ncols)
        x0 = grid.left + col * (grid.axes_w + grid.wspace + grid.left)
        y_top = grid.top + row * grid.cell_h + grid.title_h
        y0 = height - y_top - grid.axes_h
        ax = fig.add_axes((x0 / width, y0 / height, grid.axes_w / width, grid.axes_h / height))
        ax.tick_params(labelsize=FONT)
        # About five ticks a panel: each tick is a handful of artists, and they dominate the drawing time.
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))
        ax.yaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
        if i < len(titles) and titles[i]:
            # An explicit y keeps matplotlib from measuring every child of the axes to place the title.
            ax.set_title(titles[i], fontsize=9, y=1.0, pad=4)
        # Fixed label positions likewise spare it measuring every tick label to place the axis labels.
        ax.xaxis.set_label_coords(0.5, -0.3 / grid.axes_h)
        ax.yaxis.set_label_coords(-(grid.left - 0.2) / grid.axes_w, 0.5)
        axes.append(ax)
    if title:
        fig.suptitle(title, fontsize=10, y=1 - 0.12 / height, va="top")
    return fig, axes, grid


def legend_below(ax, grid: Grid, order: list[str] | None = None) -> None:
    """The panel's legend under its x label, in the room :func:`panel_grid` reserved (never over the data).
    ``order``: the labels in the order to list them (matplotlib lists lines before error bars)."""
    from matplotlib.container import ErrorbarContainer

    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    if order:
        rank = {label: i for i, label in enumerate(order)}
        pairs = sorted(zip(handles, labels), key=lambda p: rank.get(p[1], len(rank)))
        handles, labels = [p[0] for p in pairs], [p[1] for p in pairs]
    # An error bar's own legend handle redraws bars and caps; its data line (marker and line) says the same
    # next to a caption that describes the bars, at a fraction of the cost.
    handles = [h.lines[0] if isinstance(h, ErrorbarContainer) and h.lines[0] is not None else h for h in handles]
    ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -grid.below / grid.axes_h),
              ncol=legend_columns(labels, grid.axes_w), fontsize=FONT, frameon=False, borderaxespad=0,
              handlelength=2.2, columnspacing=1.2)


def log_axis(ax, which: str = "x", ticks: list[float] | None = None) -> None:
    """Log scale with plain decimal tick labels (see the module docstring for why not mathtext) at 1, 2 and 5
    times powers of ten (powers of ten only over more than two decades), or at ``ticks`` (the horizons or
    swept values drawn) on the x axis when there are few.
    No minor ticks: they cost more to draw than the rest of a panel and carry no label."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator

    for name in which:
        axis = ax.xaxis if name == "x" else ax.yaxis
        (ax.set_xscale if name == "x" else ax.set_yscale)("log")
        distinct = sorted(set(ticks or []))
        if name == "x" and 1 < len(distinct) <= 8:
            axis.set_major_locator(FixedLocator(distinct))
        else:
            # Call after plotting: 1-2-5 ticks over at most two decades of data, powers of ten beyond.
            lo, hi = ax.dataLim.intervalx if name == "x" else ax.dataLim.intervaly
            narrow = 0 < lo < hi and hi / lo <= 100
            axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if narrow else (1.0,), numticks=7))
        axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        axis.set_minor_locator(NullLocator())


def spread(values: list[float]) -> bool:
    """Whether positive values span a decade or so, so a log axis reads better than a linear one."""
    positive = [v for v in values if v > 0]
    return len(positive) == len(values) and len(values) > 1 and max(positive) / min(positive) >= 8


def save(fig, path: Path) -> Path:
    fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    return path


def file_name(claim_id: str, suffix: str = "") -> str:
    return f"fig_{claim_id.replace('.', '_')}{'_' + suffix if suffix else ''}.png"


def run_subtitle(run) -> str:
    return f"budget {run.meta.get('budget')}, seed {run.meta.get('seed')}"


# --- grouping entries into panels and series -------------------------------------------------------------

def split_part(res) -> tuple[str, str]:
    """An entry's panel and series names: its key's part names the panel; the fields that name a replicate
    of one configuration (its pool, its hidden constant) name the series, e.g. ("own configuration, M = 10",
    "pool 0")."""
    key = res.key
    series = [f"pool {key.pool}"] if key.pool is not None else []
    if key.constant is not None:
        series.append(f"c = {key.constant:g}")
    return key.part, ", ".join(series)


def numeric(res) -> bool:
    """Whether an entry carries a measured number (its own, or one of its horizons')."""
    return res.observed is not None or any(h.get("observed") is not None for h in (res.horizons or []))


def features(res) -> str:
    return res.key.features or ""


def chunk(items: list, sizes: list[int], limit: int) -> list[list]:
    """Consecutive runs of ``items`` whose ``sizes`` add up to at most ``limit`` (an item larger than the limit
    gets a run of its own)."""
    runs: list[list] = []
    total = limit + 1
    for item, size in zip(items, sizes):
        if total + size > limit:
            runs.append([])
            total = 0
        runs[-1].append(item)
        total += size
    return runs


@dataclass(frozen=True)
class Labelled:
    """An entry with the panel it goes to and its series label there."""

    res: object
    panel: str
    series: str


def label_entries(entries: list, merge_singletons: bool = False) -> list[Labelled]:
    """Panel and series labels for a claim's entries: entries that differ only by pool or hidden constant
    share a panel (named by the rest of their ``part`` and their feature model); within a panel the series is
    named by pool / constant, then by form where forms differ.

    ``merge_singletons``: for figures where every entry measures the same quantity (a paired difference, a
    margin), the part names a configuration, not a quantity; when every panel would then hold a single
    series, panels of one feature model are merged and the part names the series instead (e.g. the oracle
    and the learned router of one feature model side by side).  Not for scaling or probabilities, whose part
    names what is measured."""
    forms = {r.form for r in entries}
    feats = {features(r) for r in entries}

    def panel_name(rest: str, feat: str) -> str:
        if feat and (len(feats) > 1 or not rest):
            return f"{rest} · {feat} features" if rest else f"{feat} features"
        return rest

    out = []
    for r in entries:
        rest, series = split_part(r)
        if len(forms) > 1:
            series = f"{series}, {r.form} form" if series else f"{r.form} form"
        out.append(Labelled(r, panel_name(rest, features(r)), series))
    panels: dict[str, int] = {}
    for item in out:
        panels[item.panel] = panels.get(item.panel, 0) + 1
    if merge_singletons and len(panels) > 1 and all(n == 1 for n in panels.values()):
        merged = []
        for item in out:
            rest, series = split_part(item.res)
            name = ", ".join(s for s in (rest, series, item.series if len(forms) > 1 else "") if s)
            merged.append(Labelled(item.res, panel_name("", features(item.res)), name))
        if len({m.panel for m in merged}) < len(panels):
            out = merged
    return [Labelled(i.res, i.panel, i.series or "measured") for i in out]


def panels_of(labelled: list[Labelled], size: Callable[[Labelled], int], limit: int) -> list[tuple[str, list]]:
    """Group labelled entries by panel (first-seen order) and split any panel whose series would exceed
    ``limit``."""
    order: dict[str, list[Labelled]] = {}
    for item in labelled:
        order.setdefault(item.panel, []).append(item)
    out = []
    for name, items in order.items():
        runs = chunk(items, [size(i) for i in items], limit)
        for run in runs:
            # A panel split for room is named by what its part holds (e.g. its hidden constant).
            part = ", ".join(i.series for i in run) if len(runs) > 1 else ""
            out.append((", ".join(s for s in (name, part) if s), run))
    return out


# --- one panel of labelled estimates per case ------------------------------------------------------------


@dataclass(frozen=True)
class CaseRow:
    """One estimate drawn on a horizontal categorical panel."""

    row: str  # the category (y axis)
    series: str
    value: float
    low: float
    high: float
    expected: float | None = None


def case_rows_layout(rows: list[CaseRow]) -> tuple[list[str], list[str]]:
    """Categories (top to bottom) and series names, first-seen order."""
    cats = list(dict.fromkeys(r.row for r in rows))
    series = list(dict.fromkeys(r.series for r in rows))
    return cats, series


def draw_cases(ax, rows: list[CaseRow], *, reference: str | None, value_label: str,
               expected_label: str = "tested formula") -> None:
    """Estimates with their intervals as horizontal error bars, one marker style per series, categories on
    the y axis.  ``reference``: label of a zero line (criteria, paired differences); otherwise each row's
    ``expected`` (the formula's value, or what the claim requires) is marked with a black x."""
    cats, series = case_rows_layout(rows)
    step = 0.7 / max(1, len(series))
    for k, name in enumerate(series):
        mine = [r for r in rows if r.series == name]
        # Series k sits k steps below the first one within its category (legend order, top to bottom).
        ys = [len(cats) - 1 - cats.index(r.row) - (k - (len(series) - 1) / 2) * step for r in mine]
        xs = [r.value for r in mine]
        xerr = [[r.value - r.low for r in mine], [r.high - r.value for r in mine]]
        ax.errorbar(xs, ys, xerr=xerr, fmt=MARKERS[k % len(MARKERS)], color=COLORS[k % len(COLORS)],
                    capsize=3, markersize=5, linestyle="none", label=name)
    if reference is not None:
        ax.axvline(0.0, label=reference, **REFERENCE)
    else:
        marked = [r for r in rows if r.expected is not None]
        if marked:
            ys = [len(cats) - 1 - cats.index(r.row) - (series.index(r.series) - (len(series) - 1) / 2) * step
                  for r in marked]
            ax.plot([r.expected for r in marked], ys, "x", color="black", markersize=7, mew=1.5,
                    label=expected_label)
    ax.set_yticks(range(len(cats)), [wrap(c, 34) for c in reversed(cats)], fontsize=FONT)
    ax.set_ylim(-0.6, len(cats) - 0.4)
    ax.set_xlabel(value_label, fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)


def case_panel_size(rows: list[CaseRow]) -> tuple[float, float]:
    """(left margin, axes height) in inches for a categorical panel of these rows."""
    cats, _ = case_rows_layout(rows)
    longest = max((min(len(c), 34) for c in cats), default=4)
    lines = max((wrap(c, 34).count("\n") + 1 for c in cats), default=1)
    return 0.35 + CHAR_W * longest, max(1.3, 0.25 + len(cats) * max(0.32, 0.16 * lines + 0.12))
