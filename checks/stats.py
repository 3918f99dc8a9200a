"""Statistics that turn Monte Carlo samples into evidence.

Every test here states its false-fail rate (the probability of calling a true
claim false) and the smallest discrepancy it detects with 90% power, in the
manner of TensorFlow Probability's ``statistical_testing`` module.

The tests are z-tests on a sample mean.  They rely on the central limit theorem
for the replicate mean, so callers use at least a few hundred replicates; the
quantities tested here (squared model errors, averages of them) have all
moments finite, so the normal approximation is good at those sizes.  Normal,
binomial and chi-square tails and Wilson intervals come from ``scipy.stats``;
this module keeps the tool's own policy (Holm with recorded thresholds, the
smallest detectable discrepancy).  A tail below the smallest double (z beyond
about 38) is 0, which every threshold rejects.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

POWER = 0.9


def normal_upper_quantile(p: float) -> float:
    """z with P(Z > z) = p."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"tail probability must be in (0, 1), got {p}")
    return float(sps.norm.isf(p))


def two_sided_p(z: float) -> float:
    """P(|Z| >= |z|) for standard normal Z (the survival function, so no ``1 - Phi`` cancellation)."""
    return float(2 * sps.norm.sf(abs(z)))


def one_sided_p(z: float) -> float:
    """P(Z >= z) for standard normal Z."""
    return float(sps.norm.sf(z))


@dataclass(frozen=True)
class MeanTest:
    """Result of testing ``E[X] = expected`` from i.i.d. samples of ``X``.

    ``p_value`` is two-sided.  ``min_detectable(alpha)`` is the smallest
    ``|E[X] - expected|`` that a test at level ``alpha`` rejects with
    probability ``POWER``.
    """

    expected: float
    observed: float
    stderr: float
    n: int

    @property
    def z(self) -> float:
        if self.stderr == 0.0:
            return 0.0 if self.observed == self.expected else math.copysign(math.inf, self.observed - self.expected)
        return (self.observed - self.expected) / self.stderr

    @property
    def p_value(self) -> float:
        return two_sided_p(self.z) if math.isfinite(self.z) else 0.0

    def min_detectable(self, alpha: float, power: float = POWER) -> float:
        return min_detectable(self.stderr, alpha, power)


def mean_test(samples: np.ndarray, expected: float) -> MeanTest:
    """Two-sided z-test of the sample mean against ``expected``."""
    x = np.asarray(samples, dtype=float)
    if x.ndim != 1 or x.size < 2:
        raise ValueError("mean_test needs a 1-d sample of at least 2 values")
    if not np.all(np.isfinite(x)):
        raise ValueError("mean_test got non-finite samples")
    return MeanTest(
        expected=float(expected),
        observed=float(x.mean()),
        stderr=float(x.std(ddof=1) / math.sqrt(x.size)),
        n=int(x.size),
    )


def min_detectable(stderr: float, alpha: float, power: float = POWER) -> float:
    """Smallest true shift a two-sided level-``alpha`` z-test detects with ``power``.

    The test rejects when ``|mean - expected| > z_{alpha/2} se``; a true shift
    ``delta`` is detected with probability at least ``power`` once
    ``delta >= (z_{alpha/2} + z_{1-power}) se`` (the far tail is ignored, which
    only makes the stated power conservative).
    """
    return (normal_upper_quantile(alpha / 2) + normal_upper_quantile(1 - power)) * stderr


@dataclass(frozen=True)
class HolmDecision:
    """Holm's step-down procedure: per hypothesis, its threshold and rejection."""

    thresholds: tuple[float, ...]
    rejected: tuple[bool, ...]


def holm(p_values: list[float], family_rate: float) -> HolmDecision:
    """Holm (1979) step-down at family-wise false-fail rate ``family_rate``.

    The k-th smallest p-value (k = 0, 1, ...) is compared with
    ``family_rate / (m - k)``; rejection stops at the first failure.  A
    hypothesis ranked after that failure keeps the failing threshold as its
    own, which is the threshold it effectively faced; with that convention
    ``rejected[k] == (p_values[k] <= thresholds[k])`` holds for every k, so a
    single entry can be re-decided later from its p-value and its recorded
    threshold alone.  Ties are broken by input order, so the decision is
    deterministic.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda k: (p_values[k], k))
    thresholds = [0.0] * m
    rejected = [False] * m
    stop_threshold = None
    for rank, k in enumerate(order):
        if stop_threshold is None:
            threshold = family_rate / (m - rank)
            if p_values[k] <= threshold:
                rejected[k] = True
            else:
                stop_threshold = threshold
            thresholds[k] = threshold
        else:
            thresholds[k] = stop_threshold
    return HolmDecision(tuple(thresholds), tuple(rejected))


def bonferroni_min_p(p_values: list[float]) -> float:
    """Combine several tests of one claim (e.g. horizons) into one p-value."""
    if not p_values:
        raise ValueError("no p-values to combine")
    return min(1.0, len(p_values) * min(p_values))


def wilson(successes: int, trials: int, level: float = 0.99) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion successes / trials at two-sided ``level``
    (``scipy.stats.binomtest(...).proportion_ci``)."""
    successes, trials = operator.index(successes), operator.index(trials)
    if trials <= 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, trials > 0; got {successes}/{trials}")
    ci = sps.binomtest(successes, trials).proportion_ci(confidence_level=level, method="wilson")
    return max(0.0, float(ci.low)), min(1.0, float(ci.high))


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p) (``scipy.stats.binom``, an incomplete beta accurate in relative
    terms far into the tail)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    k, n = operator.index(k), operator.index(n)  # numpy integers and bools alike become ints
    return float(sps.binom.cdf(k, n, p))


def binom_sf(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), computed as scipy's survival function at k - 1 (not through 1 - cdf,
    which rounds a tiny tail away)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    k, n = operator.index(k), operator.index(n)
    return float(sps.binom.sf(k - 1, n, p))


def chi2_sf(x: float, df: int) -> float:
    """P(chi^2_df >= x) (``scipy.stats.chi2``)."""
    if df < 1:
        raise ValueError(f"df must be >= 1, got {df}")
    return float(sps.chi2.sf(x, df))
