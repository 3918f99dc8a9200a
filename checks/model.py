"""The records that flow from checks to reports (the results.json contract).

``Measurement`` is what a claim's experiment produces: one tested formula
(``form``) in one configuration, with one z-test per horizon.  The run-wide
multiplicity correction (Holm) turns measurements into ``ClaimResult``s, which
carry every field of the results.json contract.  All records are frozen and
JSON-ready through :func:`to_jsonable`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any

import numpy as np

from moecl_verify.checks.stats import MeanTest, mean_test

VERDICTS = ("confirmed", "refuted", "inconclusive", "not_checkable")
FORMS = ("stated", "corrected", "derived")


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
    """An expected-value identity measured at several horizons.

    ``scale`` is the natural size of the quantity (here ``S + D``, the size of
    a typical model error); a non-rejection becomes ``confirmed`` only if the
    run could have detected a discrepancy of ``resolution * scale`` at every
    horizon.
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

    def __post_init__(self) -> None:
        if self.form not in FORMS:
            raise ValueError(f"unknown form {self.form!r}")
        if self.rule not in ("identity", "positive"):
            raise ValueError(f"unknown rule {self.rule!r}")
        if not self.tests:
            raise ValueError("a measurement needs at least one horizon")


@dataclass(frozen=True)
class ClaimResult:
    """One results.json entry."""

    id: str
    source: str
    kind: str
    form: str
    verdict: str
    expected: float | None
    observed: float | None
    stderr: float | None
    p_value: float | None
    false_fail_rate: float | None
    min_detectable: float | None
    config: dict
    evidence: str
    horizons: list = field(default_factory=list)
    formula: str = ""
    difference: str = ""
    # Which kind of evidence decided it: mean, criterion, proportion, scaling (under the run's Holm
    # family, :mod:`moecl_verify.checks.decide`) or exact (sympy, rational arithmetic, a stated reason).
    evidence_type: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}")


@dataclass(frozen=True)
class Slip:
    """A discrepancy between what the paper states and what holds."""

    id: str
    location: str
    slip_class: str
    stated: str
    holds: str
    evidence: str


SLIP_CLASSES = (
    "notation",
    "transcription",
    "wrong constant or exponent",
    "inequality direction",
    "false intermediate step",
    "false statement",
    "unstated assumption",
    "inconsistency between sections",
    "experiment outside preconditions",
)


@dataclass(frozen=True)
class Interpretation:
    """A reading chosen where the paper is garbled, ambiguous or silent."""

    id: str
    location: str
    issue: str
    choice: str
    option: str = ""


@dataclass(frozen=True)
class RunResult:
    results: tuple[ClaimResult, ...]
    slips: tuple[Slip, ...]
    interpretations: tuple[Interpretation, ...]
    meta: dict
    claims: tuple[dict, ...] = ()
    artifacts: dict = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        out = {v: 0 for v in VERDICTS}
        for res in self.results:
            out[res.verdict] += 1
        return out


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        # JSON has no NaN/inf; a missing number is null.
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def to_jsonable(record: Any) -> Any:
    """A dataclass (or list of them) as plain JSON types, field order kept."""
    if is_dataclass(record):
        data = {f.name: getattr(record, f.name) for f in fields(record)}
        if isinstance(record, Slip):
            data["class"] = data.pop("slip_class")
            data = {k: data[k] for k in ("id", "location", "class", "stated", "holds", "evidence")}
        return {k: to_jsonable(v) for k, v in data.items()}
    if isinstance(record, (list, tuple)):
        return [to_jsonable(v) for v in record]
    if isinstance(record, dict):
        return {k: to_jsonable(v) for k, v in record.items()}
    return _clean(record)


__all__ = [
    "ClaimResult",
    "HorizonTest",
    "Interpretation",
    "Measurement",
    "RunResult",
    "Slip",
    "SLIP_CLASSES",
    "VERDICTS",
    "asdict",
    "to_jsonable",
]


def exact_result(
    claim_id: str,
    source: str,
    kind: str,
    part: str,
    verdict: str,
    evidence: str,
    formula: str,
    **config,
) -> ClaimResult:
    """An entry decided exactly (sympy, arithmetic) or by a stated reason: no sampling,
    so no expected/observed numbers and no false-fail rate; ``part`` names it within its claim."""
    return ClaimResult(
        id=claim_id,
        source=source,
        kind=kind,
        form="stated",
        verdict=verdict,
        expected=None,
        observed=None,
        stderr=None,
        p_value=None,
        false_fail_rate=None,
        min_detectable=None,
        config={"features": "-", "part": part, **config},
        evidence=evidence,
        formula=formula,
        evidence_type="exact",
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
