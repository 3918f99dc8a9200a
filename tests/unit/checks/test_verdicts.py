"""The verdict rule: refuted on rejection, confirmed only with enough resolution."""

from moecl_verify.checks.kinds.mean import HorizonTest, Measurement
from moecl_verify.checks.kinds.mean import decide_measurement as decide
from moecl_verify.checks.stats import MeanTest


def _measurement(expected, observed, stderr, scale=1.0):
    return Measurement(
        claim_id="x",
        source="test",
        kind="expected-value identity",
        form="stated",
        config={"features": "gaussian", "t": [2]},
        tests=(HorizonTest(2, MeanTest(expected, observed, stderr, 1000)),),
        scale=scale,
        formula="x",
    )


def test_rejected_is_refuted():
    res = decide(_measurement(1.0, 1.5, 0.01), threshold=1e-3, rejected=True)
    assert res.verdict == "refuted"
    assert res.false_fail_rate == 1e-3


def test_not_rejected_with_resolution_is_confirmed():
    res = decide(_measurement(1.0, 1.001, 0.001), threshold=1e-3, rejected=False)
    assert res.verdict == "confirmed"
    # (z_{5e-4} + z_{0.1}) * 0.001 = (3.29 + 1.28) * 0.001
    assert abs(res.min_detectable - 0.00457) < 1e-4


def test_not_rejected_without_resolution_is_inconclusive():
    # min detectable ~0.46 > 2% of scale 1: the run could not have refuted a 10% error.
    res = decide(_measurement(1.0, 1.1, 0.1), threshold=1e-3, rejected=False)
    assert res.verdict == "inconclusive"
    assert "more replicates" in res.evidence


def test_horizons_share_the_threshold():
    m = Measurement(
        claim_id="x",
        source="test",
        kind="expected-value identity",
        form="derived",
        config={"features": "gaussian", "t": [2, 3]},
        tests=(
            HorizonTest(2, MeanTest(1.0, 1.0, 0.001, 1000)),
            HorizonTest(3, MeanTest(1.0, 1.0, 0.002, 1000)),
        ),
        scale=1.0,
        formula="x",
    )
    res = decide(m, threshold=1e-3, rejected=False)
    # worst horizon, each at 1e-3 / 2
    assert abs(res.min_detectable - (3.4808 + 1.2816) * 0.002) < 1e-3
    assert len(res.horizons) == 2
