"""The pack a run checked, as the renderers see it: its title, order, headline items and figures.

A results.json names its pack (``meta.pack``; a file written before packs existed belongs to the default
pack).  A file whose pack is not installed still renders, with a stand-in that declares nothing: the
entries in id order, no headline items, no pack figures.
"""

from __future__ import annotations

import dataclasses

from moecl_verify.checks import kinds
from moecl_verify.checks import pack as packs
from moecl_verify.checks.model import RunResult


def pack_of(run: RunResult) -> packs.Pack:
    name = run.meta.get("pack")
    try:
        return packs.get(name)
    except packs.PackError:
        stand_in = packs.stand_in(name, run.title or name or "unknown document")
        swept = _swept_of(run)
        return dataclasses.replace(stand_in, swept=swept, swept_symbol=swept) if swept else stand_in


def is_installed(run: RunResult) -> bool:
    """Whether the pack the run names is installed (else :func:`pack_of` gives a stand-in)."""
    try:
        packs.get(run.meta.get("pack"))
    except packs.PackError:
        return False
    return True


# What a proportion row records besides the swept value.
_ROW_FIELDS = frozenset({"successes", "trials", "probability", "low", "high"})


def _swept_of(run: RunResult) -> str | None:
    """The swept parameter's name as the file records it (a scaling entry's ``<name>_range``, or the extra
    key of a proportion row), for a file whose pack cannot say."""
    for res in run.results:
        for key in res.config:
            if key.endswith("_range") and kinds.figure_of(res) == "scaling":
                return key[: -len("_range")]
    for res in run.results:
        for row in res.config.get("probabilities") or ():
            extra = [k for k in row if k not in _ROW_FIELDS] if isinstance(row, dict) else []
            if extra:
                return extra[0]
    return None


def derived_uses(run: RunResult) -> list[tuple]:
    """The pack's derived bounds that decide a claim of this run (``Pack.derived_bounds``), each with its uses and
    the verdict of each use's entry in the run: [(bound, [(use, verdict or "not in this run" / "no such entry")])].
    A bound none of whose uses bears on a claim of the run is left out."""
    declared = pack_of(run).derived_bounds
    claims = {c["id"] for c in run.claims}
    out = []
    for bound in (declared() if declared else ()):
        if not any(u.claim_id in claims for u in bound.uses):
            continue
        rows = []
        for u in bound.uses:
            hits = [r for r in run.results if r.id == u.claim_id and r.key.part == u.part]
            verdict = (", ".join(sorted({r.verdict for r in hits})) if hits else
                       "not in this run" if u.claim_id not in claims else "no such entry")
            rows.append((u, verdict))
        out.append((bound, rows))
    return out
