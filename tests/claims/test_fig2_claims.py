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
        entries = [r for r in smoke.results if r.id == claim_id and r.key.is_statement]
        if claim_id == "fig2.termination_converges":
            # the statement at the stated sigma_t, one entry per pool and scale c of v_n (its hidden constant)
            assert [(r.key.part, r.key.pool, r.key.constant) for r in entries] == [
                ("", k, c) for k in pools for c in fig2.SIGNAL_SCALES]
            continue
        assert [r.config["pool"] for r in entries] == pools
        assert [r.key.label for r in entries] == [f"pool {k}" for k in pools]
        assert [(r.key.part, r.key.pool) for r in entries] == [("", k) for k in pools]
        assert all(r.config["pool_seed"] == POOL_SEED and r.config["seed"] == 0 for r in entries)
        assert all(r.evidence_type == "criterion" and r.p_value is not None for r in entries)
        for r in entries:
            assert f"[task pool {r.config['pool']}, pool seed {POOL_SEED}]" in r.evidence


def test_convergence_to_near_zero_is_refuted_at_the_default_scale_on_every_pool_with_a_slip(smoke):
    entries = [r for r in smoke.results if r.id == "fig2.termination_converges" and r.key.is_statement
               and r.key.constant == 1.0]
    assert len(entries) == 2
    for res in entries:
        assert res.p_value <= res.false_fail_rate  # rejected, whatever the other scales make of it
        assert all(h["observed"] < 0 for h in res.horizons)
        assert max(h["z"] for h in res.horizons) < -15
    (slip,) = [s for s in smoke.slips if s.id == "fig2.convergence_not_reproduced"]
    assert "refuted on task pools 0, 1" in slip.holds
    # the grid's other noise levels and the specializing regime are sensitivity entries, never the statement
    others = [r for r in smoke.results if r.id == "fig2.termination_converges" and not r.key.is_statement]
    assert others and all(r.key.role == "sensitivity" for r in others)
    assert {r.config["sigma_t"] for r in others if r.key.constant is not None} == set(fig2.NOISE_LEVELS) - {0.1}


def test_larger_signal_scale_lowers_forgetting_at_M10(smoke):
    """A qualitative sanity check (an independent reading measured forgetting falling as v_n's scale grows): at
    the stated sigma_t, E[F_T | M = 10] with termination at c = 10 is well below its value at c = 1."""
    rows = {r["signal_scale"]: r for r in smoke.artifacts["fig2_sweep"]["rows"] if r["stated"]}
    assert rows[10.0]["forgetting_term"] < 0.75 * rows[1.0]["forgetting_term"]
    assert len(smoke.artifacts["fig2_sweep"]["rows"]) == len(fig2.SIGNAL_SCALES) * len(fig2.NOISE_LEVELS)


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


def test_curves_artifact_has_every_configuration_on_pool_0(smoke):
    art = smoke.artifacts["fig2_curves"]
    assert art["pool"] == 0 and art["pool_seed"] == POOL_SEED
    assert len(art["series"]) == 8
    assert art["series"][0]["forgetting"][0] is None  # F_1 undefined
    assert len(art["rounds"]) == len(art["series"][0]["generalization"])


def test_figure2_is_drawn_from_the_artifact_reproducibly(smoke, tmp_path):
    from moecl_verify.packs.moe_cl.figures import artifact_figures

    only_fig2 = dataclasses.replace(smoke, artifacts={name: smoke.artifacts[name]
                                                      for name in ("fig2_curves", "fig2_sweep")})
    first = artifact_figures.write(only_fig2, tmp_path / "a")
    second = artifact_figures.write(only_fig2, tmp_path / "b")
    assert [p.name for p in first] == ["fig_fig2_curves.png", "fig_fig2_sweep.png"]
    for a, b in zip(first, second):
        assert a.read_bytes()[:4] == b"\x89PNG"
        assert a.read_bytes() == b.read_bytes()
