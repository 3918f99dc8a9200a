"""Log-log pictures of scaling claims, drawn from results only.

For every claim of kind ``scaling``: the measured mean against sigma0 for each
entry (one marker style per entry), the fitted power law C sigma0^k (solid),
and the claimed exponent drawn through the fitted line at the middle of the
sweep (dashed),
so a reader sees at a glance whether the slopes agree.
"""

from __future__ import annotations

from pathlib import Path

from moecl_verify.checks.model import RunResult

DPI = 100
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def figure_name(claim_id: str) -> str:
    return f"fig_{claim_id.replace('.', '_')}_scaling.png"


def scaling_claims(run: RunResult) -> list[str]:
    seen: list[str] = []
    for res in run.results:
        if res.kind == "scaling" and res.config.get("means") and res.id not in seen:
            seen.append(res.id)
    return seen


def _mean_key(row: dict) -> str:
    return next(k for k in row if k.startswith("mean"))


def draw(run: RunResult, claim_id: str, path: Path) -> Path:
    import matplotlib.style
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    entries = [r for r in run.results if r.id == claim_id and r.config.get("means")]
    with matplotlib.style.context("default"):
        fig = Figure(figsize=(7.5, 5), dpi=DPI, layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.subplots()
        for i, res in enumerate(entries):
            rows = res.config["means"]
            key = _mean_key(rows[0])
            xs = [row["sigma0"] for row in rows]
            ys = [row[key] for row in rows]
            color = COLORS[i % len(COLORS)]
            label = res.config.get("part", res.form)
            ax.loglog(xs, ys, "o", color=color, label=f"{label}: measured ({res.verdict})")
            # The least-squares line, and the claimed slope through it at the geometric middle of the sweep.
            const = res.config.get("fitted_constant", ys[0] / xs[0] ** res.observed)
            fitted = [const * x**res.observed for x in xs]
            mid = (min(xs) * max(xs)) ** 0.5
            y_mid = const * mid**res.observed
            claimed = [y_mid * (x / mid) ** res.expected for x in xs]
            ax.loglog(xs, fitted, "-", color=color, linewidth=1, label=f"fitted slope {res.observed:.2f}")
            ax.loglog(xs, claimed, "--", color=color, linewidth=1, alpha=0.7, label=f"claimed slope {res.expected:g}")
        ax.set_xlabel("sigma0")
        ax.set_ylabel("measured quantity (mean over replicates)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="x-small", loc="upper left")
        fig.suptitle(f"{claim_id}: scaling in sigma0 (budget {run.meta.get('budget')}, seed {run.meta.get('seed')})")
        fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    return path


def relative_paths(run: RunResult) -> dict[str, str]:
    return {cid: figure_name(cid) for cid in scaling_claims(run)}


def write(run: RunResult, out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return [draw(run, cid, out_dir / figure_name(cid)) for cid in scaling_claims(run)]
