"""The evidence types' rules on manufactured data whose truth is known, and the one decision path."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from moecl_verify.checks import decide, stats
from moecl_verify.checks.kinds.proportion import ProportionEvidence, ProportionRow
from moecl_verify.checks.kinds.scaling import ScalingEvidence
from moecl_verify.checks.model import ClaimResult, exact_result
from moecl_verify.checks.kinds.mean import HorizonTest, Measurement
from moecl_verify.checks.scaling import fit_exponent

COMMON = dict(claim_id="x", source="test", config={"features": "-", "part": "p"}, formula="f", what="w")


def proportion(rows, claim, **kw):
    return ProportionEvidence(kind="probability", rows=tuple(ProportionRow(*r) for r in rows), claim=claim,
                              **COMMON, **kw)


def test_at_most_zero_one_violation_is_a_counterexample_and_none_is_never_a_confirmation():
    seen = proportion([(None, 1, 1000)], "at_most", bound=0.0)
    assert seen.p_value == 0.0 and seen.judge(1e-6, True).verdict == "refuted"
    clean = proportion([(None, 0, 10_000)], "at_most", bound=0.0)
    assert clean.p_value == 1.0 and clean.judge(1e-6, False).verdict == "inconclusive"


def test_at_least_p_value_is_scipys_exact_binomial_test():
    e = proportion([(None, 40, 100)], "at_least", bound=0.5)
    assert e.p_value == pytest.approx(sps.binomtest(40, 100, 0.5, alternative="less").pvalue, rel=1e-12)
    # Two rows: Bonferroni over rows.
    e2 = proportion([(0.1, 40, 100), (0.05, 50, 100)], "at_least", bound=0.5)
    assert e2.p_value == pytest.approx(2 * e.p_value, rel=1e-12)


def test_at_least_confirms_only_within_the_resolution_at_the_threshold():
    strong = proportion([(None, 9_990, 10_000)], "at_least", bound=0.95, resolution=0.0)
    assert strong.judge(1e-6, False).verdict == "confirmed"  # lower bound at 1 - 1e-6 is far above 0.95
    weak = proportion([(None, 96, 100)], "at_least", bound=0.95, resolution=0.0)
    assert weak.judge(1e-6, False).verdict == "inconclusive"


def _vanishing(failures, slope, se=0.05):
    rows = [(s0, 1000 - f, 1000) for s0, f in zip((0.4, 0.2, 0.1), failures)]
    return proportion(rows, "vanishing", failure_slope=(slope, se))


def test_vanishing_failures_are_refuted_only_when_level_and_trend_both_reject():
    flat = _vanishing([300, 310, 320], slope=-0.05, se=0.01)  # q = 0.32 at the smallest sigma0, not shrinking
    assert flat.p_value < 1e-10 and flat.judge(1e-6, flat.p_value <= 1e-6).verdict == "refuted"
    shrinking = _vanishing([300, 200, 150], slope=0.6)  # falling fast to q = 0.15: the rising branch confirms
    assert shrinking.p_value > 0.5
    assert shrinking.judge(1e-6, False).verdict == "confirmed"
    high = _vanishing([500, 450, 400], slope=0.3)  # falling, but q = 0.4 at the smallest sigma0: undecided
    assert high.p_value > 0.5 and high.judge(1e-6, False).verdict == "inconclusive"
    rare = _vanishing([10, 5, 2], slope=1.0)
    assert rare.judge(1e-6, False).verdict == "confirmed"


def _fit(k, noise, n=400, seed=0):
    rng = np.random.default_rng(seed)
    sigma0 = [0.4, 0.2, 0.1, 0.05, 0.025]
    samples = [s ** k * np.exp(noise * rng.standard_normal(n)) for s in sigma0]
    return fit_exponent(sigma0, samples, np.random.default_rng(seed + 1))


def test_scaling_p_value_is_a_normal_test_with_the_bootstrap_standard_error():
    fit = _fit(1.0, 0.3)
    theta = ScalingEvidence(**{k: v for k, v in COMMON.items()}, fit=fit, law="Theta", exponent=1.0)
    z = (fit.exponent - 1.0) / fit.stderr
    assert theta.p_value == pytest.approx(2 * sps.norm.sf(abs(z)))
    assert 0 < fit.stderr < 0.05


def test_scaling_rules_on_manufactured_laws():
    fit = _fit(1.0, 0.3)
    wrong = ScalingEvidence(**COMMON, fit=fit, law="Theta", exponent=0.75)
    assert wrong.p_value < 1e-10 and wrong.judge(1e-6, True).verdict == "refuted"
    right = ScalingEvidence(**COMMON, fit=fit, law="Theta", exponent=1.0, tolerance=0.2)
    verdict = right.judge(1e-6, right.p_value <= 1e-6)
    assert verdict.verdict == "confirmed" and "consistent over the window" in verdict.reason
    # O(sigma0^0.5): y shrinks at least as fast as sigma0^0.5; a true exponent 1 satisfies it.
    big_o = ScalingEvidence(**COMMON, fit=fit, law="O", exponent=0.5)
    assert big_o.p_value > 0.5 and big_o.judge(1e-6, False).verdict == "confirmed"
    # Omega(sigma0^0.5) asks for y to shrink no faster than sigma0^0.5: exponent 1 refutes it.
    omega = ScalingEvidence(**COMMON, fit=fit, law="Omega", exponent=0.5)
    assert omega.p_value < 1e-10


def test_decide_claims_runs_holm_across_every_non_exact_entry_and_passes_exact_ones_through():
    mean = Measurement(claim_id="a", source="s", kind="expected-value identity", form="stated",
                       config={"features": "gaussian"}, formula="f", scale=1.0,
                       tests=(HorizonTest(1, stats.MeanTest(expected=0.0, observed=0.5, stderr=0.01, n=1000)),))
    prop = proportion([(None, 1, 1000)], "at_most", bound=0.0)
    exact = exact_result("b", "s", "bound", "part", "refuted", "counterexample", "f")
    [a, b] = decide.decide_claims([[mean, exact], [prop]], family_rate=1e-3)
    p_values = [decide.p_value(mean), prop.p_value]
    holm = stats.holm(p_values, 1e-3)
    assert [a[0].false_fail_rate, b[0].false_fail_rate] == list(holm.thresholds)
    assert a[0].verdict == "refuted" and a[0].evidence_type == "mean"
    assert b[0].verdict == "refuted" and b[0].evidence_type == "proportion"
    assert a[1] is exact and exact.evidence_type == "exact" and exact.false_fail_rate is None
    # Re-deciding one entry alone from its recorded threshold gives the same verdict.
    assert decide.decide_entry(prop, b[0].false_fail_rate).verdict == b[0].verdict


def test_a_sampled_verdict_decided_inside_a_claim_is_refused():
    smuggled = ClaimResult(id="c", source="s", kind="probability", form="stated", verdict="refuted", expected=1.0,
                           observed=0.5, stderr=0.1, p_value=None, false_fail_rate=0.01, min_detectable=None,
                           config={"features": "-"}, evidence="decided at 0.01 in the claim")
    with pytest.raises(TypeError, match="not exact"):
        decide.decide_claims([[smuggled]], family_rate=1e-3)


def test_one_sided_bounds_match_scipys_wilson_interval():
    row = ProportionRow(None, 37, 400)
    lo, hi = row.interval(0.98)
    ci = sps.binomtest(37, 400).proportion_ci(confidence_level=0.98, method="wilson")
    assert (lo, hi) == pytest.approx((ci.low, ci.high))
    assert math.isclose(stats.wilson(37, 400, 0.98)[0], lo)


def test_every_kind_is_behind_the_protocol_and_decides_with_its_own_resolution():
    """Each registered kind: evidence by the protocol, its decided entry's min_detectable is what the kind
    says it detects at that threshold, and its evidence_type is its tag (so the report finds its table)."""
    from moecl_verify.checks import kinds
    from moecl_verify.checks.kinds.mean import HorizonTest, Measurement
    from moecl_verify.checks.stats import mean_test

    rng = np.random.default_rng(0)
    samples = {
        "mean": Measurement("c", "s", "expected-value identity", "stated", {}, (HorizonTest(1, mean_test(
            rng.normal(0, 1, 400), 0.0)),), 1.0, "E[X] = 0"),
        "criterion": Measurement("c", "s", "qualitative", "stated", {}, (HorizonTest("a", mean_test(
            rng.normal(1, 1, 400), 0.0)),), 1.0, "Δ > 0", rule="positive"),
        "proportion": proportion([(None, 190, 200)], "at_least", bound=0.9, resolution=0.05),
        "scaling": ScalingEvidence(**COMMON, fit=fit_exponent([0.4, 0.2, 0.1, 0.05], [
            2 * s**0.75 * rng.lognormal(0, 0.05, 100) for s in (0.4, 0.2, 0.1, 0.05)], np.random.default_rng(1),
            resamples=200), law="Theta", exponent=0.75),
    }
    for tag, item in samples.items():
        assert kinds.is_evidence(item) and item.TAG == tag and tag in kinds.TABLES
        for threshold in (1e-3, 1e-2):
            entry = item.decide(threshold, item.p_value <= threshold)
            assert entry.evidence_type == tag and entry.min_detectable == pytest.approx(item.detectable(threshold))
            assert len(kinds.TABLES[tag].cells(entry)) == len(kinds.TABLES[tag].columns)
    assert not kinds.is_evidence(object())


def test_an_undecided_scaling_entry_names_the_interval_that_decided_and_its_tolerance():
    """An exponent whose 99% interval excludes the law but whose interval at the family's (far smaller)
    threshold does not is inconclusive; the sentence gives that interval and the tolerance, so a reader does
    not take the 99% interval for the test."""
    fit = _fit(1.0, 0.3)
    k = fit.exponent + 3.0 * fit.stderr  # outside the 99% interval (2.58 s.e.), inside the 1e-6 one (4.9 s.e.)
    entry = ScalingEvidence(**COMMON, fit=fit, law="Theta", exponent=k, tolerance=0.01)
    threshold = 1e-6
    assert 0.01 > entry.p_value > threshold
    judged = entry.judge(threshold, False)
    lo, hi = entry.interval(threshold)
    assert judged.verdict == "inconclusive" and lo < k < hi
    assert f"[{lo:.3f}, {hi:.3f}]" in judged.reason and "tolerance 0.01" in judged.reason
    assert "false-fail rate 1e-06" in judged.reason
