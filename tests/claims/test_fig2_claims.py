"""Figure 2's qualitative claims at the smoke budget (20 replicates, T = 2000), on the task pools of the design.

The convergence criterion misses by about 20 standard errors on every pool even at this budget (margins
between -1.6 and -3.1 with s.e. below 0.12), so its refutation is stable across pools and replicate seeds.
"""

import dataclasses

import numpy as np
import pytest

from moecl_verify.packs.moe_cl.claims.figures import fig2
from moecl_verify.checks.context import context_for
from moecl_verify.packs.moe_cl import PACK
from moecl_verify.packs.moe_cl.experiments import fig2_runs
from moecl_verify.packs.moe_cl.experiments.pools import POOL_SEED, pool_indices
from moecl_verify.checks.model import ClaimResult

FIG2_IDS = ("fig2.termination_converges", "fig2.no_termination_higher", "fig2.moe_beats_single",
            "fig2.more_experts_no_gain")


@pytest.fixture(scope="module")
def smoke(smoke_run):
    return smoke_run.result("fig2.")


def test_every_claim_has_one_entry_per_pool(smoke):
    pools = list(pool_indices(PACK.budgets["smoke"]))
    assert len(pools) >= 2
    for claim_id in FIG2_IDS:
        entries = [r for r in smoke.results if r.id == claim_id]
        assert [r.config["pool"] for r in entries] == pools
        assert [r.key.label for r in entries] == [f"pool {k}" for k in pools]
        assert [(r.key.part, r.key.pool) for r in entries] == [("", k) for k in pools]
        assert all(r.config["pool_seed"] == POOL_SEED and r.config["seed"] == 0 for r in entries)
        assert all(r.evidence_type == "criterion" and r.p_value is not None for r in entries)
        for r in entries:
            assert f"[task pool {r.config['pool']}, pool seed {POOL_SEED}]" in r.evidence


def test_convergence_to_near_zero_is_refuted_on_every_pool_with_a_slip(smoke):
    entries = [r for r in smoke.results if r.id == "fig2.termination_converges"]
    for res in entries:
        assert res.verdict == "refuted"
        assert all(h["observed"] < 0 for h in res.horizons)
        assert max(h["z"] for h in res.horizons) < -15
        assert len(res.config["scale_sweep"]) == 6
    # The pools differ, so do their sweeps.
    assert entries[0].config["scale_sweep"] != entries[1].config["scale_sweep"]
    (slip,) = [s for s in smoke.slips if s.id == "fig2.convergence_not_reproduced"]
    assert "task pools 0, 1 of the 2 tried" in slip.holds
    assert "Pool 0:" in slip.evidence and "Pool 1:" in slip.evidence


def test_no_verdict_contradicts_the_margins(smoke):
    for res in smoke.results:
        zs = [h["z"] for h in res.horizons]
        if res.verdict == "confirmed":
            assert min(zs) > 0
        if res.verdict == "refuted":
            assert min(zs) < 0


def test_pools_do_not_depend_on_the_replicate_seed():
    a, b = context_for(PACK, "smoke", 0), context_for(PACK, "smoke", 2)
    for clustered in (True, False):
        p0 = fig2_runs.pool(a, 1.0, clustered, pool=0)
        assert np.array_equal(p0.W, fig2_runs.pool(b, 1.0, clustered, pool=0).W)
        assert not np.allclose(p0.W, fig2_runs.pool(a, 1.0, clustered, pool=1).W)
    # The signal scale rescales the same ground truths' signals; it does not redraw the pool.
    assert np.array_equal(fig2_runs.pool(a, 2.5, True, pool=1).W, fig2_runs.pool(a, 1.0, True, pool=1).W)


def _converges_result(pool: int, verdict: str, margins: list[float]) -> ClaimResult:
    sweep = [{"pool": kind, "signal_scale": v, "forgetting_M10": 1.0, "forgetting_M1": 2.0, "margin": m,
              "stderr": 0.1} for (kind, v), m in zip([(k, v) for k in ("clustered", "iid") for v in fig2.SCALE_SWEEP],
                                                     margins)]
    return ClaimResult(id="fig2.termination_converges", source="", kind="qualitative", form="stated",
                       verdict=verdict, expected=0.0, observed=-1.0, stderr=0.1, p_value=0.0, false_fail_rate=1e-4,
                       min_detectable=0.1, config={"pool": pool, "pool_seed": POOL_SEED, "scale_sweep": sweep},
                       evidence=f"evidence of pool {pool}.", evidence_type="criterion")


def test_the_slip_names_the_refuted_pools_and_needs_a_setting_to_reproduce_on_each():
    bad = [-1.0] * 6
    good_at_10 = [-1.0, -1.0, 1.0, -1.0, -1.0, -1.0]  # clustered, v = 10: margin - 3 s.e. > 0
    assert fig2.converges_slips([_converges_result(0, "inconclusive", bad), _converges_result(1, "inconclusive", bad)]) == []
    (slip,) = fig2.converges_slips([_converges_result(0, "inconclusive", good_at_10),
                                    _converges_result(1, "refuted", good_at_10)])
    assert "task pool 1 of the 2 tried" in slip.holds
    assert slip.slip_class == "unstated assumption" and "('clustered', 10.0)" in slip.holds
    assert "Pool 1: evidence of pool 1." in slip.evidence and "pool 0" not in slip.evidence
    # A setting that reproduces the figure on one refuted pool only does not make it an unstated assumption.
    (slip,) = fig2.converges_slips([_converges_result(0, "refuted", good_at_10), _converges_result(1, "refuted", bad)])
    assert slip.slip_class == "false statement" and "task pools 0, 1 of the 2 tried" in slip.holds


def test_curves_artifact_has_every_configuration_on_pool_0(smoke):
    art = smoke.artifacts["fig2_curves"]
    assert art["pool"] == 0 and art["pool_seed"] == POOL_SEED
    assert len(art["series"]) == 8
    assert art["series"][0]["forgetting"][0] is None  # F_1 undefined
    assert len(art["rounds"]) == len(art["series"][0]["generalization"])


def test_figure2_is_drawn_from_the_artifact_reproducibly(smoke, tmp_path):
    from moecl_verify.packs.moe_cl.figures import artifact_figures

    only_fig2 = dataclasses.replace(smoke, artifacts={"fig2_curves": smoke.artifacts["fig2_curves"]})
    first = artifact_figures.write(only_fig2, tmp_path / "a")
    second = artifact_figures.write(only_fig2, tmp_path / "b")
    assert [p.name for p in first] == ["fig_fig2_curves.png"]
    assert first[0].read_bytes()[:4] == b"\x89PNG"
    assert first[0].read_bytes() == second[0].read_bytes()
