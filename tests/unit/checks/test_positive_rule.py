"""The rule for qualitative criteria: every margin Delta > 0."""

from moecl_verify.checks.kinds.mean import HorizonTest, Measurement
from moecl_verify.checks.kinds.mean import decide_measurement as decide, entry_p
from moecl_verify.checks.stats import MeanTest


def _m(*margins):
    return Measurement(
        claim_id="q",
        source="test",
        kind="qualitative",
        form="stated",
        config={},
        tests=tuple(HorizonTest(f"case {i}", MeanTest(0.0, est, se, 100)) for i, (est, se) in enumerate(margins)),
        scale=1.0,
        formula="Delta > 0",
        rule="positive",
        horizon_name="case",
    )


def test_all_significantly_positive_is_confirmed():
    m = _m((1.0, 0.1), (0.8, 0.1))
    p = entry_p(m)
    assert p > 0.5
    assert decide(m, 1e-3, p <= 1e-3).verdict == "confirmed"


def test_one_significantly_negative_is_refuted():
    m = _m((1.0, 0.1), (-0.8, 0.1))
    p = entry_p(m)
    assert p < 1e-10
    res = decide(m, 1e-3, p <= 1e-3)
    assert res.verdict == "refuted" and "case 1" in res.evidence


def test_undecided_margin_is_inconclusive():
    m = _m((1.0, 0.1), (0.1, 0.1))
    p = entry_p(m)
    res = decide(m, 1e-3, p <= 1e-3)
    assert res.verdict == "inconclusive"
    assert res.horizons[0]["case"] == "case 0"
