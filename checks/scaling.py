"""Scaling laws in a swept parameter x: fit the exponent on a log-log sweep, and the guards on a verdict.

Given per-replicate measurements y at each x of a geometric sweep, the
claimed law y ~ C x^k is fitted by least squares of log(mean y) on
log(x).  The pack names its parameter (``parameter``, e.g. the document's
symbol); every text and recorded key uses that name.  The exponent's
bootstrap distribution (a percentile bootstrap that resamples replicates
within each x, or pools and then replicates; seeded, so reproducible) gives
its standard error, its interval and the curvature of the log-log curve.

The verdict is decided by the scaling kind of evidence
(:class:`moecl_verify.checks.kinds.scaling.ScalingEvidence`: a normal test of
the exponent at the entry's Holm threshold, confirmed only when its interval at
that threshold lies within the tolerance of the law); this module adds the
curvature guard that can withdraw such a verdict, and the reconciliation of
verdicts across hidden constants.

An O() or Theta() hides a constant; the fitted constant C = exp(intercept) is
reported beside the exponent, and claims run the sweep for more than one value
of each hidden constant of the hyperparameters to show its effect.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

LAWS = ("Theta", "O", "Omega")


@dataclass(frozen=True)
class ScalingFit:
    """Least-squares exponent and constant of mean y against the swept parameter x, with a bootstrap
    interval."""

    x: tuple[float, ...]
    means: tuple[float, ...]
    exponent: float
    constant: float
    low: float
    high: float
    level: float
    replicates: int
    # Interval on (local exponent over the three largest x) - (over the three smallest).
    curvature_low: float | None = None
    curvature_high: float | None = None
    # Standard deviation of the bootstrap exponents: the exponent's standard error.
    stderr: float = math.nan
    # Per x (same order), the bootstrap standard error of the fitted statistic (mean or quantile).
    point_stderr: tuple[float, ...] = ()
    # Task pools the sweep ran on (0: one pool, replicates resampled within each x independently).
    pools: int = 0
    # The swept parameter's name, as the pack spells it (texts and the recorded "<name>_range").
    parameter: str = "x"

    def summary(self) -> dict:
        """What a results entry records of the fit (JSON-ready): the report's scaling table reads it."""
        out = {"fitted_constant": self.constant, "exponent_interval": [self.low, self.high],
               f"{self.parameter}_range": [min(self.x), max(self.x)]}
        if len(self.x) >= 4:
            out["local_exponents"] = list(local_exponents(self))
        if self.pools:
            out["pools"] = self.pools
        if self.point_stderr:
            out["point_stderr"] = [[s0, se] for s0, se in zip(self.x, self.point_stderr)]
        return out

    def __str__(self) -> str:
        return (
            f"exponent {self.exponent:.3f} [{self.low:.3f}, {self.high:.3f}] ({self.level:.0%} bootstrap), "
            f"constant {self.constant:.3g}, over {self.parameter} in [{min(self.x):.3g}, {max(self.x):.3g}]"
        )


def _slope(log_x: np.ndarray, log_y: np.ndarray) -> tuple[float, float]:
    A = np.vstack([log_x, np.ones_like(log_x)]).T
    (slope, intercept), *_ = np.linalg.lstsq(A, log_y, rcond=None)
    return float(slope), float(intercept)


def fit_exponent(
    x: list[float],
    samples: list[np.ndarray],
    rng: np.random.Generator,
    level: float = 0.99,
    resamples: int = 2000,
    quantile: float | None = None,
    *,
    parameter: str = "x",
) -> ScalingFit:
    """Fit log(stat y) = log C + k log(x), stat the mean (or the ``quantile``-quantile)
    over replicates; bootstrap the replicates within each x (``scipy.stats.bootstrap``) for an
    interval on k.

    With four or more x the same resamples also give the local exponents
    over the three largest and the three smallest x and a ``level``
    interval on their difference (the curvature of the log-log curve), which
    :func:`curvature_guard` uses to tell a law from a pre-asymptotic bend.
    """
    if len(x) != len(samples) or len(x) < 3:
        raise ValueError("a scaling fit needs at least three x values, one sample each")
    data = [np.asarray(s, dtype=float) for s in samples]

    def stat(a: np.ndarray, axis=None):
        return a.mean(axis=axis) if quantile is None else np.quantile(a, quantile, axis=axis)

    if any(s.size < 2 or np.any(~np.isfinite(s)) for s in data):
        raise ValueError("each sample needs >= 2 finite values")
    means = np.array([stat(s) for s in data])
    if np.any(means <= 0):
        raise ValueError("the fitted statistic must be positive at every x")
    # scipy.stats.bootstrap resamples each x's replicates independently (paired=False) and returns every
    # resample's statistic per x; the slopes, the interval and the curvature are read off those.
    boot = sps.bootstrap(data, lambda *samples, axis=-1: np.stack([stat(v, axis=axis) for v in samples]),
                         n_resamples=resamples, batch=max(1, 1_000_000 // max(v.size for v in data)),
                         vectorized=True, paired=False, method="percentile", confidence_level=level, rng=rng)
    boot_means = boot.bootstrap_distribution.T  # (resamples, x)
    return _fit(x, means, boot_means, level, replicates=min(v.size for v in data), parameter=parameter)


def fit_exponent_pools(
    x: list[float],
    samples: list[list[np.ndarray]],
    rng: np.random.Generator,
    level: float = 0.99,
    resamples: int = 2000,
    quantile: float | None = None,
    *,
    parameter: str = "x",
) -> ScalingFit:
    """Fit log(mean y) = log C + k log(x) on a sweep run over several pools with common random numbers
    (or log of the ``quantile``-quantile of y, over every pool's replicates).

    ``samples[p][j]`` holds pool p's replicate values at ``x[j]``, the same number R of replicates for
    every pool and x, replicate r being paired across x (the same draws,
    :mod:`packs.moe_cl.experiments.sweep_design`).  NaN marks a replicate at which the quantity is undefined; it is
    left out of the mean at that x.  The statistic is the mean over every pool's replicates.

    Two-stage bootstrap: each resample draws K pools with replacement, then R replicates with replacement
    within each drawn pool, the same replicate indices at every x (pairs are kept, so the common random
    numbers' correlation stays in the resampled slopes).  ``scipy.stats.bootstrap`` resamples one level
    (paired or not), so the two levels are drawn here; resampling both levels slightly overstates the
    variance, the conservative side.  The interval, curvature and per-x standard errors are read off the
    same resamples as in :func:`fit_exponent`."""
    K, J = len(samples), len(x)
    if J < 3:
        raise ValueError("a scaling fit needs at least three x values")
    if K < 2:
        raise ValueError("a pooled fit needs at least two pools")
    if any(len(pool) != J for pool in samples):
        raise ValueError("every pool needs one sample per x")
    Y = np.asarray([np.column_stack([np.asarray(v, dtype=float) for v in pool]) for pool in samples])  # (K, R, J)
    if Y.ndim != 3 or Y.shape[1] < 2:
        raise ValueError("every pool needs the same number (>= 2) of paired replicates at each x")
    finite = np.isfinite(Y)
    if np.any(finite.sum(axis=(0, 1)) < 2):
        raise ValueError("each x needs >= 2 finite values")
    def stat(values: np.ndarray, axis: int) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            if quantile is None:
                return np.nanmean(values, axis=axis)
            return np.nanquantile(values, quantile, axis=axis)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices give NaN, handled below
        means = stat(Y.reshape(-1, J), 0)
    if np.any(means <= 0):
        raise ValueError("the fitted statistic must be positive at every x")
    R = Y.shape[1]
    boot_means = np.empty((resamples, J))
    block = max(1, 2_000_000 // (K * R * J))
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        pools = rng.integers(0, K, (stop - start, K))
        reps = rng.integers(0, R, (stop - start, K, R))
        drawn = Y[pools[:, :, None], reps]  # (b, K, R, J)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            boot_means[start:stop] = stat(drawn.reshape(stop - start, K * R, J), 1)
    # A resample whose every drawn value at a x is NaN has no mean there; it carries no slope.
    usable = np.all(np.isfinite(boot_means) & (boot_means > 0), axis=1)
    return _fit(x, means, boot_means[usable], level, replicates=int(finite.sum(axis=(0, 1)).min()),
                parameter=parameter, pools=K)


def _fit(x: list[float], means: np.ndarray, boot_means: np.ndarray, level: float, replicates: int,
         parameter: str, pools: int = 0) -> ScalingFit:
    """The fit of log(means) on log(x), with its interval, standard error, curvature and per-x
    standard errors read off the resampled means ``boot_means`` (resamples, x)."""
    log_x = np.log(np.asarray(x, dtype=float))
    k, c = _slope(log_x, np.log(means))
    log_m = np.log(np.maximum(boot_means, 1e-300))
    boot = _slopes(log_x, log_m)
    alpha = 1 - level
    low, high = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
    curvature = (None, None)
    if len(x) >= 4:
        order = np.argsort(log_x)[::-1]  # largest x first
        big, small = order[:3], order[-3:]
        bend = _slopes(log_x[big], log_m[:, big]) - _slopes(log_x[small], log_m[:, small])
        curvature = tuple(float(v) for v in np.quantile(bend, [alpha / 2, 1 - alpha / 2]))
    return ScalingFit(
        x=tuple(float(v) for v in x),
        means=tuple(float(v) for v in means),
        exponent=k,
        constant=math.exp(c),
        low=float(low),
        high=float(high),
        level=level,
        replicates=replicates,
        curvature_low=curvature[0],
        curvature_high=curvature[1],
        stderr=float(np.std(boot, ddof=1)),
        point_stderr=tuple(float(v) for v in np.std(boot_means, axis=0, ddof=1)),
        pools=pools,
        parameter=parameter,
    )


def _slopes(x: np.ndarray, log_y: np.ndarray) -> np.ndarray:
    """Least-squares slopes of every row of ``log_y`` on ``x`` at once."""
    xc = x - x.mean()
    return (log_y - log_y.mean(axis=1, keepdims=True)) @ xc / (xc @ xc)


def local_exponents(fit: ScalingFit) -> tuple[float, float]:
    """Least-squares slopes over the three largest and the three smallest x (of the means)."""
    order = np.argsort(fit.x)[::-1]
    x = np.log(np.asarray(fit.x, dtype=float)[order])
    y = np.log(np.asarray(fit.means, dtype=float)[order])
    return _slope(x[:3], y[:3])[0], _slope(x[-3:], y[-3:])[0]


def satisfies(law: str, e: float, k: float, tolerance: float) -> bool:
    """Whether an exponent ``e`` is consistent with ``law(x^k)`` within ``tolerance``."""
    if law == "O":
        return e >= k - tolerance
    if law == "Omega":
        return e <= k + tolerance
    return abs(e - k) <= tolerance


def curvature_guard(fit: ScalingFit, law: str, k: float, tolerance: float, verdict: str,
                    reason: str) -> tuple[str, str]:
    """Withdraw a verdict the curve bends against; never creates one.

    An asymptotic claim is about x -> 0, and a sweep sees only a window. With four or more values of x the
    local exponents over the three largest and the three smallest values are compared, and a verdict is
    downgraded to ``inconclusive`` when the curve bends against it: a refutation whose local exponent at the
    smallest x satisfies the claim, or moves toward it by more than ``tolerance`` with a curvature interval
    that excludes zero (a bend, not noise); or a confirmation whose local exponent at the smallest x violates
    the claim."""
    if len(fit.x) < 4 or verdict not in ("refuted", "confirmed"):
        return verdict, reason
    early, late = local_exponents(fit)
    bend = (f"local exponent {early:.2f} over the three largest {fit.parameter}, {late:.2f} over the three "
            "smallest")
    bends = fit.curvature_low is not None and (fit.curvature_low > 0 or fit.curvature_high < 0)
    toward = abs(late - k) < abs(early - k) - tolerance and bends
    if verdict == "refuted" and (satisfies(law, late, k, tolerance) or toward):
        return "inconclusive", (f"{reason}, but the {bend} moves toward the claimed {k}: the sweep may not reach "
                                "the asymptotic regime")
    if verdict == "confirmed" and not satisfies(law, late, k, tolerance):
        return "inconclusive", f"{reason}, but the {bend} violates the claim at the small-{fit.parameter} end"
    return verdict, f"{reason}; {bend}"


def reconcile_constants(verdicts: dict[float, str]) -> dict[float, str]:
    """Verdicts per hidden constant -> verdicts the claim can bear.

    An O()/Theta() statement about an algorithm holds for suitable hidden
    constants that the document never fixes.  A refutation at one constant while
    another constant confirms therefore does not refute the statement: such
    entries become ``inconclusive``.  Only a refutation at every constant tried
    stands.
    """
    if "refuted" in verdicts.values() and "confirmed" in verdicts.values():
        return {c: ("inconclusive" if v == "refuted" else v) for c, v in verdicts.items()}
    return dict(verdicts)


def reconcile_entries(entries: list) -> list:
    """:func:`reconcile_constants` applied to results entries: entries with a hidden constant are grouped
    by their key without it (:meth:`~moecl_verify.checks.entry_key.EntryKey.across_constants`); a
    refutation that another constant of its group confirms becomes ``inconclusive``, with the
    reason appended to its evidence.  Other entries pass through unchanged."""
    import dataclasses

    out = list(entries)
    groups: dict = {}
    for i, e in enumerate(entries):
        if e.key.constant is not None:
            groups.setdefault(e.key.across_constants(), []).append(i)
    for idx in groups.values():
        new = reconcile_constants({entries[i].key.constant: entries[i].verdict for i in idx})
        for i in idx:
            e = entries[i]
            if new[e.key.constant] != e.verdict:
                others = ", ".join(f"{entries[j].verdict} at c = {entries[j].key.constant:g}" for j in idx)
                out[i] = dataclasses.replace(
                    e, verdict=new[e.key.constant],
                    evidence=e.evidence + f" Across hidden constants the verdicts differ ({others}); the statement "
                    "allows suitable constants, so this entry is not a refutation of it.")
    return out
