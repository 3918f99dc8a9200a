"""The experiments beyond the paper (open.*) on tiny contexts: their evidence, and the definitions they rest on.

The regimes are shortened (T = 120 rounds, the schedule change at round 60) and the budget cut to 8 replicates,
so every claim's full pipeline runs in a few seconds; the numbers asserted are derived by hand (purity of a
hand-built routing history, the oracle's spare expert, Zipf probabilities) or are binomial bounds.
"""

import dataclasses
import math

import numpy as np
import pytest

from moecl_verify.checks import decide
from moecl_verify.packs.moe_cl.claims.beyond import (open_balance_outside_gradient, open_drift, open_rare_task, open_top2,
                                               open_unseen_task)
from moecl_verify.checks.context import context_for
from moecl_verify.packs.moe_cl import PACK
from moecl_verify.packs.moe_cl.experiments import open_questions as oq
from moecl_verify.checks.model import ClaimResult
from moecl_verify.checks.kinds.mean import Measurement
from moecl_verify.checks.registry import get
from moecl_verify.numeric.draws import TaskSchedule
from moecl_verify.numeric.moe import draw_moe, run_moe_batched
from moecl_verify.numeric.seeding import generator_for

pytestmark = pytest.mark.claims

MODULES = (open_balance_outside_gradient, open_rare_task, open_drift, open_unseen_task, open_top2)
TINY_T, TINY_EVENT, TINY_R = 120, 60, 8


@pytest.fixture(scope="module")
def tiny():
    """Every open.* claim measured on shortened regimes with 8 replicates: {claim id: (measurements, artifact)}."""
    mp = pytest.MonkeyPatch()
    short = {name: dataclasses.replace(r, T=TINY_T, event=TINY_EVENT, T1=min(r.T1, 30))
             for name, r in oq.REGIMES.items()}
    mp.setattr(oq, "REGIMES", short)
    ctx = context_for(PACK, "smoke", 0)
    ctx.sizes = dataclasses.replace(ctx.sizes, open_replicates=TINY_R)
    out = {m.CLAIM_ID: (m.measure(ctx), m.curves(ctx)) for m in MODULES}
    yield out, short
    mp.undo()


def test_every_claim_returns_positive_rule_evidence_with_a_stated_hypothesis(tiny):
    results, short = tiny
    assert set(results) == {f"open.{m.QUESTION}" for m in MODULES}
    for claim_id, (measured, artifact) in results.items():
        claim = get(claim_id)
        assert claim.kind == "experiment"
        assert claim.statement.startswith("Hypothesis, stated before the test")
        assert "Delta" in claim.statement and claim.summary.endswith("?")
        assert claim.interpretations and {"open.regimes", "open.purity"} <= {i.id for i in claim.interpretations}
        # Two regimes x two pools x each hypothesis part, every one a criterion with its margins.
        assert all(isinstance(m, Measurement) and m.rule == "positive" and m.kind == "experiment" for m in measured)
        parts = {m.config["part"].split(",")[0] for m in measured}
        assert len(measured) == len(parts) * len(short) * 2
        for m in measured:
            assert {"regime", "pool", "pool_seed", "replicates"} <= set(m.config)
            assert all(math.isfinite(h.test.observed) and math.isfinite(h.test.stderr) and h.test.n >= 2
                       for h in m.tests)
        # Curves for every panel, at most six series each, bands around the mean.
        assert artifact["claim"] == claim_id and artifact["panels"]
        for panel in artifact["panels"]:
            assert len(panel["series"]) + ("reference" in panel) <= 6
            for s in panel["series"]:
                for lo, mid, hi in zip(s["lower"], s["mean"], s["upper"]):
                    if mid is not None:
                        assert lo <= mid <= hi


def test_verdicts_are_decided_by_the_runs_error_control_not_by_the_claims(tiny):
    results, _ = tiny
    measured = [m for ms, _ in results.values() for m in ms]
    assert not any(isinstance(m, ClaimResult) for m in measured)  # no claim decides an entry itself
    decided = decide.decide_claims([measured], 1e-3)[0]
    assert len(decided) == len(measured)
    for m, res in zip(measured, decided):
        assert res.evidence_type == "criterion" and res.p_value is not None and res.false_fail_rate is not None
        zs = [h.test.z for h in m.tests]
        if res.verdict == "confirmed":
            assert min(zs) > 0
        if res.verdict == "refuted":
            assert min(zs) < 0
        # Re-deciding the entry alone at the threshold it faced gives the same verdict.
        assert decide.decide_entry(m, res.false_fail_rate).verdict == res.verdict


def test_purity_of_a_hand_built_routing_history():
    # Round t's gate is the record of round t - 1; round 1's gate is zero, so every expert is in M_0.
    tasks = np.array([[0, 1, 1, 0]])
    routed = np.array([[[0], [2], [1], [1]]])
    sets_after = np.array([[[0, 1, 1], [0, 1, 0], [1, 1, 0], [2, 2, 2]]])
    # round 1: expert 0 in M_0 (zero gate), task 0 -> in; round 2: sets (0,1,1), expert 2 in M_1, task 1 -> in;
    # round 3: sets (0,1,0), expert 1 in M_1, task 1 -> in; round 4: sets (1,1,0), expert 1 in M_1, task 0 -> out.
    assert oq.routing_purity(tasks, routed, sets_after).tolist() == [[1.0, 1.0, 1.0, 0.0]]
    # Top-2: the share of the two routed experts inside the task's set (round 2: expert 0 out, expert 2 in).
    two = oq.routing_purity(np.array([[0, 1]]), np.array([[[0, 1], [0, 2]]]), np.array([[[0, 1, 1], [0, 0, 0]]]))
    assert two.tolist() == [[1.0, 0.5]]


def test_purity_uses_the_gate_that_routed_each_round():
    """Against the sets computed from the gate the engine hands its observer (theta before the round's update)."""
    regime = oq.REGIMES["specializing"]
    pool = regime.pool(0)
    draws = draw_moe(generator_for(3, "purity test"), pool, R=3, T=40, s=regime.s, M=regime.M, sigma_t=0.1)
    gates = []
    run = run_moe_batched(pool, draws, regime.config(termination=False), observer=lambda st: gates.append(st.theta))
    sets = np.stack([np.argmax(np.einsum("rmd,nd->rmn", th, pool.V), axis=-1) for th in gates], axis=1)
    expected = (np.take_along_axis(sets, run.chosen[:, :, None], axis=2)[:, :, 0] == run.tasks).astype(float)
    got = oq.routing_purity(run.tasks, run.rounds["chosen_sets"], run.rounds["sets"])
    assert np.array_equal(got, expected)
    assert 0.0 < got.mean() < 1.0  # the example routes both inside and outside the sets


def test_the_oracle_sends_the_new_task_to_the_spare_expert_only():
    assert oq.oracle_spare_sets(3, 6) == ((0, 2, 4), (1, 3), (5,))
    assert oq.oracle_spare_sets(7, 10) == ((0, 6), (1, 7), (2, 8), (3,), (4,), (5,), (9,))
    regime = dataclasses.replace(oq.REGIMES["specializing"], T=80, event=30)
    variant = dict((v.label, v) for v in open_unseen_task.VARIANTS)[open_unseen_task.ORACLE]
    pool = regime.pool(0)
    draws = draw_moe(generator_for(4, "oracle test"), pool, R=5, T=regime.T, s=regime.s, M=regime.M, sigma_t=0.1,
                     task_probs=variant.task_schedule(regime))
    run = run_moe_batched(pool, draws, variant.config(regime))
    new = run.tasks == regime.N - 1
    assert new.any() and not new[:, : regime.event - 1].any()  # the new task first arrives at the event round
    assert (run.chosen[new] == regime.M - 1).all() and (run.chosen[~new] != regime.M - 1).all()


def test_schedules_as_built_for_the_experiments():
    regime = oq.REGIMES["specializing"]
    by_label = {v.label: v for v in open_rare_task.VARIANTS}
    # Zipf exponent 2 over three tasks: weights 1, 1/4, 1/9, sum 49/36.
    assert np.allclose(by_label["Zipf a=2"].task_schedule(regime).probabilities_at(1), [36 / 49, 9 / 49, 4 / 49])
    swapped = dict((v.label, v) for v in open_drift.VARIANTS)[open_drift.FROZEN].task_schedule(regime)
    assert np.allclose(swapped.probabilities_at(regime.event - 1), [36 / 49, 9 / 49, 4 / 49])
    assert np.allclose(swapped.probabilities_at(regime.event), [4 / 49, 9 / 49, 36 / 49])
    # The rare task's observed share matches its 1.5% within binomial error.
    rare = by_label["rare 1.5%"].task_schedule(regime)
    tasks = rare.sample(generator_for(5, "rare share"), 200, regime.T)
    n = tasks.size
    share = float((tasks == regime.N - 1).mean())
    assert abs(share - 0.015) <= 4 * math.sqrt(0.015 * 0.985 / n)
    assert abs(float((tasks == 0).mean()) - 0.985 / 2) <= 4 * math.sqrt(0.25 / n)


def test_rare_share_in_the_claims_window_is_binomial(tiny):
    results, short = tiny
    measured, _ = results["open.rare_task"]
    for m in measured:
        (row,) = [r for r in m.config["schedules"] if r["schedule"] == "rare 1.5%"]
        rounds = TINY_R * (TINY_T - TINY_EVENT + 1)  # replicates x rounds of the window
        p = row["probabilities"][-1]
        assert p == pytest.approx(0.015)
        assert abs(row["observed_share"][-1] - p) <= 4 * math.sqrt(p * (1 - p) / rounds) + 1e-12


def test_within_set_balance_by_hand():
    # One replicate, experts 0, 1 in M_0 and expert 2 in M_1; task 0 routed to 0, 0, 1, 0 (shares 3/4, 1/4).
    tasks = np.array([[0, 0, 0, 0, 1]])
    routed = np.array([[[0], [0], [1], [0], [2]]])
    sets = np.array([[0, 0, 1]])
    got = oq.within_set_balance(tasks, routed, sets, np.ones((1, 5), dtype=bool), 2)
    h = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25)) / math.log(2)
    assert got[0] == pytest.approx(h)  # task 1's set has one expert and does not count


@pytest.mark.parametrize("purer_with_termination", [True, False])
def test_c2_subtracts_the_purity_without_termination_from_the_purity_with_it(monkeypatch, purer_with_termination):
    """C2's routing part on hand-made summaries: Delta = purity(aux, with termination) - purity(aux, no
    termination), so a gate that stays purer while it keeps training gives Delta < 0 (C2 contradicted)."""
    from moecl_verify.packs.moe_cl.claims.router import c2
    from moecl_verify.packs.moe_cl.experiments.balance_rules import label

    high, low = np.linspace(0.80, 0.90, 10), np.linspace(0.50, 0.62, 10)
    with_term, without = (high, low) if purer_with_termination else (low, high)

    def fake_simulate(ctx, question, variants):
        assert question == "balance_outside_gradient"
        runs = {}
        for regime in oq.REGIMES.values():
            for k in range(2):
                for v in variants:
                    purity = with_term if v.label == label("aux", True) else without
                    runs[(regime.name, k, v.label)] = {"purity_window": purity, "chance_bins": np.full((10, 40), 0.25)}
        return runs

    monkeypatch.setattr(oq, "simulate", fake_simulate)
    entries = c2.measure(context_for(PACK, "smoke", 0))
    assert len(entries) == 2 * len(oq.REGIMES)
    for e in entries:
        (case,) = e.tests
        expected = (high - low).mean() if purer_with_termination else (low - high).mean()
        assert case.test.observed == pytest.approx(expected)
        assert e.config["chance_purity"] == pytest.approx(0.25) and e.rule == "positive"

