"""Bounds a pack derives once and uses to decide several statements.

A derived bound is a result the tool proves itself (typically in sympy) from a document's own definitions: a
statement, the assumptions it rests on, the reading of the text it needs, and its steps, each a sentence with
the boolean of the exact check that confirms it.  A bound is worth stating on its own when more than one claim
rests on it: each *use* names the claim and the entry that the bound decides there, how (``implies``: the
bound proves the statement; ``contradicts``: it rules the statement out; ``does not apply``: the statement is
outside the bound's window or about another quantity), and *why* it applies, a derivation of its own whose
steps are checked too (``checked``).

A pack declares its bounds (``Pack.derived_bounds``, a callable so that the exact checks run only when a
report asks for them); the claims build their entries from the same objects, so the report's list of uses and
the entries never disagree.  This module names no document.
"""

from __future__ import annotations

from dataclasses import dataclass, field

RELATIONS = ("implies", "contradicts", "does not apply")


def _checked(steps) -> tuple[tuple[str, bool], ...]:
    out = []
    for step in steps:
        text, ok = step
        if not isinstance(text, str) or not text:
            raise ValueError("a step is (text, checked): the text must be a non-empty string")
        out.append((text, bool(ok)))
    return tuple(out)


@dataclass(frozen=True)
class Use:
    """Where a derived bound decides a statement: the claim and the entry's part, the relation, and why the
    bound applies there (window, quantity) as checked steps.

    ``checked`` is true only when every step of ``why`` holds; a use whose applicability is not derived must
    say ``does not apply`` (or name the reading under which it does, in ``reading``)."""

    bound_id: str
    claim_id: str
    part: str
    relation: str
    why: tuple[tuple[str, bool], ...]
    reading: str = ""
    # What the use concludes, in one sentence (the entry's verdict follows from it).
    conclusion: str = ""

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"use of {self.bound_id}: relation must be one of {RELATIONS}, not {self.relation!r}")
        for name in ("bound_id", "claim_id", "part"):
            if not getattr(self, name):
                raise ValueError(f"use of a derived bound: {name} must be given")
        object.__setattr__(self, "why", _checked(self.why))

    @property
    def checked(self) -> bool:
        """Every step of the applicability derivation holds (and there is at least one)."""
        return bool(self.why) and all(ok for _, ok in self.why)

    @property
    def verdict(self) -> str:
        """The verdict an exact entry built from this use carries: ``confirmed`` for a checked ``implies``,
        ``refuted`` for a checked ``contradicts``, else ``inconclusive`` (a bound that does not apply, or a
        derivation with a step that does not check, decides nothing)."""
        if not self.checked:
            return "inconclusive"
        return {"implies": "confirmed", "contradicts": "refuted"}.get(self.relation, "inconclusive")

    def derivation(self) -> str:
        """The applicability derivation in one paragraph: numbered steps, each marked as checked or not."""
        return "; ".join(f"({i}) {text}{'' if ok else ' [NOT CONFIRMED]'}" for i, (text, ok) in
                         enumerate(self.why, 1)) + "."


@dataclass(frozen=True)
class DerivedBound:
    """A bound the tool derives: its statement, assumptions, the reading it needs, its checked steps, and the
    statements it decides (``uses``)."""

    id: str
    statement: str
    assumptions: tuple[str, ...]
    reading: str
    steps: tuple[tuple[str, bool], ...]
    uses: tuple[Use, ...] = field(default=())
    # Where the document's text the bound is derived from stands (shown beside the statement).
    source: str = ""

    def __post_init__(self) -> None:
        if not self.id or not self.statement:
            raise ValueError("a derived bound needs an id and a statement")
        object.__setattr__(self, "assumptions", tuple(self.assumptions))
        object.__setattr__(self, "steps", _checked(self.steps))
        object.__setattr__(self, "uses", tuple(self.uses))
        for use in self.uses:
            if use.bound_id != self.id:
                raise ValueError(f"derived bound {self.id}: a use names {use.bound_id!r}")

    @property
    def checked(self) -> bool:
        """Every step of the bound's own derivation holds."""
        return bool(self.steps) and all(ok for _, ok in self.steps)

    def use(self, claim_id: str, part: str) -> Use:
        """The use deciding ``part`` of ``claim_id``."""
        for u in self.uses:
            if u.claim_id == claim_id and u.part == part:
                return u
        raise KeyError(f"{self.id}: no use for {claim_id} / {part}")

    def evidence(self, use: Use) -> str:
        """An entry's evidence text for one use: the bound (id, statement, reading), whether its own steps
        check, the applicability derivation, and the conclusion."""
        own = "every step checked" if self.checked else "a step NOT confirmed"
        return (f"Derived bound {self.id} ({own}): {self.statement} Reading: {self.reading}. Why it applies here "
                f"({use.relation}): {use.derivation()}" + (f" {use.conclusion}" if use.conclusion else ""))

    def verdict(self, use: Use) -> str:
        """The verdict of an exact entry built from ``use``: the use's, when the bound's own steps check too."""
        return use.verdict if self.checked else "inconclusive"
