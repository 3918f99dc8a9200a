"""Figures of the paper's synthetic experiments, drawn from results.json artifacts.

* ``fig2_curves``: forgetting and generalization error against rounds for each
  M, with and without termination (the paper's Figure 2), mean with a 99% band.
* ``fig4_routing``: for each Gamma, the share of each task's rounds that each
  expert took after the gate froze, one replicate (what the paper's Figure 4
  shows as task/expert scatter).
* ``fig5_levels``: final forgetting and generalization error against Gamma
  (the paper's Figure 5), mean with a 99% interval.

Same determinism rules as :mod:`reports.figures`: Agg canvas, default style,
no PNG software metadata.  Never simulates.
"""

from __future__ import annotations

from pathlib import Path

from moecl_verify.checks.model import RunResult

Z99 = 2.576
DPI = 100
# artifact name -> (file name, claim ids whose report section shows it)
ARTIFACT_FIGURES = {
    "fig2_curves": ("fig_fig2_curves.png", ("fig2.termination_converges", "fig2.no_termination_higher",
                                            "fig2.moe_beats_single", "fig2.more_experts_no_gain")),
    "fig4_routing": ("fig_fig4_routing.png", ("fig4.balance",)),
    "fig5_levels": ("fig_fig5_levels.png", ("fig5.generalization", "fig5.forgetting_robust")),
}
COLORS = {1: "#7f7f7f", 5: "#1f77b4", 10: "#2ca02c", 20: "#d62728"}


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _band(ax, xs, mean, se, color, label):
    pts = [(x, m, s) for x, m, s in zip(xs, mean, se) if m is not None and s is not None]
    if not pts:
        return
    x = [p[0] for p in pts]
    m = [p[1] for p in pts]
    lo = [p[1] - Z99 * p[2] for p in pts]
    hi = [p[1] + Z99 * p[2] for p in pts]
    ax.fill_between(x, lo, hi, color=color, alpha=0.2, linewidth=0)
    ax.plot(x, m, color=color, label=label, linewidth=1.4)


def draw_fig2(data: dict, path: Path, subtitle: str) -> Path:
    import matplotlib.style

    with matplotlib.style.context("default"):
        fig = _figure(11, 7.5)
        axes = fig.subplots(2, 2, sharex=True)
        for col, termination in enumerate((True, False)):
            for row, metric in enumerate(("forgetting", "generalization")):
                ax = axes[row][col]
                for series in data["series"]:
                    if series["termination"] != termination:
                        continue
                    M = series["M"]
                    _band(ax, data["rounds"], series[metric], series[metric + "_stderr"], COLORS.get(M, "k"), f"M = {M}")
                ax.set_title(f"{metric} ({'with' if termination else 'without'} termination)")
                ax.set_xlabel("round t")
                ax.set_ylabel("$F_t$" if metric == "forgetting" else "$G_t$")
                ax.grid(True, alpha=0.3)
                ax.legend(fontsize="small")
        fig.suptitle(f"Figure 2 reproduced: mean with 99% band over replicates\n{subtitle}")
        fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    return path


def draw_fig4(data: dict, path: Path, subtitle: str) -> Path:
    """Per Gamma: how often each task went to each expert after the gate froze (one replicate)."""
    import matplotlib.style

    panels = data["panels"]
    N, M = data["N"], data["M"]
    with matplotlib.style.context("default"):
        fig = _figure(3.2 * len(panels) + 1, 3.8)
        axes = fig.subplots(1, len(panels), squeeze=False)[0]
        image = None
        for ax, panel in zip(axes, panels):
            start = panel["freeze_round"] or len(panel["tasks"]) // 2
            counts = [[0] * M for _ in range(N)]
            for n, m in zip(panel["tasks"][start:], panel["chosen"][start:]):
                counts[n][m] += 1
            shares = [[c / max(1, sum(row)) for c in row] for row in counts]
            image = ax.imshow(shares, vmin=0, vmax=1, cmap="viridis", aspect="auto")
            for n in range(N):
                for m in range(M):
                    ax.text(m, n, f"{shares[n][m]:.2f}", ha="center", va="center", fontsize=7,
                            color="white" if shares[n][m] < 0.5 else "black")
            ax.set_xticks(range(M), [str(m + 1) for m in range(M)])
            ax.set_yticks(range(N), [str(n + 1) for n in range(N)])
            ax.set_xlabel("expert")
            ax.set_title(f"Gamma = {panel['Gamma']}\n(frozen at t = {panel['freeze_round'] or 'never'})", fontsize=9)
        axes[0].set_ylabel("task")
        fig.colorbar(image, ax=list(axes), shrink=0.8, label="share of the task's rounds after freezing")
        fig.suptitle(f"Figure 4 reproduced: routing shares per task after the gate froze (one replicate)\n{subtitle}")
        fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    return path


def draw_fig5(data: dict, path: Path, subtitle: str) -> Path:
    import matplotlib.style

    rows = data["rows"]
    with matplotlib.style.context("default"):
        fig = _figure(10, 4)
        axes = fig.subplots(1, 2)
        names = [r["Gamma"] for r in rows]
        for ax, metric in zip(axes, ("forgetting", "generalization")):
            ax.errorbar(
                range(len(rows)),
                [r[metric] for r in rows],
                yerr=[Z99 * r[metric + "_stderr"] for r in rows],
                marker="o",
                capsize=4,
            )
            ax.set_xticks(range(len(rows)), names)
            ax.set_xlabel("termination threshold Gamma")
            ax.set_ylabel(f"final {metric}")
            ax.grid(True, alpha=0.3)
        fig.suptitle(f"Figure 5 reproduced: final errors against Gamma (mean, 99% interval)\n{subtitle}")
        fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    return path


DRAWERS = {"fig2_curves": draw_fig2, "fig4_routing": draw_fig4, "fig5_levels": draw_fig5}


def relative_paths(run: RunResult) -> dict[str, str]:
    """{claim id: figure file} for the artifacts present in ``run``."""
    out = {}
    for name in DRAWERS:
        if name in run.artifacts:
            file, claims = ARTIFACT_FIGURES[name]
            for cid in claims:
                out[cid] = file
    return out


def write(run: RunResult, out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    subtitle = f"budget {run.meta.get('budget')}, seed {run.meta.get('seed')}"
    return [
        DRAWERS[name](run.artifacts[name], out_dir / ARTIFACT_FIGURES[name][0], subtitle)
        for name in DRAWERS
        if name in run.artifacts
    ]
