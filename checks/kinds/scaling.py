"""Scaling laws: a fitted exponent of a quantity in a swept parameter x against a claimed O / Theta / Omega
law (the fit itself: :mod:`moecl_verify.checks.scaling`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

from moecl_verify.checks import stats
from moecl_verify.checks.kinds.base import Judgement, Table, number, result_of
from moecl_verify.checks.model import ClaimResult
from moecl_verify.checks.scaling import LAWS, ScalingFit, curvature_guard


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
    TAG: ClassVar[str] = "scaling"

    def __post_init__(self) -> None:
        if self.law not in LAWS:
            raise ValueError(f"{self.claim_id}: law must be one of {LAWS}, got {self.law!r}")

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
            # The 99% interval the sentence quotes may exclude the law while the family's threshold does not:
            # say so, with the interval that decided and the tolerance that keeps it from confirming.
            span = f"[{'-inf' if math.isinf(lo) else f'{lo:.3f}'}, {'inf' if math.isinf(hi) else f'{hi:.3f}'}]"
            reason = (f"{shown}: not rejected at the run's false-fail rate {threshold:.2g}, whose interval {span} "
                      f"is wider than the 99% one quoted (which may exclude the law); it reaches more than the "
                      f"tolerance {tol:g} beyond the law over {x} in {window}, so it neither confirms nor refutes")
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

    def detectable(self, threshold: float) -> float:
        """The tolerance around the law's exponent: what the verdict rule resolves, in exponent units."""
        return self.tolerance

    def decide(self, threshold: float, rejected: bool) -> ClaimResult:
        return result_of(self, self.judge(threshold, rejected), threshold)


def scaling_sentence(res: ClaimResult, symbols=None) -> str:
    """A scaling law's decisive number: the fitted exponent with its interval, against the law, over the swept
    parameter's window (recorded as ``<name>_range``; shown with the pack's symbol from ``symbols``)."""
    cfg = res.config
    interval = cfg.get("exponent_interval")
    range_key = next((k for k in cfg if k.endswith("_range")), None)
    span = cfg.get(range_key) if range_key else None
    name = range_key[: -len("_range")] if range_key else ""
    symbol = (symbols or {}).get(name, name)
    text = f"fitted exponent {number(res.observed, 3)}"
    if interval:
        text += f" [{number(interval[0], 3)}, {number(interval[1], 3)}]"
    text += f" against {cfg.get('law', number(res.expected, 3))}"
    if span:
        text += f" over {symbol} in [{span[0]:.3g}, {span[1]:.3g}]"
    return text


TABLES = {
    "scaling": Table("Scaling laws in {x} (fitted exponent with its bootstrap standard error)",
                     ("law", "fitted exponent ± s.e."), "tolerance",
                     lambda r: (r.config.get("law", "—"), f"{number(r.observed, 3)} ± {number(r.stderr, 2)}"),
                     scaling_sentence, figure="scaling"),
}
RECORDS = {"scaling": ScalingEvidence, "scaling_fit": ScalingFit}
