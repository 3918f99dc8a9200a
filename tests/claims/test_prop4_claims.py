"""Proposition 4 end to end: verdicts the paper's own numbers force.

The printed eq. (17) and eq. (18) differ from the model's expectation by
amounts of order D (about 2.2 for the seeded pool), hundreds of standard errors
even at the smoke budget, so their refutation is not a matter of luck; the
derived forms differ from the truth by nothing, so they must never be refuted
under the features that satisfy assumption A1.
"""

import pytest

from moecl_verify.checks import runner


@pytest.fixture(scope="module")
def standard():
    return runner.run(["prop4.*"], budget="standard", seed=0)


def _entry(run, claim, form, features):
    (res,) = [r for r in run.results if r.id == claim and r.form == form and r.config["features"] == features]
    return res


def test_four_or_more_entries_per_claim(standard):
    for claim in ("prop4.forgetting", "prop4.generalization"):
        entries = [r for r in standard.results if r.id == claim]
        assert {(r.form, r.config["features"]) for r in entries} >= {
            ("stated", "gaussian"),
            ("stated", "definition1"),
            ("derived", "gaussian"),
            ("derived", "definition1"),
        }


def test_printed_forms_refuted(standard):
    for claim in ("prop4.forgetting", "prop4.generalization"):
        for features in ("gaussian", "definition1"):
            assert _entry(standard, claim, "stated", features).verdict == "refuted"


def test_derived_forms_confirmed_under_gaussian_features(standard):
    for claim in ("prop4.forgetting", "prop4.generalization"):
        res = _entry(standard, claim, "derived", "gaussian")
        assert res.verdict == "confirmed", res.evidence
        assert res.min_detectable <= 0.02 * (res.config["S"] + res.config["D"])


def test_definition1_breaks_the_rotational_assumption(standard):
    assert _entry(standard, "prop4.forgetting", "derived", "definition1").verdict == "refuted"


def test_config_carries_the_contract_fields(standard):
    res = standard.results[0]
    for key in ("features", "d", "s", "N", "r", "S", "D", "replicates", "seed"):
        assert key in res.config
    assert res.config["r"] == pytest.approx(0.4)


def test_slips_name_the_differing_terms(standard):
    ids = {s.id for s in standard.slips}
    assert {"prop4.eq17.s_coefficient", "prop4.appH.same_task_gap", "prop4.eq18.same_task_gap"} <= ids
    same_task = next(s for s in standard.slips if s.id == "prop4.eq18.same_task_gap")
    assert "(1 - r^T) D / T" in same_task.holds


def test_smoke_budget_never_confirms_what_it_cannot_resolve():
    smoke = runner.run(["prop4.generalization"], budget="smoke", seed=1)
    for res in smoke.results:
        if res.verdict == "confirmed":
            assert res.min_detectable <= 0.02 * (res.config["S"] + res.config["D"])
        if res.form == "derived" and res.config["features"] == "gaussian":
            assert res.verdict != "refuted"
