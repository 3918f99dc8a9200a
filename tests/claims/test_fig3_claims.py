"""Figure 3's claims on a tiny context (16 rounds, one epoch, tiny networks, 2 replicates): one entry per
task definition naming its data set, margins recomputed from the runs, small-sample standard errors as
strict as Student's t, the epochs check, the curves artifact; and the not-checkable path without JAX."""

import dataclasses
import gzip
import math
import struct

import numpy as np
import pytest
from scipy import stats

from moecl_verify.packs.moe_cl.claims.figures import fig3
from moecl_verify.checks.context import BUDGETS, Context, context_for
from moecl_verify.packs.moe_cl import PACK
from moecl_verify.checks.decide import decide_claims
from moecl_verify.packs.moe_cl.experiments import fig3_runs
from moecl_verify.checks.model import ClaimResult
from moecl_verify.checks.kinds.mean import Measurement

# One worker builds the module's tiny runs (and compiles their networks) once.
pytestmark = pytest.mark.xdist_group("fig3")

IDS = ("fig3.moe_beats_single", "fig3.termination_converges", "fig3.no_termination_higher",
       "fig3.more_experts_no_gain")
MEASURES = {"fig3.moe_beats_single": fig3.measure_moe_beats_single,
            "fig3.termination_converges": fig3.measure_converges,
            "fig3.no_termination_higher": fig3.measure_no_termination,
            "fig3.more_experts_no_gain": fig3.measure_more_experts}


def test_margin_helpers_on_hand_made_curves():
    x = np.array([[np.nan, 0.2, 0.5, 0.3, 0.4, 0.35, 0.36, 0.30, 0.31]])
    assert fig3.rise(x, "forgetting")[0] == pytest.approx(0.3)  # peak 0.5 after the first value 0.2 (t = 2)
    assert fig3.peak(x, "forgetting")[0] == pytest.approx(0.5)
    # final quarter of 9 rounds = the last 2 steps, from round 7 on: 0.36 -> 0.30 -> 0.31 climbs 0.01
    assert fig3.climb(x)[0] == pytest.approx(0.01)
    g = np.array([[0.9, 0.5, 0.4, 0.3]])
    assert fig3.rise(g, "generalization")[0] == pytest.approx(-0.4)  # a curve that only falls did not rise


def test_a_diverged_replicate_is_left_out_of_a_margin_and_named():
    case = fig3.paired("c", np.array([0.1, np.nan, 0.3, 0.2]))
    assert case.test.n == 3 and case.test.observed == pytest.approx(0.2)
    assert fig3.paired("c", np.array([np.nan, 0.4])).test.stderr == math.inf  # one value: undecidable
    ok = {"forgetting": np.array([[np.nan, 0.1, 0.2]] * 3), "generalization": np.ones((3, 3))}
    bad = {"forgetting": ok["forgetting"].copy(), "generalization": np.ones((3, 3))}
    bad["generalization"][2, 1] = np.inf
    runs = {1: {"on": ok, "off": ok}, 4: {"on": ok, "off": bad}}
    assert fig3.diverged(runs) == {"M=4, without termination": [2]}


@pytest.mark.parametrize("n", [2, 3, 10])
def test_t_equivalent_standard_error_gives_students_p_value(n):
    rng = np.random.default_rng(n)
    d = rng.normal(0.3, 0.2, size=n)
    case = fig3.paired("c", d)
    t = d.mean() / (d.std(ddof=1) / math.sqrt(n))
    assert case.test.n == n and case.test.observed == pytest.approx(d.mean())
    assert stats.norm.sf(case.test.observed / case.test.stderr) == pytest.approx(stats.t.sf(t, n - 1), rel=1e-6)
    assert case.test.stderr > d.std(ddof=1) / math.sqrt(n)  # stricter than the plain normal test


def test_without_the_dnn_extra_every_entry_is_not_checkable_and_says_how_to_install(monkeypatch):
    # Hide every module of the extra, so the test holds whether the machine has none, some or all of it.
    real = fig3_runs.importlib.import_module
    hidden = set(fig3_runs.REQUIRED)

    def without_the_extra(name, *args, **kwargs):
        if name.split(".")[0] in hidden:
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(fig3_runs.importlib, "import_module", without_the_extra)
    ctx = context_for(PACK, "smoke", 0)
    assert fig3_runs.missing_libraries(ctx) == ["jax", "scikit-learn"]
    for claim_id in IDS:
        entries = MEASURES[claim_id](ctx)
        assert [e.key.part for e in entries] == [f"tasks: {d}" for d in fig3_runs.DEFINITIONS]
        for e in entries:
            assert isinstance(e, ClaimResult) and e.id == claim_id
            assert e.verdict == "not_checkable" and e.evidence_type == "exact" and e.p_value is None
            assert "jax" in e.evidence and "scikit-learn" in e.evidence and 'pip install "moecl-verify[dnn]"' in e.evidence \
                and 'pip install ".[dnn]"' in e.evidence
    assert fig3.curves(ctx) == {"available": False, "reason": fig3_runs.unavailable_reason(["jax", "scikit-learn"])}


def test_with_mnist_files_only_jax_is_needed(monkeypatch, tmp_path):
    # With --mnist, scikit-learn's bundled digits are not read, so only jax is asked for.
    real = fig3_runs.importlib.import_module

    def without_the_extra(name, *args, **kwargs):
        if name.split(".")[0] in set(fig3_runs.REQUIRED):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(fig3_runs.importlib, "import_module", without_the_extra)
    ctx = context_for(PACK, "smoke", 0, {"mnist_dir": str(tmp_path)})
    assert fig3_runs.missing_libraries(ctx) == ["jax"]


@pytest.fixture(scope="module")
def tiny():
    pytest.importorskip("jax", reason="Figure 3's networks need JAX: pip install '.[dnn]'")
    pytest.importorskip("sklearn", reason="the bundled digits need scikit-learn: pip install '.[dnn]'")
    mp = pytest.MonkeyPatch()
    mp.setattr(fig3_runs, "EPOCHS", 1)
    mp.setattr(fig3_runs, "WIDTHS", dict(conv1=2, conv2=2, fc1=8, fc2=8))
    mp.setattr(fig3_runs, "TEST_SIZE", {"digits": 20, "mnist": 20})
    sizes = dataclasses.replace(PACK.budgets["smoke"], fig3_rounds=16, fig3_replicates=2, fig3_check_replicates=2)
    ctx = Context(budget=BUDGETS["smoke"], seed=0, sizes=sizes)
    measured = {claim_id: MEASURES[claim_id](ctx) for claim_id in IDS}
    yield ctx, measured
    mp.undo()


def test_one_criterion_entry_per_task_definition_naming_its_data_set(tiny):
    ctx, measured = tiny
    for claim_id, entries in measured.items():
        assert [m.config["part"] for m in entries] == ["tasks: mirrors", "tasks: split"]
        for m in entries:
            assert isinstance(m, Measurement) and m.rule == "positive" and m.form == "stated"
            assert m.config["data"] == "scikit-learn digits (8 x 8, 1,797 images)"
            assert "data: scikit-learn digits" in m.formula and f"tasks: {m.config['definition']}" in m.formula
            assert m.config["T"] == 16 and m.config["replicates"] == 2 and all(h.test.n == 2 for h in m.tests)
    decided = decide_claims([measured[c] for c in IDS], 1e-3)  # the run's one decision takes them as they are
    assert all(r.verdict in ("confirmed", "refuted", "inconclusive") for rs in decided for r in rs)


def test_margins_are_the_paired_differences_of_the_runs(tiny):
    ctx, measured = tiny
    for m in measured["fig3.moe_beats_single"]:
        single = fig3_runs.run(ctx, m.config["definition"], 1)["on"]
        four = fig3_runs.run(ctx, m.config["definition"], 4)["on"]
        case = {h.horizon: h.test for h in m.tests}["G, M=4"]
        d = single["generalization"][:, -1] - four["generalization"][:, -1]
        assert case.observed == pytest.approx(d.mean())
    for m in measured["fig3.no_termination_higher"]:
        runs = fig3_runs.run(ctx, m.config["definition"], 7)
        case = {h.horizon: h.test for h in m.tests}["F, M=7 ends higher"]
        assert case.observed == pytest.approx(np.mean(runs["off"]["forgetting"][:, -1] - runs["on"]["forgetting"][:, -1]))
    for m in measured["fig3.more_experts_no_gain"]:
        r = {M: fig3_runs.run(ctx, m.config["definition"], M)["on"]["generalization"][:, -1] for M in (1, 4, 7)}
        case = {h.horizon: h.test for h in m.tests}["G not better"]
        assert case.observed == pytest.approx(np.mean(r[7] - r[4] + 0.05 * r[1]))


def test_gate_parameters_come_from_sigma0_and_the_gate_freezes_after_T1(tiny):
    ctx, measured = tiny
    cfg = measured["fig3.termination_converges"][0].config
    assert cfg["eta"] == pytest.approx(cfg["sigma0"] ** 0.5) and cfg["lam"] == pytest.approx(cfg["sigma0"] ** 1.25)
    assert cfg["T1"] == {str(M): math.ceil(M / cfg["eta"]) for M in (1, 4, 7)}
    # The runs train for the epochs the module says when they run (here the tiny context's one epoch).
    assert fig3_runs.engine_config(fig3_runs.tasks(ctx, "mirrors"), 4, 16).epochs == fig3_runs.EPOCHS == 1
    assert all(c < 0 for c in cfg["gate_input_cosines"])  # centered inputs: the tasks point apart
    runs = fig3_runs.run(ctx, "mirrors", 4)
    frozen = runs["on"]["freeze_round"]
    assert np.all((frozen == 0) | (frozen > cfg["T1"]["4"]))


def test_on_an_accelerator_the_runs_take_the_batched_engine_and_get_the_same_results(tiny, monkeypatch):
    from moecl_verify.numeric import dnn, dnn_batch

    ctx, measured = tiny
    cfg = measured["fig3.moe_beats_single"][0].config
    assert cfg["device"] == dnn.device() and cfg["engine"] == ("batched" if dnn_batch.preferred() else "reference")
    assert f"on {dnn.device()}" in measured["fig3.moe_beats_single"][0].formula
    used = []
    real = dnn_batch.dnn_batch_chunk

    def batched_chunk(**kw):
        used.append(kw["replicates"])
        return real(**kw)

    monkeypatch.setattr(dnn_batch, "preferred", lambda: True)
    monkeypatch.setattr(dnn_batch, "dnn_batch_chunk", batched_chunk)
    fresh = Context(budget=ctx.budget, seed=ctx.seed, sizes=ctx.sizes)  # its own shared runs
    batched = fig3_runs.run(fresh, "mirrors", 4)
    assert used == [(0, 1)]  # one chunk of every replicate
    assert fig3_runs.engine_record()["engine"] == "batched"
    reference = fig3_runs.run(ctx, "mirrors", 4)
    for key in ("on", "off"):
        for name, values in reference[key].items():
            if values.dtype.kind == "i":  # routing, tasks, freeze rounds: exactly
                assert np.array_equal(values, batched[key][name]), (key, name)
            else:  # float32 networks; F_t is a difference of errors of about 1
                assert np.allclose(values, batched[key][name], rtol=1e-4, atol=1e-5, equal_nan=True), (key, name)


def test_epoch_check_compares_the_same_replicates_at_twice_the_epochs(tiny):
    from scipy import stats as sps

    ctx, measured = tiny
    [check] = measured["fig3.moe_beats_single"][0].config["epoch_check"]
    assert check["epochs"] == [1, 2] and check["replicates"] == 2 and (check["definition"], check["M"]) == ("mirrors", 4)
    assert "curves" not in check  # the curves go to the figure's artifact, not into every entry
    base = fig3_runs.run(ctx, "mirrors", 4)["on"]["generalization"][:2, -1]
    probed = fig3_runs.run(ctx, "mirrors", 4, epochs=2, replicates=2, without_termination=False, probe_epochs=1)["on"]
    more = probed["generalization"][:, -1]
    assert check["G_T"] == pytest.approx([base.mean(), more.mean()])
    assert check["G_T change"] == pytest.approx(np.mean(more - base))
    assert check["G_T change p"] == pytest.approx(sps.ttest_rel(more, base).pvalue)
    assert check["G_T status"] == fig3_runs.settled_status(base.mean(), np.mean(more - base), check["G_T change p"],
                                                           check["G_T change stderr"])
    # Within rounds: the routed expert's error on its task after 1 and after 2 epochs of the same round, by a loop.
    rel = []
    for r in range(2):
        mid = [probed["probe_errors"][r, t, probed["tasks"][r, t]] for t in range(16)]
        end = [probed["model_error"][r, t] for t in range(16)]
        rel.append(sum(abs(e - m) for e, m in zip(end, mid)) / sum(mid))
    assert check["within-round change"] == pytest.approx(np.mean(rel))
    assert check["status"] in ("settled", "still changing", "undetermined")
    [full] = fig3_runs.epoch_check(ctx)
    assert [len(c) for c in full["curves"]["generalization"]] == [16, 16]
    assert full["curves"]["generalization"][1][-1] == pytest.approx(more.mean())


@pytest.mark.parametrize("level, change, p, se, status", [
    (1.0, 0.05, 0.5, 0.01, "settled"),  # small, and the check resolves +-20%
    (1.0, -0.1, 0.2, 0.05, "settled"),  # at the 10% edge, resolution 0.129 <= 0.2
    (1.0, 0.05, 0.001, 0.01, "settled"),  # a real but small change
    (1.0, 0.05, 0.5, 0.1, "undetermined"),  # small, but the check cannot resolve 20% (0.258 > 0.2)
    (1.0, 0.3, 0.001, 0.05, "still changing"),  # large and significant
    (1.0, -0.3, 0.2, 0.2, "undetermined"),  # large, but the replicates cannot tell
    (0.0, 0.05, 0.5, 0.01, "undetermined"),
    (1.0, float("nan"), 0.5, 0.01, "undetermined"),
])
def test_settled_rule(level, change, p, se, status):
    assert fig3_runs.settled_status(level, change, p, se) == status


def test_curves_artifact_has_every_configuration_and_the_single_network_in_both_panels(tiny):
    ctx, _ = tiny
    data = fig3.curves(ctx)
    assert data["available"] and data["rounds"] == list(range(1, 17))
    for block in data["definitions"]:
        keys = [(s["M"], s["termination"]) for s in block["series"]]
        assert keys == [(1, True), (4, True), (7, True), (1, False), (4, False), (7, False)]
        single = [s for s in block["series"] if s["M"] == 1]
        assert single[0]["generalization"] == single[1]["generalization"]
        assert single[0]["forgetting"][0] is None and len(single[0]["generalization"]) == 16


def _idx(array):
    return gzip.compress(bytes([0, 0, 8, array.ndim]) + b"".join(struct.pack(">I", n) for n in array.shape)
                         + array.astype(np.uint8).tobytes())


def test_mnist_folder_is_used_when_given_and_needs_no_scikit_learn(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    for name, n in (("train", 40), ("t10k", 20)):
        (tmp_path / f"{name}-images-idx3-ubyte.gz").write_bytes(_idx(rng.integers(0, 256, size=(n, 28, 28))))
        (tmp_path / f"{name}-labels-idx1-ubyte.gz").write_bytes(_idx(np.arange(n) % 10))
    ctx = context_for(PACK, "smoke", 0, {"mnist_dir": str(tmp_path)})
    data = fig3_runs.data(ctx)
    assert data.name.startswith("MNIST IDX files from") and data.d == 14 and data.train_x.shape == (40, 14, 14)
    assert fig3_runs.setting(ctx, "split")["data"] == data.name
    real = fig3_runs.importlib.import_module

    def no_sklearn(name, *args, **kwargs):
        if name == "sklearn":
            raise ImportError("No module named 'sklearn'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(fig3_runs.importlib, "import_module", no_sklearn)
    assert "scikit-learn" not in fig3_runs.missing_libraries(ctx)
    assert "scikit-learn" in fig3_runs.missing_libraries(context_for(PACK, "smoke", 0))


def test_the_drawer_shows_every_definition_metric_and_termination_with_the_single_network(tiny, tmp_path):
    from moecl_verify.packs.moe_cl.figures.fig3_figures import MAX_PANELS, build_fig3, check_line, draw_fig3, parts

    ctx, _ = tiny
    data = fig3.curves(ctx)
    pieces = parts(data)  # one figure per task definition, its epochs check under it
    figs = [build_fig3(piece, "tiny") for piece in pieces]
    assert all(len(fig.axes) <= MAX_PANELS for fig in figs)
    every = [ax for fig in figs for ax in fig.axes]
    axes = [ax for ax in every if ax.get_title() and not ax.get_title().startswith("epochs check")]
    assert len(axes) == 2 * 4
    assert [{ax.get_title().split(",")[0] for ax in fig.axes if ax in axes} for fig in figs] == [
        {"tasks: mirrors"}, {"tasks: split"}]
    checks = [ax for ax in every if ax.get_title().startswith("epochs check")]
    assert len(checks) == 2 and [t.get_text() for t in checks[0].get_legend().get_texts()] == [
        "1 epochs per round", "2 epochs per round"]
    for ax in axes:
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["single network (M = 1)", "M = 4", "M = 7"]
    assert "40 epochs" not in check_line(data["epoch_check"]) and "at 2 epochs" in check_line(data["epoch_check"])
    one, two = draw_fig3(pieces[0], tmp_path / "a.png", "tiny"), draw_fig3(pieces[0], tmp_path / "b.png", "tiny")
    assert one.read_bytes() == two.read_bytes()
    missing = build_fig3({"available": False, "reason": "needs jax"}, "tiny")
    assert any("needs jax" in t.get_text() for t in missing.texts)
