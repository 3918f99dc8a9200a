"""Figure kinds on small hand-made results: coverage of every claim with numbers, one caption per kind, at most
six series per panel, error bars on scaling points, Figure 4's Gamma <= lambda marks, and an index that names
the files actually written."""

from __future__ import annotations

import pytest
from matplotlib.container import ErrorbarContainer

from moecl_verify.checks.model import ClaimResult, RunResult
from moecl_verify.reports import figures, panel_figures
from moecl_verify.packs.moe_cl.figures import artifact_figures

pytestmark = pytest.mark.app

Z99 = 2.576
OLD_GENERIC = "each form's formula against the Monte Carlo mean with its 99% band"


def entry(cid, evidence_type, *, observed=1.0, expected=0.0, stderr=0.1, config=None, horizons=None,
          kind="bound", form="stated", verdict="confirmed", formula=""):
    return ClaimResult(id=cid, source="eq. (1)", kind=kind, form=form, verdict=verdict, expected=expected,
                       observed=observed, stderr=stderr, p_value=0.5, false_fail_rate=1e-3, min_detectable=0.1,
                       config=config or {}, evidence="e", horizons=horizons or [], formula=formula,
                       evidence_type=evidence_type)


def closed_form():
    rows = [{"t": t, "expected": 1.0 / t, "observed": 1.0 / t + 0.01, "stderr": 0.02} for t in (2, 4, 8)]
    return [entry("cf", "mean", kind="expected-value identity", form=f, config={"features": "gaussian"},
                  horizons=rows) for f in ("stated", "derived")]


def difference():
    def rows(shift):
        return [{"t": t, "expected": 0.0, "observed": shift / t, "stderr": 0.01} for t in (3, 10, 30)]
    return [entry("diff", "mean", kind="expected-value identity", horizons=rows(s),
                  config={"features": f, "part": p}) for f in ("gaussian", "definition1")
            for p, s in (("oracle router", 0.1), ("learned router", -0.2))]


def bound_margins(cid="thm", configs=("", "Figure 2 configuration, M = 10", "Figure 2 configuration, M = 20")):
    """Theorem-1-like criterion entries: margins per pool and horizon, in three configurations x two pools."""
    out = []
    for conf in configs:
        for pool in (0, 1):
            rows = [{"case": f"pool {pool}, t={t}", "expected": 0.0, "observed": -0.1 * t, "stderr": 0.05}
                    for t in (2, 5, 10, 20)]
            out.append(entry(cid, "criterion", horizons=rows, config={"features": "definition1",
                                                                      "part": conf, "pool": pool},
                             formula="E[F_t] < E[RHS]: Delta = E[RHS - F_t] > 0"))
    return out


def bound_terms():
    rows = [{"t": t, "expected": 0.0, "observed": 0.5, "stderr": 0.05, "rhs": 2.0 + t, "measured": 1.5 + t,
             "measured_stderr": 0.1} for t in (2, 5, 10)]
    return [entry("rhs", "criterion", horizons=rows, config={"features": "gaussian", "pool": p})
            for p in (0, 1)]


def criterion_cases():
    """c5-like: one case counted in rounds and one in errors, per pool."""
    return [entry("crit", "criterion", kind="qualitative", config={"features": "definition1", "pool": p},
                  horizons=[{"case": f"pool {p}, delay (freeze round)", "expected": 0.0, "observed": 18.0,
                             "stderr": 0.2},
                            {"case": f"pool {p}, no gain (G_T)", "expected": 0.0, "observed": 0.3, "stderr": 0.02}])
            for p in (0, 1)]


def sigma_cases(cid="est", tasks=3):
    rows = [{"case": f"sigma0={s}, n={n}", "expected": 1 / 3, "observed": 0.3 + 0.01 * n, "stderr": 0.01}
            for s in (0.4, 0.2, 0.1) for n in range(tasks)]
    return [entry(cid, "mean", kind="probability", expected=1 / 3, horizons=rows,
                  config={"part": "M = 6", "hidden_constant": c})
            for c in (1, 0.5)]


def probabilities():
    def rows(per_sigma):
        return [{"sigma0": s, "successes": k, "trials": 100, "probability": k / 100, "low": k / 100 - 0.05,
                 "high": k / 100 + 0.05} for s in (0.4, 0.2, 0.1) for k in range(40, 40 + per_sigma)]
    sweep = [entry("prob", "proportion", kind="probability", observed=0.4, expected=0.6,
                   config={"part": "Algorithm 1 M = 6", "hidden_constant": c, "probabilities": rows(1),
                           "null": "P(event) >= 0.6"})
             for c in (1, 0.5)]
    per_task = [entry("prob", "proportion", kind="probability", observed=0.4, expected=0.1,
                      config={"part": "empty sets", "hidden_constant": 1, "probabilities": rows(3),
                              "null": "P(event) <= 0.1"})]
    pooled = [entry("pooled", "proportion", kind="bound", observed=0.98, expected=0.0,
                    config={"part": "statement simulated", "null": "P(event) <= 0",
                            "probabilities": [{"successes": 98, "trials": 100, "probability": 0.98, "low": 0.95,
                                               "high": 0.99}]})]
    return sweep + per_task + pooled


SIGMA0 = (0.4, 0.2, 0.1, 0.05)


def scaling(cid="scal", parts=("gap", "rounds"), with_se=True, constants=(1, 0.5)):
    out = []
    for part in parts:
        for c in constants:
            means = [{"sigma0": s, "mean": c * s**1.5, **({"stderr": 0.1 * c * s**1.5} if with_se else {})}
                     for s in SIGMA0]
            out.append(entry(cid, "scaling", kind="scaling", observed=1.5, expected=1.0, stderr=0.02,
                             config={"part": part, "hidden_constant": c, "means": means, "fitted_constant": c,
                                     "exponent_interval": [1.4, 1.6]}))
    return out


def artifacts(identical=True):
    tasks = [0, 1, 2, 0, 1, 2, 0, 1]
    chosen = [0, 1, 2, 0, 1, 2, 0, 1]
    panels = [{"Gamma": g, "freeze_round": 2, "tasks": tasks,
               "chosen": chosen if identical or i == 0 else [1] * len(tasks)}
              for i, g in enumerate(("sigma0^0.75", "sigma0", "sigma0^1.25", "sigma0^1.5"))]
    series = [{"M": M, "termination": term, "forgetting": [None, 1.0, 0.9], "forgetting_stderr": [0.0, 0.1, 0.1],
               "generalization": [2.0, 1.5, 1.2], "generalization_stderr": [0.1, 0.1, 0.1]}
              for term in (True, False) for M in (1, 5)]
    rows = [{"Gamma": g, "value": v, "forgetting": 1.0, "forgetting_stderr": 0.1, "generalization": 2.0,
             "generalization_stderr": 0.1} for g, v in (("sigma0^0.75", 0.5), ("sigma0", 0.4), ("sigma0^1.25", 0.3),
                                                        ("sigma0^1.5", 0.25))]
    return {"fig2_curves": {"rounds": [1, 2, 3], "series": series},
            "fig4_routing": {"N": 3, "M": 3, "panels": panels},
            "fig5_levels": {"rows": rows}}


GAMMAS = {"sigma0^0.75": 0.5, "sigma0": 0.4, "sigma0^1.25": 0.3, "sigma0^1.5": 0.25}


def fig_entries():
    config = {"lam": 0.3, "Gammas": GAMMAS, "pool": 0}
    cases = [{"case": "sigma0^0.75 vs sigma0^1.25", "expected": 0.0, "observed": -0.001, "stderr": 0.002}]
    return [entry("fig4.balance", "criterion", kind="qualitative", horizons=cases, config=config)]


def make_run(results, identical=True) -> RunResult:
    results = tuple(results)
    ids = list(dict.fromkeys(r.id for r in results))
    claims = tuple({"id": cid, "summary": "s", "source": "eq. (1)", "kind": "bound", "statement": "x",
                    "preconditions": [], "notes": ""} for cid in ids)
    return RunResult(results, (), (), {"budget": "smoke", "replicates": 10, "seed": 0}, claims,
                     artifacts(identical))


ALL = (closed_form() + difference() + bound_margins() + bound_terms() + criterion_cases() + sigma_cases()
       + probabilities() + scaling() + fig_entries()
       + [entry("exact", "exact", observed=None, expected=None, stderr=None),
          entry("plain", "mean", observed=0.4, expected=0.5, stderr=0.01, config={"part": "pooled reading"})])


@pytest.fixture(scope="module")
def run():
    return make_run(ALL)


@pytest.fixture(scope="module")
def written(run, tmp_path_factory):
    out = tmp_path_factory.mktemp("figs")
    return out, figures.write(run, out)


def _data_axes(fig):
    # Colorbars are axes too; they hold no series.
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


def test_every_claim_with_a_number_gets_a_figure_and_exact_only_claims_none(run):
    index = figures.figure_index(run)
    with_numbers = {r.id for r in run.results if r.observed is not None}
    assert with_numbers <= set(index)
    assert "exact" not in index
    # The paper's figures go to the claims they illustrate, first in their lists.
    assert index["fig4.balance"][0][0] == "fig_fig4_routing.png"
    for cid in ("fig2.termination_converges", "fig2.more_experts_no_gain"):
        assert index[cid][0][0] == "fig_fig2_curves.png"
    # A claim with scaling and probability entries would get both; one with several criteria kinds likewise.
    assert [f for f, _ in index["prob"]] == ["fig_prob_probability.png"]


def test_index_names_exactly_the_files_written_and_relative_paths_take_the_first(run, written):
    out, paths = written
    indexed = {f for figs in figures.figure_index(run).values() for f, _ in figs}
    assert {p.name for p in paths} == indexed
    assert all(p.parent == out and p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)
    assert figures.relative_paths(run) == {cid: figs[0][0] for cid, figs in figures.figure_index(run).items()}


def test_redrawn_figures_are_byte_identical(run, written, tmp_path):
    out, _ = written
    for spec in figures.specs(run)[::4]:
        again = panel_figures.save(spec.build(), tmp_path / spec.file)
        assert again.read_bytes() == (out / spec.file).read_bytes(), spec.file


def test_each_kind_has_its_own_caption_that_says_what_is_drawn(run):
    index = figures.figure_index(run)
    by_file = {f: c for figs in index.values() for f, c in figs}
    words = {
        "fig_cf.png": "formula",
        "fig_diff_difference.png": "Paired difference",
        "fig_thm_margin.png": "Margin",
        "fig_rhs_bound.png": "right-hand side",
        "fig_crit_margin.png": "rounds",
        "fig_est_estimates.png": "σ0",
        "fig_prob_probability.png": "Wilson",
        "fig_scal_scaling.png": "log-log",
        "fig_fig4_routing.png": "Γ ≤ λ",
        "fig_fig2_curves.png": "Figure 2",
        "fig_fig5_levels.png": "Figure 5",
        "fig_plain_estimates.png": "per case",
    }
    for file, word in words.items():
        assert word in by_file[file], (file, by_file[file])
    kinds = ["fig_cf.png", "fig_diff_difference.png", "fig_thm_margin.png", "fig_rhs_bound.png",
             "fig_est_estimates.png", "fig_prob_probability.png", "fig_scal_scaling.png", "fig_fig4_routing.png"]
    assert len({by_file[f] for f in kinds}) == len(kinds)
    assert all(OLD_GENERIC not in c for c in by_file.values())


def test_no_panel_holds_more_than_six_series_and_legends_sit_outside_the_data():
    crowded = make_run(scaling("many", parts=("a", "b", "c", "d", "e")) + bound_margins("wide")
                       + scaling("four", parts=("gap",), constants=(2, 1, 0.5, 0.25)) + sigma_cases("tasks", 8)
                       + probabilities() + difference() + criterion_cases())
    for spec in figures.specs(crowded):
        fig = spec.build()
        for ax in _data_axes(fig):
            handles, _ = ax.get_legend_handles_labels()
            assert len(handles) <= 6, spec.file
            assert len(ax.containers) <= 6, spec.file
            legend = ax.get_legend()
            if legend is not None:
                # The legend's anchor lies below the axes (negative axes fraction), not over the data.
                assert legend.get_bbox_to_anchor().transformed(ax.transAxes.inverted()).y1 < 0, spec.file
    # Ten scaling entries (five quantities x two constants): five panels, two entries each.
    scaling_spec = next(s for s in figures.specs(crowded) if s.file == "fig_many_scaling.png")
    assert len(_data_axes(scaling_spec.build())) == 5
    # Four constants of one quantity: two panels of two.
    four = next(s for s in figures.specs(crowded) if s.file == "fig_four_scaling.png")
    assert [len(ax.containers) for ax in _data_axes(four.build())] == [2, 2]


def test_different_quantities_get_different_panels():
    run = make_run(scaling("prop3like", parts=("(a) termination round T2", "gap at T2")) + criterion_cases())
    specs = {s.file: s for s in figures.specs(run)}
    scaling_axes = _data_axes(specs["fig_prop3like_scaling.png"].build())
    assert [ax.get_title() for ax in scaling_axes] == ["(a) termination round T2", "gap at T2"]
    crit_axes = _data_axes(specs["fig_crit_margin.png"].build())
    labels = [ax.get_xlabel() for ax in crit_axes]
    assert len(crit_axes) == 2 and "in rounds" in labels[0] and "in rounds" not in labels[1]
    rounds_ticks = [t.get_text() for t in crit_axes[0].get_yticklabels()]
    assert rounds_ticks == ["delay (freeze round)"]


def test_scaling_points_carry_99_percent_error_bars_from_the_recorded_standard_errors():
    run = make_run(scaling("scal", parts=("gap",)))
    spec = next(s for s in figures.specs(run) if s.file == "fig_scal_scaling.png")
    (ax,) = _data_axes(spec.build())
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 2 and all(c.has_yerr for c in bars)
    for c, const in zip(bars, (1, 0.5)):
        segments = sorted(c.lines[2][0].get_segments(), key=lambda seg: seg[0][0])
        for seg, s in zip(segments, sorted(SIGMA0)):
            mean, se = const * s**1.5, 0.1 * const * s**1.5
            assert seg[0][0] == pytest.approx(s)
            assert seg[1][1] - seg[0][1] == pytest.approx(2 * Z99 * se)
            assert (seg[0][1] + seg[1][1]) / 2 == pytest.approx(mean)
    assert "do not record the standard error" not in spec.caption


def test_scaling_without_recorded_standard_errors_says_so_instead_of_drawing_bars():
    run = make_run(scaling("bare", parts=("gap",), with_se=False))
    (spec,) = [s for s in figures.specs(run) if s.file == "fig_bare_scaling.png"]
    (ax,) = _data_axes(spec.build())
    assert not any(c.has_yerr for c in ax.containers if isinstance(c, ErrorbarContainer))
    assert "do not record the standard error" in spec.caption


def test_bound_terms_are_drawn_against_each_other_when_recorded():
    run = make_run(bound_terms())
    (spec,) = [s for s in figures.specs(run) if s.file == "fig_rhs_bound.png"]
    (ax,) = _data_axes(spec.build())
    rhs = [line for line in ax.get_lines() if line.get_label().endswith("right-hand side")]
    assert len(rhs) == 2
    assert sorted(round(y, 6) for y in rhs[0].get_ydata()) == [4.0, 7.0, 12.0]


def test_margins_against_the_horizon_have_a_zero_line_and_one_series_per_pool():
    run = make_run(bound_margins())
    (spec,) = [s for s in figures.specs(run) if s.file == "fig_thm_margin.png"]
    axes = _data_axes(spec.build())
    assert len(axes) == 3  # one panel per configuration, pools side by side
    for ax in axes:
        _, labels = ax.get_legend_handles_labels()
        assert sorted(labels) == sorted(["pool 0", "pool 1", "Δ = 0 (the criterion's boundary)"])
        zero = [line for line in ax.get_lines() if line.get_label().startswith("Δ = 0")]
        assert list(zero[0].get_ydata()) == [0, 0]


@pytest.mark.parametrize("identical", [True, False])
def test_figure4_marks_gamma_at_most_lambda_and_says_when_panels_coincide(identical):
    run = make_run(fig_entries(), identical=identical)
    spec = next(s for s in artifact_figures.specs(run) if s.file == "fig_fig4_routing.png")
    axes = _data_axes(spec.build())
    # lambda = 0.3: sigma0^1.25 (= 0.3, equal) and sigma0^1.5 (0.25) are at most lambda, the others above.
    marked = ["Γ ≤ λ" in ax.get_title() for ax in axes]
    assert marked == [False, False, True, True]
    assert all(("Γ > λ" in ax.get_title()) != m for ax, m in zip(axes, marked))
    for ax, m in zip(axes, marked):
        widths = {spine.get_linewidth() for spine in ax.spines.values()}
        assert (max(widths) > 2) == m
    assert ("identical" in spec.caption) == identical


def test_an_open_question_figure_holds_at_most_six_panels():
    """An artifact of twelve panels (two regimes of six) is drawn as two figures of six, in order."""
    from moecl_verify.packs.moe_cl.figures import open_figures

    panel = {"title": "t", "ylabel": "y", "x": [1, 2], "series": [{"label": "a", "mean": [0.1, 0.2],
                                                                     "lower": [0.0, 0.1], "upper": [0.2, 0.3]}]}
    data = {"claim": "open.x", "panels": [dict(panel, title=f"p{i}") for i in range(12)]}
    pieces = open_figures.parts(data)
    assert [len(p["panels"]) for p in pieces] == [6, 6]
    assert [p["title"] for p in pieces[1]["panels"]] == [f"p{i}" for i in range(6, 12)]
    assert open_figures.parts({**data, "panels": data["panels"][:6]}) == [{**data, "panels": data["panels"][:6]}]
