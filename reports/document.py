"""The pack a run checked, as the renderers see it: its title, order, headline items and figures.

A results.json names its pack (``meta.pack``; a file written before packs existed belongs to the default
pack).  A file whose pack is not installed still renders, with a stand-in that declares nothing: the
entries in id order, no headline items, no pack figures.
"""

from __future__ import annotations

from moecl_verify.checks import pack as packs
from moecl_verify.checks.model import RunResult


def pack_of(run: RunResult) -> packs.Pack:
    name = run.meta.get("pack")
    try:
        return packs.get(name)
    except packs.PackError:
        return packs.stand_in(name, str(run.meta.get("title") or name or "unknown document"))
