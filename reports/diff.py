"""What changed between two runs' results.json: verdicts first, then numbers, then wording.

Entries are matched by their keys (:mod:`moecl_verify.checks.entry_key`: claim, form, part, role,
reading, features, pool, hidden constant); an entry of a schema 1 or 2 file gets its key by the
documented mapping :func:`~moecl_verify.checks.entry_key.legacy_key`, so a file of an earlier version
compares with one of this version.  A changed configuration is a changed number.  Slips and
interpretations are matched by id; a slip's entry keys are compared where both files record them. Fields that name library versions (``meta.versions``) are left out:
they describe the machine, not the paper.

Used by ``moecl-verify diff`` for continuous integration (an entry that moved between
``confirmed`` and ``refuted`` is exit 1; with ``--strict`` any moved verdict or number is) and
to show that a change of the tool's code left its findings alone.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from moecl_verify.reports import results_json

# Fields of an entry that hold measured or derived numbers.
NUMBER_FIELDS = ("expected", "observed", "stderr", "p_value", "false_fail_rate", "min_detectable", "horizons",
                 "config")
# Configuration fields an entry's key holds (checks/entry_key.py), compared by matching the keys.
KEY_CONFIG = ("part", "role", "reading", "features", "pool", "hidden_constant")
# Fields of an entry that hold wording (evidence, formulas, differences).
TEXT_FIELDS = ("evidence", "formula", "difference", "source", "kind")


@dataclass(frozen=True)
class Change:
    """One difference: where (``key``), which field, and its old and new value."""

    key: str
    field: str
    old: Any
    new: Any


@dataclass(frozen=True)
class RunDiff:
    """The differences between two runs, by kind."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    verdicts: tuple[Change, ...]
    numbers: tuple[Change, ...]
    text: tuple[Change, ...]
    meta: tuple[Change, ...]
    # entry key -> (old verdict, new verdict); None where the entry does not exist on that side
    verdict_of: dict = None

    @property
    def flips(self) -> tuple[Change, ...]:
        """Verdicts that moved between confirmed and refuted: a finding reversed."""
        return tuple(c for c in self.verdicts if {c.old, c.new} == {"confirmed", "refuted"})

    @property
    def same_findings(self) -> bool:
        """No entry appeared, vanished or changed its verdict or numbers."""
        return not (self.added or self.removed or self.verdicts or self.numbers)


def load(path: str | Path) -> dict:
    """A results.json (or a report folder holding one) as a validated dict: the one reader of
    :mod:`moecl_verify.reports.results_json`, so a file ``report --from`` refuses is refused here too, and
    an unknown verdict can never pass for a moved one. Raises ``ResultsFileError`` (a ``ValueError``), one
    line naming the file and its first problem."""
    return results_json.read(path)


def entry_key(entry: dict) -> str:
    """The line that names an entry in a diff: its key's text (stored, or mapped from a schema 1 or 2 entry)."""
    return results_json.key_of(entry).text


def _by_key(entries) -> dict:
    """Entries by their keys (the fields, not the text a line prints, which rounds a constant)."""
    return {results_json.key_of(e): _fields(e) for e in entries}


def _named(keys) -> dict:
    """Each key's line; keys whose lines coincide (a constant beyond the printed digits) get their fields."""
    texts = {k: k.text for k in keys}
    seen: dict[str, int] = {}
    for t in texts.values():
        seen[t] = seen.get(t, 0) + 1
    return {k: (t if seen[t] == 1 else f"{t} {k.to_json()}") for k, t in texts.items()}


def _fields(entry: dict) -> dict:
    """An entry's compared fields; the configuration without what its key holds (the label schema 1 and 2
    kept in it, the reading, features, pool and hidden constant), which the match compared already."""
    config = {k: v for k, v in (entry.get("config") or {}).items() if k not in KEY_CONFIG}
    return {**entry, "config": config}


def _same(a: Any, b: Any, rel: float) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) and math.isnan(b):
            return True
        return a == b or math.isclose(a, b, rel_tol=rel, abs_tol=0.0)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y, rel) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], rel) for k in a)
    return a == b


def compare(old: dict, new: dict, rel: float = 0.0) -> RunDiff:
    """The differences between two results.json dicts. Numbers equal within relative ``rel`` count as equal
    (0: exactly equal, as a rerun of the same command must be)."""
    old_by, new_by = _by_key(old["results"]), _by_key(new["results"])
    line_of = _named(old_by.keys() | new_by.keys())
    before = {line_of[k]: v for k, v in old_by.items()}
    after = {line_of[k]: v for k, v in new_by.items()}
    added = tuple(sorted(after.keys() - before.keys()))
    removed = tuple(sorted(before.keys() - after.keys()))
    verdicts, numbers, text = [], [], []
    for key in sorted(before.keys() & after.keys()):
        a, b = before[key], after[key]
        if a.get("verdict") != b.get("verdict"):
            verdicts.append(Change(key, "verdict", a.get("verdict"), b.get("verdict")))
        for name in NUMBER_FIELDS:
            if not _same(a.get(name), b.get(name), rel):
                numbers.append(Change(key, name, a.get(name), b.get(name)))
        for name in TEXT_FIELDS:
            if a.get(name) != b.get(name):
                text.append(Change(key, name, a.get(name), b.get(name)))
    for section in ("slips", "interpretations", "claims"):
        old_items = {x.get("id"): x for x in old.get(section, [])}
        new_items = {x.get("id"): x for x in new.get(section, [])}
        added += tuple(f"{section}: {k}" for k in sorted(new_items.keys() - old_items.keys()))
        removed += tuple(f"{section}: {k}" for k in sorted(old_items.keys() - new_items.keys()))
        for key in sorted(old_items.keys() & new_items.keys()):
            for name in sorted(old_items[key].keys() | new_items[key].keys()):
                if name in ("entries", "causes", "effect", "summary", "strength") and not (
                        old_items[key].get(name) and new_items[key].get(name)):
                    continue  # not recorded on one side (a slip of schema 1 or 2, or a file rewritten from one)
                if name == "strength_note" and not (old_items[key].get("strength") and new_items[key].get("strength")):
                    continue  # a file written before slips stated their strength
                if old_items[key].get(name) != new_items[key].get(name):
                    text.append(Change(f"{section}: {key}", name, old_items[key].get(name),
                                       new_items[key].get(name)))
    if not _same(old.get("artifacts"), new.get("artifacts"), rel):
        numbers.append(Change("artifacts", "artifacts", "(figure data)", "(figure data differs)"))
    meta = []
    for name in sorted((old.get("meta", {}).keys() | new.get("meta", {}).keys()) - {"versions"}):
        if old.get("meta", {}).get(name) != new.get("meta", {}).get(name):
            meta.append(Change("meta", name, old["meta"].get(name), new["meta"].get(name)))
    verdict_of = {k: (before[k].get("verdict") if k in before else None, after[k].get("verdict") if k in after else None)
                  for k in before.keys() | after.keys()}
    return RunDiff(added, removed, tuple(verdicts), tuple(numbers), tuple(text), tuple(meta), verdict_of)


def _short(value: Any, width: int = 60) -> str:
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= width else text[: width - 1] + "…"


def render(diff: RunDiff, show_text: bool = False, only: str | None = None) -> str:
    """The diff as plain text for a terminal or a CI log.  ``only`` keeps the entries whose old or new
    verdict is that verdict (slips, interpretations and settings are then left out)."""
    verdict_of = diff.verdict_of or {}

    def keep(key: str) -> bool:
        return only is None or only in verdict_of.get(key, ())

    lines = [f"entries added {len(diff.added)}, removed {len(diff.removed)}; verdicts changed {len(diff.verdicts)} "
             f"({len(diff.flips)} between confirmed and refuted); numbers changed {len(diff.numbers)}; wording "
             f"changed {len(diff.text)}; run settings changed {len(diff.meta)}"]
    if only is not None:
        lines.append(f"showing entries whose verdict is or was {only}")
    for key in diff.added:
        if keep(key):
            lines.append(f"+ {key}" + (f": {verdict_of[key][1]}" if key in verdict_of else ""))
    for key in diff.removed:
        if keep(key):
            lines.append(f"- {key}" + (f": {verdict_of[key][0]}" if key in verdict_of else ""))
    if only is None:
        for c in diff.meta:
            lines.append(f"settings {c.field}: {_short(c.old)} -> {_short(c.new)}")
    for c in diff.verdicts:
        if keep(c.key):
            flip = "FLIP " if c in diff.flips else ""
            lines.append(f"{flip}VERDICT {c.key}: {c.old} -> {c.new}")
    for c in (c for c in diff.numbers if keep(c.key)):
        lines.append(f"number {c.key} {c.field}: {_short(c.old)} -> {_short(c.new)}")
    if show_text:
        for c in (c for c in diff.text if keep(c.key)):
            lines.append(f"wording {c.key} {c.field}:\n    - {_short(c.old, 400)}\n    + {_short(c.new, 400)}")
    lines.append("same findings" if diff.same_findings else "findings differ")
    return "\n".join(lines) + "\n"
