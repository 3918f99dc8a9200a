"""The ablations at Figure 2's configuration (numeric/moe.py router "sets_after_T1" and expert step
"still_on_repeat", theory.thm1's derived eq. (19) summand, packs/moe_cl/entries/ablations.py): each counterfactual
is the normal run on the same random numbers with one cause removed; Theorem 1's slips name a cause only where
removing it lowered the residual.  The sets are recomputed here from the gate at T1 of a separate run, by eq. (11);
the derived summand's gap is checked against the hand-written (1 - r)(1 - r^(L_t - L_tau)) D and a hand count."""

import dataclasses

import numpy as np
import pytest

from moecl_verify.checks import ablation
from moecl_verify.checks.model import ClaimResult
from moecl_verify.numeric.moe import (SETS_AFTER_T1, STILL_ON_REPEAT, MoEConfig, MoEDraws, draw_moe_chunk,
                                     run_moe_batched, run_moe_reference)
from moecl_verify.packs.moe_cl.claims.theorems import thm1
from moecl_verify.packs.moe_cl.entries import ablations
from moecl_verify.packs.moe_cl.experiments.theorem_bounds import eq19_rhs, eq19_rhs_derived
from moecl_verify.theory import thm1 as theory_thm1
from moecl_verify.packs.moe_cl.experiments import fig2_runs
from moecl_verify.packs.moe_cl.experiments.fig2_runs import FIG2

M, R = 10, 6


@pytest.fixture(scope="module")
def figure2_runs():
    """Figure 2's pool 0 and configuration (M = 10), a short horizon, one chunk of the run's own keyed draws."""
    pool = fig2_runs.pool(None, FIG2["signal_scale"], True, pool=0)
    cfg = fig2_runs.moe_config(M, True)
    T1 = cfg.exploration_rounds
    T = T1 + 80
    draws = draw_moe_chunk(pool, M=M, size=R, T=T, s=FIG2["s"], features=FIG2["features"], sigma_t=FIG2["sigma_t"],
                           beta_max=FIG2["beta_max"], seed=0, key=("fig2", M, 0), index=0)
    learned = run_moe_batched(pool, draws, cfg, engine="numpy")
    forced = run_moe_batched(pool, draws, dataclasses.replace(cfg, router=SETS_AFTER_T1))
    # the gate after round T1, from a run that stops there
    head = MoEDraws(draws.tasks[:, :T1], draws.X[:, :T1], draws.noise[:, :T1])
    theta_T1 = run_moe_batched(pool, head, cfg, engine="numpy").theta
    return pool, cfg, draws, learned, forced, theta_T1


def test_before_T1_the_ablated_run_is_the_normal_run(figure2_runs):
    _, cfg, _, learned, forced, _ = figure2_runs
    T1 = cfg.exploration_rounds
    assert np.array_equal(learned.tasks, forced.tasks)  # the same task draws throughout
    for name in ("chosen", "model_error", "generalization"):
        assert np.array_equal(getattr(learned, name)[:, :T1], getattr(forced, name)[:, :T1]), name
    assert np.array_equal(learned.forgetting[:, :T1], forced.forgetting[:, :T1], equal_nan=True)
    # and it is a different run after T1: the routing was forced
    assert not np.array_equal(learned.chosen[:, T1:], forced.chosen[:, T1:])


def test_after_T1_every_task_is_routed_inside_its_eq11_set_of_the_gate_at_T1(figure2_runs):
    pool, cfg, _, _, forced, theta_T1 = figure2_runs
    T1 = cfg.exploration_rounds
    owner = np.argmax(np.einsum("rmd,nd->rmn", theta_T1, pool.V), axis=2)  # eq. (11), expert -> task
    for r in range(R):
        served = {}
        for t in range(T1, forced.chosen.shape[1]):
            n, m = int(forced.tasks[r, t]), int(forced.chosen[r, t])
            served.setdefault(m, set()).add(n)
            if (owner[r] == n).any():  # a task with an eq. (11) set is routed inside it
                assert owner[r, m] == n, (r, t, n, m)
        # no expert serves two tasks after T1: the sets are a partition
        assert all(len(tasks) == 1 for tasks in served.values()), served


def test_the_reference_engine_agrees_with_the_batched_one(figure2_runs):
    pool, cfg, draws, _, forced, _ = figure2_runs
    few = MoEDraws(draws.tasks[:2, :40], draws.X[:2, :40], draws.noise[:2, :40])
    cfg = dataclasses.replace(cfg, router=SETS_AFTER_T1)
    batched, reference = run_moe_batched(pool, few, cfg), run_moe_reference(pool, few, cfg)
    assert np.array_equal(batched.chosen, reference.chosen)
    np.testing.assert_allclose(batched.forgetting[:, 1:], reference.forgetting[:, 1:], rtol=1e-10, atol=1e-12)


def test_the_router_needs_an_expert_per_task():
    pool = fig2_runs.pool(None, FIG2["signal_scale"], True, pool=0)
    cfg = dataclasses.replace(fig2_runs.moe_config(5, True), router=SETS_AFTER_T1)
    draws = draw_moe_chunk(pool, M=5, size=1, T=12, s=FIG2["s"], features=FIG2["features"], sigma_t=0.1,
                           beta_max=1.0, seed=0, key=("x",), index=0)
    with pytest.raises(ValueError, match="M >= N"):
        run_moe_batched(pool, draws, cfg)


def late_entry(records):
    return ClaimResult(id="thm1.forgetting_late", source="-", kind="expected-value identity", form="stated",
                       verdict="refuted", expected=0.0, observed=1.5, stderr=0.1, p_value=1e-9, false_fail_rate=1e-3,
                       min_detectable=0.1,
                       config={"features": "definition1", "part": "Figure 2 configuration, M = 10", "pool": 0,
                               "M": 10, "ablation": [a.to_json() for a in records]},
                       evidence="z-test", horizons=[{"t": 100, "observed": 1.5}], evidence_type="mean")


def test_the_late_slip_names_the_routing_cause_only_where_its_ablation_moved_the_residual():
    base = np.array([1.4, 1.6, 1.5, 1.5])
    case = "M = 10, pool 0, t = 100"
    moved = ablation.paired(ablations.ROUTING.cause, ablations.ROUTING.removed, ablations.LATE_QUANTITY,
                            base, base - 1.4 + np.array([0.01, -0.01, 0.0, 0.0]), case=case)
    (slip,) = thm1.late_slips([late_entry([moved])])
    assert slip.causes == ("lemma3.expert_moves", ablations.ROUTING.cause) and slip.ablation == (moved,)
    assert "the excess is 0.1 at t = 100" in slip.effect  # the remainder, 1.5 - 1.4
    assert "lowers the excess by 93% (1 of 1 cases): most of it" in slip.holds  # 1.4 of 1.5
    still = ablation.paired(ablations.ROUTING.cause, ablations.ROUTING.removed, ablations.LATE_QUANTITY,
                            base, base[::-1], case=case)
    assert not still.moved
    (slip,) = thm1.late_slips([late_entry([still])])
    assert slip.causes == ("lemma3.expert_moves",) and "routed inside" not in slip.effect
    assert "forcing each task" not in slip.holds
    # a removal that raises the residual is no part of it: not named a cause, its share said as measured
    raises = ablation.paired(ablations.FEATURES.cause, ablations.FEATURES.removed, ablations.LATE_QUANTITY,
                             base, base + 0.3 + np.array([0.01, -0.01, 0.0, 0.0]), case=case)
    (slip,) = thm1.late_slips([late_entry([raises])])
    assert ablations.FEATURES.cause not in slip.causes


def test_imposing_lemma3_freezes_an_expert_given_its_last_task_again_and_nothing_else(figure2_runs):
    pool, cfg, draws, learned, _, _ = figure2_runs
    few = MoEDraws(draws.tasks[:3, :60], draws.X[:3, :60], draws.noise[:3, :60])
    still_cfg = dataclasses.replace(cfg, expert_step=STILL_ON_REPEAT)
    trace = []
    run = run_moe_batched(pool, few, still_cfg, observer=lambda st: trace.append((st.chosen.copy(), st.delta.copy())))
    # by the definition, replayed here: the expert routed the task it was last trained on does not move (Delta 0),
    # every other routed expert takes a step of positive size (s < d, the task's gap is never already closed)
    last = {}
    for j, (chosen, delta) in enumerate(trace):
        for r in range(3):
            m, n = int(chosen[r]), int(few.tasks[r, j])
            repeat = last.get((r, m)) == n
            assert (delta[r] == 0.0) == repeat, (r, j, m, n)
            last[(r, m)] = n
    assert any(d == 0.0 for _, ds in trace for d in ds)  # the case occurs in these draws
    # the same draws: identical to the normal run up to the first repeat of some replicate
    normal = run_moe_batched(pool, few, cfg, engine="numpy")
    first = min(j for j, (_, ds) in enumerate(trace) if (ds == 0.0).any())
    assert np.array_equal(normal.chosen[:, :first + 1], run.chosen[:, :first + 1])
    # the per-replicate reference agrees
    reference = run_moe_reference(pool, few, still_cfg)
    assert np.array_equal(run.chosen, reference.chosen)
    np.testing.assert_allclose(run.forgetting[:, 1:], reference.forgetting[:, 1:], rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="expert_step"):
        MoEConfig(M=4, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.1, expert_step="frozen")


def test_the_derived_eq19_summand_differs_from_the_printed_one_by_the_same_task_term():
    assert theory_thm1.eq19_gap_reads_as_written()
    # by hand: experts (1, 1, 2, 1, 3), t = 5, r = 0.4, D = 2; the tau-th gap (1 - r)(1 - r^(L_t - L_tau)) D is
    # 0.6 * 0.84 * 2, 0.6 * 0.6 * 2, 0, 0 for tau = 1..4: their mean 0.432
    chosen = np.array([[0, 0, 1, 0, 2]])
    gap = eq19_rhs_derived(chosen, 3, 5, 0.4, 1.0, 2.0) - eq19_rhs(chosen, 3, 5, 0.4, 1.0, 2.0)
    assert gap == pytest.approx([0.432], abs=1e-12)
    # at M = 1 (L = t) the derived right-hand side is one expert's derived forgetting term averaged over tau
    from moecl_verify.theory import single_expert
    import sympy as sp
    from moecl_verify.theory.symbols import D, S, r, t, tau
    term = single_expert.forgetting_term()
    expected = np.mean([float(term.subs({t: 6, tau: k, r: sp.Rational(2, 5), S: 1, D: 2})) for k in range(1, 6)])
    assert eq19_rhs_derived(np.zeros((1, 6), dtype=int), 1, 6, 0.4, 1.0, 2.0) == pytest.approx([expected], rel=1e-12)
