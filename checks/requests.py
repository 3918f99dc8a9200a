"""Requests to the authors: what a referee asks the document's authors to restate, prove or report.

A pack assembles them from a finished run (``Pack.requests``), each from the slips the run established, so that a
request appears only where the run found what it asks about, and each points at its evidence (the slips' entries
in the slip audit).  A request that corrects a formula carries the corrected statement as LaTeX that the pack
generates from its derived forms (``sympy.latex`` of the expression the checks confirmed), never typed by hand:
:func:`request` takes the sympy expression, not its text.
"""

from __future__ import annotations

from dataclasses import dataclass

ACTIONS = ("restate", "prove", "report")


@dataclass(frozen=True)
class Request:
    """One numbered request: ``action`` one of :data:`ACTIONS`; ``text`` what to do, in the document's words;
    ``latex`` the corrected statement (display math, generated from a sympy expression; empty where the request
    corrects no formula); ``evidence`` the ids of the slips that show why (each linked in the reports);
    ``changes`` the headline results its correction changes, in words (empty: none)."""

    action: str
    text: str
    evidence: tuple[str, ...]
    latex: str = ""
    changes: str = ""

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"request: action must be one of {ACTIONS}, got {self.action!r}")
        if not self.text.strip():
            raise ValueError("request: text must say what to do")
        object.__setattr__(self, "evidence", tuple(self.evidence))
        if not self.evidence or not all(isinstance(e, str) and e for e in self.evidence):
            raise ValueError(f"request {self.text[:40]!r}: evidence must name the slips that show it")

    def to_json(self) -> dict:
        return {"action": self.action, "text": self.text, "evidence": list(self.evidence),
                **({"latex": self.latex} if self.latex else {}), **({"changes": self.changes} if self.changes else {})}


def request(action: str, text: str, evidence, statement=None, changes: str = "") -> Request:
    """A :class:`Request`; ``statement`` (a sympy expression or relation, or None) becomes its LaTeX by
    ``sympy.latex``."""
    latex = ""
    if statement is not None:
        import sympy as sp

        if not isinstance(statement, sp.Basic):
            raise TypeError(f"request {text[:40]!r}: the corrected statement must be a sympy expression, "
                            f"got {type(statement).__name__}")
        latex = sp.latex(statement)
    return Request(action, text, tuple(evidence), latex, changes)


__all__ = ["ACTIONS", "Request", "request"]
