"""Scaling laws in sigma0: fit the exponent on a log-log sweep and decide O, Theta, Omega.

Given per-replicate measurements y at each sigma0 of a geometric sweep, the
claimed law y ~ C sigma0^k is checked by least squares of log(mean y) on
log(sigma0).  The exponent's 99% interval comes from a percentile bootstrap
that resamples replicates within each sigma0 (seeded Generator, so the
interval is reproducible).

Verdict rules (DESIGN.md 'Verdicts', issue 5):

* Theta(sigma0^k): refuted if the interval excludes k; confirmed if it
  contains k and is narrower than ``2 * tolerance`` (the run could tell k from
  k +- tolerance); otherwise inconclusive.
* O(sigma0^k) (y shrinks at least as fast as sigma0^k): refuted if the whole
  interval lies below k; confirmed if it lies above k - tolerance; otherwise
  inconclusive.
* Omega(sigma0^k): the mirror image.

An O() or Theta() hides a constant; the fitted constant C = exp(intercept) is
reported beside the exponent, and claims run the sweep for more than one value
of each hidden constant of the hyperparameters to show its effect.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

LAWS = ("Theta", "O", "Omega")


@dataclass(frozen=True)
class ScalingFit:
    """Least-squares exponent and constant of mean y against sigma0, with a bootstrap interval."""

    sigma0: tuple[float, ...]
    means: tuple[float, ...]
    exponent: float
    constant: float
    low: float
    high: float
    level: float
    replicates: int

    def __str__(self) -> str:
        return (
            f"exponent {self.exponent:.3f} [{self.low:.3f}, {self.high:.3f}] ({self.level:.0%} bootstrap), "
            f"constant {self.constant:.3g}, over sigma0 in [{min(self.sigma0):.3g}, {max(self.sigma0):.3g}]"
        )


def _slope(log_x: np.ndarray, log_y: np.ndarray) -> tuple[float, float]:
    A = np.vstack([log_x, np.ones_like(log_x)]).T
    (slope, intercept), *_ = np.linalg.lstsq(A, log_y, rcond=None)
    return float(slope), float(intercept)


def fit_exponent(
    sigma0: list[float],
    samples: list[np.ndarray],
    rng: np.random.Generator,
    level: float = 0.99,
    resamples: int = 2000,
) -> ScalingFit:
    """Fit log(mean y) = log C + k log(sigma0); bootstrap the replicates for an interval on k."""
    if len(sigma0) != len(samples) or len(sigma0) < 3:
        raise ValueError("a scaling fit needs at least three sigma0 values, one sample each")
    x = np.log(np.asarray(sigma0, dtype=float))
    data = [np.asarray(s, dtype=float) for s in samples]
    if any(s.size < 2 or np.any(~np.isfinite(s)) or np.any(s.mean() <= 0) for s in data):
        raise ValueError("each sample needs >= 2 finite values with a positive mean")
    means = np.array([s.mean() for s in data])
    k, c = _slope(x, np.log(means))
    # Resampled means, sample by sample, in blocks that keep index arrays near 8 MB.
    boot_means = np.empty((resamples, len(data)))
    for j, s in enumerate(data):
        block = max(1, 1_000_000 // s.size)
        for start in range(0, resamples, block):
            stop = min(resamples, start + block)
            boot_means[start:stop, j] = s[rng.integers(0, s.size, (stop - start, s.size))].mean(axis=1)
    # Least-squares slopes of all resamples at once: k = sum (x - xbar)(y - ybar) / sum (x - xbar)^2.
    xc = x - x.mean()
    log_m = np.log(np.maximum(boot_means, 1e-300))
    boot = (log_m - log_m.mean(axis=1, keepdims=True)) @ xc / (xc @ xc)
    alpha = 1 - level
    low, high = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
    return ScalingFit(
        sigma0=tuple(float(v) for v in sigma0),
        means=tuple(float(v) for v in means),
        exponent=k,
        constant=math.exp(c),
        low=float(low),
        high=float(high),
        level=level,
        replicates=min(s.size for s in data),
    )


def decide_scaling(fit: ScalingFit, law: str, k: float, tolerance: float = 0.1) -> tuple[str, str]:
    """(verdict, reason) for the claim y = law(sigma0^k) given the fitted interval."""
    if law not in LAWS:
        raise ValueError(f"law must be one of {LAWS}, got {law!r}")
    lo, hi = fit.low, fit.high
    if law == "Theta":
        if hi < k or lo > k:
            return "refuted", f"the {fit.level:.0%} interval [{lo:.3f}, {hi:.3f}] excludes the claimed exponent {k}"
        if hi - lo <= 2 * tolerance:
            return "confirmed", f"the interval [{lo:.3f}, {hi:.3f}] contains {k} and is narrower than +-{tolerance}"
        return "inconclusive", f"the interval [{lo:.3f}, {hi:.3f}] contains {k} but is wider than +-{tolerance}"
    if law == "O":
        if hi < k:
            return "refuted", f"the interval [{lo:.3f}, {hi:.3f}] lies below {k}: y shrinks more slowly than sigma0^{k}"
        if lo >= k - tolerance:
            return "confirmed", f"the interval [{lo:.3f}, {hi:.3f}] lies above {k} - {tolerance}"
        return "inconclusive", f"the interval [{lo:.3f}, {hi:.3f}] reaches below {k} - {tolerance}"
    if lo > k:
        return "refuted", f"the interval [{lo:.3f}, {hi:.3f}] lies above {k}: y shrinks faster than sigma0^{k}"
    if hi <= k + tolerance:
        return "confirmed", f"the interval [{lo:.3f}, {hi:.3f}] lies below {k} + {tolerance}"
    return "inconclusive", f"the interval [{lo:.3f}, {hi:.3f}] reaches above {k} + {tolerance}"


def reconcile_constants(verdicts: dict[float, str]) -> dict[float, str]:
    """Verdicts per hidden constant -> verdicts the claim can bear.

    An O()/Theta() statement about Algorithm 1 holds for suitable hidden
    constants that the paper never fixes.  A refutation at one constant while
    another constant confirms therefore does not refute the statement: such
    entries become ``inconclusive``.  Only a refutation at every constant tried
    stands.
    """
    if "refuted" in verdicts.values() and "confirmed" in verdicts.values():
        return {c: ("inconclusive" if v == "refuted" else v) for c, v in verdicts.items()}
    return dict(verdicts)
