"""Statistics that turn Monte Carlo samples into evidence.

Every test here states its false-fail rate (the probability of calling a true
claim false) and the smallest discrepancy it detects with 90% power, in the
manner of TensorFlow Probability's ``statistical_testing`` module.

The tests are z-tests on a sample mean.  They rely on the central limit theorem
for the replicate mean, so callers use at least a few hundred replicates; the
quantities tested here (squared model errors, averages of them) have all
moments finite, so the normal approximation is good at those sizes.  Tail
probabilities are computed with mpmath's ``erfc`` so that p-values far below
double-precision ``1 - Phi`` are not rounded to zero.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from statistics import NormalDist

import mpmath
import numpy as np

POWER = 0.9
_STD_NORMAL = NormalDist()


def normal_upper_quantile(p: float) -> float:
    """z with P(Z > z) = p."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"tail probability must be in (0, 1), got {p}")
    return _STD_NORMAL.inv_cdf(1.0 - p)


def two_sided_p(z: float) -> float:
    """P(|Z| >= |z|) for standard normal Z, accurate far into the tail."""
    return float(mpmath.erfc(abs(z) / mpmath.sqrt(2)))


def one_sided_p(z: float) -> float:
    """P(Z >= z) for standard normal Z."""
    return float(mpmath.erfc(z / mpmath.sqrt(2)) / 2)


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
    """Wilson score interval for a binomial proportion successes / trials at two-sided ``level``."""
    if trials <= 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, trials > 0; got {successes}/{trials}")
    z = normal_upper_quantile((1 - level) / 2)
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _tail_sum(start: int, step: int, n: int, p, q) -> "mpmath.mpf":
    """sum of Binomial(n, p) terms from ``start`` outwards (step -1: down to 0; +1: up to n),
    stopping once a term no longer changes the 30-digit sum.  Used only on the side of
    ``start`` away from the mode, where terms shrink at least geometrically."""
    log_term = (mpmath.loggamma(n + 1) - mpmath.loggamma(start + 1) - mpmath.loggamma(n - start + 1)
                + start * mpmath.log(p) + (n - start) * mpmath.log(q))
    term = mpmath.exp(log_term)
    total = term
    i = start
    while 0 < i < n if step < 0 else 0 <= i < n:
        if step < 0:
            term *= (i / mpmath.mpf(n - i + 1)) * (q / p)
        else:
            term *= (mpmath.mpf(n - i) / (i + 1)) * (p / q)
        i += step
        total += term
        if term < total * mpmath.mpf(10) ** -32:
            break
    return total


def _binom_tails(k: int, n: int, p: float) -> tuple[float, float]:
    """(P(X <= k), P(X > k)) for X ~ Binomial(n, p), 0 <= k < n, 0 < p < 1.

    Whichever tail lies on the far side of the mode is summed: downwards from k
    when k + 1 <= (n + 1) p (every ratio i q / ((n - i + 1) p) is then below 1),
    else upwards from k + 1.  The other tail is one minus it, and it always
    contains the mode, so it is at least 1/(n + 1) and 30 digits lose nothing."""
    with mpmath.workdps(30):
        pm = mpmath.mpf(p)
        qm = 1 - pm
        if k + 1 <= (n + 1) * p:
            lower = _tail_sum(k, -1, n, pm, qm)
            upper = 1 - lower
        else:
            upper = _tail_sum(k + 1, +1, n, pm, qm)
            lower = 1 - upper
        return float(min(max(lower, 0), 1)), float(min(max(upper, 0), 1))


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed in 30-digit mpmath.

    The sum runs over the tail on the far side of the mode (:func:`_binom_tails`),
    where terms shrink geometrically, so it stops once a term falls below 1e-32
    of the sum.  mpmath numbers have an
    unbounded exponent, so tails far below 1e-300 neither underflow nor lose
    their relative precision (a regularized incomplete beta fails to converge
    for n in the thousands), and the work is about sqrt(n) terms instead of k.
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    k, n = operator.index(k), operator.index(n)  # numpy integers become ints (mpmath takes no np.int64)
    if k < 0:
        return 0.0
    if k >= n or p == 0.0:
        return 1.0
    if p == 1.0:
        return 0.0
    return _binom_tails(k, n, p)[0]


def binom_sf(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), summed directly in p (not through 1 - p,
    which rounds a tiny p away)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    k, n = operator.index(k), operator.index(n)
    if k <= 0:
        return 1.0
    if k > n or p == 0.0:
        return 0.0
    if p == 1.0:
        return 1.0
    return _binom_tails(k - 1, n, p)[1]
