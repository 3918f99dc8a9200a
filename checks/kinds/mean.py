"""Means and criteria: a mean (or paired difference) at several horizons against a formula
(``rule="identity"``, evidence type ``mean``), or the margins of a qualitative criterion per case
(``rule="positive"``, evidence type ``criterion``).

Rules for a mean at several horizons: each horizon is a two-sided z-test, combined within the entry by
Bonferroni; not rejected is ``confirmed`` only if at every horizon the run would have detected a
discrepancy of ``resolution * scale`` with 90% power. For a criterion: refuted when some margin is
significantly negative, confirmed when every margin is significantly positive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from moecl_verify.checks import stats
from moecl_verify.checks.kinds.base import Table, cell, number
from moecl_verify.checks.model import FORMS, ClaimResult
from moecl_verify.checks.stats import MeanTest, mean_test


@dataclass(frozen=True)
class HorizonTest:
    """One case of a measurement: a horizon (t or T) of an expected-value
    identity, or a labelled case (e.g. "M=10") of an ordering criterion, whose
    ``test.observed`` is then the estimated margin Delta and ``test.expected`` 0."""

    horizon: int | str
    test: MeanTest
    # Extra numbers a reader needs beside the tested difference, copied into the entry's horizon row
    # (a bound's right-hand side and the measured value it bounds, each a mean over replicates).
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Measurement:
    """An expected-value identity measured at several horizons, or a criterion's margins in several cases.

    ``scale`` is the natural size of the quantity compared (the size of a typical value of it in the
    document's setting, so that a discrepancy is judged against what is measured), ``resolution`` the share
    of it that matters (2% by default); a non-rejection becomes ``confirmed`` only if the run could have
    detected a discrepancy of ``resolution * scale`` at every horizon, at the threshold Holm gave the entry,
    with the run's power, and ``inconclusive`` otherwise.
    """

    claim_id: str
    source: str
    kind: str
    form: str
    config: dict
    tests: tuple[HorizonTest, ...]
    scale: float
    formula: str
    difference: str = ""
    resolution: float = 0.02
    # "identity": E[X] = formula, two-sided, at every horizon.
    # "positive": every case's margin Delta > 0 (a qualitative criterion);
    #   refuted when some Delta is significantly negative, confirmed when every
    #   Delta is significantly positive, inconclusive otherwise.
    rule: str = "identity"
    horizon_name: str = ""
    # Set when the derivation is known not to apply exactly (e.g. routing that
    # depends on the features): agreement within resolution is then reported
    # as inconclusive, with this reason, never as confirmed.
    not_exact_reason: str = ""

    @property
    def TAG(self) -> str:  # noqa: N802 - the protocol's name for the evidence type
        return "mean" if self.rule == "identity" else "criterion"

    @property
    def p_value(self) -> float:
        return entry_p(self)

    def detectable(self, threshold: float) -> float:
        """The largest, over cases, smallest discrepancy detectable at the per-case share of ``threshold``."""
        per_case = threshold / len(self.tests)
        if self.rule == "positive":  # one-sided at the per-case level
            return max(h.test.min_detectable(2 * per_case) for h in self.tests)
        return max(h.test.min_detectable(per_case) for h in self.tests)

    def decide(self, threshold: float, rejected: bool) -> ClaimResult:
        return decide_measurement(self, threshold, rejected)

    def __post_init__(self) -> None:
        if self.form not in FORMS:
            raise ValueError(f"unknown form {self.form!r}")
        if self.rule not in ("identity", "positive"):
            raise ValueError(f"unknown rule {self.rule!r}")
        if not self.tests:
            raise ValueError("a measurement needs at least one horizon")


def _case_p(m: Measurement, test) -> float:
    """p-value against the claim for one case: two-sided for identities; for a
    positive-margin criterion, P(Z <= z) under Delta = 0 (evidence that Delta < 0)."""
    if m.rule == "identity":
        return test.p_value
    return stats.one_sided_p(-test.z)


def entry_p(m: Measurement) -> float:
    return stats.bonferroni_min_p([_case_p(m, h.test) for h in m.tests])


def _horizon_name(m: Measurement) -> str:
    if m.horizon_name:
        return m.horizon_name
    return "t" if "t" in m.config else "T"


def decide_measurement(m: Measurement, threshold: float, rejected: bool) -> ClaimResult:
    """Verdict and evidence for one mean or criterion measurement, given its Holm threshold."""
    if m.rule == "positive":
        return _decide_positive(m, threshold, rejected)
    per_horizon_alpha = threshold / len(m.tests)
    mdes = [h.test.min_detectable(per_horizon_alpha) for h in m.tests]
    worst_mde = max(mdes)
    decisive = min(m.tests, key=lambda h: (h.test.p_value, str(h.horizon)))
    test = decisive.test
    hname = _horizon_name(m)
    target = m.resolution * m.scale
    if rejected:
        verdict = "refuted"
        judgement = f"refuted at false-fail rate {threshold:.2g}"
    elif m.not_exact_reason:
        verdict = "inconclusive"
        judgement = (
            f"not rejected (the run detects discrepancies >= {worst_mde:.3g}), but not confirmed: {m.not_exact_reason}"
        )
    elif worst_mde <= target:
        verdict = "confirmed"
        judgement = (
            f"not rejected, and the run detects any discrepancy >= {worst_mde:.3g} "
            f"(<= {m.resolution:.0%} of the error scale {m.scale:.3g}) with 90% power"
        )
    else:
        verdict = "inconclusive"
        judgement = (
            f"not rejected, but the run only detects discrepancies >= {worst_mde:.3g}, more than "
            f"{m.resolution:.0%} of the error scale {m.scale:.3g}; more replicates are needed"
        )
    evidence = (
        f"{m.form} form, {m.config.get('features', '-')} features, {test.n} replicates: at {hname} = {decisive.horizon} "
        f"formula {test.expected:.4g} vs Monte Carlo {test.observed:.4g} ± {test.stderr:.2g} "
        f"(z = {test.z:.1f}); {judgement}."
    )
    return _result(m, verdict, threshold, worst_mde, decisive, mdes, evidence, hname)


def _decide_positive(m: Measurement, threshold: float, rejected: bool) -> ClaimResult:
    """A criterion 'Delta > 0 in every case' (qualitative claims)."""
    per_case_alpha = threshold / len(m.tests)
    z_crit = stats.normal_upper_quantile(per_case_alpha)
    mdes = [h.test.min_detectable(2 * per_case_alpha) for h in m.tests]  # one-sided at per_case_alpha
    worst_mde = max(mdes)
    decisive = min(m.tests, key=lambda h: (h.test.z, str(h.horizon)))
    hname = _horizon_name(m)
    if rejected:
        verdict = "refuted"
        judgement = f"the margin is significantly negative in case {decisive.horizon} (false-fail rate {threshold:.2g})"
    elif all(h.test.z >= z_crit for h in m.tests):
        verdict = "confirmed"
        judgement = f"every margin is significantly positive (z >= {z_crit:.2f} in each case)"
    else:
        verdict = "inconclusive"
        judgement = (
            f"no margin is significantly negative, but not every one is significantly positive; a true margin "
            f">= {worst_mde:.3g} would be confirmed with 90% power"
        )
    cases = "; ".join(f"{h.horizon}: {h.test.observed:.4g} ± {h.test.stderr:.2g}" for h in m.tests)
    evidence = f"criterion: {m.formula}. Margins (Delta ± s.e.) by case: {cases}. {judgement}."
    return _result(m, verdict, threshold, worst_mde, decisive, mdes, evidence, hname)


def _result(m, verdict, threshold, worst_mde, decisive, mdes, evidence, hname) -> ClaimResult:
    test = decisive.test
    horizons = [
        {
            hname: h.horizon,
            "expected": h.test.expected,
            "observed": h.test.observed,
            "stderr": h.test.stderr,
            "z": h.test.z,
            "p_value": _case_p(m, h.test),
            "min_detectable": mde,
            **h.extra,
        }
        for h, mde in zip(m.tests, mdes)
    ]
    config = dict(m.config)
    config["decisive_horizon"] = decisive.horizon
    margin = margin_of(m.formula) if m.rule == "positive" else None
    if margin:
        config["margin"] = margin
    return ClaimResult(
        id=m.claim_id,
        source=m.source,
        kind=m.kind,
        form=m.form,
        verdict=verdict,
        expected=test.expected,
        observed=test.observed,
        stderr=test.stderr,
        p_value=entry_p(m),
        false_fail_rate=threshold,
        min_detectable=worst_mde,
        config=config,
        evidence=evidence,
        horizons=horizons,
        formula=m.formula,
        difference=m.difference,
        evidence_type=m.TAG,
    )



def bound_case(label: int | str, rhs, measured) -> HorizonTest:
    """One case of a bound "measured < rhs", tested as the paired margin Delta = rhs - measured > 0 per
    replicate; the row also records both sides' means (and the measured value's standard error) so the
    report can draw the right-hand side against the measured value."""
    rhs = np.asarray(rhs, dtype=float)
    measured = np.asarray(measured, dtype=float)
    spread = mean_test(measured, 0.0)
    return HorizonTest(label, mean_test(rhs - measured, 0.0),
                       {"rhs": float(rhs.mean()), "measured": spread.observed, "measured_stderr": spread.stderr})


def margin_of(formula: str) -> str | None:
    """What a criterion's margin Delta is, in the document's quantities, so that a report can name it instead of
    "Δ": the text after the formula's only "Delta = ", up to a bracketed note on the setting (`` [...]``), a
    note on the draws (`` (paired ...``, ``, paired ...``) or a semicolon.  None where the formula defines no margin or several
    (one per aspect), which the entry's section then spells out."""
    if formula.count("Delta = ") != 1:
        return None
    found = re.findall(r"Delta = (.+?)(?= \[| \(paired|, paired|;|$)", formula)
    if not found:
        return None
    return found[0].strip().rstrip(",.") or None


def least_margin(res: ClaimResult) -> dict | None:
    """The case of a criterion entry with the smallest margin Delta, when it is not the decisive case (the
    case with the smallest z, which the entry's ``observed`` reports); None when they coincide."""
    name = "case" if any("case" in h for h in res.horizons or ()) else "horizon"
    cases = [h for h in res.horizons or () if isinstance(h.get("observed"), (int, float))]
    if not cases or res.observed is None:
        return None
    least = min(cases, key=lambda h: h["observed"])
    if least["observed"] >= res.observed:
        return None
    return {"case": least.get(name, least.get("t")), "observed": least["observed"], "stderr": least.get("stderr")}


def _least_margin_note(res: ClaimResult) -> str:
    least = least_margin(res)
    return "" if least is None else f" (least: {number(least['observed'])}, {cell(str(least['case']))})"


def criterion_sentence(res: ClaimResult, symbols=None) -> str:
    """A criterion's decisive number: the margin in the document's quantities where the criterion names one
    (config "margin"), at its decisive case, against the claim's need that it be positive in every case."""
    margin = res.config.get("margin") if isinstance(res.config, dict) else None
    case = res.config.get("decisive_horizon") if isinstance(res.config, dict) else None
    at = f" at {case}" if case not in (None, "") else ""
    named = f"the margin {margin}" if margin else "the claim's margin"
    text = f"{named} is {number(res.observed, 3)} ± {number(res.stderr, 2)}{at} (the claim needs it > 0)"
    least = least_margin(res)
    if least is not None:
        text += f"; smallest {number(least['observed'], 3)} at {least['case']}"
    return text


TABLES = {
    "mean": Table("Means against formulas", ("formula", "Monte Carlo mean ± s.e."), "min detectable",
                  lambda r: (number(r.expected), f"{number(r.observed)} ± {number(r.stderr, 2)}"),
                  figure="estimates"),
    "criterion": Table("Criteria of qualitative claims (margin Δ > 0 in every case; the decisive case, the one with "
                       "the smallest z, shown, and the least margin where it is another case)",
                       ("criterion", "decisive case Δ ± s.e."), "min detectable Δ",
                       lambda r: (cell(r.formula) or "Δ > 0",
                                  f"{number(r.observed)} ± {number(r.stderr, 2)}" + _least_margin_note(r)),
                       criterion_sentence, figure="margin"),
}
RECORDS = {"measurement": Measurement, "horizon": HorizonTest, "meantest": MeanTest}
