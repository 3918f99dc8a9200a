"""Typed evidence: what a claim's experiment measured, before any verdict.

Claim modules return evidence and never verdicts; :mod:`moecl_verify.checks.decide` turns all the
evidence of a run into verdicts at once, under the run's family-wise false-fail rate. Each type
knows

* its null hypothesis (the claim holds), stated in ``null``;
* its p-value against that null (small = evidence that the claim fails);
* ``judge(threshold, rejected)``: the verdict once Holm has said whether the null is rejected at
  the threshold the entry faced: ``refuted`` if rejected; ``confirmed`` only if the run could
  have detected a discrepancy of the entry's resolution at that threshold (otherwise
  ``inconclusive``);
* its numbers for the report, in its own units (``expected``, ``observed``, ``stderr``).

The types, one per kind of evidence:

* :class:`moecl_verify.checks.model.Measurement`: a mean (or paired difference) at several
  horizons against a formula (``rule="identity"``), or margins per case of a qualitative
  criterion (``rule="positive"``); decided by z-tests (:mod:`moecl_verify.checks.decide`).
* :class:`ProportionEvidence`: counts of an event against a claimed bound, at one or several
  values of a swept parameter x ("with probability 1 - o(1)" as x -> 0 is a bound on the failure
  probability that must vanish).
* :class:`ScalingEvidence`: a fitted exponent in a swept parameter against a claimed O / Theta / Omega law.

The swept parameter is the pack's: evidence carries its name (``parameter``) and every text says it.
* Exact entries are :class:`moecl_verify.checks.model.ClaimResult`\\ s built by
  :func:`moecl_verify.checks.model.exact_result` (sympy identities, rational counterexamples, a
  stated reason): no sampling, no false-fail rate, decided where they are computed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from scipy import stats as sps

from moecl_verify.checks import stats
from moecl_verify.checks.scaling import ScalingFit, curvature_guard, local_exponents, satisfies


@dataclass(frozen=True)
class Judgement:
    """An entry's verdict at its threshold, the reason in words, and what the run resolves."""

    verdict: str
    reason: str
    min_detectable: float | None


# ----------------------------------------------------------------------------- proportions


@dataclass(frozen=True)
class ProportionRow:
    """The event held in ``successes`` of ``trials`` replicates at ``x``, a value of the swept parameter
    (None: in one configuration)."""

    x: float | None
    successes: int
    trials: int

    @property
    def probability(self) -> float:
        return self.successes / self.trials

    def interval(self, level: float = 0.99) -> tuple[float, float]:
        return stats.wilson(self.successes, self.trials, level)

    def as_dict(self, parameter: str, level: float = 0.99) -> dict:
        lo, hi = self.interval(level)
        out = {"successes": self.successes, "trials": self.trials, "probability": self.probability,
               "low": lo, "high": hi}
        return {parameter: self.x, **out} if self.x is not None else out


# Rules for "the event holds with probability 1 - o(1) as x -> 0", on the failure probability q at the
# smallest x and on the exponent of q in x (> 0: failures vanish as x shrinks):
CONFIRM_FAILURE = 0.05  # q below this at the smallest x: practically certain there
RISING_FAILURE = 0.25   # q below this and failures shrinking with x: consistent with 1 - o(1)
REFUTE_FAILURE = 0.1    # q above this at the smallest x ...
FLAT_SLOPE = 0.1        # ... and the failure exponent below this: failures do not vanish


@dataclass(frozen=True)
class ProportionEvidence:
    """Counts of an event against a claimed probability.

    ``claim``:

    * ``"at_least"``: P(event) >= ``bound`` at every row. Null: the claim holds; p-value the
      Bonferroni combination over rows of the exact binomial test of P = bound against P < bound.
      Confirmed when at every row the one-sided lower confidence bound (at the threshold) is at least
      ``bound - resolution``.
    * ``"at_most"``: the mirror image. With ``bound = 0`` a single observed event refutes exactly
      (p = 0): it is a counterexample.
    * ``"vanishing"``: "with probability 1 - o(1)" over a sweep of x. Null: the failure probability q
      vanishes as x -> 0. Rejected (intersection-union test, p the larger of the two) only when q
      at the smallest x exceeds ``REFUTE_FAILURE`` (exact binomial test) and the failure exponent
      ``failure_slope`` lies below ``FLAT_SLOPE`` (normal test with its bootstrap standard error).
      Confirmed when q's upper confidence bound at the smallest x is at most ``CONFIRM_FAILURE``,
      or at most ``RISING_FAILURE`` with an exponent significantly above 0.

    ``parameter`` names the swept x as the pack spells it.
    """

    claim_id: str
    source: str
    kind: str
    config: dict
    formula: str
    what: str
    rows: tuple[ProportionRow, ...]
    claim: str
    bound: float = 1.0
    resolution: float = 0.0
    # (estimate, bootstrap standard error) of the failure exponent, for "vanishing".
    failure_slope: tuple[float, float] | None = None
    form: str = "stated"
    difference: str = ""
    note: str = ""
    # What a trial is (replicates, rounds, ...), for the evidence text.
    unit: str = "replicates"
    # The swept parameter's name, as the pack spells it (texts and the recorded rows).
    parameter: str = "x"

    def __post_init__(self) -> None:
        if self.claim not in ("at_least", "at_most", "vanishing"):
            raise ValueError(f"unknown proportion claim {self.claim!r}")
        if not self.rows or any(r.trials <= 0 for r in self.rows):
            raise ValueError(f"{self.claim_id}: every row needs at least one trial")
        if self.claim == "vanishing" and (len(self.rows) < 3 or self.failure_slope is None):
            raise ValueError(f"{self.claim_id}: a 'vanishing' claim needs >= 3 swept rows and a failure slope")

    @property
    def null(self) -> str:
        if self.claim == "vanishing":
            return f"the failure probability vanishes as {self.parameter} -> 0"
        return f"P(event) {'>=' if self.claim == 'at_least' else '<='} {self.bound:g}"

    @property
    def smallest(self) -> ProportionRow:
        return min(self.rows, key=lambda r: -math.inf if r.x is None else r.x)

    def _binomial_p(self, row: ProportionRow, p0: float, alternative: str) -> float:
        if p0 <= 0.0:
            return 0.0 if row.successes > 0 else 1.0
        if p0 >= 1.0:
            return 0.0 if row.successes < row.trials else 1.0
        return float(sps.binomtest(row.successes, row.trials, p0, alternative=alternative).pvalue)

    @property
    def p_value(self) -> float:
        if self.claim == "at_least":
            return stats.bonferroni_min_p([self._binomial_p(r, self.bound, "less") for r in self.rows])
        if self.claim == "at_most":
            return stats.bonferroni_min_p([self._binomial_p(r, self.bound, "greater") for r in self.rows])
        row = self.smallest
        failures = ProportionRow(row.x, row.trials - row.successes, row.trials)
        p_level = self._binomial_p(failures, REFUTE_FAILURE, "greater")
        slope, se = self.failure_slope
        p_trend = stats.one_sided_p((FLAT_SLOPE - slope) / se) if se > 0 else float(slope >= FLAT_SLOPE)
        return max(p_level, p_trend)

    def _one_sided_bounds(self, row: ProportionRow, threshold: float) -> tuple[float, float]:
        # A two-sided Wilson interval at 1 - 2 threshold has one-sided level 1 - threshold at each end.
        return row.interval(max(1e-12, 1 - 2 * threshold))

    def judge(self, threshold: float, rejected: bool) -> Judgement:
        row = self.smallest
        lo, hi = self._one_sided_bounds(row, threshold)
        resolved = (hi - lo) / 2
        where = "" if row.x is None else f" at {self.parameter} = {row.x:g}"
        if self.claim == "vanishing":
            q_lo, q_hi = 1 - hi, 1 - lo
            slope, se = self.failure_slope
            z = stats.normal_upper_quantile(threshold)
            trend = (f"failure-probability exponent {slope:.2f} ± {se:.2f} (bootstrap s.e.; > 0 = failures "
                     "vanish)")
            level = f"the failure probability{where} is in [{q_lo:.3f}, {q_hi:.3f}]"
            if rejected:
                return Judgement("refuted", f"{level}, above {REFUTE_FAILURE}, and failures do not shrink with "
                                 f"{self.parameter}: "
                                 f"{trend}, below {FLAT_SLOPE} (both at false-fail rate {threshold:.2g})", resolved)
            if q_hi <= CONFIRM_FAILURE:
                return Judgement("confirmed", f"{level}, at most {CONFIRM_FAILURE}; {trend}", resolved)
            if slope - z * se > 0 and q_hi <= RISING_FAILURE:
                return Judgement("confirmed", f"the probability rises toward 1 as {self.parameter} shrinks: "
                                 f"{trend}, "
                                 f"significantly above 0, and {level}", resolved)
            return Judgement("inconclusive", f"{level}; {trend}: neither practically certain nor clearly bounded "
                             "away from 1", resolved)
        sign = ">=" if self.claim == "at_least" else "<="
        if rejected:
            worst = min(self.rows, key=lambda r: r.probability) if self.claim == "at_least" else \
                max(self.rows, key=lambda r: r.probability)
            return Judgement("refuted", f"P(event) {sign} {self.bound:g} is rejected at false-fail rate "
                             f"{threshold:.2g}: {worst.successes}/{worst.trials} observed", resolved)
        bounds = [self._one_sided_bounds(r, threshold) for r in self.rows]
        if self.claim == "at_least":
            ok = all(b[0] >= self.bound - self.resolution for b in bounds)
        else:
            ok = all(b[1] <= self.bound + self.resolution for b in bounds)
        if ok:
            return Judgement("confirmed", f"every row's one-sided confidence bound at the threshold lies within "
                             f"{self.resolution:g} of P {sign} {self.bound:g}", resolved)
        return Judgement("inconclusive", f"not rejected, but the run resolves P only to ± {resolved:.3g}, "
                         f"and a finite sample cannot show P {sign} {self.bound:g} within {self.resolution:g}",
                         resolved)

    @property
    def expected(self) -> float:
        return 1.0 if self.claim == "vanishing" else self.bound

    @property
    def observed(self) -> float:
        return self.smallest.probability

    @property
    def stderr(self) -> float:
        # The standard error implied by the 99% Wilson interval: the plug-in one is 0 at p = 0 or 1.
        lo, hi = self.smallest.interval(0.99)
        return (hi - lo) / (2 * stats.normal_upper_quantile(0.005))

    def table(self) -> str:
        return "; ".join(
            (f"{self.parameter} = {r.x:g}: " if r.x is not None else "")
            + f"{r.successes}/{r.trials} = {r.probability:.3f} [{r.interval()[0]:.3f}, {r.interval()[1]:.3f}]"
            for r in sorted(self.rows, key=lambda r: -(r.x or 0.0)))

    def report_config(self) -> dict:
        extra = {"probabilities": [r.as_dict(self.parameter) for r in self.rows], "null": self.null}
        if self.failure_slope is not None:
            extra["failure_exponent"] = {"estimate": self.failure_slope[0], "stderr": self.failure_slope[1]}
        return extra

    def describe(self, judgement: Judgement) -> str:
        return (f"{self.what}, fraction of {self.unit} (99% Wilson): {self.table()}. Claim "
                f"{'with probability 1 - o(1)' if self.claim == 'vanishing' else self.null}: {judgement.verdict}, "
                f"because {judgement.reason}." + (f" {self.note}" if self.note else ""))


# ----------------------------------------------------------------------------- scaling


@dataclass(frozen=True)
class ScalingEvidence:
    """A fitted exponent of a quantity in a swept parameter x against a claimed law y = law(x^k).

    Null: the law holds with exponent k (Theta: the exponent is k; O: at least k, y shrinks at least
    as fast; Omega: at most k). The p-value is a normal test of the fitted exponent with its bootstrap
    standard error (``fit.stderr``; the bootstrap resamples whatever the sweep's design makes
    independent, pools and replicates). Confirmed only when the exponent's confidence interval at the
    entry's threshold lies within ``tolerance`` of the law. An asymptotic claim concerns x -> 0
    while a sweep sees a window: a confirmation reads "consistent over the window [a, b]", and the
    local exponents at both ends can withdraw a verdict (:func:`moecl_verify.checks.scaling.curvature_guard`).
    """

    claim_id: str
    source: str
    config: dict
    formula: str
    what: str
    fit: ScalingFit
    law: str
    exponent: float
    tolerance: float = 0.1
    form: str = "stated"
    difference: str = ""
    note: str = ""
    kind: str = field(default="scaling")

    @property
    def null(self) -> str:
        return f"y = {self.law}({self.fit.parameter}^{self.exponent:g})"

    @property
    def z(self) -> float:
        if self.fit.stderr <= 0:
            return 0.0 if self.fit.exponent == self.exponent else math.copysign(math.inf, self.fit.exponent - self.exponent)
        return (self.fit.exponent - self.exponent) / self.fit.stderr

    @property
    def p_value(self) -> float:
        z = self.z
        if self.law == "Theta":
            return stats.two_sided_p(z)
        if self.law == "O":  # the claim: exponent >= k; evidence against it is a small exponent
            return stats.one_sided_p(-z)
        return stats.one_sided_p(z)

    def interval(self, threshold: float) -> tuple[float, float]:
        """The exponent's confidence interval at the entry's threshold (two-sided for Theta, one-sided for O
        and Omega, the other end unbounded)."""
        e, se = self.fit.exponent, self.fit.stderr
        if self.law == "Theta":
            h = stats.normal_upper_quantile(threshold / 2) * se
            return e - h, e + h
        h = stats.normal_upper_quantile(threshold) * se
        return (e - h, math.inf) if self.law == "O" else (-math.inf, e + h)

    def judge(self, threshold: float, rejected: bool) -> Judgement:
        lo, hi = self.interval(threshold)
        k, tol = self.exponent, self.tolerance
        window = f"[{min(self.fit.x):g}, {max(self.fit.x):g}]"
        x = self.fit.parameter
        shown = f"exponent {self.fit.exponent:.3f} ± {self.fit.stderr:.3f} (bootstrap s.e.)"
        if rejected:
            verdict = "refuted"
            reason = f"{shown} rejects {self.law}({x}^{k:g}) at false-fail rate {threshold:.2g} over {x} in {window}"
        elif (self.law == "Theta" and k - tol <= lo and hi <= k + tol) or (self.law == "O" and lo >= k - tol) or (
                self.law == "Omega" and hi <= k + tol):
            verdict = "confirmed"
            reason = (f"{shown}: consistent over the window {x} in {window} (its interval at the threshold lies "
                      f"within {tol:g} of the law); the sweep cannot speak for smaller {x}")
        else:
            verdict = "inconclusive"
            reason = (f"{shown}: not rejected, but its interval at the threshold reaches more than {tol:g} beyond "
                      f"the law over {x} in {window}")
        verdict, reason = curvature_guard(self.fit, self.law, k, tol, verdict, reason)
        return Judgement(verdict, reason, tol)

    @property
    def expected(self) -> float:
        return self.exponent

    @property
    def observed(self) -> float:
        return self.fit.exponent

    @property
    def stderr(self) -> float:
        return self.fit.stderr

    def report_config(self) -> dict:
        return {"law": f"{self.law}({self.fit.parameter}^{self.exponent:g})", **self.fit.summary(),
                "null": self.null, "window": [min(self.fit.x), max(self.fit.x)]}

    def describe(self, judgement: Judgement) -> str:
        return (f"{self.what} against {self.fit.parameter}: {self.fit}. Claim "
                f"{self.law}({self.fit.parameter}^{self.exponent:g}): "
                f"{judgement.verdict}, because {judgement.reason}." + (f" {self.note}" if self.note else ""))


__all__ = ["Judgement", "ProportionEvidence", "ProportionRow", "ScalingEvidence", "local_exponents", "satisfies",
           "CONFIRM_FAILURE", "RISING_FAILURE", "REFUTE_FAILURE", "FLAT_SLOPE"]
