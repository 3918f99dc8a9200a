"""Estimates per horizon or per case: paired differences, margins of bounds and criteria, plain estimates.

Every numeric entry that is neither a closed form over horizons
(:mod:`reports.closed_form_figures`), a scaling fit
(:mod:`reports.scaling_figures`) nor a table of proportions
(:mod:`reports.probability_figures`) is drawn here, one figure per claim and
kind, so no claim with a measured number goes without a picture:

* ``difference``: an expected-value identity whose formula is 0 (a paired
  difference of two sides measured on the same draws): the Monte Carlo mean with its
  99% band against a zero line;
* ``margin``: a criterion (a bound in expectation, or an ordering read
  off the document's figures): the estimated margin Δ with its 99% interval
  against a zero line (the criterion holds where Δ > 0);
* ``bound``: a bound whose horizons record the right-hand side and the
  measured value separately (keys ``rhs``, ``measured``,
  ``measured_stderr``): both against the horizon, the measured value with its
  99% band;
* ``estimates``: anything else (an estimate per case against the tested
  formula's value).

Each is drawn against the horizon (t, T, or the pack's swept parameter,
``Pack.swept``, when the case labels name one) when every entry has at least two such points, else as a categorical
panel with one row per case.  99% means ± 2.576 standard errors throughout.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from moecl_verify.checks.model import RunResult
from moecl_verify.checks import kinds
from moecl_verify.reports import closed_form_figures, probability_figures, scaling_figures
from moecl_verify.reports import panel_figures as kit
from moecl_verify.reports.document import pack_of

KINDS = ("bound", "margin", "difference", "estimates")
@functools.cache
def _horizon(swept: str) -> re.Pattern:
    """A horizon named in a case label: ``t = 5``, ``T = 200`` or ``<swept> = 0.1``."""
    return re.compile(rf"\b(t|T|{re.escape(swept)})\s*=\s*([0-9][0-9.eE+-]*)")


# Criterion cases counted in rounds (when the gate froze) are not drawn on the axis of error margins.
_ROUNDS = re.compile(r"round|freez", re.I)
_TAG = re.compile(r"\s*\[[^\]]*pool[^\]]*\]\s*$")

TITLES = {
    "bound": "the bound's right-hand side against the measured value",
    "margin": "margin of the criterion",
    "difference": "paired difference (the identity predicts 0)",
    "estimates": "estimates against the tested formula",
}
REFERENCE = {"margin": "Δ = 0 (the criterion's boundary)", "difference": "0 (what the identity predicts)"}


# A criterion's case rows are labelled by the claim ("pool 0, Thm 1, F"); the pool or hidden constant in a
# row's label names a replicate of the same case, which shares the row's point label.  (Entries are told
# apart by their keys; this reads only the row labels inside one entry.)
_REPLICATE_TOKEN = re.compile(r"(?:,\s*|\s+|^)\b(?:pool \d+|c = \d+(?:\.\d+)?)(?![\w.])")


def _case_text(label: str) -> str:
    return _REPLICATE_TOKEN.sub("", label).strip(" ,;")


def accepts(res) -> bool:
    return (
        kit.numeric(res)
        and not closed_form_figures.accepts(res)
        and not scaling_figures.accepts(res)
        and not probability_figures.accepts(res)
    )


def kind(res) -> str:
    rows = res.horizons or []
    if rows and all("rhs" in h and "measured" in h for h in rows):
        return "bound"
    if kinds.figure_of(res) == "margin":
        return "margin"
    if kinds.figure_of(res) == "estimates" and rows and all(h.get("expected") == 0 for h in rows):
        return "difference"
    return "estimates"


@dataclass(frozen=True)
class Point:
    """One horizon or case of an entry."""

    x: float | None  # the horizon, when the case names one
    axis: str  # "t", "T", the swept parameter, or "" (no horizon)
    rest: str  # what else the case says (a series within the entry, e.g. "n=0")
    text: str  # the case label without its pool (a categorical row)
    expected: float | None
    observed: float
    se: float
    rhs: float | None = None
    measured: float | None = None
    measured_se: float = 0.0


def points(res, swept: str = "x") -> list[Point]:
    """The entry's horizons (or the entry itself when it has none) as points."""
    if not res.horizons:
        return [Point(None, "", "", "", res.expected, res.observed, res.stderr or 0.0)]
    out = []
    for h in res.horizons:
        if h.get("observed") is None:
            continue
        extra = {"rhs": h.get("rhs"), "measured": h.get("measured"), "measured_se": h.get("measured_stderr") or 0.0}
        common = {"expected": h.get("expected"), "observed": h["observed"], "se": h.get("stderr") or 0.0, **extra}
        if "t" in h or "T" in h:
            key = "t" if "t" in h else "T"
            out.append(Point(float(h[key]), key, "", f"{key} = {h[key]}", **common))
            continue
        label = str(h.get("case", h.get("pooled", "")))
        text = _case_text(label)
        m = _horizon(swept).search(text)
        if m:
            rest = (text[: m.start()] + text[m.end():]).strip(" ,;")
            out.append(Point(float(m.group(2)), m.group(1), rest, text, **common))
        else:
            out.append(Point(None, "", text, text, **common))
    return out


def _against_horizon(entries: list, swept: str) -> bool:
    """Whether every entry has two or more points on one common horizon axis."""
    axes = set()
    for r in entries:
        pts = points(r, swept)
        if len(pts) < 2 or any(p.x is None for p in pts):
            return False
        axes.update(p.axis for p in pts)
    return len(axes) == 1


# --- against the horizon ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Curve:
    label: str
    xs: tuple
    ys: tuple
    half: tuple  # half-width of the 99% band
    expected: tuple = ()
    rhs: tuple = ()  # bound mode: the right-hand side at each x


def _curves(item: kit.Labelled, mode: str, swept: str) -> list[Curve]:
    pts = points(item.res, swept)
    rests = list(dict.fromkeys(p.rest for p in pts))
    out = []
    for rest in rests:
        mine = sorted((p for p in pts if p.rest == rest), key=lambda p: p.x)
        label = item.series if not rest else (rest if item.series == "measured" else f"{item.series}, {rest}")
        if mode == "bound":
            out.append(Curve(label, tuple(p.x for p in mine), tuple(p.measured for p in mine),
                             tuple(kit.Z99 * p.measured_se for p in mine), rhs=tuple(p.rhs for p in mine)))
        else:
            out.append(Curve(label, tuple(p.x for p in mine), tuple(p.observed for p in mine),
                             tuple(kit.Z99 * p.se for p in mine), expected=tuple(p.expected for p in mine)))
    return out


def _horizon_plans(entries: list, mode: str, swept: str) -> list[tuple[str, list[Curve]]]:
    labelled = kit.label_entries(entries, merge_singletons=mode != "estimates")
    per_curve = 2 if mode == "bound" else 1
    reserved = 0 if mode == "bound" else 1  # the zero line, or the tested formula
    room = kit.MAX_SERIES - reserved
    groups = kit.panels_of(labelled, lambda i: per_curve * len(_curves(i, mode, swept)), room)
    out = []
    for title, items in groups:
        curves = [c for item in items for c in _curves(item, mode, swept)]
        # One entry with more cases than a panel holds is spread over several panels.
        runs = kit.chunk(curves, [per_curve] * len(curves), room)
        out += [(f"{title} ({k + 1}/{len(runs)})" if len(runs) > 1 else title, run) for k, run in enumerate(runs)]
    return out


def _legend(curves: list[Curve], mode: str) -> list[str]:
    if mode == "bound":
        return [s for c in curves for s in (f"{c.label}: measured, 99% band", f"{c.label}: right-hand side")]
    extra = [REFERENCE[mode]] if mode in REFERENCE else ["tested formula"]
    return [c.label for c in curves] + extra


def _draw_horizons(ax, curves: list[Curve], mode: str, dodge: bool) -> None:
    xs_all = sorted({x for c in curves for x in c.xs})
    log = kit.spread(xs_all)
    for k, c in enumerate(curves):
        color = kit.COLORS[k % len(kit.COLORS)]
        # Entries share their horizons: shift each series a little so the error bars do not hide each other.
        shift = (k - (len(curves) - 1) / 2) * 0.03 if dodge else 0.0
        xs = [x * (1 + shift) if log else x + shift * (xs_all[-1] - xs_all[0] or 1) for x in c.xs]
        lo = [y - e for y, e in zip(c.ys, c.half)]
        hi = [y + e for y, e in zip(c.ys, c.half)]
        ax.fill_between(xs, lo, hi, color=color, alpha=0.15, linewidth=0)
        label = f"{c.label}: measured, 99% band" if mode == "bound" else c.label
        ax.errorbar(xs, c.ys, yerr=c.half, color=color, marker=kit.MARKERS[k % len(kit.MARKERS)], markersize=4,
                    capsize=3, linewidth=1.2, label=label)
        if mode == "bound":
            ax.plot(xs, c.rhs, color=color, linestyle="--", marker="x", linewidth=1.2,
                    label=f"{c.label}: right-hand side")
    if mode in REFERENCE:
        ax.axhline(0.0, label=REFERENCE[mode], **kit.REFERENCE)
    elif mode != "bound":
        shown = [(x, e) for c in curves for x, e in zip(c.xs, c.expected) if e is not None]
        if shown:
            shown = sorted(set(shown))
            ax.plot([p[0] for p in shown], [p[1] for p in shown], "x--", color="black", linewidth=1,
                    markersize=6, label="tested formula")
    if log:
        kit.log_axis(ax, "x", ticks=xs_all)
    elif len(xs_all) <= 8:
        ax.set_xticks(xs_all, [f"{x:g}" for x in xs_all])
    ax.grid(True, alpha=0.3)


def _title(mode: str, entries: list) -> str:
    if mode == "margin" and any(r.kind == "bound" for r in entries):
        return "margin of the bound (right-hand side minus measured value)"
    return TITLES[mode]


def _build_horizons(run: RunResult, claim_id: str, mode: str, entries: list):
    pack = pack_of(run)
    plans = _horizon_plans(entries, mode, pack.swept)
    axis = points(entries[0], pack.swept)[0].axis
    swept_axis = axis == pack.swept
    with kit.style():
        fig, axes, grid = kit.panel_grid(
            len(plans), titles=[kit.wrap(t, 46) for t, _ in plans], legend_labels=[_legend(c, mode) for _, c in plans],
            ncols_max=2 if len(plans) <= 4 else 3,
            title=f"{claim_id}: {_title(mode, entries)}, against {pack.swept_symbol if swept_axis else 'the horizon'}\n"
                  f"({kit.run_subtitle(run)})",
        )
        for ax, (_, curves) in zip(axes, plans):
            _draw_horizons(ax, curves, mode, dodge=mode != "estimates")
            order = _legend(curves, mode)
            ax.set_xlabel(pack.swept_symbol if swept_axis else f"horizon {axis} (tasks)", fontsize=9)
            ax.set_ylabel({"margin": "margin Δ", "difference": "paired difference", "bound": "value",
                           "estimates": "estimate"}[mode] + " (mean, 99% band)", fontsize=9)
            kit.legend_below(ax, grid, order)
    return fig


# --- one row per case -------------------------------------------------------------------------------------


def _case_rows(entries: list, mode: str, swept: str) -> list[tuple[str, list[kit.CaseRow]]]:
    """Panels of categorical rows: rounds apart from other margins, at most MAX_SERIES - 1 series each."""
    labelled = kit.label_entries(entries, merge_singletons=mode != "estimates")
    # One configuration: its name titles the panel instead of prefixing every row.
    common = labelled[0].panel if len({i.panel for i in labelled}) == 1 else None
    rows = []
    for item in labelled:
        for p in points(item.res, swept):
            value, se = (p.measured, p.measured_se) if mode == "bound" else (p.observed, p.se)
            name = ", ".join(s for s in (None if common is not None else item.panel, p.text) if s) or item.series
            series = item.series if name != item.series else "estimate"
            rows.append(kit.CaseRow(name, series, value, value - kit.Z99 * se, value + kit.Z99 * se,
                                    p.rhs if mode == "bound" else p.expected))
    units = {}
    for r in rows:
        units.setdefault("rounds" if mode == "margin" and _ROUNDS.search(r.row) else "", []).append(r)
    out = []
    for unit, mine in units.items():
        series = list(dict.fromkeys(r.series for r in mine))
        for group in kit.chunk(series, [1] * len(series), kit.MAX_SERIES - 1):
            title = {"rounds": "cases counted in rounds", "": "other cases" if len(units) > 1 else ""}[unit]
            title = ", ".join(s for s in (common, title) if s)
            out.append((title, [r for r in mine if r.series in group]))
    return out


def _build_cases(run: RunResult, claim_id: str, mode: str, entries: list):
    plans = _case_rows(entries, mode, pack_of(run).swept)
    sizes = [kit.case_panel_size(rows) for _, rows in plans]
    left = max(s[0] for s in sizes)
    height = max(s[1] for s in sizes)
    reference = REFERENCE.get(mode)
    legends = []
    for _, rows in plans:
        _, series = kit.case_rows_layout(rows)
        legends.append(series + ([reference] if reference else ["tested formula"]
                                 if any(r.expected is not None for r in rows) else []))
    value_label = {"margin": "margin Δ (99% interval)", "difference": "paired difference (99% interval)",
                   "bound": "measured value (99% interval)", "estimates": "estimate (99% interval)"}[mode]
    with kit.style():
        fig, axes, grid = kit.panel_grid(
            len(plans), titles=[kit.wrap(t, 44) for t, _ in plans], legend_labels=legends, ncols_max=2, axes_w=3.4,
            axes_h=height, left=left, title=f"{claim_id}: {_title(mode, entries)}, per case\n({kit.run_subtitle(run)})",
        )
        for ax, (title, rows), legend in zip(axes, plans, legends):
            unit_label = value_label.replace(" (", " in rounds (") if "counted in rounds" in title else value_label
            kit.draw_cases(ax, rows, reference=reference, value_label=unit_label)
            kit.legend_below(ax, grid, legend)
    return fig


# --- captions and specs -----------------------------------------------------------------------------------


def caption(mode: str, entries: list, swept: str = "x", symbol: str = "x") -> str:
    horizon = _against_horizon(entries, swept)
    axis = points(entries[0], swept)[0].axis if horizon else ""
    against = (f"against {symbol} (log axis)" if axis == swept else "against the horizon") if horizon else "per case"
    formula = next((r.formula for r in entries if r.formula and "\\" not in r.formula), "")
    # The first entry's configuration tag (its pool) does not describe a figure of every pool.
    formula = _TAG.sub("", formula).strip()
    spread = "band" if horizon else "interval"
    if mode == "margin":
        if any(r.kind == "bound" for r in entries):
            text = (f"Margin of the bound {against}: the estimated Δ = E[right-hand side − measured value] with its "
                    "99% interval (Δ ± 2.576 s.e.) and a zero line; the bound holds in expectation where Δ > 0 and "
                    "fails where the interval lies below 0. The results record the bound only through this "
                    "margin, not its two terms separately.")
        else:
            text = (f"Margin of the criterion {against}: the estimated Δ with its 99% interval (Δ ± 2.576 s.e.) and "
                    "a zero line; the criterion holds where Δ > 0 and fails where the interval lies below 0.")
        text += " One marker per pool / configuration."
        if formula:
            text += f" Criterion: {formula.rstrip('.')}."
        if not horizon and any(_ROUNDS.search(p.text) for r in entries for p in points(r, swept)):
            text += " Cases counted in rounds have their own panel."
        return text
    if mode == "difference":
        return (f"Paired difference {against}: the Monte Carlo mean of the quantity the identity sets to 0, with "
                f"its 99% {spread} (mean ± 2.576 s.e.), and the zero line the identity predicts; one series per "
                "entry (configuration, pool or form).")
    if mode == "bound":
        return (f"Bound {against}: the right-hand side of the bound (dashed, mean over replicates) and the measured "
                "value (mean with its 99% band, ± 2.576 s.e.); the bound holds where the measured value stays "
                "below the right-hand side.")
    return (f"Estimates {against}: each case's Monte Carlo estimate with its 99% interval (± 2.576 s.e.) and the "
            "tested formula's value (black x).")


def build(run: RunResult, claim_id: str, mode: str):
    """The ``mode`` figure of ``claim_id`` (drawn, not saved)."""
    entries = [r for r in run.results if r.id == claim_id and accepts(r) and kind(r) == mode]
    if _against_horizon(entries, pack_of(run).swept):
        return _build_horizons(run, claim_id, mode, entries)
    return _build_cases(run, claim_id, mode, entries)


def specs(run: RunResult) -> list[kit.FigureSpec]:
    out = []
    seen = set()
    for i, r in enumerate(run.results):
        if not accepts(r) or (r.id, kind(r)) in seen:
            continue
        mode = kind(r)
        seen.add((r.id, mode))
        entries = [e for e in run.results if e.id == r.id and accepts(e) and kind(e) == mode]
        pack = pack_of(run)
        out.append(kit.FigureSpec((r.id,), kit.file_name(r.id, mode), caption(mode, entries, pack.swept,
                                                                               pack.swept_symbol),
                                  functools.partial(build, run, r.id, mode), i))
    return out
