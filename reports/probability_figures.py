"""Probabilities per value of the swept parameter: each proportion entry's estimates with their Wilson intervals.

For every claim with proportion entries (an event counted over replicates,
``config["probabilities"]``, or the whole sweep in ``config["trend"]`` when
the test itself reads only the smallest x), one PNG
``fig_<claim id>_probability.png``: the estimated probability against x, the
pack's swept parameter (``Pack.swept``, drawn as ``Pack.swept_symbol``), on a
log axis with the 99% Wilson score interval recorded with each row, and a
dashed line at what the claim requires (P >= bound, P <= bound, or P -> 1 as
x -> 0).  Entries that differ only by hidden constant or pool share a panel;
events differ between panels.  Rows without an x (one pooled count) are drawn
as one row per entry instead.
"""

from __future__ import annotations

import functools
import re

from moecl_verify.checks.model import RunResult
from moecl_verify.checks.pack import Pack
from moecl_verify.reports import panel_figures as kit
from moecl_verify.reports.document import pack_of

_BOUND = re.compile(r"P\(event\)\s*(>=|<=)\s*([0-9.eE+-]+)")


def rows_of(res) -> list[dict]:
    """The rows drawn: the whole sweep when the entry records one, else the rows its test read."""
    return list(res.config.get("trend") or res.config.get("probabilities") or [])


def accepts(res) -> bool:
    rows = rows_of(res)
    return kit.numeric(res) and not res.config.get("means") and bool(rows) and all(
        "probability" in r and "low" in r and "high" in r for r in rows)


def required(res, symbol: str = "x") -> str:
    """What the claim requires of the probability, in words for the legend."""
    null = str(res.config.get("null", ""))
    m = _BOUND.search(null)
    if m:
        return f"required: P {'≥' if m.group(1) == '>=' else '≤'} {float(m.group(2)):.3g}"
    if "vanish" in null:
        return f"required: P → 1 as {symbol} → 0"
    return f"claimed: P = {res.expected:.3g}"


def _series(item: kit.Labelled, key: str) -> list[tuple[str, list[dict]]]:
    """(label, rows) per series: the k-th row recorded at each x (rows' ``key``) is series k."""
    per_x: dict[float, int] = {}
    groups: dict[int, list[dict]] = {}
    for row in rows_of(item.res):
        k = per_x.get(row.get(key), 0)
        per_x[row.get(key)] = k + 1
        groups.setdefault(k, []).append(row)
    if len(groups) == 1:
        return [(item.series, groups[0])]
    return [(f"{item.series}, case {k + 1}" if item.series != "measured" else f"case {k + 1}", rows)
            for k, rows in groups.items()]


def _plans(entries: list, pack: Pack):
    labelled = kit.label_entries(entries)
    groups = kit.panels_of(labelled, lambda i: len(_series(i, pack.swept)) + 1, kit.MAX_SERIES)
    plans = []
    for title, items in groups:
        reqs = list(dict.fromkeys((i.res.expected, required(i.res, pack.swept_symbol)) for i in items))
        every = [(label, rows, i) for i in items for label, rows in _series(i, pack.swept)]
        # One entry with more rows per x than a panel holds is spread over several panels.
        runs = kit.chunk(every, [1] * len(every), kit.MAX_SERIES - (1 if len(reqs) == 1 else len(items)))
        for k, series in enumerate(runs):
            legend = [s[0] for s in series]
            legend += [reqs[0][1]] if len(reqs) == 1 else [f"{i.series}: {required(i.res, pack.swept_symbol)}"
                                                           for i in items]
            plans.append((f"{title} ({k + 1}/{len(runs)})" if len(runs) > 1 else title, items, series, reqs, legend))
    return plans


def _draw_sweep(ax, series, items, reqs, pack: Pack) -> None:
    key = pack.swept
    for k, (label, rows, _) in enumerate(series):
        rows = sorted(rows, key=lambda r: r[key])
        xs = [r[key] for r in rows]
        ps = [r["probability"] for r in rows]
        err = [[p - r["low"] for p, r in zip(ps, rows)], [r["high"] - p for p, r in zip(ps, rows)]]
        # Series at the same x shift a little so their intervals stay apart.
        shift = 1 + (k - (len(series) - 1) / 2) * 0.04
        ax.errorbar([x * shift for x in xs], ps, yerr=err, color=kit.COLORS[k % len(kit.COLORS)],
                    marker=kit.MARKERS[k % len(kit.MARKERS)], markersize=4, capsize=3, linewidth=1, label=label)
    if len(reqs) == 1:
        ax.axhline(reqs[0][0], color="black", linestyle="--", linewidth=1.2, label=reqs[0][1])
    else:
        for k, item in enumerate(items):
            ax.axhline(item.res.expected, color=kit.COLORS[k % len(kit.COLORS)], linestyle="--", linewidth=1.2,
                       label=f"{item.series}: {required(item.res, pack.swept_symbol)}")
    kit.log_axis(ax, "x", ticks=[r[key] for _, rows, _ in series for r in rows])
    ax.set_xlabel(pack.swept_symbol, fontsize=9)
    ax.set_ylabel("probability (99% Wilson interval)", fontsize=9)
    ax.grid(True, alpha=0.3)


def build(run: RunResult, claim_id: str):
    """The probability figure of ``claim_id`` (drawn, not saved)."""
    pack = pack_of(run)
    entries = [r for r in run.results if r.id == claim_id and accepts(r)]
    swept = [r for r in entries if all(pack.swept in row for row in rows_of(r))]
    pooled = [r for r in entries if r not in swept]
    plans = _plans(swept, pack) if swept else []
    case_rows = [
        kit.CaseRow(", ".join(s for s in (item.panel, item.series if item.series != "measured" else "") if s)
                    or "pooled", "estimate", row["probability"], row["low"], row["high"], item.res.expected)
        for item in kit.label_entries(pooled) for row in rows_of(item.res)
    ]
    reqs = sorted({required(r, pack.swept_symbol) for r in pooled})
    marker = f"{reqs[0]} (x)" if len(reqs) == 1 else "required (x)"
    titles = [kit.wrap(p[0], 46) for p in plans] + (["pooled counts"] if case_rows else [])
    legends = [p[4] for p in plans] + ([["estimate", marker]] if case_rows else [])
    left, height = kit.case_panel_size(case_rows) if case_rows else (0.8, 2.5)
    with kit.style():
        fig, axes, grid = kit.panel_grid(
            len(titles), titles=titles, legend_labels=legends, ncols_max=2 if len(titles) <= 4 else 3,
            left=max(0.8, left) if case_rows else 0.8, axes_h=height if not plans else 2.5,
            title=f"{claim_id}: probability of the event{f' against {pack.swept_symbol}' if plans else ''}\n"
                  f"({kit.run_subtitle(run)})",
        )
        for ax, (_, items, series, reqs, legend) in zip(axes, plans):
            _draw_sweep(ax, series, items, reqs, pack)
            kit.legend_below(ax, grid, legend)
        if case_rows:
            ax = axes[-1]
            kit.draw_cases(ax, case_rows, reference=None, value_label="probability (99% Wilson interval)",
                           expected_label=marker)
            kit.legend_below(ax, grid)
    return fig


def caption(entries: list, pack: Pack) -> str:
    x = pack.swept_symbol
    swept = [r for r in entries if all(pack.swept in row for row in rows_of(r))]
    if not swept:
        return ("Probability of the event from counts pooled over the run (one row per entry): each estimate with "
                "the 99% Wilson score interval recorded with it (successes out of trials), and what the claim "
                "requires marked by a black x.")
    text = (f"Probability of the event against {x} (log axis): each estimate with the 99% Wilson score interval "
            "recorded with it (successes out of replicates), and a dashed line at what the claim requires "
            f"(P ≥ bound, P ≤ bound, or P → 1 as {x} → 0); entries that differ only by hidden constant share a "
            "panel.")
    if any(r.config.get("trend") for r in swept):
        text += f" Where the test reads only the smallest {x}, the whole recorded sweep is drawn."
    if any(len(_series(i, pack.swept)) > 1 for i in kit.label_entries(swept)):
        text += f" Where an entry records several rows per {x} (one per task, say), each is its own series (case k)."
    if len(swept) < len(entries):
        text += f" Counts pooled over {x} are drawn as one row each, the requirement marked by a black x."
    return text


def specs(run: RunResult) -> list[kit.FigureSpec]:
    out = []
    for cid in dict.fromkeys(r.id for r in run.results if accepts(r)):
        entries = [r for r in run.results if r.id == cid and accepts(r)]
        first = next(i for i, r in enumerate(run.results) if r.id == cid and accepts(r))
        out.append(kit.FigureSpec((cid,), kit.file_name(cid, "probability"), caption(entries, pack_of(run)),
                                  functools.partial(build, run, cid), first))
    return out
