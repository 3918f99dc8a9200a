"""A quick picture for `moecl-verify simulate --plot`: F_t and G_t with 99% bands."""

from __future__ import annotations

from pathlib import Path

Z99 = 2.576


def write(rows: list[dict], path: str | Path, title: str = "") -> Path:
    import matplotlib.style
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = Path(path)
    with matplotlib.style.context("default"):
        fig = Figure(figsize=(10, 4), dpi=100, layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(1, 2)
        for ax, metric, label in zip(axes, ("forgetting", "generalization"), ("$F_t$", "$G_t$")):
            pts = [(r["t"], r[metric], r[metric + "_stderr"]) for r in rows if r[metric] is not None]
            t = [p[0] for p in pts]
            m = [p[1] for p in pts]
            ax.fill_between(t, [a - Z99 * b for _, a, b in pts], [a + Z99 * b for _, a, b in pts], alpha=0.25, linewidth=0)
            ax.plot(t, m)
            ax.set_xlabel("round t")
            ax.set_ylabel(label + " (mean, 99% band)")
            ax.grid(True, alpha=0.3)
        fig.suptitle(title)
        fig.savefig(path, format="png", metadata={"Software": None})
    return path
