"""The statistics keep their stated false-fail rate and detect what they claim to.

All trials are seeded, so these tests are deterministic; the acceptance bands
are wide (about 4.5 binomial standard deviations) and still exclude the rates a
wrong test would show (a one-sided test at the same level rejects half as often;
a test without the square root of n rejects almost never or always).
"""

import math

import numpy as np
import pytest

from moecl_verify.checks import stats


def _rejections(rng, n_trials, n, shift, alpha, draw):
    hits = 0
    for _ in range(n_trials):
        x = draw(rng, n) + shift
        if stats.mean_test(x, 0.0).p_value <= alpha:
            hits += 1
    return hits


@pytest.mark.parametrize(
    "draw",
    [
        lambda rng, n: rng.standard_normal(n),
        # A skewed law like squared errors: chi-square(3) centred.
        lambda rng, n: rng.chisquare(3, n) - 3.0,
    ],
    ids=["normal", "chisquare"],
)
def test_false_fail_rate_is_kept(draw):
    rng = np.random.default_rng(20261129)
    trials, alpha = 4000, 0.05
    hits = _rejections(rng, trials, 400, 0.0, alpha, draw)
    sd = math.sqrt(trials * alpha * (1 - alpha))
    assert abs(hits - trials * alpha) < 4.5 * sd, hits


def test_min_detectable_shift_is_detected_with_stated_power():
    rng = np.random.default_rng(7)
    n, alpha = 400, 0.01
    se = 1.0 / math.sqrt(n)
    shift = stats.min_detectable(se, alpha)
    trials = 2000
    hits = _rejections(rng, trials, n, shift, alpha, lambda g, k: g.standard_normal(k))
    sd = math.sqrt(trials * 0.9 * 0.1)
    assert abs(hits - 0.9 * trials) < 4.5 * sd, hits


def test_planted_discrepancy_is_refuted_and_truth_is_not():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(10_000) + 1.0
    truth = stats.mean_test(x, 1.0)
    planted = stats.mean_test(x, 1.0 + 3 * truth.min_detectable(1e-3))
    assert truth.p_value > 1e-3
    assert planted.p_value < 1e-6


def test_tail_p_values_do_not_underflow_early():
    assert stats.two_sided_p(1.959963984540054) == pytest.approx(0.05, rel=1e-9)
    assert 0.0 < stats.two_sided_p(30.0) < 1e-190
    assert stats.one_sided_p(0.0) == pytest.approx(0.5)


def test_holm_step_down_textbook_example():
    decision = stats.holm([0.01, 0.04, 0.03, 0.005], 0.05)
    assert decision.rejected == (True, False, False, True)
    # 0.04 ranks after the failure at 0.03 and keeps the failing threshold 0.025
    assert decision.thresholds == pytest.approx((0.05 / 3, 0.025, 0.025, 0.0125))


def test_holm_stops_at_first_non_rejection():
    # 0.02 <= 0.05/2 is rejected; then 0.049 <= 0.05/1 is rejected too.
    assert stats.holm([0.02, 0.049], 0.05).rejected == (True, True)
    # 0.03 > 0.025 fails, so 0.031 is not rejected although 0.031 <= 0.05.
    assert stats.holm([0.03, 0.031], 0.05).rejected == (False, False)


def test_holm_rejection_equals_p_below_recorded_threshold():
    rng = np.random.default_rng(5)
    for _ in range(200):
        p = list(rng.uniform(0, 0.02, size=rng.integers(1, 12)))
        decision = stats.holm(p, 0.01)
        assert decision.rejected == tuple(pk <= th for pk, th in zip(p, decision.thresholds))


def test_bonferroni_and_input_validation():
    assert stats.bonferroni_min_p([0.01, 0.5, 0.2]) == pytest.approx(0.03)
    assert stats.bonferroni_min_p([0.6, 0.9]) == 1.0
    with pytest.raises(ValueError):
        stats.mean_test(np.array([1.0]), 0.0)
    with pytest.raises(ValueError):
        stats.mean_test(np.array([1.0, np.nan]), 0.0)


def test_wilson_interval_textbook_values():
    from moecl_verify.checks.stats import wilson

    low, high = wilson(5, 10, level=0.95)  # Newcombe (1998), table I: 0.2366-0.7634
    assert abs(low - 0.2366) < 1e-4 and abs(high - 0.7634) < 1e-4
    assert abs(wilson(0, 20, level=0.95)[0]) < 1e-12 and abs(wilson(20, 20, level=0.95)[1] - 1) < 1e-12
    with pytest.raises(ValueError):
        wilson(3, 2)


def test_binomial_tails_exact_and_large_n():
    import math

    from moecl_verify.checks.stats import binom_cdf, binom_sf

    assert binom_cdf(3, 10, 0.5) == pytest.approx(sum(math.comb(10, i) for i in range(4)) / 1024, rel=1e-12)
    assert binom_sf(7, 10, 0.5) == pytest.approx(sum(math.comb(10, i) for i in range(7, 11)) / 1024, rel=1e-12)
    # n = 10^4 (a full-budget run): the lower tail at k = 100 is about 1e-2734, far below float range.
    assert binom_cdf(100, 10_000, 0.5) == 0.0 and binom_cdf(5000, 10_000, 0.5) == pytest.approx(0.503989, rel=1e-5)
    assert binom_sf(0, 5, 0.3) == 1.0 and binom_cdf(-1, 5, 0.3) == 0.0 and binom_cdf(5, 5, 0.3) == 1.0
    # numpy integers are accepted; a tiny p is not rounded away (binom_sf once went through 1 - p)
    assert binom_cdf(np.int64(3), 10, 0.3) == pytest.approx(0.6496107184, rel=1e-10)
    assert binom_sf(4, np.int64(10), 0.3) == pytest.approx(1 - 0.6496107184, rel=1e-9)  # P(X >= 4) = 1 - P(X <= 3)
    assert binom_sf(1, 2, 2.5e-165) == pytest.approx(5e-165, rel=1e-12)
    with pytest.raises(TypeError):
        binom_cdf(2.5, 10, 0.3)


def _exact_cdf(k, n, p):
    from fractions import Fraction

    p = Fraction(p)
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(deadline=None, max_examples=60)
@given(st.integers(1, 150), st.floats(0.0, 1.0), st.data())
def test_binomial_cdf_matches_exact_rational_sums(n, p, data):
    """The tail-from-the-far-side sum with early stop against the exact rational sum."""
    k = data.draw(st.integers(0, n - 1))
    exact = _exact_cdf(k, n, p)
    assert stats.binom_cdf(k, n, p) == pytest.approx(float(exact), rel=1e-12, abs=1e-300)
    assert stats.binom_sf(k, n, p) == pytest.approx(float(1 - _exact_cdf(k - 1, n, p)) if k else 1.0, rel=1e-12, abs=1e-300)
