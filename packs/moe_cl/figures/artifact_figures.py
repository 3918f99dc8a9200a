"""Figures of the paper's synthetic experiments, drawn from results.json artifacts.

* ``fig2_curves``: forgetting and generalization error against rounds for each
  M, with and without termination (the paper's Figure 2), mean with a 99% band.
* ``fig2_sweep``: Figure 2's reproduction sweep: final forgetting and
  generalization error at M = 10 against the scale c of v_n = c w_n (which the
  paper does not state), one line per noise level sigma_t, with termination
  (solid) and without (dashed), mean with a 99% band, beside the 'almost zero'
  level of the convergence criterion.
* ``fig3_curves``: the same for small networks (the paper's Figure 3), one
  figure per task definition with its epochs check (:mod:`.fig3_figures`).
* ``fig4_routing``: for each Gamma, the share of each task's rounds that each
  expert took after the gate froze, one replicate (what the paper's Figure 4
  shows as task/expert scatter); panels with Gamma <= lambda are marked.
* ``fig5_levels``: final forgetting and generalization error against Gamma
  (the paper's Figure 5), mean with a 99% interval, Gamma <= lambda shaded.

lambda and the numeric value of each Gamma come from the entries of the
claims these figures illustrate (their ``lam`` and ``Gammas`` config), since
the artifacts name the thresholds only.  Same determinism rules as
:mod:`reports.panel_figures`.  Never simulates.
"""

from __future__ import annotations

import functools
from pathlib import Path

from moecl_verify.checks.model import RunResult
from moecl_verify.packs.moe_cl.figures import fig3_figures
from moecl_verify.reports import panel_figures as kit

Z99 = kit.Z99
# artifact name -> (file name, claim ids whose report section shows it); Figure 3 is drawn in parts, one file each
# (fig3_figures.parts and file_name: fig_fig3_curves_1.png, ...), all shown in the same sections.
ARTIFACT_FIGURES = {
    "fig2_curves": ("fig_fig2_curves.png", ("fig2.termination_converges", "fig2.no_termination_higher",
                                            "fig2.moe_beats_single", "fig2.more_experts_no_gain")),
    "fig2_sweep": ("fig_fig2_sweep.png", ("fig2.termination_converges",)),
    "fig3_curves": ("fig_fig3_curves.png", ("fig3.termination_converges", "fig3.no_termination_higher",
                                            "fig3.moe_beats_single", "fig3.more_experts_no_gain")),
    "fig4_routing": ("fig_fig4_routing.png", ("fig4.balance",)),
    "fig5_levels": ("fig_fig5_levels.png", ("fig5.generalization", "fig5.forgetting_robust")),
}
COLORS = {1: "#7f7f7f", 5: "#1f77b4", 10: "#2ca02c", 20: "#d62728"}
BELOW_LAMBDA = "#d62728"  # frame of the panels (and shade of the thresholds) with Gamma <= lambda


def _pretty(gamma: str) -> str:
    return str(gamma).replace("sigma0", "σ0")


def thresholds(run: RunResult) -> tuple[float | None, dict[str, float]]:
    """(lambda, {Gamma name: value}) as the run's Figure 4/5 entries record them (None, {} if none does)."""
    for res in run.results:
        if "lam" in res.config and isinstance(res.config.get("Gammas"), dict):
            return float(res.config["lam"]), {str(k): float(v) for k, v in res.config["Gammas"].items()}
    return None, {}


def at_most_lambda(value: float | None, lam: float | None) -> bool | None:
    """Gamma <= lambda, with a relative tolerance: the paper's sigma0^1.25 equals lambda up to rounding."""
    if value is None or lam is None:
        return None
    return value <= lam * (1 + 1e-9)


def _band(ax, xs, mean, se, color, label):
    pts = [(x, m, s) for x, m, s in zip(xs, mean, se) if m is not None and s is not None]
    if not pts:
        return
    x = [p[0] for p in pts]
    ax.fill_between(x, [p[1] - Z99 * p[2] for p in pts], [p[1] + Z99 * p[2] for p in pts], color=color, alpha=0.2,
                    linewidth=0)
    ax.plot(x, [p[1] for p in pts], color=color, label=label, linewidth=1.4)


def build_fig2(data: dict, subtitle: str):
    """Figure 2: F_t and G_t against the round for each M, with and without termination (drawn, not saved)."""
    cells = [(metric, termination) for metric in ("forgetting", "generalization") for termination in (True, False)]
    titles = [f"{metric} ({'with' if termination else 'without'} termination)" for metric, termination in cells]
    labels = [f"M = {s['M']}" for s in data["series"] if s["termination"]]
    with kit.style():
        fig, axes, grid = kit.panel_grid(
            4, titles=titles, legend_labels=[labels] * 4, ncols_max=2, axes_w=4.4, axes_h=2.6,
            title=f"Figure 2 reproduced: mean with 99% band over replicates\n{subtitle}",
        )
        for ax, (metric, termination) in zip(axes, cells):
            for series in data["series"]:
                if series["termination"] != termination:
                    continue
                M = series["M"]
                _band(ax, data["rounds"], series[metric], series[metric + "_stderr"], COLORS.get(M, "k"), f"M = {M}")
            ax.set_xlabel("round t", fontsize=9)
            ax.set_ylabel("$F_t$" if metric == "forgetting" else "$G_t$", fontsize=9)
            ax.grid(True, alpha=0.3)
            kit.legend_below(ax, grid)
    return fig


NOISE_COLORS = ("#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#8c564b")


def build_fig2_sweep(data: dict, subtitle: str):
    """Figure 2's reproduction sweep: E[F_T] and E[G_T] at M = data["M"] against the scale c of v_n, a line per
    sigma_t, solid with termination and dashed without, with the criterion's 'almost zero' level (drawn, not
    saved)."""
    rows = data["rows"]
    levels = sorted({r["sigma_t"] for r in rows})
    labels = [f"σ_t = {s:g}{' (stated)' if s == data.get('stated_sigma_t') else ''}, {w} termination"
              for s in levels for w in ("with", "without")] + ["'almost zero' (a tenth of one expert's)"]
    with kit.style():
        fig, axes, grid = kit.panel_grid(
            2, titles=["final forgetting F_T", "final generalization error G_T"], legend_labels=[labels, labels],
            ncols_max=2, axes_w=4.2, axes_h=2.8,
            title=f"Figure 2's reproduction sweep at M = {data['M']}: mean with 99% band over replicates and task "
                  f"pools {', '.join(str(k) for k in data['pools'])}\n{subtitle}",
        )
        for ax, metric in zip(axes, ("forgetting", "generalization")):
            for i, level in enumerate(levels):
                at = sorted((r for r in rows if r["sigma_t"] == level), key=lambda r: r["signal_scale"])
                xs = [r["signal_scale"] for r in at]
                color = NOISE_COLORS[i % len(NOISE_COLORS)]
                for termination, style in (("term", "-"), ("no_term", "--")):
                    mean = [r[f"{metric}_{termination}"] for r in at]
                    se = [r[f"{metric}_{termination}_stderr"] for r in at]
                    ax.fill_between(xs, [m - Z99 * e for m, e in zip(mean, se)], [m + Z99 * e for m, e in zip(mean, se)],
                                    color=color, alpha=0.12, linewidth=0)
                    ax.plot(xs, mean, style, color=color, marker="o", markersize=3, linewidth=1.3,
                            label=f"σ_t = {level:g}{' (stated)' if level == data.get('stated_sigma_t') else ''}, "
                                  f"{'with' if termination == 'term' else 'without'} termination")
            stated = sorted((r for r in rows if r.get("stated")), key=lambda r: r["signal_scale"]) or rows
            ax.plot([r["signal_scale"] for r in stated], [r[f"{metric}_near_zero"] for r in stated], ":",
                    color="#7f7f7f", linewidth=1.5, label=labels[-1])
            ax.set_xscale("log")
            ax.set_xlabel("scale c of the feature signals, v_n = c w_n (not stated in the paper)", fontsize=8)
            ax.set_ylabel("$F_T$" if metric == "forgetting" else "$G_T$", fontsize=9)
            ax.grid(True, alpha=0.3)
            kit.legend_below(ax, grid, labels)
    return fig


def _post_freeze(panel: dict) -> tuple[int, tuple, tuple]:
    start = panel["freeze_round"] or len(panel["tasks"]) // 2
    return start, tuple(panel["tasks"][start:]), tuple(panel["chosen"][start:])


def identical_panels(data: dict) -> bool:
    """Whether every Gamma routed the same tasks to the same experts after the freeze (identical heatmaps)."""
    seqs = {_post_freeze(p) for p in data["panels"]}
    return len(data["panels"]) > 1 and len(seqs) == 1


def build_fig4(data: dict, subtitle: str, lam: float | None = None, gammas: dict | None = None):
    """Per Gamma: how often each task went to each expert after the gate froze (one replicate); panels with
    Gamma <= lambda get a red frame and say so in their title (drawn, not saved)."""
    gammas = gammas or {}
    panels = data["panels"]
    N, M = data["N"], data["M"]
    titles = []
    for panel in panels:
        value = gammas.get(str(panel["Gamma"]))
        below = at_most_lambda(value, lam)
        head = f"Γ = {_pretty(panel['Gamma'])}" + (f" = {value:.3f}" if value is not None else "")
        mark = {True: "Γ ≤ λ", False: "Γ > λ", None: ""}[below]
        titles.append("\n".join(s for s in (head, mark, f"(frozen at t = {panel['freeze_round'] or 'never'})") if s))
    with kit.style():
        fig, axes, grid = kit.panel_grid(
            len(panels), titles=titles, legend_labels=[[] for _ in panels], ncols_max=len(panels), axes_w=2.3,
            axes_h=2.4, left=0.55, right=1.1,
            title="Figure 4 reproduced: routing shares per task after the gate froze (one replicate)\n"
                  + (f"λ = {lam:.3f}; " if lam is not None else "") + subtitle
                  + ("\nevery Γ routed the same tasks to the same experts after the freeze: the panels coincide"
                     if identical_panels(data) else ""),
        )
        image = None
        for ax, panel in zip(axes, panels):
            start, tasks, chosen = _post_freeze(panel)
            counts = [[0] * M for _ in range(N)]
            for n, m in zip(tasks, chosen):
                counts[n][m] += 1
            shares = [[c / max(1, sum(row)) for c in row] for row in counts]
            image = ax.imshow(shares, vmin=0, vmax=1, cmap="viridis", aspect="auto")
            for n in range(N):
                for m in range(M):
                    ax.text(m, n, f"{shares[n][m]:.2f}", ha="center", va="center", fontsize=6.5,
                            color="white" if shares[n][m] < 0.5 else "black")
            ax.set_xticks(range(M), [str(m + 1) for m in range(M)])
            ax.set_yticks(range(N), [str(n + 1) for n in range(N)])
            ax.set_xlabel("expert", fontsize=9)
            if at_most_lambda(gammas.get(str(panel["Gamma"])), lam):
                for spine in ax.spines.values():
                    spine.set_edgecolor(BELOW_LAMBDA)
                    spine.set_linewidth(3)
                ax.title.set_color(BELOW_LAMBDA)
        axes[0].set_ylabel("task", fontsize=9)
        width = grid.size[0]
        last = axes[-1].get_position()
        cax = fig.add_axes((last.x1 + 0.25 / width, last.y0, 0.15 / width, last.height), label="<colorbar>")
        fig.colorbar(image, cax=cax, label="share of the task's rounds after freezing")
    return fig


def build_fig5(data: dict, subtitle: str, lam: float | None = None, gammas: dict | None = None):
    """Figure 5: final forgetting and generalization error against Gamma, mean with 99% interval; thresholds
    with Gamma <= lambda shaded (drawn, not saved)."""
    gammas = gammas or {}
    rows = data["rows"]
    below = [at_most_lambda(r.get("value", gammas.get(str(r["Gamma"]))), lam) for r in rows]
    shade = f"Γ ≤ λ (λ = {lam:.3f})" if lam is not None and any(below) else None
    labels = ["mean, 99% interval"] + ([shade] if shade else [])
    with kit.style():
        fig, axes, grid = kit.panel_grid(
            2, titles=["final forgetting", "final generalization error"], legend_labels=[labels, labels],
            ncols_max=2, axes_w=4.0, axes_h=2.6,
            title=f"Figure 5 reproduced: final errors against Γ (mean, 99% interval)\n{subtitle}",
        )
        names = [_pretty(r["Gamma"]) for r in rows]
        for ax, metric in zip(axes, ("forgetting", "generalization")):
            ax.errorbar(range(len(rows)), [r[metric] for r in rows], yerr=[Z99 * r[metric + "_stderr"] for r in rows],
                        marker="o", capsize=4, label=labels[0])
            if shade:
                for i, flag in enumerate(below):
                    if flag:
                        ax.axvspan(i - 0.4, i + 0.4, color=BELOW_LAMBDA, alpha=0.12, linewidth=0,
                                   label=shade if i == below.index(True) else None)
            ax.set_xticks(range(len(rows)), names)
            ax.set_xlabel("termination threshold Γ", fontsize=9)
            ax.set_ylabel(f"final {metric}", fontsize=9)
            ax.grid(True, alpha=0.3)
            kit.legend_below(ax, grid, labels)
    return fig


def captions(run: RunResult) -> dict[str, str]:
    """Caption of each artifact figure present in ``run``, saying what is drawn and what the data show."""
    lam, gammas = thresholds(run)
    out = {}
    if "fig2_curves" in run.artifacts:
        out["fig2_curves"] = (
            "The paper's Figure 2, reproduced from this run: forgetting F_t (top) and generalization error G_t "
            "(bottom) against the round t for each number of experts M, with termination (left) and without "
            "(right); mean over replicates with its 99% band (± 2.576 s.e.).")
    if "fig2_sweep" in run.artifacts:
        data = run.artifacts["fig2_sweep"]
        out["fig2_sweep"] = (
            f"Figure 2's reproduction sweep: final forgetting F_T (left) and generalization error G_T (right) at "
            f"M = {data['M']} against the scale c of the feature signals v_n = c w_n, which the paper does not state, "
            "one colour per noise level σ_t, with termination (solid) and without (dashed); mean over the replicates "
            "of every task pool with its 99% band, on the same draws at every point (common random numbers). The "
            "dotted line is the convergence criterion's 'almost zero' level, a tenth of one expert's error.")
    if "fig4_routing" in run.artifacts:
        data = run.artifacts["fig4_routing"]
        text = ("The paper's Figure 4, reproduced from one replicate: for each termination threshold Γ, the share "
                "of each task's rounds (rows) routed to each expert (columns) after the gate froze.")
        if lam is not None:
            text += f" Panels with Γ ≤ λ (λ = {lam:.3f}) have a red frame and 'Γ ≤ λ' in their title."
        else:
            text += " The run records no λ, so no panel is marked Γ ≤ λ."
        if identical_panels(data):
            rounds = sorted({p["freeze_round"] for p in data["panels"]}, key=str)
            text += (" In this replicate every Γ routed the same tasks to the same experts after the gate froze "
                     f"(at t = {', '.join(map(str, rounds))}), so the panels are identical because the data are: "
                     "the threshold changed no routing decision here.")
        out["fig4_routing"] = text
    if "fig5_levels" in run.artifacts:
        text = ("The paper's Figure 5, reproduced: final forgetting and generalization error against the "
                "termination threshold Γ, mean over replicates with its 99% interval (± 2.576 s.e.)")
        shade = f"; thresholds with Γ ≤ λ (λ = {lam:.3f}) are shaded." if lam is not None else "."
        out["fig5_levels"] = text + shade
    return out


def builders(run: RunResult) -> dict:
    """Artifact name -> a function drawing its figure (not saved), for the artifacts present in ``run`` drawn as one
    figure (Figure 3 is drawn in parts: :func:`specs`)."""
    subtitle = kit.run_subtitle(run)
    lam, gammas = thresholds(run)
    table = {
        "fig2_curves": lambda data: build_fig2(data, subtitle),
        "fig2_sweep": lambda data: build_fig2_sweep(data, subtitle),
        "fig4_routing": lambda data: build_fig4(data, subtitle, lam, gammas),
        "fig5_levels": lambda data: build_fig5(data, subtitle, lam, gammas),
    }
    return {name: functools.partial(table[name], run.artifacts[name]) for name in table if name in run.artifacts}


def fig3_specs(run: RunResult) -> list[kit.FigureSpec]:
    """Figure 3's parts (:func:`fig3_figures.parts`), one figure and caption each, shown under every Figure 3 claim."""
    if "fig3_curves" not in run.artifacts:
        return []
    subtitle = kit.run_subtitle(run)
    claims = ARTIFACT_FIGURES["fig3_curves"][1]
    return [kit.FigureSpec(claims, fig3_figures.file_name(part), fig3_figures.caption(part),
                           functools.partial(fig3_figures.build_fig3, part, subtitle))
            for part in fig3_figures.parts(run.artifacts["fig3_curves"])]


def specs(run: RunResult) -> list[kit.FigureSpec]:
    texts = captions(run)
    out = [kit.FigureSpec(ARTIFACT_FIGURES[name][1], ARTIFACT_FIGURES[name][0], texts[name], build)
           for name, build in builders(run).items()]
    # Figure 3 after Figure 2, as the paper orders them.
    at = next((i + 1 for i, spec in enumerate(out) if spec.file == ARTIFACT_FIGURES["fig2_curves"][0]), 0)
    return out[:at] + fig3_specs(run) + out[at:]


def relative_paths(run: RunResult) -> dict[str, str]:
    """{claim id: its first figure file} for the artifacts present in ``run``."""
    out: dict[str, str] = {}
    for spec in specs(run):
        for cid in spec.claims:
            out.setdefault(cid, spec.file)
    return out


def write(run: RunResult, out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return [kit.save(spec.build(), out_dir / spec.file) for spec in specs(run)]
