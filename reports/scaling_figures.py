"""Log-log pictures of scaling claims, drawn from results only.

For every claim with scaling entries (a power law in the pack's swept
parameter x, ``Pack.swept``, fitted to ``config["means"]``), one PNG
``fig_<claim id>_scaling.png`` with one panel per measured quantity (entries
that differ only by hidden constant or pool share a panel, at most two per
panel so a panel holds at most six series): the measured mean at each x with
its 99% error bar (± 2.576 s.e. of the mean at that x, when the row records
one), the fitted power law C x^k (solid, its bootstrap interval in the legend) and the claimed
exponent drawn through the fitted line at the middle of the sweep (dashed),
so a reader sees at a glance whether the slopes agree.
"""

from __future__ import annotations

import functools
from pathlib import Path

from moecl_verify.checks.model import RunResult
from moecl_verify.reports import panel_figures as kit
from moecl_verify.reports.document import pack_of

ENTRIES_PER_PANEL = 2  # three series each: measured, fitted, claimed
CAPTION = (
    "Scaling in {x} on log-log axes: the measured quantity (mean over replicates) at each {x} with its 99% error "
    "bar (± 2.576 standard errors of the fitted statistic at that {x}, bootstrapped over replicates), the least-squares power law (solid; the fitted exponent "
    "and its bootstrap interval in the legend) and a line of the claimed exponent through the fit's middle "
    "(dashed); one panel per measured quantity, the hidden constants c side by side."
)
NO_STDERR = (
    " The results do not record the standard error of the mean at each {x}{which}, so those points carry no "
    "error bars; the uncertainty of the slope is the bootstrap interval in the legend."
)


def figure_name(claim_id: str) -> str:
    return kit.file_name(claim_id, "scaling")


def accepts(res) -> bool:
    return kit.numeric(res) and bool(res.config.get("means"))


def scaling_claims(run: RunResult) -> list[str]:
    return list(dict.fromkeys(r.id for r in run.results if accepts(r)))


def mean_key(row: dict) -> str:
    return next(k for k in row if k.startswith("mean") and not k.endswith("_stderr"))


def point_stderr(row: dict, config: dict | None = None, key_x: str = "x") -> float | None:
    """The standard error of the mean at this x (the row's ``key_x``), under whichever name the row records
    it, or else the fit's bootstrap standard error at this x (``point_stderr`` pairs recorded with the fit)."""
    key = mean_key(row)
    for name in (f"{key}_stderr", "stderr", "se"):
        if row.get(name) is not None:
            return float(row[name])
    for x, se in (config or {}).get("point_stderr", []):
        if x == row.get(key_x):
            return float(se)
    return None


def _legend(item: kit.Labelled) -> list[str]:
    res = item.res
    interval = res.config.get("exponent_interval")
    fitted = f"{item.series}: fitted slope {res.observed:.2f}"
    if interval:
        fitted += f" [{interval[0]:.2f}, {interval[1]:.2f}]"
    return [f"{item.series}: measured ({res.verdict})", fitted, f"{item.series}: claimed slope {res.expected:g}"]


def _draw_entry(ax, k: int, item: kit.Labelled, key_x: str) -> None:
    res = item.res
    rows = sorted(res.config["means"], key=lambda r: r[key_x])
    key = mean_key(rows[0])
    xs = [row[key_x] for row in rows]
    ys = [row[key] for row in rows]
    ses = [point_stderr(row, res.config, key_x) for row in rows]
    color = kit.COLORS[k % len(kit.COLORS)]
    labels = _legend(item)
    yerr = None
    if all(s is not None for s in ses):
        # On a log axis a bar reaching below 0 is clipped at the bottom of the panel.
        yerr = [[min(kit.Z99 * s, 0.999 * y) if y > 0 else 0.0 for s, y in zip(ses, ys)], [kit.Z99 * s for s in ses]]
    ax.errorbar(xs, ys, yerr=yerr, fmt=kit.MARKERS[k % len(kit.MARKERS)], color=color, markersize=5, capsize=3,
                label=labels[0])
    # The least-squares line, and the claimed slope through it at the geometric middle of the sweep.
    const = res.config.get("fitted_constant", ys[0] / xs[0] ** res.observed)
    mid = (min(xs) * max(xs)) ** 0.5
    y_mid = const * mid**res.observed
    ax.plot(xs, [const * x**res.observed for x in xs], "-", color=color, linewidth=1.2, label=labels[1])
    ax.plot(xs, [y_mid * (x / mid) ** res.expected for x in xs], "--", color=color, linewidth=1.2, alpha=0.8,
            label=labels[2])


def _plans(entries: list) -> list[tuple[str, list[kit.Labelled]]]:
    return kit.panels_of(kit.label_entries(entries), lambda _i: 1, ENTRIES_PER_PANEL)


def build(run: RunResult, claim_id: str):
    """The scaling figure of ``claim_id`` (drawn, not saved)."""
    pack = pack_of(run)
    entries = [r for r in run.results if r.id == claim_id and accepts(r)]
    plans = _plans(entries)
    with kit.style():
        fig, axes, grid = kit.panel_grid(
            len(plans), titles=[kit.wrap(t, 46) for t, _ in plans],
            legend_labels=[[s for i in items for s in _legend(i)] for _, items in plans],
            ncols_max=2 if len(plans) <= 4 else 3,
            title=f"{claim_id}: scaling in {pack.swept_symbol} ({kit.run_subtitle(run)})",
        )
        for ax, (_, items) in zip(axes, plans):
            for k, item in enumerate(items):
                _draw_entry(ax, k, item, pack.swept)
            kit.log_axis(ax, "x", ticks=[row[pack.swept] for i in items for row in i.res.config["means"]])
            kit.log_axis(ax, "y")
            ax.set_xlabel(pack.swept_symbol, fontsize=9)
            key = mean_key(items[0].res.config["means"][0])
            ax.set_ylabel(("measured mean" if key == "mean" else key.replace("_", " ")) + " (log)", fontsize=9)
            ax.grid(True, alpha=0.3)
            kit.legend_below(ax, grid, [s for i in items for s in _legend(i)])
    return fig


def caption(entries: list, key_x: str = "x", symbol: str = "x") -> str:
    missing = [r for r in entries if any(point_stderr(row, r.config, key_x) is None for row in r.config["means"])]
    if not missing:
        return CAPTION.format(x=symbol)
    which = "" if len(missing) == len(entries) else " for some entries"
    return CAPTION.format(x=symbol) + NO_STDERR.format(x=symbol, which=which)


def specs(run: RunResult) -> list[kit.FigureSpec]:
    out = []
    for cid in scaling_claims(run):
        entries = [r for r in run.results if r.id == cid and accepts(r)]
        first = next(i for i, r in enumerate(run.results) if r.id == cid and accepts(r))
        pack = pack_of(run)
        out.append(kit.FigureSpec((cid,), figure_name(cid), caption(entries, pack.swept, pack.swept_symbol),
                                  functools.partial(build, run, cid), first))
    return out


def draw(run: RunResult, claim_id: str, path: Path) -> Path:
    return kit.save(build(run, claim_id), path)


def relative_paths(run: RunResult) -> dict[str, str]:
    return {cid: figure_name(cid) for cid in scaling_claims(run)}


def write(run: RunResult, out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return [draw(run, cid, out_dir / figure_name(cid)) for cid in scaling_claims(run)]
