"""Theorem 1's bounds at the realized routing counts (smoke budget)."""

import numpy as np

from moecl_verify.checks import runner
from moecl_verify.checks.experiments import thm1_runs
from moecl_verify.checks.experiments.pools import POOL_SEED, pool_indices
from moecl_verify.checks.experiments.theorem_bounds import cumulative_counts, eq19_rhs, eq20_rhs


def test_rhs_by_hand():
    # Two experts, rounds routed 0, 0, 1: L after rounds = [[1,0],[2,0],[2,1]].
    chosen = np.array([[0, 0, 1]])
    np.testing.assert_array_equal(cumulative_counts(chosen, 2)[0], [[1, 0], [2, 0], [2, 1]])
    r, S, D = 0.5, 1.0, 3.0
    # t = 3: tau = 1 (expert 0: L_3 = 2, L_1 = 1), tau = 2 (expert 0: L_3 = 2, L_2 = 2)
    by_hand = ((r**2 - r) * (S - D) + 0.0) / 2
    assert np.isclose(eq19_rhs(chosen, 2, 3, r, S, D)[0], by_hand)
    # T1 = 2: L_T1 = [2, 0]; rounds' experts 0, 0, 1 -> exponents 2, 2, 0
    by_hand20 = (2 * (r**2 * S + (1 - r**2) * D) + (S + 0.0 * D)) / 3
    assert np.isclose(eq20_rhs(chosen, 2, 2, r, S, D)[0], by_hand20)


def test_theorem1_verdicts_at_smoke():
    run = runner.run(["thm1.forgetting_early", "thm1.forgetting_late"], budget="smoke", seed=0)
    assert all(r.verdict == "refuted" for r in run.results)
    assert {"thm1.eq19.bound_fails", "thm1.late_forgetting_identity"} <= {s.id for s in run.slips}
    parts = [(r.id, r.config.get("part")) for r in run.results]
    assert len(parts) == len(set((r.id, r.form, r.config["features"], r.config.get("part")) for r in run.results))
    pools = list(pool_indices("smoke"))
    for claim in ("thm1.forgetting_early", "thm1.forgetting_late"):
        assert (claim, "conditional on the routing") in parts
        assert {(claim, f"pool {k}") for k in pools} <= set(parts)
        assert {(claim, f"Figure 2 configuration, M = {M}, pool {k}") for M in (10, 20) for k in pools} <= set(parts)
    conditional = [r for r in run.results if r.config.get("part") == "conditional on the routing"]
    assert all(r.p_value is None and "Exact counterexample" in r.evidence for r in conditional)
    # Monte Carlo entries are decided by the run's Holm family: each names its pool and the threshold it faced.
    sampled = [r for r in run.results if r.p_value is not None]
    assert sampled and all(r.config["pool_seed"] == POOL_SEED and r.config["pool"] in pools for r in sampled)
    assert all(0 < r.false_fail_rate <= 1e-3 and r.p_value <= r.false_fail_rate for r in sampled)
    # The slips name the pool each refutation was found on.
    early = next(s for s in run.slips if s.id == "thm1.eq19.bound_fails")
    assert all(f"pool {k} (gaussian features)" in early.evidence for k in pools)


def test_pools_do_not_depend_on_the_replicate_seed():
    # Pool k is drawn from POOL_SEED: the entries of every seed carry pool k's S and D.
    first, second = (runner.run(["thm1.generalization"], budget="smoke", seed=s) for s in (0, 2))
    for run in (first, second):
        for res in run.results:
            if res.p_value is not None and res.config["part"].startswith("pool"):
                pool = thm1_runs.task_pool(res.config["pool"])
                assert (res.config["S"], res.config["D"]) == (pool.S, pool.D)
    pools = [thm1_runs.task_pool(k) for k in pool_indices("smoke")]
    assert not np.allclose(pools[0].W, pools[1].W)
    # The replicates do depend on the seed; on both seeds and both pools, eq. (20) fails under gaussian features.
    margins = {(run.meta["seed"], r.config["pool"]): (r.observed, r.stderr) for run in (first, second)
               for r in run.results if r.config.get("part", "").startswith("pool") and r.config["features"] == "gaussian"}
    assert len(margins) == 4 and len(set(margins.values())) == 4
    assert all(obs + 3 * se < 0 for obs, se in margins.values())


def test_smallest_counterexample_and_the_t2_algebra():
    import sympy as sp

    from moecl_verify.checks.claims.theorems.thm1 import smallest_early_counterexample
    from moecl_verify.theory.symbols import D, r
    from moecl_verify.theory.thm1 import t2_same_expert_gap

    assert sp.simplify(t2_same_expert_gap() + (1 - r) ** 2 * D) == 0
    ce = smallest_early_counterexample(R=20000)
    assert (ce["N"], ce["M"], ce["d"], ce["s"], ce["t"]) == (2, 3, 2, 1, 2)
    assert ce["z"] < -10 and ce["a1_prediction"] < 0 < ce["p_same_expert"]
