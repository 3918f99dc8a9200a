"""The records that flow from checks to reports (the results.json contract).

Claims return evidence (:mod:`moecl_verify.checks.kinds`); the run-wide
multiplicity correction (Holm) turns it into ``ClaimResult``s, which carry
every field of the results.json contract.  All records are frozen and
JSON-ready through :func:`to_jsonable`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any

import numpy as np


VERDICTS = ("confirmed", "refuted", "inconclusive", "not_checkable")
FORMS = ("stated", "corrected", "derived")


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
    # The checked document's title (results.json's "paper"), kept so that a file renders with it even where
    # its pack is not installed.
    title: str = ""

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
    "Interpretation",
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
