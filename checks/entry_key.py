"""What names an entry: typed fields, never text to parse back.

A claim checks its statement in several entries: at different hidden constants, on different task pools,
under different readings of a garbled formula, with different feature models, for the statement and for
the steps of its proof.  :class:`EntryKey` holds each of these as its own field, so that grouping entries
across hidden constants, finding the entry a slip rests on, telling a statement from a proof step in the
headline, and matching entries between two runs (``moecl-verify diff``) all compare fields.

A claim declares the fields in its entry's configuration (``config``): the free label ``part`` (what the
entry measures, with no constant, pool or reading in it), ``role`` (``"statement"`` unless it checks a
step of the document's proof), and the configuration values the entry already records, ``pool`` (the
index of a drawn task pool), ``hidden_constant``, ``reading`` and ``features``.  :meth:`EntryKey.of` takes
them from there, once, when the entry is made; the label a reader sees is rendered from the fields
(:attr:`EntryKey.label`).

Files of schema 1 and 2 stored only the label, with constant and pool written into it;
:func:`legacy_key` is the documented mapping from such an entry to its key (docs/design.md, "Entry keys,
and files of schema 1 and 2").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields, replace

FORMS = ("stated", "corrected", "derived")
# An entry checks the document's statement, or a step of its proof (an intermediate inequality, a
# premise a proof uses), or measures how a result depends on a setting the document fixes otherwise (a
# "sensitivity" entry: a sweep around the stated configuration, or a setting outside it): the headline's
# verdict on a statement reads only the first.  A sensitivity entry is decided under the run's error
# control like any other, and reported, but never decides the statement.
ROLES = ("statement", "proof step", "sensitivity")

# The configuration fields that identify an entry (besides the label and the role, which identify it only).
CONSTANT_FIELD = "hidden_constant"
POOL_FIELD = "pool"
READING_FIELD = "reading"
FEATURES_FIELD = "features"
# What a configuration writes for "no feature model" (an exact entry).
NO_FEATURES = ("-", "—", None)


@dataclass(frozen=True)
class EntryKey:
    """The identity of one results entry within a run.

    ``claim`` and ``form`` (stated, corrected, derived) as in the registry; ``part`` the claim's own label
    for what the entry measures; ``role`` statement, proof step or sensitivity; ``reading`` the reading of the
    document's text the entry checks (None: the only one); ``features`` the feature model of a simulation
    (None: exact); ``pool`` the index of the drawn task pool (None: not pool-specific); ``constant`` the
    hidden constant of an O()/Θ() statement (None: none)."""

    claim: str
    form: str = "stated"
    part: str = ""
    role: str = "statement"
    reading: str | None = None
    features: str | None = None
    pool: int | None = None
    constant: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.claim, str) or not self.claim:
            raise ValueError(f"entry key: claim must be a non-empty string, not {self.claim!r}")
        if self.form not in FORMS:
            raise ValueError(f"{self.claim}: unknown form {self.form!r} (one of {', '.join(FORMS)})")
        if self.role not in ROLES:
            raise ValueError(f"{self.claim}: unknown role {self.role!r} (one of {', '.join(ROLES)})")
        if not isinstance(self.part, str):
            raise ValueError(f"{self.claim}: part must be a string, not {self.part!r}")
        for name in ("reading", "features"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{self.claim} ({self.part}): {name} must be a string, not {value!r}")
        if self.pool is not None and (isinstance(self.pool, bool) or not isinstance(self.pool, int)):
            raise ValueError(f"{self.claim} ({self.part}): pool must be a pool index, not {self.pool!r}")
        if self.constant is not None:
            if isinstance(self.constant, bool) or not isinstance(self.constant, (int, float)) \
                    or not math.isfinite(self.constant):
                raise ValueError(f"{self.claim} ({self.part}): constant must be a finite number, "
                                 f"not {self.constant!r}")
            object.__setattr__(self, "constant", float(self.constant))

    @classmethod
    def of(cls, claim: str, form: str, config: dict) -> tuple["EntryKey", dict]:
        """The key a claim declared in an entry's configuration, and the configuration without the two fields
        that only identify (``part``, ``role``); the other key fields stay in it, as configuration."""
        rest = dict(config)
        part = rest.pop("part", "") or ""
        role = rest.pop("role", "statement")
        features = rest.get(FEATURES_FIELD)
        pool = rest.get(POOL_FIELD)
        return cls(
            claim=claim, form=form, part=part, role=role, reading=rest.get(READING_FIELD),
            features=None if features in NO_FEATURES else features,
            # A pool named rather than drawn (a constructed pool) is configuration; its entry says so in its part.
            pool=pool if isinstance(pool, int) and not isinstance(pool, bool) else None,
            constant=rest.get(CONSTANT_FIELD),
        ), rest

    @property
    def label(self) -> str:
        """What the reports print for the entry within its claim: the part, then the pool and the constant."""
        bits = [self.part] if self.part else []
        if self.pool is not None:
            bits.append(f"pool {self.pool}")
        if self.constant is not None:
            bits.append(f"c = {self.constant:g}")
        return ", ".join(bits)

    @property
    def is_statement(self) -> bool:
        """An entry of the statement as the document prints it: not a proof step, a correction or a derivation."""
        return self.form == "stated" and self.role == "statement"

    def across_constants(self) -> "EntryKey":
        """The key without its hidden constant: entries measuring the same quantity at different constants
        share it."""
        return replace(self, constant=None)

    @property
    def text(self) -> str:
        """One line naming the entry in a run (``diff`` and ``show`` print it): claim, form, label, then the
        features and the reading where set."""
        out = f"{self.claim} [{self.form}]"
        if self.label:
            out += f" {self.label}"
        extra = [f"features {self.features}"] if self.features else []
        if self.reading:
            extra.append(f"reading {self.reading}")
        if self.role != "statement":
            extra.append(self.role)
        return out + (f" ({'; '.join(extra)})" if extra else "")

    def to_json(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json(cls, data: dict) -> "EntryKey":
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


# ----------------------------------------------------------------------------- files of schema 1 and 2

# The label of a schema-2 entry ended with its pool and its constant, written in one of these ways.
_LEGACY_CONSTANT = re.compile(r"(?:^|,?\s+)c = [^,\s]+$")
_LEGACY_POOL = re.compile(r"(?:^|,\s+)pool (\d+)$")
# ... and named a reading it checked, where the configuration did not, as "<name> reading: ...".
_LEGACY_READING = re.compile(r"\b(\w+) reading:")
# Schema 2 told a proof step by its label or its claim's id, which is what its headline did.
_LEGACY_STEP_ID = ".step"
_LEGACY_STEP_PARTS = ("proof",)


def legacy_key(entry: dict) -> EntryKey:
    """The key of an entry of a schema 1 or 2 results file (which stored the label only, as ``config.part``).

    The mapping: ``claim``, ``form``, ``reading``, ``features`` and ``pool`` (a drawn pool's index) from the
    entry's fields and configuration as this version reads them, and ``reading`` ``<name>`` where the
    configuration names none and the old label says "<name> reading: ..."; ``constant`` from
    ``config.hidden_constant``;
    ``part`` the old label with a trailing ``c = …`` removed where the entry has a hidden constant and a
    trailing ``pool k`` removed where its pool is k; ``role`` proof step where the old label starts with
    "proof" or contains "proof step", where the claim's id contains ".step", and where a stated entry's label
    starts with "derived" (the entries schema 2's headline kept out of a statement's verdict); sensitivity where
    the label starts with "sensitivity" (the role came after schema 2, and its labels say so, so that a run
    rewritten in schema 2's form maps back onto itself); else statement."""
    config = entry.get("config") or {}
    key, _ = EntryKey.of(str(entry.get("id") or "?"), entry.get("form") or "stated",
                         {k: v for k, v in config.items() if k not in ("part", "role")})
    part = str(config.get("part") or "")
    if key.constant is not None:
        part = _LEGACY_CONSTANT.sub("", part)
    if key.pool is not None:
        found = _LEGACY_POOL.search(part)
        if found and int(found.group(1)) == key.pool:
            part = part[: found.start()]
    if key.reading is None:
        named = _LEGACY_READING.search(part)
        if named:
            key = replace(key, reading=named.group(1))
    lowered = part.lower()
    step = (_LEGACY_STEP_ID in key.claim or lowered.startswith(_LEGACY_STEP_PARTS) or "proof step" in lowered
            or (key.form == "stated" and lowered.startswith("derived")))
    role = "proof step" if step else "sensitivity" if lowered.startswith("sensitivity") else "statement"
    return replace(key, part=part, role=role)


__all__ = ["EntryKey", "FORMS", "ROLES", "legacy_key"]
