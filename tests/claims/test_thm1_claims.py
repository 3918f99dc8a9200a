"""Theorem 1's bounds at the realized routing counts (smoke budget)."""

import numpy as np

from moecl_verify.packs.moe_cl import PACK
from moecl_verify.checks import runner
from moecl_verify.packs.moe_cl.experiments import thm1_runs
from moecl_verify.packs.moe_cl.experiments.pools import POOL_SEED, pool_indices
from moecl_verify.packs.moe_cl.experiments.theorem_bounds import cumulative_counts, eq19_rhs, eq20_rhs


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
    labels = [(r.id, r.key.label) for r in run.results]
    assert len(labels) == len(set((r.id, r.form, r.config["features"], r.key.label) for r in run.results))
    parts = {(r.id, r.key.part) for r in run.results}
    fields = {(r.id, r.key.part, r.key.pool) for r in run.results}
    pools = list(pool_indices(PACK.budgets["smoke"]))
    for claim in ("thm1.forgetting_early", "thm1.forgetting_late"):
        assert (claim, "conditional on the routing") in parts
        # The pool is a field of the key; the label names it after the part.
        assert {(claim, "", k) for k in pools} <= fields
        assert {(claim, f"pool {k}") for k in pools} <= set(labels)
        assert {(claim, f"Figure 2 configuration, M = {M}", k) for M in (10, 20) for k in pools} <= fields
        assert {(claim, f"Figure 2 configuration, M = {M}, pool {k}") for M in (10, 20) for k in pools} <= set(labels)
    conditional = [r for r in run.results if r.key.part == "conditional on the routing"]
    assert all(r.p_value is None and "Exact counterexample" in r.evidence for r in conditional)
    # Monte Carlo entries are decided by the run's Holm family: each names its pool and the threshold it faced.
    sampled = [r for r in run.results if r.p_value is not None]
    assert sampled and all(r.config["pool_seed"] == POOL_SEED and r.config["pool"] in pools for r in sampled)
    assert all(0 < r.false_fail_rate <= 1e-3 and r.p_value <= r.false_fail_rate for r in sampled)
    # The slips name the pool each refutation was found on.
    early = next(s for s in run.slips if s.id == "thm1.eq19.bound_fails")
    assert all(f"pool {k} (gaussian features)" in early.evidence for k in pools)
    # The worst-case search of eq. (19) given the sequence takes the conditional entry's reading and joins the slip.
    searched = next(r for r in run.results if r.key.part == "worst case searched")
    assert searched.id == "thm1.forgetting_early" and searched.key in early.entries
    from moecl_verify.packs.moe_cl.entries.worst_case import ANY_POOL

    # its own reading: the conditional entry's, on pools the search picks
    assert searched.key.reading == next(r for r in conditional if r.id == searched.id).key.reading + "; " + ANY_POOL


def test_pools_do_not_depend_on_the_replicate_seed():
    # Pool k is drawn from POOL_SEED: the entries of every seed carry pool k's S and D.
    first, second = (runner.run(["thm1.generalization"], budget="smoke", seed=s) for s in (0, 2))
    for run in (first, second):
        for res in run.results:
            if res.p_value is not None and res.key.part == "" and res.key.pool is not None:
                pool = thm1_runs.task_pool(res.config["pool"])
                assert (res.config["S"], res.config["D"]) == (pool.S, pool.D)
    pools = [thm1_runs.task_pool(k) for k in pool_indices(PACK.budgets["smoke"])]
    assert not np.allclose(pools[0].W, pools[1].W)
    # The replicates do depend on the seed; on both seeds and both pools, eq. (20) fails under gaussian features.
    margins = {(run.meta["seed"], r.config["pool"]): (r.observed, r.stderr) for run in (first, second)
               for r in run.results if r.key.label.startswith("pool") and r.config["features"] == "gaussian"}
    assert len(margins) == 4 and len(set(margins.values())) == 4
    assert all(obs + 3 * se < 0 for obs, se in margins.values())
    # The task-averaged reading is its own exact entry beside the full-sequence one, with the three readings
    # listed as interpretations.
    for run in (first, second):
        parts = {r.key.part: r for r in run.results if r.p_value is None}
        assert parts["conditional on the routing"].verdict == "refuted"
        averaged = parts["averaged over tasks given the routing"]
        assert averaged.verdict == "inconclusive" and averaged.config["reading"] == "tasks averaged given the routing"
        assert {i.id for i in run.interpretations} == {"thm1.eq20.reading.realized_counts",
                                                       "thm1.eq20.reading.full_sequence",
                                                       "thm1.eq20.reading.task_averaged",
                                                       "thm1.fig2.ablations"}


def test_smallest_counterexample_and_the_t2_algebra():
    import sympy as sp

    from moecl_verify.packs.moe_cl.claims.theorems.thm1 import smallest_early_counterexample
    from moecl_verify.theory.symbols import D, r
    from moecl_verify.theory.thm1 import t2_same_expert_gap

    assert sp.simplify(t2_same_expert_gap() + (1 - r) ** 2 * D) == 0
    ce = smallest_early_counterexample(R=20000)
    assert (ce["N"], ce["M"], ce["d"], ce["s"], ce["t"]) == (2, 3, 2, 1, 2)
    assert ce["z"] < -10 and ce["a1_prediction"] < 0 < ce["p_same_expert"]


def _average_over_tasks(W, chosen, M, r, T1, sigma):
    """E[G_T | routing, sigma] the slow way: the mean of theory.conditional's E[G_T | tasks, routing]."""
    import itertools
    from fractions import Fraction

    from moecl_verify.theory.conditional import conditional_errors

    post = dict(zip(sorted(set(chosen[T1:])), sigma))
    values = [conditional_errors(W, prefix + tuple(post[m] for m in chosen[T1:]), chosen, M, r).generalization[-1]
              for prefix in itertools.product(range(len(W)), repeat=T1)]
    return sum(values, Fraction(0)) / len(values)


def test_task_averaged_errors_match_the_conditional_recursion_and_the_closed_form():
    from fractions import Fraction

    from moecl_verify.theory.conditional import pool_constants
    from moecl_verify.theory.task_averaged import (canonical_routings, product_closed_form,
                                                   task_averaged_generalization)

    W = [(Fraction(1), Fraction(0)), (Fraction(-1), Fraction(1, 2))]  # neither orthonormal nor antipodal
    r, M = Fraction(1, 3), 3
    S, D = pool_constants(W)
    for chosen in [(0, 0), (0, 1, 0), (0, 0, 1, 2), (0, 1, 1, 0)]:
        for T1 in range(1, len(chosen) + 1):
            fast = task_averaged_generalization(W, chosen, M, r, T1)
            assert len(fast) == 2 ** len(set(chosen[T1:]))
            for sigma, value in fast.items():
                assert value == _average_over_tasks(W, chosen, M, r, T1, sigma)
        assert fast[()] == product_closed_form(chosen, M, r, S, D)
    # By hand (orthonormal w, r = 1/2): one expert, task n_1 uniform then its own task 1 at T1 = 1.
    # n_1 = 1: errors 1/4, 1/4 -> G_2 = 1/4; n_1 = 2: errors 5/4 (task 2), 3/4 (task 1) -> G_2 = 1. Mean 5/8.
    ortho = [(Fraction(1), Fraction(0)), (Fraction(0), Fraction(1))]
    assert task_averaged_generalization(ortho, (0, 0), 3, Fraction(1, 2), 1)[(0,)] == Fraction(5, 8)
    # Routings up to relabeling the experts: restricted growth strings with at most M = 3 blocks.
    assert [len(list(canonical_routings(T, 3))) for T in range(1, 6)] == [1, 2, 5, 14, 41]
    assert list(canonical_routings(3, 3)) == [(0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1), (0, 1, 2)]


def test_task_averaged_search_finds_no_violation_up_to_five_rounds():
    """Every number is recomputed here independently: the cases by brute force over all routings (not only
    canonical ones), each task average the slow way through theory.conditional, the RHS from eq. (20)."""
    import itertools
    from fractions import Fraction

    from moecl_verify.packs.moe_cl.claims.theorems.thm1 import TASK_AVERAGED_POOLS, TASK_AVERAGED_SIZES, task_averaged_searches
    from moecl_verify.theory.conditional import eq20_rhs, pool_constants

    M, T_max = TASK_AVERAGED_SIZES["M"], TASK_AVERAGED_SIZES["max_horizon"]
    r = 1 - Fraction(TASK_AVERAGED_SIZES["s"], TASK_AVERAGED_SIZES["d"])
    searches = task_averaged_searches()
    assert set(searches) == set(TASK_AVERAGED_POOLS)
    for name, res in searches.items():
        W = [tuple(Fraction(x) for x in w) for w in TASK_AVERAGED_POOLS[name]]
        S, D = pool_constants(W)
        assert (res.S, res.D) == (S, D) and res.violation is None and res.violating == 0 and res.closed_form_holds
        for T in range(1, T_max + 1):
            # All routings in M^T, grouped up to relabelling the experts (first appearance order).
            canonical = {tuple({m: i for i, m in enumerate(dict.fromkeys(c))}[m] for m in c)
                         for c in itertools.product(range(M), repeat=T)}
            cases = [(c, T1, sigma) for c in sorted(canonical) for T1 in range(1, T + 1)
                     for sigma in itertools.product(range(len(W)), repeat=len(set(c[T1:])))]
            assert res.checked[T - 1] == len(cases)
            if T <= 3:  # the slow average over every task prefix: exhaustive here, spot-checked below
                slack = min(eq20_rhs(c, M, T1, r, S, D) - _average_over_tasks(W, c, M, r, T1, sigma)
                            for c, T1, sigma in cases)
                assert res.tightest[T - 1].slack == slack > 0
        for tight in res.tightest:
            sigma = tuple(n for _, n in tight.sets)
            assert tight.lhs == _average_over_tasks(W, tight.chosen, M, r, tight.T1, sigma)
            assert tight.rhs == eq20_rhs(tight.chosen, M, tight.T1, r, S, D) and tight.slack > 0


def test_product_law_counterexample_and_the_refuted_entry(monkeypatch):
    from fractions import Fraction

    from moecl_verify.packs.moe_cl.claims.theorems import thm1

    product = thm1.task_averaged_searches("product")
    # Orthonormal w (S = D): none; antipodal (S < D): one expert for all T = 5 rounds with T1 = 1.
    assert product["orthonormal"].violation is None
    anti = product["antipodal"]
    case = anti.violation
    assert (case.horizon, case.T1, case.chosen, case.sets) == (5, 1, (0, 0, 0, 0, 0), ())
    assert (case.lhs, case.rhs) == (Fraction(253, 160), Fraction(3, 2)) and anti.violating == 2
    assert anti.tightest[-1].chosen == (0, 1, 1, 1, 1) and anti.tightest[-1].slack == Fraction(-7, 40)
    assert "253/160 > 3/2" in thm1.GENERALIZATION_READINGS[-1].option
    # The entry: inconclusive under the sets law; refuted, naming the case, when a search finds a violation.
    entry = thm1.task_averaged_entry()
    assert entry.verdict == "inconclusive" and entry.p_value is None and entry.evidence_type == "exact"
    assert "No violating sequence up to T = 5" in entry.evidence and "smallest" not in entry.config
    assert entry.config["pools"]["antipodal"]["tightest"] == {"horizon": 5, "T1": 4, "experts": [1, 1, 1, 1, 1],
                                                              "sets": {"1": 1}, "lhs": "253/160", "rhs": "31/16"}
    assert entry.config["closed_form_at_T1_eq_T"] and "holds there for every routing" in entry.evidence
    monkeypatch.setattr(thm1, "task_averaged_searches", lambda law="sets": product)
    refuted = thm1.task_averaged_entry()
    assert refuted.verdict == "refuted" and "Exact counterexample" in refuted.evidence
    assert refuted.config["smallest"] == {"pool": "antipodal", "horizon": 5, "T1": 1, "experts": [1, 1, 1, 1, 1],
                                          "sets": {}, "lhs": "253/160", "rhs": "3/2"}
