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

from moecl_verify.checks.ablation import Ablation
from moecl_verify.checks.entry_key import FORMS, EntryKey


VERDICTS = ("confirmed", "refuted", "inconclusive", "not_checkable")
# The closed sets of results.json (reports/results.schema.json copies them, and a test keeps the copy in step):
# a record outside them is refused where it is built, so that no run writes a file its reader would refuse.
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
# How sure a finding is (a slip's ``strength``; reports/results.schema.json copies the keys), weakest last: an exact
# check (sympy, rational arithmetic, exhaustive search, a stated reason), a Monte Carlo disagreement at the
# configuration its entry states, a finding that holds only under a reading of a text that is silent or garbled
# (``strength_note`` names it), and one that may come from the text checked rather than the document.
STRENGTHS = ("exact", "monte_carlo", "reading", "transcription")
STRENGTH_LABELS = {
    "exact": "exact",
    "monte_carlo": "Monte Carlo at the stated configuration",
    "reading": "rests on a reading",
    "transcription": "possibly a transcription artifact",
}


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
    # The entry's identity (:mod:`moecl_verify.checks.entry_key`).  A claim declares it in ``config`` (its
    # ``part`` and ``role`` are taken out of the configuration here); a results file stores it as fields.
    key: EntryKey | None = None

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"entry {self.id} [{self.form}]: verdict {self.verdict!r} is not one of "
                             f"{', '.join(VERDICTS)}")
        if self.form not in FORMS:
            raise ValueError(f"entry {self.id}: form {self.form!r} is not one of {', '.join(FORMS)}")
        key = self.key
        if key is None:
            key, config = EntryKey.of(self.id, self.form, self.config)
            object.__setattr__(self, "config", config)
        elif isinstance(key, dict):
            key = EntryKey.from_json(key)
        if (key.claim, key.form) != (self.id, self.form):
            raise ValueError(f"{self.id} [{self.form}]: its key names {key.claim} [{key.form}]")
        object.__setattr__(self, "key", key)


@dataclass(frozen=True)
class Slip:
    """A discrepancy between what the paper states and what holds."""

    id: str
    location: str
    slip_class: str
    stated: str
    holds: str
    evidence: str
    # The entries the slip rests on (their keys), so that a reader, a diff and a cause can find them without
    # matching text.  Order: the most decisive first.
    entries: tuple[EntryKey, ...] = ()
    # The slips this one follows from (their ids), declared by the claim that knows why: a false lemma makes
    # the results whose proofs use it fail too.  The report lists a slip under its root cause
    # (:mod:`moecl_verify.checks.causes`).
    causes: tuple[str, ...] = ()
    # How large the slip is at the document's own configuration (for example a gap evaluated at the
    # document's parameters, or a margin measured at the settings of its experiment), written by the claim from the run's numbers or
    # from a derivation; empty where the claim cannot say.  A small effect tells a reader the slip is harmless
    # in practice, a large one that a headline result rests on it.
    effect: str = ""
    # The slip in one plain sentence, for the bottom line ("<the statement> is false: ..."); empty where ``holds``'s
    # first clause says it well enough.
    summary: str = ""
    # How sure the finding is (one of STRENGTHS), declared by a claim whose finding rests on a reading or may be a
    # transcription artifact; empty: derived from the entries (:func:`moecl_verify.checks.strength.settle`).
    # ``strength_note`` names the reading ("the termination rule") or what to check against the original.
    strength: str = ""
    strength_note: str = ""
    # The effect of causes measured by ablation (:mod:`moecl_verify.checks.ablation`): this slip's discrepancy
    # with one cause removed and everything else kept, on common random numbers.  The reports quote a cause's
    # number only where its ablation moved it, and split the discrepancy between the ablated causes.
    ablation: tuple[Ablation, ...] = ()

    def __post_init__(self) -> None:
        if self.slip_class not in SLIP_CLASSES:
            raise ValueError(f"slip {self.id}: slip_class {self.slip_class!r} is not one of {', '.join(SLIP_CLASSES)}")
        if self.strength and self.strength not in STRENGTHS:
            raise ValueError(f"slip {self.id}: strength {self.strength!r} is not one of {', '.join(STRENGTHS)}")
        if self.strength == "reading" and not self.strength_note.strip():
            raise ValueError(f"slip {self.id}: a finding that rests on a reading names it (strength_note)")
        object.__setattr__(self, "entries", tuple(
            EntryKey.from_json(e) if isinstance(e, dict) else e for e in self.entries))
        for e in self.entries:
            if not isinstance(e, EntryKey):
                raise TypeError(f"slip {self.id}: entries must be entry keys, not {type(e).__name__}")
        object.__setattr__(self, "causes", tuple(self.causes))
        if not all(isinstance(c, str) and c for c in self.causes) or self.id in self.causes:
            raise ValueError(f"slip {self.id}: causes must be other slips' ids, not {self.causes!r}")
        object.__setattr__(self, "ablation", tuple(
            Ablation.from_json(a) if isinstance(a, dict) else a for a in self.ablation))
        if not all(isinstance(a, Ablation) for a in self.ablation):
            raise TypeError(f"slip {self.id}: ablation must hold Ablation records")


def keys_of(*entries) -> tuple[EntryKey, ...]:
    """The keys of the given results entries, in order, for :attr:`Slip.entries`; each argument is an entry,
    a list of entries, or None (an entry the run did not make), so a slip builder passes what it read."""
    out = []
    for item in entries:
        for entry in (item if isinstance(item, (list, tuple)) else (item,)):
            if entry is not None:
                out.append(entry.key)
    return tuple(out)


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
    # What the reports said when the file was written (results.json's "findings"): derived, so recomputed
    # wherever the pack is installed, and kept for a file whose pack is not.
    findings: dict = field(default_factory=dict)

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
    if isinstance(record, Ablation):
        return record.to_json()  # its own form: a joint removal's causes only where there are any
    if is_dataclass(record):
        data = {f.name: getattr(record, f.name) for f in fields(record)}
        if isinstance(record, ClaimResult):
            # The key beside the id it refines, so that a reader of the file meets the entry's identity first.
            key = data.pop("key")
            ordered = {}
            for name, value in data.items():
                ordered[name] = value
                if name == "form":
                    ordered["key"] = key
            data = ordered
        if isinstance(record, Slip):
            data["class"] = data.pop("slip_class")
            ablation = data.pop("ablation")
            data = {k: data[k] for k in ("id", "location", "class", "stated", "holds", "evidence", "entries", "causes",
                                         "effect", "summary", "strength", "strength_note")
                    if k in ("entries", "causes") or k not in ("effect", "summary", "strength", "strength_note")
                    or data[k]}
            if ablation:  # last, and only where a cause was ablated
                data["ablation"] = ablation
        return {k: to_jsonable(v) for k, v in data.items()}
    if isinstance(record, (list, tuple)):
        return [to_jsonable(v) for v in record]
    if isinstance(record, dict):
        return {k: to_jsonable(v) for k, v in record.items()}
    return _clean(record)


__all__ = [
    "Ablation",
    "ClaimResult",
    "EntryKey",
    "Interpretation",
    "RunResult",
    "Slip",
    "SLIP_CLASSES",
    "STRENGTHS",
    "STRENGTH_LABELS",
    "VERDICTS",
    "asdict",
    "keys_of",
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
    *,
    form: str = "stated",
    role: str = "statement",
    **config,
) -> ClaimResult:
    """An entry decided exactly (sympy, arithmetic) or by a stated reason: no sampling,
    so no expected/observed numbers and no false-fail rate; ``part`` names it within its claim and ``role``
    says whether it checks the statement or a step of its proof (:mod:`moecl_verify.checks.entry_key`)."""
    return ClaimResult(
        id=claim_id,
        source=source,
        kind=kind,
        form=form,
        verdict=verdict,
        expected=None,
        observed=None,
        stderr=None,
        p_value=None,
        false_fail_rate=None,
        min_detectable=None,
        config={"features": "-", "part": part, **config, **({"role": role} if role != "statement" else {})},
        evidence=evidence,
        formula=formula,
        evidence_type="exact",
    )
