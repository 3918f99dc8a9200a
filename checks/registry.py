"""The claim registry: every checkable statement of the paper, by id.

A ``Claim`` names where the paper states it, what kind of statement it is, its
statement in LaTeX, its preconditions, and two functions: ``measure`` runs the
experiment and returns measurements; ``slips`` (optional) turns final verdicts
into slip-audit entries.  Claim modules register themselves on import;
:func:`all_claims` imports them all.
"""

from __future__ import annotations

import fnmatch
import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # pragma: no cover
    from checks.context import Context
    from checks.model import ClaimResult, Interpretation, Measurement, Slip

CLAIM_MODULES = (
    "checks.claims.prop4",
    "checks.claims.lemma3",
    "checks.claims.lemma4",
    "checks.claims.lemma6",
    "checks.claims.lemma2",
    "checks.claims.lemma10_12",
    "checks.claims.lemma11",
    "checks.claims.exploration",
    "checks.claims.exploration_signal",
    "checks.claims.prop2",
    "checks.claims.prop1_prop3",
    "checks.claims.lemma13_15",
    "checks.claims.lemma16",
    "checks.claims.thm1",
    "checks.claims.thm1_m1",
    "checks.claims.thm2",
    "checks.claims.insights",
    "checks.claims.fig2",
    "checks.claims.fig45",
    "checks.claims.audit",
)

KINDS = (
    "symbolic identity",
    "expected-value identity",
    "bound",
    "scaling",
    "probability",
    "qualitative",
    "precondition audit",
)


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    kind: str
    statement: str
    preconditions: tuple[str, ...]
    measure: Callable[["Context"], list["Measurement"]]
    slips: Callable[[list["ClaimResult"]], list["Slip"]] | None = None
    interpretations: tuple["Interpretation", ...] = field(default=())
    summary: str = ""
    # What a reader must know to judge the entries (assumptions, model choices).
    notes: str = ""
    # The closed forms behind the claim (stated, corrected, derived), for `show`.
    forms: Callable[[], list] | None = None
    # Data for figures, computed by checks and stored in results.json under
    # "artifacts" so that renderers never simulate: (name, fn(ctx) -> dict).
    artifacts: tuple = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.id}: unknown kind {self.kind!r}")


_REGISTRY: dict[str, Claim] = {}


def register(claim: Claim) -> Claim:
    if claim.id in _REGISTRY and _REGISTRY[claim.id] is not claim:
        raise ValueError(f"claim {claim.id!r} registered twice")
    _REGISTRY[claim.id] = claim
    return claim


def all_claims() -> list[Claim]:
    for name in CLAIM_MODULES:
        importlib.import_module(name)
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


class UnknownClaimPattern(ValueError):
    """A --claims pattern that matches no registered claim."""


def select(patterns: list[str] | None) -> list[Claim]:
    """Claims whose id matches any shell-style pattern (all when None)."""
    claims = all_claims()
    if not patterns:
        return claims
    chosen: list[Claim] = []
    for pattern in patterns:
        hits = [c for c in claims if fnmatch.fnmatchcase(c.id, pattern)]
        if not hits:
            known = ", ".join(c.id for c in claims)
            raise UnknownClaimPattern(f"--claims: {pattern!r} matches no claim (known: {known})")
        chosen.extend(c for c in hits if c not in chosen)
    return sorted(chosen, key=lambda c: c.id)


def get(claim_id: str) -> Claim:
    claims = {c.id: c for c in all_claims()}
    if claim_id not in claims:
        raise UnknownClaimPattern(f"show: no claim {claim_id!r} (known: {', '.join(claims)})")
    return claims[claim_id]
