"""Theorem 2's generalization bound pieces, and the C4/C5 insights (smoke budget)."""

import numpy as np

from moecl_verify.packs.moe_cl import PACK
from moecl_verify.checks import runner
from moecl_verify.packs.moe_cl.experiments.pools import POOL_SEED, pool_indices
from moecl_verify.packs.moe_cl.experiments.theorem_bounds import eq22_rhs, psi


def test_psi_against_a_naive_double_loop():
    rng = np.random.default_rng(0)
    W, K = rng.normal(size=(5, 3)), 2
    clusters = {k: [n for n in range(5) if n % K == k] for k in range(K)}
    sq = lambda a, b: float(np.sum((W[a] - W[b]) ** 2))  # noqa: E731
    psi1 = np.mean([np.mean([sq(n, m) for m in clusters[n % K]]) for n in range(5)])
    psi2 = np.mean([np.mean([np.mean([sq(n, m) for m in clusters[k]]) for k in range(K)]) for n in range(5)])
    assert np.allclose(psi(W, K), (psi1, psi2))


def test_eq22_rhs_by_hand():
    # Two experts, T = 3, T1 = 2, rounds routed 0, 1, 0: L_T = (2, 1, 2) per round, L_T1 = (1, 1, 1).
    chosen, r, S, D, p1, p2 = np.array([[0, 1, 0]]), 0.5, 1.0, 2.0, 0.3, 0.7
    inner = np.mean([r ** (2 - 1) * (1 - r), r ** (1 - 1) * (1 - r)])
    first = np.mean([r**2, r**1, r**2]) * (S + inner * D)
    late = (1 - r ** (2 - 1)) / 3
    assert np.isclose(eq22_rhs(chosen, 2, 2, r, S, D, p1, p2)[0], first + (p1 + p2) * late)


def test_verdicts_at_smoke():
    run = runner.run(["thm2.*", "c4"], budget="smoke", seed=0)
    by = {(r.id, r.config["features"], r.key.label): r for r in run.results}
    assert len(by) == len(run.results)  # entries stay distinguishable
    assert by[("thm2.forgetting", "-", "eq. (21) as printed")].verdict == "not_checkable"
    pools = list(pool_indices(PACK.budgets["smoke"]))
    (conditional,) = [r for r in run.results if (r.id, r.config["features"], r.key.part)
                      == ("thm2.generalization", "gaussian", "conditional on the routing")]
    assert conditional.p_value is None and conditional.config["pool"] == 0 and conditional.key.pool == 0
    for k in pools:
        for features in ("gaussian", "definition1"):
            res = by[("thm2.generalization", features, f"pool {k}")]
            assert res.config["pool"] == k and res.config["pool_seed"] == POOL_SEED
            assert (res.key.part, res.key.pool) == ("", k)
        fig2 = by[("thm2.generalization", "definition1", f"Figure 2 configuration, M = 5, pool {k}")]
        assert (fig2.key.part, fig2.key.pool) == ("Figure 2 configuration, M = 5", k)
        # C4 on pool k: one expert's final errors exceed the MoE's by many standard errors in all four cases.
        c4 = by[("c4", "definition1", f"pool {k}")]
        assert [h["case"] for h in c4.horizons] == [f"pool {k}, {s}, {x}" for s in ("Thm 1", "Thm 2") for x in "FG"]
        assert all(h["z"] > 10 for h in c4.horizons), c4.evidence
        assert c4.verdict == "confirmed" and c4.p_value == 1.0


def test_c5_margins_per_pool():
    run = runner.run(["c5"], budget="smoke", seed=0)
    assert [r.key.label for r in run.results] == [f"pool {k}" for k in pool_indices(PACK.budgets["smoke"])]
    assert [(r.key.part, r.key.pool) for r in run.results] == [("", k) for k in pool_indices(PACK.budgets["smoke"])]
    for res in run.results:
        delay, no_gain = res.horizons
        assert delay["case"].endswith("delay (freeze round)") and no_gain["case"].endswith("no gain (G_T)")
        # T1 = ceil(M / eta) doubles from 20 to 40 when M goes from 10 to 20: the freeze comes later.
        assert delay["observed"] > 10 and delay["z"] > 10
        assert res.verdict != "refuted"
