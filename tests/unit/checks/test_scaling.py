"""The scaling-law mechanism on manufactured data of known exponent (method of manufactured solutions)."""

import numpy as np
import pytest

from moecl_verify.checks.kinds.scaling import ScalingEvidence
from moecl_verify.checks.scaling import fit_exponent

SIGMA0 = [0.4, 0.2, 0.1, 0.05, 0.025]


def decide_scaling(fit, law: str, k: float, tolerance: float = 0.1, threshold: float = 1e-3):
    """(verdict, reason) of the run's one scaling rule (:class:`ScalingEvidence`) at ``threshold``."""
    evidence = ScalingEvidence(claim_id="t", source="t", config={}, formula="", what="y", fit=fit, law=law,
                               exponent=k, tolerance=tolerance)
    judgement = evidence.judge(threshold, evidence.p_value <= threshold)
    return judgement.verdict, judgement.reason


def _manufactured(k, C=3.0, noise=0.05, n=400, seed=0):
    rng = np.random.default_rng(seed)
    return [C * s**k * rng.lognormal(0.0, noise, n) for s in SIGMA0]


@pytest.mark.parametrize("k", [0.5, 1.25, 1.75])
def test_recovers_the_exponent_and_constant(k):
    fit = fit_exponent(SIGMA0, _manufactured(k), np.random.default_rng(1), resamples=400)
    assert fit.low <= k <= fit.high
    assert abs(fit.exponent - k) < 0.02
    assert abs(fit.constant / (3.0 * np.exp(0.05**2 / 2)) - 1) < 0.05  # lognormal mean factor


def test_verdicts_follow_the_interval():
    fit = fit_exponent(SIGMA0, _manufactured(0.75), np.random.default_rng(2), resamples=400)
    assert decide_scaling(fit, "Theta", 0.75)[0] == "confirmed"
    assert decide_scaling(fit, "Theta", 1.25)[0] == "refuted"
    assert decide_scaling(fit, "O", 0.5)[0] == "confirmed"  # shrinks faster than claimed: fine for O
    assert decide_scaling(fit, "O", 1.0)[0] == "refuted"  # shrinks more slowly than claimed
    assert decide_scaling(fit, "Omega", 1.0)[0] == "confirmed"
    assert decide_scaling(fit, "Omega", 0.5)[0] == "refuted"


def test_noisy_data_is_inconclusive_not_confirmed():
    fit = fit_exponent(SIGMA0, _manufactured(0.75, noise=2.0, n=20), np.random.default_rng(3), resamples=400)
    verdict, reason = decide_scaling(fit, "Theta", 0.75)
    assert verdict in ("inconclusive", "refuted") and verdict != "confirmed"


def test_bad_input():
    with pytest.raises(ValueError):
        fit_exponent(SIGMA0[:2], _manufactured(1.0)[:2], np.random.default_rng(0))
    with pytest.raises(ValueError):
        decide_scaling(fit_exponent(SIGMA0, _manufactured(1.0), np.random.default_rng(0), resamples=50), "Big", 1.0)


def test_a_curve_bending_toward_the_claim_is_not_refuted():
    # y = sigma0^2 + 0.05 sigma0: local exponent 1.9 at sigma0 = 0.4 bending to 1.3 at 0.025.
    rng = np.random.default_rng(4)
    samples = [(s**2 + 0.05 * s) * rng.lognormal(0.0, 0.02, 400) for s in SIGMA0]
    fit = fit_exponent(SIGMA0, samples, np.random.default_rng(5), resamples=400)
    assert fit.low > 1.1  # the whole-range interval alone would refute Omega(sigma0)
    verdict, reason = decide_scaling(fit, "Omega", 1.0)
    assert verdict == "inconclusive" and "moves toward" in reason
    # A straight power law keeps its refutation, and a confirmation whose small-sigma0 end
    # violates the claim is withdrawn.
    straight = fit_exponent(SIGMA0, _manufactured(1.5), np.random.default_rng(6), resamples=400)
    assert decide_scaling(straight, "Omega", 1.0)[0] == "refuted"
    bent = [(s**0.5 + 5 * s**2) * rng.lognormal(0.0, 0.02, 400) for s in SIGMA0]
    bent_fit = fit_exponent(SIGMA0, bent, np.random.default_rng(7), resamples=400)
    verdict, reason = decide_scaling(bent_fit, "O", 0.75)  # whole-range interval [0.77, 0.78]
    assert verdict == "inconclusive" and "violates the claim" in reason


def test_point_standard_errors_are_those_of_the_mean_at_each_sigma0():
    rng = np.random.default_rng(3)
    sigma0 = [0.4, 0.2, 0.1, 0.05]
    spread = [0.5, 1.0, 2.0, 4.0]  # different noise at each sigma0
    samples = [s0 * (1 + sd * rng.standard_normal(400)) for s0, sd in zip(sigma0, spread)]
    fit = fit_exponent(sigma0, samples, np.random.default_rng(4), resamples=2000)
    for s0, sample, se in zip(sigma0, samples, fit.point_stderr):
        textbook = sample.std(ddof=1) / np.sqrt(sample.size)
        assert abs(se / textbook - 1) < 0.1, (s0, se, textbook)
    assert fit.summary()["point_stderr"] == [[s0, se] for s0, se in zip(sigma0, fit.point_stderr)]
