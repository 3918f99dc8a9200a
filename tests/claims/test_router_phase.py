"""Propositions 1 and 3, Lemmas 13-15: the decision rules on manufactured data, the exact steps, the plumbing."""

import math

import numpy as np
import pytest
import sympy as sp

import moecl_verify.checks.claims.router.lemma13 as lemma13
import moecl_verify.checks.claims.router.lemma14 as lemma14
import moecl_verify.checks.claims.router.lemma15 as lemma15
import moecl_verify.checks.claims.router.prop1 as prop1
import moecl_verify.checks.claims.router.prop3 as prop3
from moecl_verify.checks.experiments import router_phase as rp
from moecl_verify.checks.experiments.router_phase import ProbabilityRow, chi2_sf, chi2_uniform, decide_probability, wilson
from moecl_verify.checks.context import BUDGETS, Context
from moecl_verify.checks.model import ClaimResult
from moecl_verify.numeric.seeding import generator_for


def test_wilson_interval_matches_published_values():
    # Wilson 95%: 0/10 -> [0, 0.2775] (Newcombe 1998, Table I);
    # 5/10 by hand: 0.5 +- 1.96 sqrt(0.025 + 1.96^2 / 400) / (1 + 1.96^2 / 10)
    lo, hi = wilson(0, 10, level=0.95)
    assert lo == pytest.approx(0, abs=1e-12) and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson(5, 10, level=0.95)
    assert (lo, hi) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))


def test_chi_square_tail_closed_forms():
    for x in (0.3, 2.0, 9.0, 40.0):
        assert chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)  # df = 2: exponential tail
        assert chi2_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-12)
    assert chi2_uniform(np.array([15, 4])) == (pytest.approx(2 * 5.5**2 / 9.5), 1)


SWEEP = (0.4, 0.2, 0.1, 0.05, 0.025)


def _rows(probabilities, n):
    return [ProbabilityRow(s0, int(round(p * n)), n) for s0, p in zip(SWEEP, probabilities)]


@pytest.mark.parametrize("probabilities, n, verdict", [
    ((1, 1, 1, 1, 1), 200, "confirmed"),  # certain everywhere
    ((0.3, 0.5, 0.8, 0.95, 0.99), 200, "confirmed"),  # rises toward 1
    ((0, 0, 0, 0, 0), 200, "refuted"),  # never
    ((0.5, 0.5, 0.5, 0.5, 0.5), 400, "refuted"),  # bounded away from 1, flat
    ((0.9, 0.8, 0.6, 0.4, 0.3), 200, "refuted"),  # falls
    ((0.1, 0.2, 0.3, 0.4, 0.5), 200, "inconclusive"),  # rises, but still far from 1
    ((0.8, 0.8, 0.8, 0.8, 0.8), 10, "inconclusive"),  # too few replicates to tell
])
def test_probability_rule_on_manufactured_counts(probabilities, n, verdict):
    got, reason, _ = decide_probability(_rows(probabilities, n), generator_for(0, "test-rule"))
    assert got == verdict, reason


def test_equal_probability_step_exact():
    g, lam = sp.symbols("g lambda", positive=True)
    # by hand: expert 2 wins iff r2 - r1 > g, the triangle of area (lambda - g)^2 / 2 in the lambda x lambda square
    assert sp.simplify(prop3.lower_choice_probability() - (lam - g) ** 2 / (2 * lam**2)) == 0
    entry = prop3._uniform_step_entry()
    assert entry.verdict == "refuted"
    slip = prop3.prop3_slips([entry])
    assert [s.id for s in slip] == ["prop3.equal_probability_step"]


def test_aux_weight_step_is_exact_and_holds_for_the_constants_run():
    entry = lemma14._aux_weight_entry()
    assert entry.verdict == "confirmed" and "c_alpha*c_eta*sigma0" in entry.evidence


def _result(part, verdict, c):
    return ClaimResult(id="x", source="s", kind="probability", form="stated", verdict=verdict, expected=1.0,
                       observed=0.5, stderr=0.1, p_value=None, false_fail_rate=0.01, min_detectable=None,
                       config={"part": f"{part}, c = {c:g}", "hidden_constant": c}, evidence="e")


def test_reconciled_downgrades_a_refutation_another_constant_contradicts():
    out = rp.reconciled([_result("a", "refuted", 1.0), _result("a", "confirmed", 0.5),
                         _result("b", "refuted", 1.0), _result("b", "refuted", 0.5)])
    assert [r.verdict for r in out] == ["inconclusive", "confirmed", "refuted", "refuted"]


def test_claims_end_to_end_on_a_small_sweep(monkeypatch):
    """Every id measures, entries carry the parts the report needs, and a rerun gives identical verdicts."""
    small = (0.4, 0.2, 0.1)
    for module in (rp, prop1, prop3, lemma13, lemma14):
        monkeypatch.setattr(module, "SWEEP", small)
    monkeypatch.setattr(rp, "ALGORITHM1_REPLICATES", {"smoke": 6})
    monkeypatch.setattr(rp, "PHASE_REPLICATES", {"smoke": 6})
    monkeypatch.setattr(rp, "POST_T1", 40)

    def run():
        ctx = Context(BUDGETS["smoke"], seed=3)
        return {f.__name__: f(ctx) for f in (prop1.measure_prop1, prop3.measure_prop3, lemma13.measure_lemma13,
                                             lemma14.measure_lemma14, lemma15.measure_lemma15)}

    first, second = run(), run()
    assert [len(v) for v in first.values()] == [8, 11, 8, 3, 4]
    for name, entries in first.items():
        assert [e.verdict for e in entries] == [e.verdict for e in second[name]]
        assert [e.observed for e in entries] == [e.observed for e in second[name]]
        for e in entries:
            assert e.config["part"]
    # Every prop1 model-unchanged entry: the experts move after T1 at every sigma0 (Lemma 3 is false).
    moved = [e for e in first["measure_prop1"] if e.config["part"].startswith("(b)")]
    assert all(row["probability"] == 0 for e in moved for row in e.config["probabilities"])
