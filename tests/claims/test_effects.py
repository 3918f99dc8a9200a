"""How large a slip is at the paper's configuration (packs/moe_cl/entries/effects.py), C2's routing slip, the
configuration the report names, and the unseen-task answer, on hand-made entries.

Every expected number is computed here by hand (plain float arithmetic at r = 1 - s/d = 0.4, T = 2000, or
picked for the hand-made entries), never copied from the tool's output.
"""

import re

import pytest

from moecl_verify.checks.model import ClaimResult
from moecl_verify.packs.moe_cl import answers, texts
from moecl_verify.packs.moe_cl.claims.router import c2
from moecl_verify.packs.moe_cl.entries import effects
from moecl_verify.packs.moe_cl.experiments.fig2_runs import FIG2
from moecl_verify.theory import prop4
from moecl_verify.theory.symbols import D, T, r, t

R, HORIZON = 0.4, 2000


def numbers(text: str) -> list[str]:
    return re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", text)


# ----------------------------------------------------------------------------- the same-task gaps (sympy)


def test_the_paper_configuration_is_r_0_4_and_t_2000():
    assert (FIG2["d"] - FIG2["s"]) / FIG2["d"] == R and FIG2["T"] == HORIZON


def test_same_task_gaps_state_the_forgetting_and_generalization_at_r_0_4_t_2000():
    forgetting = (1 - R) - (R - R**HORIZON) / (HORIZON - 1)  # 0.6 - 0.4/1999 = 0.59980
    generalization = (1 - R**HORIZON) / HORIZON  # 1/2000 = 0.0005
    assert forgetting == pytest.approx(0.5998, abs=1e-4) and generalization == pytest.approx(0.0005, rel=1e-12)
    text = effects.same_task_gaps(-prop4.forgetting_gap("corrected"), prop4.generalization_gap(), t, T, r, D)
    assert f"eq. (17) misses {forgetting:.2f} D of forgetting" in text and "0.60 D" in text
    assert f"eq. (18) is off by only {generalization:.2g} D" in text and "0.0005 D" in text
    assert "(r = 2/5, T = 2000)" in text
    # the numbers come from the expressions given: twice the forgetting gap says twice as much
    doubled = effects.same_task_gaps(-2 * prop4.forgetting_gap("corrected"), prop4.generalization_gap(),
                                     t, T, r, D)
    assert f"misses {2 * forgetting:.2f} D" in doubled and "1.20 D" in doubled
    # and the generalization excess alone, leading with where it is evaluated
    alone = effects.generalization_excess(prop4.generalization_gap(), T, r, D)
    assert alone == ("at Figure 2's configuration (r = 2/5, T = 2000), eq. (18) is off by only 0.0005 D, "
                     "negligible")


# ----------------------------------------------------------------------------- effects read from entries


def result(claim_id, verdict, horizons, M, pool, part="Figure 2 configuration", **config):
    return ClaimResult(id=claim_id, source="-", kind="bound", form="stated", verdict=verdict, expected=0.0,
                       observed=0.0, stderr=0.01, p_value=1e-6, false_fail_rate=1e-3, min_detectable=0.01,
                       config={"features": "definition1", "part": f"{part}, M = {M}", "pool": pool, "M": M,
                               **config},
                       evidence="z-test", horizons=horizons, evidence_type="criterion")


def bound_case(label, measured, rhs):
    return {"case": label, "expected": 0.0, "observed": rhs - measured, "stderr": 0.01, "z": (rhs - measured) / 0.01,
            "p_value": 1e-6, "min_detectable": 0.01, "rhs": rhs, "measured": measured, "measured_stderr": 0.01}


def bound_entries():
    """Two refuted entries at Figure 2's configuration (M = 10 on pool 0, M = 20 on pool 1) whose decisive
    cases have E[F_t] = 1.234 and 2.5 against right-hand sides 0.5678 and 0.9; their other cases, a confirmed
    entry and a refuted one at another configuration carry larger numbers that must not show."""
    return [
        result("thm1.forgetting_early", "refuted",
               [bound_case("pool 0, t=2", 9.0, 0.1), bound_case("pool 0, t=5", 1.234, 0.5678)], 10, 0,
               decisive_horizon="pool 0, t=5"),
        result("thm1.forgetting_early", "refuted",
               [bound_case("pool 1, t=10", 2.5, 0.9), bound_case("pool 1, t=20", 7.0, 0.2)], 20, 1,
               decisive_horizon="pool 1, t=10"),
        result("thm1.forgetting_early", "confirmed", [bound_case("pool 0, t=2", 50.0, 60.0)], 5, 2,
               decisive_horizon="pool 0, t=2"),
        result("thm1.forgetting_early", "refuted", [bound_case("c", 40.0, 30.0)], 10, 3,
               part="gaussian features", decisive_horizon="c"),
    ]


def test_bound_excess_quotes_the_decisive_cases_of_the_refuted_entries_at_figure_2():
    text = effects.bound_excess(bound_entries(), "E[F_t]", "eq. (19)")
    # 1.234 -> 1.23 and 0.5678 -> 0.568 at three significant digits
    assert text == ("at Figure 2's configuration, E[F_t] = 1.23–2.5 against eq. (19)'s 0.568–0.9 "
                    "(M = 10 and 20, 2 task pools)")
    assert not {"9", "7", "50", "60", "40", "30"} & set(numbers(text))
    # one entry: one number each side, one pool
    one = effects.bound_excess(bound_entries()[:1], "E[G_T]", "eq. (20)")
    assert one == "at Figure 2's configuration, E[G_T] = 1.23 against eq. (20)'s 0.568 (M = 10, 1 task pool)"


def test_bound_excess_says_nothing_without_a_refuted_entry_at_figure_2():
    entries = bound_entries()
    assert effects.bound_excess([], "E[F_t]", "eq. (19)") == ""
    assert effects.bound_excess(entries[2:], "E[F_t]", "eq. (19)") == ""  # confirmed, or another configuration
    # a decisive case without both sides recorded says nothing either
    bare = result("thm1.generalization", "refuted", [{"case": "T=2000", "observed": -1.0}], 10, 0,
                  decisive_horizon="T=2000")
    assert effects.bound_excess([bare], "E[G_T]", "eq. (20)") == ""


def identity_row(horizon, excess):
    return {"t": horizon, "expected": 0.0, "observed": excess, "stderr": 0.01, "z": excess / 0.01,
            "p_value": 1e-6, "min_detectable": 0.01}


def test_identity_excess_spans_every_horizon_of_the_refuted_entries():
    entries = [result("thm1.forgetting_late", "refuted",
                      [identity_row(100, 0.3), identity_row(1000, 0.45), identity_row(2000, 0.5)], 10, 0),
               result("thm1.forgetting_late", "refuted", [identity_row(100, 0.25), identity_row(1000, 0.4)], 20, 0),
               result("thm1.forgetting_late", "inconclusive", [identity_row(5000, 9.0)], 5, 1)]
    text = effects.identity_excess(entries, "E[F_t]", "the identity's value")
    assert text == ("at Figure 2's configuration, E[F_t] stays 0.25–0.5 above the identity's value "
                    "(t = 100–2000, M = 10 and 20, 1 task pool)")
    assert effects.identity_excess(entries[2:], "E[F_t]", "x") == ""
    assert effects.identity_excess([], "E[F_t]", "x") == ""


def converges_entry(verdict, deltas, pool):
    """Figure 2's 'almost zero' criterion: Delta = 0.1 E[X_T | M=1] - E[X_T | M] per error and M."""
    return ClaimResult(id="fig2.termination_converges", source="-", kind="qualitative", form="stated",
                       verdict=verdict, expected=0.0, observed=min(deltas.values()), stderr=0.01, p_value=1e-6,
                       false_fail_rate=1e-3, min_detectable=0.01,
                       config={"features": "definition1", "pool": pool, "experts": [1, 5, 10, 20]},
                       evidence="z-test", evidence_type="criterion",
                       horizons=[{"case": case, "expected": 0.0, "observed": d, "stderr": 0.01, "z": d / 0.01,
                                  "p_value": 1e-6, "min_detectable": 0.01} for case, d in deltas.items()])


def test_converges_excess_spans_each_error_above_a_tenth_of_one_experts():
    entries = [converges_entry("refuted", {"F, M=5": -0.2, "F, M=10": -0.3, "G, M=5": -0.15, "G, M=10": -0.15}, 0),
               converges_entry("refuted", {"F, M=20": -0.25, "G, M=20": -0.15}, 1),
               converges_entry("confirmed", {"F, M=5": 0.9, "G, M=5": 0.8}, 2)]
    text = effects.converges_excess(entries)
    # forgetting: 0.2 to 0.3 above; generalization: 0.15 in every case; only the refuted entries count
    assert text == ("at Figure 2's configuration, the final forgetting 0.2–0.3 and the generalization error 0.15 "
                    "stay above 'almost zero', a tenth of one expert's (M = 5, 10, 20, 2 task pools)")
    # one error only, one pool
    only_f = converges_entry("refuted", {"F, M=10": -0.3, "F, M=20": -0.3, "X, M=5": -5.0}, 0)
    assert effects.converges_excess([only_f]) == (
        "at Figure 2's configuration, the final forgetting 0.3 stays above 'almost zero', a tenth of one expert's "
        "(M = 5, 10, 20, 1 task pool)")
    assert effects.converges_excess(entries[2:]) == ""
    assert effects.converges_excess([]) == ""


# ----------------------------------------------------------------------------- C2's routing slip


def c2_entry(regime, pool, verdict, with_termination, without, chance):
    delta = with_termination - without
    return ClaimResult(
        id="c2", source="-", kind="qualitative", form="stated", verdict=verdict, expected=0.0, observed=delta,
        stderr=0.01, p_value=1e-4, false_fail_rate=1e-3, min_detectable=0.02,
        config={"features": "definition1", "part": f"specialization destroyed, {regime} regime", "pool": pool,
                "regime": regime, "chance_purity": chance,
                "purity_with_termination": {"mean": with_termination, "stderr": 0.01, "n": 20},
                "purity_without_termination": {"mean": without, "stderr": 0.01, "n": 20}},
        evidence=f"evidence {regime} {pool}", evidence_type="criterion",
        horizons=[{"case": "purity", "expected": 0.0, "observed": delta, "stderr": 0.01, "z": delta / 0.01,
                   "p_value": 1e-4, "min_detectable": 0.02}])


def test_c2_has_no_slip_while_nothing_is_refuted():
    assert c2.slips([]) == []
    assert c2.slips([c2_entry("paper", 0, "inconclusive", 0.2, 0.25, 1 / 7),
                     c2_entry("specializing", 0, "inconclusive", 0.5, 0.6, 1 / 3)]) == []


def test_c2_slip_quotes_the_purities_of_its_entries():
    entries = [c2_entry("paper", 0, "refuted", 0.2, 0.25, 1 / 7),
               c2_entry("paper", 1, "inconclusive", 0.21, 0.22, 1 / 7),
               c2_entry("specializing", 0, "refuted", 0.5, 0.9, 1 / 3)]
    (slip,) = c2.slips(entries)
    assert slip.id == "c2.routing_not_worse_without_termination"
    assert slip.entries == (entries[0].key, entries[2].key)  # the refuted ones
    # 1/7 = 0.142857 -> 0.143 and 1/3 -> 0.333; each regime's purities over its entries
    assert "significantly higher in 2 of 3 regime and pool cases and lower in none" in slip.holds
    assert ("(paper regime: with termination 0.2–0.21, without 0.22–0.25 (chance 0.143); "
            "specializing regime: with termination 0.5, without 0.9 (chance 0.333))") in slip.holds
    assert ("late-window routing purity is 0.2–0.21 with termination and 0.22–0.25 without, against a chance "
            "level of 0.143") in slip.effect
    assert slip.evidence == ("specialization destroyed, paper regime, pool 0: evidence paper 0 | "
                             "specialization destroyed, specializing regime, pool 0: evidence specializing 0")
    # no paper-regime entry: no effect at the paper's configuration
    (only,) = c2.slips(entries[2:])
    assert only.effect == "" and "specializing regime: with termination 0.5, without 0.9" in only.holds


def test_c2_has_no_slip_when_any_entry_is_confirmed():
    entries = [c2_entry("paper", 0, "refuted", 0.2, 0.25, 1 / 7),
               c2_entry("specializing", 0, "confirmed", 0.9, 0.5, 1 / 3)]
    assert c2.slips(entries) == []


def test_c2_effect_does_not_say_the_gate_barely_specializes_when_its_purity_is_far_above_chance():
    (slip,) = c2.slips([c2_entry("paper", 0, "refuted", 0.90, 0.97, 1 / 7)])
    assert "barely specializes" not in slip.effect


# ----------------------------------------------------------------------------- the configuration the report names


@pytest.mark.parametrize("symbol, name", [("N", "N"), ("K", "K"), ("d", "d"), ("s", "s"), ("σ0", "sigma0"),
                                          ("η", "eta"), ("α", "alpha"), ("λ", "lam"), ("T", "T")])
def test_the_configuration_text_states_figure_2s_values(symbol, name):
    # "<symbol> = <value>", possibly through a chain ("η = α = 0.5"); not "s/d = 0.4", which is r
    found = re.findall(rf"(?<![\w/]){re.escape(symbol)} = (?:[^\s,=()]+ = )*([0-9.]+)", texts.CONFIGURATION)
    assert found, f"{symbol} is not stated"
    assert all(float(value) == FIG2[name] for value in found), (symbol, found, FIG2[name])


def test_the_configuration_text_states_r_from_s_and_d():
    (value,) = re.findall(r"r = 1 - s/d = ([0-9.]+)", texts.CONFIGURATION)
    assert float(value) == 1 - FIG2["s"] / FIG2["d"]


# ----------------------------------------------------------------------------- where the unseen task goes


def unseen_entry(regime, pool, used, other, experts, part="frozen vs spare expert", frozen=True):
    receivers = [{"router": "frozen gate (termination)" if frozen else "gate keeps training",
                  "new_to_expert_used_before": {"mean": used, "stderr": 0.01, "n": 20},
                  "new_to_expert_of_other_set": {"mean": other, "stderr": 0.01, "n": 20},
                  "experts_receiving_new_task": {"mean": experts, "stderr": 0.1, "n": 20}},
                 {"router": "oracle, spare expert",
                  "new_to_expert_used_before": {"mean": 0.0, "stderr": 0.0, "n": 20},
                  "new_to_expert_of_other_set": {"mean": 0.0, "stderr": 0.0, "n": 20},
                  "experts_receiving_new_task": {"mean": 1.0, "stderr": 0.0, "n": 20}}]
    return ClaimResult(id="open.unseen_task", source="-", kind="qualitative", form="stated", verdict="confirmed",
                       expected=0.0, observed=0.1, stderr=0.01, p_value=1e-4, false_fail_rate=1e-3,
                       min_detectable=0.02,
                       config={"features": "definition1", "part": f"{part}, {regime} regime", "pool": pool,
                               "regime": regime, "receivers": receivers},
                       evidence="z-test", evidence_type="criterion")


def test_unseen_task_where_reads_the_frozen_gates_records_once_per_regime_and_pool():
    entries = [unseen_entry("paper", 0, 0.9, 0.6, 2.0),
               # the same regime and pool again (another aspect): not counted twice, its numbers ignored
               unseen_entry("paper", 0, 0.1, 0.1, 9.0, part="new task"),
               unseen_entry("paper", 1, 0.85, 0.7, 3.0),
               unseen_entry("specializing", 0, 0.875, 0.65, 2.5)]
    # used before: 85% to 90% (0.875 -> 88%); other set: 60% to 70%; experts: 2 to 3
    assert answers.unseen_task_where(entries) == (
        "The frozen gate sends the new task to experts it has already trained (85–90% of its rounds), mostly "
        "experts of another task's set (60–70%), spread over 2–3 experts.")
    one = answers.unseen_task_where(entries[:1])
    assert "(90% of its rounds)" in one and "(60%)" in one and "spread over 2 experts" in one


def test_unseen_task_where_says_nothing_without_the_frozen_gates_records():
    assert answers.unseen_task_where([]) == ""
    assert answers.unseen_task_where([unseen_entry("paper", 0, 0.9, 0.6, 2.0, frozen=False)]) == ""
    # one of the three measurements missing (fewer than one replicate defined it): no sentence
    assert answers.unseen_task_where([unseen_entry("paper", 0, 0.9, 0.6, None)]) == ""


# ----------------------------------------------------------------------------- a case that went the other way


def test_converges_excess_does_not_call_a_case_below_almost_zero_above_it():
    # forgetting 0.2 above at M = 5; at M = 10 it is 0.05 *below* a tenth of one expert's (Delta = +0.05)
    text = effects.converges_excess([converges_entry("refuted", {"F, M=5": -0.2, "F, M=10": 0.05}, 0)])
    said_above = text.split(" above ")[0]
    assert not re.search(r"(?<![\w.])-\d", said_above), text


def test_identity_excess_does_not_call_a_horizon_below_the_identity_above_it():
    entry = result("thm1.forgetting_late", "refuted", [identity_row(100, -0.1), identity_row(1000, 0.5)], 10, 0)
    text = effects.identity_excess([entry], "E[F_t]", "the identity's value")
    said_above = text.split(" above ")[0] if " above " in text else ""
    assert "ranges from -0.1 to 0.5" in text
    assert not re.search(r"(?<![\w.])-\d", said_above), text
