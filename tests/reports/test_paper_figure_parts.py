"""The pack's own figures on hand-made results: Figure 3 drawn in parts of at most six panels (one per task
definition with its epochs check), each with one caption and listed under every Figure 3 claim; the "not
computed" figure; and claim c2's figure, selected from the curves open.balance_outside_gradient stores (the paper's
gate with and without termination, per regime and quantity, the chance level dashed, c2's window shaded)."""

from __future__ import annotations

import numpy as np
import pytest

from moecl_verify.checks.model import ClaimResult, RunResult
from moecl_verify.packs.moe_cl.experiments import balance_rules, open_questions as oq
from moecl_verify.packs.moe_cl.figures import artifact_figures, c2_figures, fig3_figures
from moecl_verify.reports import figures, panel_figures

pytestmark = pytest.mark.app

FIG3_CLAIMS = ("fig3.termination_converges", "fig3.no_termination_higher", "fig3.moe_beats_single",
               "fig3.more_experts_no_gain")
ROUNDS = [1, 2, 3, 4]


def _data_axes(fig):
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


def entry(cid, config=None, observed=0.1):
    return ClaimResult(id=cid, source="s", kind="qualitative", form="stated", verdict="refuted", expected=0.0,
                       observed=observed, stderr=0.01, p_value=0.5, false_fail_rate=1e-3, min_detectable=0.1,
                       config=config or {}, evidence="e", horizons=[], formula="Delta = a - b",
                       evidence_type="criterion")


def make_run(results, artifacts, claims=None) -> RunResult:
    ids = claims if claims is not None else list(dict.fromkeys(r.id for r in results))
    meta = {"budget": "smoke", "replicates": 10, "seed": 0}
    claims = tuple({"id": cid, "summary": "s", "source": "s", "kind": "qualitative", "statement": "x",
                    "preconditions": [], "notes": ""} for cid in ids)
    return RunResult(tuple(results), (), (), meta, claims, artifacts)


# --------------------------------------------------------------------------------------------- Figure 3


def fig3_block(definition, shift=0.0):
    series = []
    for termination in (True, False):
        for M in (1, 4, 7):
            values = [None] + [0.5 + shift + 0.01 * M * t for t in ROUNDS[1:]]
            series.append({"M": M, "termination": termination, "forgetting": values,
                           "forgetting_stderr": [None, 0.01, 0.01, 0.01],
                           "generalization": [0.9 - 0.1 * t for t in ROUNDS],
                           "generalization_stderr": [0.02] * 4})
    return {"definition": definition, "series": series}


def fig3_check(definition):
    return {"definition": definition, "M": 4, "termination": True, "replicates": 2, "epochs": [40, 80],
            "F_T": [0.3, 0.29], "F_T change": -0.01, "F_T change stderr": 0.02, "G_T": [0.5, 0.48],
            "G_T change": -0.02, "G_T change stderr": 0.03, "within-round change": 0.02,
            "within-round change stderr": 0.01, "status": "settled",
            "curves": {"forgetting": [[None, 0.3, 0.3, 0.3], [None, 0.29, 0.29, 0.29]],
                       "generalization": [[0.6, 0.5, 0.5, 0.5], [0.6, 0.48, 0.48, 0.48]]}}


def fig3_artifact(definitions=("mirrors", "split"), checks=("mirrors", "split")):
    """The shape :func:`packs.moe_cl.claims.figures.fig3.curves` stores (the full budget checks both definitions)."""
    return {"available": True, "data": "digits", "rounds": ROUNDS, "epochs": 40, "replicates": 2,
            "epoch_check": [fig3_check(d) for d in checks],
            "definitions": [fig3_block(d, 0.1 * i) for i, d in enumerate(definitions)]}


def fig3_run(data):
    return make_run([entry(cid) for cid in FIG3_CLAIMS], {"fig3_curves": data})


def test_figure3_is_one_figure_per_task_definition_with_its_epochs_check_under_it():
    run = fig3_run(fig3_artifact())
    specs = artifact_figures.fig3_specs(run)
    assert [s.file for s in specs] == ["fig_fig3_curves_1.png", "fig_fig3_curves_2.png"]
    for spec, definition in zip(specs, ("mirrors", "split")):
        axes = _data_axes(spec.build())
        assert len(axes) == 6
        titles = [ax.get_title() for ax in axes]
        assert [t.split("\n")[0] for t in titles[:4]] == [
            f"tasks: {definition}, forgetting", f"tasks: {definition}, forgetting",
            f"tasks: {definition}, generalization", f"tasks: {definition}, generalization"]
        assert all(t.startswith(f"epochs check: tasks {definition},") for t in titles[4:])
        for ax in axes[:4]:
            assert [t.get_text() for t in ax.get_legend().get_texts()] == ["single network (M = 1)", "M = 4",
                                                                           "M = 7"]
        # The check (M = 4 with termination) sits under the with-termination panels of its metrics.
        assert [round(ax.get_position().x0, 6) for ax in axes[4:]] == [round(axes[0].get_position().x0, 6),
                                                                       round(axes[2].get_position().x0, 6)]
        assert f"tasks: {definition}, part" in spec.caption and "epochs check" in spec.caption
        assert spec.claims == FIG3_CLAIMS
    assert specs[0].caption != specs[1].caption
    # Every Figure 3 claim shows every part, each once with its own caption.
    index = figures.figure_index(run)
    for cid in FIG3_CLAIMS:
        assert [f for f, _ in index[cid] if f.startswith("fig_fig3_curves")] == [s.file for s in specs]


def test_a_definition_without_an_epochs_check_has_four_panels_and_says_so():
    run = fig3_run(fig3_artifact(checks=("mirrors",)))
    first, second = artifact_figures.fig3_specs(run)
    assert len(_data_axes(first.build())) == 6 and len(_data_axes(second.build())) == 4
    assert "no epochs check" in second.caption and "no epochs check" not in first.caption


def test_checks_on_definitions_without_curves_get_figures_of_their_own_and_none_exceeds_six_panels():
    data = fig3_artifact(definitions=("mirrors", "split", "third"),
                         checks=("mirrors", "other", "more", "again", "fourth"))
    pieces = fig3_figures.parts(data)
    assert [[b["definition"] for b in p["definitions"]] for p in pieces] == [["mirrors"], ["split"], ["third"], [],
                                                                             []]
    assert [[c["definition"] for c in p["epoch_check"]] for p in pieces] == [
        ["mirrors"], [], [], ["other", "more", "again"], ["fourth"]]
    assert [p["part"] for p in pieces] == [(k, 5) for k in range(1, 6)]
    counts = [len(_data_axes(fig3_figures.build_fig3(p, "t"))) for p in pieces]
    assert counts == [6, 4, 4, 6, 2]
    assert [fig3_figures.file_name(p) for p in pieces] == [f"fig_fig3_curves_{k}.png" for k in range(1, 6)]


def test_a_whole_artifact_of_several_definitions_is_refused_in_one_figure():
    with pytest.raises(ValueError, match="at most 6"):
        fig3_figures.build_fig3(fig3_artifact(), "t")


def test_an_older_single_check_dict_and_a_single_definition_make_one_figure():
    data = {**fig3_artifact(definitions=("mirrors",)), "epoch_check": fig3_check("mirrors")}
    (part,) = fig3_figures.parts(data)
    assert fig3_figures.file_name(part) == "fig_fig3_curves.png" and "part" not in part
    assert len(_data_axes(fig3_figures.build_fig3(part, "t"))) == 6


def test_figure3_not_computed_is_one_figure_whose_caption_says_why():
    run = fig3_run({"available": False, "reason": "needs jax, scikit-learn"})
    (spec,) = artifact_figures.fig3_specs(run)
    assert spec.file == "fig_fig3_curves.png"
    fig = spec.build()
    assert not _data_axes(fig) and any("needs jax" in t.get_text() for t in fig.texts)
    assert "not computed" in spec.caption and "needs jax" in spec.caption and "F_t and G_t" not in spec.caption


# --------------------------------------------------------------------------------------------- claim c2


def balance_runs(chance_without=None):
    """Hand-made per-replicate summaries of every variant of open.balance_outside_gradient on pool 0, as
    :func:`open_questions.simulate` returns them: each variant a constant level per quantity (its index), the
    chance level 1/N (or ``chance_without`` for the paper's gate without termination)."""
    runs = {}
    for regime in oq.REGIMES.values():
        bins = len(oq.bin_centres(regime))
        for i, variant in enumerate(balance_rules.VARIANTS):
            chance = 1.0 / regime.N
            if chance_without is not None and variant.label == balance_rules.label("aux", False):
                chance = chance_without
            runs[(regime.name, 0, variant.label)] = {
                "purity_bins": np.full((3, bins), 0.3 + 0.01 * i), "chance_bins": np.full((3, bins), chance),
                "generalization_bins": np.full((3, bins), 1.0 + i), "forgetting_bins": np.full((3, bins), 2.0 + i)}
    return runs


def balance_artifact(**kwargs):
    """The artifact as open.balance_outside_gradient's ``curves`` builds it from those runs."""
    groups = [("with termination", [balance_rules.label(r, True) for r, _, _ in balance_rules.RULES]),
              ("no termination", [balance_rules.label(r, False) for r, _, _ in balance_rules.RULES])]
    return {"claim": "open.balance_outside_gradient", **oq.curves_panels(balance_runs(**kwargs), groups,
                                                                          oq.QUANTITIES)}


def c2_entries():
    return [entry("c2", {"regime": regime.name, "pool": k, "T": regime.T}) for regime in oq.REGIMES.values()
            for k in (0, 1)]


def test_c2_series_labels_are_those_of_the_balancing_runs():
    assert c2_figures.WITH == balance_rules.label("aux", True)
    assert c2_figures.WITHOUT == balance_rules.label("aux", False)


def test_c2_figure_shows_the_papers_gate_with_and_without_termination_per_regime_and_quantity():
    run = make_run(c2_entries() + [entry("open.balance_outside_gradient")],
                   {"open_balance_outside_gradient": balance_artifact()})
    (spec,) = c2_figures.specs(run)
    assert spec.file == "fig_c2_curves.png" and spec.claims == ("c2",)
    axes = _data_axes(spec.build())
    assert [ax.get_title() for ax in axes] == [
        f"{name} regime: {quantity}" for name in ("paper", "specializing")
        for quantity in ("routing purity", "generalization error G_t", "forgetting F_t")]
    aux_with = balance_rules.LABELS.index(balance_rules.label("aux", True))
    aux_without = balance_rules.LABELS.index(balance_rules.label("aux", False))
    for ax, regime in zip(axes, [r for r in oq.REGIMES.values() for _ in range(3)]):
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        lines = {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
        if "purity" in ax.get_title():
            assert legend == [c2_figures.WITH, c2_figures.WITHOUT, "chance level", c2_figures.SPAN_LABEL]
            chance = lines["chance level"]
            assert chance.get_linestyle() == "--" and np.allclose(chance.get_ydata(), 1.0 / regime.N)
            # The shaded span is c2's late window: rounds T - T // 4 + 1 to T.
            (span,) = [p for p in ax.patches if p.get_label() == c2_figures.SPAN_LABEL]
            assert (span.get_x(), span.get_x() + span.get_width()) == (regime.late, regime.T)
            expected = {c2_figures.WITH: 0.3 + 0.01 * aux_with, c2_figures.WITHOUT: 0.3 + 0.01 * aux_without}
        else:
            assert legend == [c2_figures.WITH, c2_figures.WITHOUT]
            base = 1.0 if "G_t" in ax.get_title() else 2.0
            expected = {c2_figures.WITH: base + aux_with, c2_figures.WITHOUT: base + aux_without}
        # The drawn means are the artifact's series of the paper's gate, not another rule's.
        for label, level in expected.items():
            assert np.allclose(lines[label].get_ydata(), level)
            assert list(lines[label].get_xdata()) == oq.bin_centres(regime)
    assert "with termination of gate training and without" in spec.caption and "shaded" in spec.caption
    # In c2's section, before its per-kind figures.
    index = figures.figure_index(run)
    assert index["c2"][0] == (spec.file, spec.caption)
    assert all(f != spec.file for cid, figs in index.items() if cid != "c2" for f, _ in figs)


def test_c2_figure_keeps_both_chance_levels_when_they_differ_and_shades_nothing_without_c2_entries():
    data = c2_figures.select(balance_artifact(chance_without=0.2))
    purity = [p for p in data["panels"] if p["ylabel"] == c2_figures.PURITY]
    assert len(purity) == 2 and not any(p.get("spans") for p in data["panels"])
    for panel in purity:
        assert [r["label"] for r in panel["references"]] == [f"chance level ({c2_figures.WITH})",
                                                             f"chance level ({c2_figures.WITHOUT})"]
        assert panel["references"][1]["y"][0] == pytest.approx(0.2)
    assert "each variant's chance level" in c2_figures.caption(data)
    assert "each variant's chance level" not in c2_figures.caption(c2_figures.select(balance_artifact()))


def test_no_c2_figure_without_the_claim_or_without_the_curves():
    artifact = {"open_balance_outside_gradient": balance_artifact()}
    assert c2_figures.specs(make_run([entry("open.balance_outside_gradient")], artifact)) == []
    assert c2_figures.specs(make_run(c2_entries(), {})) == []
    assert c2_figures.select({"panels": []}) is None


# --------------------------------------------------------------------------------------------- all together


@pytest.mark.heavy
def test_no_figure_of_the_pack_holds_more_than_six_panels_and_each_has_one_caption(tmp_path):
    results = [entry(cid) for cid in FIG3_CLAIMS] + c2_entries() + [entry("open.balance_outside_gradient")]
    run = make_run(results, {"fig3_curves": fig3_artifact(), "open_balance_outside_gradient": balance_artifact()})
    specs = figures.specs(run)
    files = [s.file for s in specs]
    assert len(files) == len(set(files))
    for spec in specs:
        assert len(_data_axes(spec.build())) <= 6, spec.file
    drawn = {"fig_fig3_curves_1.png", "fig_fig3_curves_2.png", "fig_c2_curves.png",
             "fig_open_balance_outside_gradient_curves_1.png", "fig_open_balance_outside_gradient_curves_2.png"}
    assert drawn <= set(files)
    captions = {f: c for figs in figures.figure_index(run).values() for f, c in figs}
    assert drawn <= set(captions)
    for spec in specs:
        if spec.file in drawn:  # drawn again from the same results, byte for byte the same PNG
            one = panel_figures.save(spec.build(), tmp_path / ("a_" + spec.file))
            two = panel_figures.save(spec.build(), tmp_path / ("b_" + spec.file))
            assert one.read_bytes() == two.read_bytes(), spec.file
