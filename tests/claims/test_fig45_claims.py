"""Figures 4 and 5 (Appendix A.4) at the smoke budget, on the task pools of the design."""

import numpy as np
import pytest

from moecl_verify.checks.context import context_for
from moecl_verify.packs.moe_cl import PACK
from moecl_verify.packs.moe_cl.experiments import fig45_runs
from moecl_verify.packs.moe_cl.experiments.pools import POOL_SEED, pool_indices

IDS = {"fig4.balance": fig45_runs.FIG4_N, "fig5.generalization": fig45_runs.FIG5_N,
       "fig5.forgetting_robust": fig45_runs.FIG5_N}


@pytest.fixture(scope="module")
def smoke(smoke_run):
    return smoke_run.result(("fig4.", "fig5."))


def test_every_claim_has_one_entry_per_pool_with_its_own_freeze_table(smoke):
    pools = list(pool_indices(PACK.budgets["smoke"]))
    for claim_id, N in IDS.items():
        entries = [r for r in smoke.results if r.id == claim_id]
        assert [r.config["pool"] for r in entries] == pools
        assert [r.key.label for r in entries] == [f"pool {k}" for k in pools]
        assert [(r.key.part, r.key.pool) for r in entries] == [("", k) for k in pools]
        assert all(r.config["pool_seed"] == POOL_SEED and r.config["N"] == N for r in entries)
        assert all(r.evidence_type == "criterion" and r.p_value is not None for r in entries)
        for r in entries:
            assert f"[task pool {r.config['pool']}, pool seed {POOL_SEED}]" in r.evidence
            assert [row["Gamma"] for row in r.config["freeze"]] == list(fig45_runs.GAMMAS)
        # Each pool is simulated on its own: the margins differ between pools.
        assert [h["observed"] for h in entries[0].horizons] != [h["observed"] for h in entries[1].horizons]


def test_the_margins_are_paired_differences_of_the_pools_runs(smoke):
    (res,) = [r for r in smoke.results if r.id == "fig5.generalization" and r.config["pool"] == 1]
    ctx = context_for(PACK, "smoke", 0)
    g = {name: fig45_runs.run(ctx, fig45_runs.FIG5_N, name, 1).generalization[:, -1] for name in fig45_runs.GAMMAS}
    first = res.horizons[0]
    assert first["case"] == "sigma0^0.75 vs sigma0^1.25"
    assert first["observed"] == pytest.approx(float(np.mean(g["sigma0^0.75"] - g["sigma0^1.25"])))


def test_pools_do_not_depend_on_the_replicate_seed_and_differ_by_index():
    for N in (fig45_runs.FIG4_N, fig45_runs.FIG5_N):
        p0 = fig45_runs.task_pool(N, 0)
        assert np.array_equal(p0.W, fig45_runs.task_pool(N, 0).W)
        assert not np.allclose(p0.W, fig45_runs.task_pool(N, 1).W)


def test_artifacts_stay_on_pool_0(smoke):
    routing, levels = smoke.artifacts["fig4_routing"], smoke.artifacts["fig5_levels"]
    assert routing["pool"] == 0 and levels["pool"] == 0
    assert routing["pool_seed"] == levels["pool_seed"] == POOL_SEED
    assert [p["Gamma"] for p in routing["panels"]] == list(fig45_runs.GAMMAS)
    assert [r["Gamma"] for r in levels["rows"]] == list(fig45_runs.GAMMAS)
