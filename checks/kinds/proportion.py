"""Proportions: counts of an event against a claimed bound, at one or several values of a swept parameter x
("with probability 1 - o(1)" as x -> 0 is a bound on the failure probability that must vanish).

The swept parameter is the pack's: the evidence carries its name (``parameter``) and every text says it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from scipy import stats as sps

from moecl_verify.checks import stats
from moecl_verify.checks.kinds.base import Judgement, Table, cell, number, result_of
from moecl_verify.checks.model import ClaimResult


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
    TAG: ClassVar[str] = "proportion"
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

    def detectable(self, threshold: float) -> float:
        """Half the width of the smallest row's two-sided interval whose ends are one-sided bounds at
        ``threshold``: how finely the run resolves the probability it reports."""
        lo, hi = self._one_sided_bounds(self.smallest, threshold)
        return (hi - lo) / 2

    def decide(self, threshold: float, rejected: bool) -> ClaimResult:
        return result_of(self, self.judge(threshold, rejected), threshold)


def decisive_count(res: ClaimResult) -> dict | None:
    """The counts behind a proportion entry's probability (successes, trials and the 99% Wilson interval of
    the row it reports); None when the entry does not carry them."""
    rows = res.config.get("probabilities")
    if not isinstance(rows, list) or res.observed is None:
        return None
    for row in rows:
        if isinstance(row, dict) and row.get("probability") == res.observed and "successes" in row:
            return row
    return None


def count_text(row: dict) -> str:
    """``k/n = p, 99% Wilson [lo, hi]``: a proportion as a reviewer reads it."""
    return (f"{row['successes']}/{row['trials']} = {number(row['probability'], 3)}, 99% Wilson interval "
            f"[{number(row['low'], 3)}, {number(row['high'], 3)}]")


def _count_cell(res: ClaimResult) -> str:
    row = decisive_count(res)
    return count_text(row) if row else f"{number(res.observed)} ± {number(res.stderr, 2)}"


def proportion_sentence(res: ClaimResult, symbols=None) -> str:
    """A proportion's decisive number: the count at its decisive row with its interval, against the claim."""
    claimed = res.config.get("null") or f"P = {number(res.expected, 3)}"
    row = decisive_count(res)
    if row:
        measured = (f"the event held in {row['successes']} of {row['trials']} runs (99% Wilson interval "
                    f"[{number(row['low'], 3)}, {number(row['high'], 3)}])")
    else:
        measured = f"the event's probability {number(res.observed, 3)} ± {number(res.stderr, 2)}"
    return f"{measured}; claimed: {claimed}"


TABLES = {
    "proportion": Table("Probabilities (counts of an event; the smallest {x} shown)",
                        ("claimed", "count, probability (99% Wilson interval)"), "resolved to ±",
                        lambda r: (cell(r.config.get("null", number(r.expected))), _count_cell(r)),
                        proportion_sentence, figure="probability"),
}
RECORDS = {"proportion": ProportionEvidence, "proportion_row": ProportionRow}
