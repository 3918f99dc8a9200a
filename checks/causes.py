"""The cause graph of a run's slips: which slip follows from which, and the root causes.

A claim that knows why one of its slips happens names the slips it follows from (``Slip.causes``): a false
lemma makes the results whose proofs rest on it fail too, a term miscounted in one proof reappears in the
theorems that reuse the proof.  Over the slips of one run this is a directed graph; it must be acyclic (a
slip cannot explain itself), which :func:`graph` checks, naming the cycle.

A cause the run did not establish (the claim was not run, or at this budget its slip was not found) is
left out: its derived slips then stand as root causes of this run.  A *root cause* is a slip none of whose
causes the run established; each other slip is listed under every root cause it follows from.
"""

from __future__ import annotations

from dataclasses import dataclass

from moecl_verify.checks.model import Slip


@dataclass(frozen=True)
class Cluster:
    """Root causes that are one error seen from different sides, declared by the pack (``Pack.clusters``).

    A cause edge says that one slip *follows from* another; a cluster makes no such claim.  It says that several
    findings, each established on its own (a derived bound, a measured probability, a failed step), describe one
    error of the document, and names it: ``error`` is that error in one sentence in the document's words.  The
    reports table the cluster once, under the first of ``lead`` and ``members`` the run established, with the
    others' slips among its own."""

    lead: str
    members: tuple[str, ...]
    error: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "members", tuple(self.members))
        if not self.lead or not self.members or self.lead in self.members:
            raise ValueError(f"cluster {self.lead!r}: a lead slip id and other member ids are needed")
        if not self.error.strip():
            raise ValueError(f"cluster {self.lead!r}: the error must be said in one sentence")

    @property
    def ids(self) -> tuple[str, ...]:
        return (self.lead, *self.members)


class CauseCycle(ValueError):
    """Slips whose declared causes form a cycle."""


@dataclass(frozen=True)
class CauseGraph:
    """The established slips' cause edges: ``causes[slip id]`` are the ids of the slips of this run it
    follows from, in the order declared."""

    slips: tuple[Slip, ...]
    causes: dict

    @property
    def roots(self) -> tuple[Slip, ...]:
        """The slips that follow from no other slip of the run, in the run's order."""
        return tuple(s for s in self.slips if not self.causes[s.id])

    def derived(self, root_id: str) -> tuple[Slip, ...]:
        """Every slip that follows from ``root_id``, directly or through others, in the run's order."""
        reached: set[str] = set()
        frontier = [root_id]
        while frontier:
            current = frontier.pop()
            for s in self.slips:
                if current in self.causes[s.id] and s.id not in reached:
                    reached.add(s.id)
                    frontier.append(s.id)
        return tuple(s for s in self.slips if s.id in reached)

    def roots_of(self, slip_id: str) -> tuple[str, ...]:
        """The root causes a slip follows from (itself, if it is one)."""
        if not self.causes[slip_id]:
            return (slip_id,)
        out: list[str] = []
        for cause in self.causes[slip_id]:
            out += [r for r in self.roots_of(cause) if r not in out]
        return tuple(out)


def graph(slips) -> CauseGraph:
    """The cause graph of ``slips``; :class:`CauseCycle` if their causes form a cycle."""
    slips = tuple(slips)
    present = {s.id for s in slips}
    causes = {s.id: tuple(c for c in s.causes if c in present) for s in slips}
    check_acyclic(causes)
    return CauseGraph(slips, causes)


def check_acyclic(causes: dict) -> None:
    # Depth-first search with three colours; the path on the stack names the cycle when one closes.
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in causes.get(node, ()):
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                raise CauseCycle("slips that explain each other in a circle: " + " follows from ".join(cycle))
            if state.get(nxt) is None:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in causes:
        if state.get(node) is None:
            visit(node)


__all__ = ["CauseCycle", "Cluster", "CauseGraph", "check_acyclic", "graph"]
