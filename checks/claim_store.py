"""Finished claims, kept in the results cache so that an identical rerun reuses them.

The chunk cache (:mod:`numeric.chunks`) spares a rerun the simulations; what a
claim then does with them — exact rational audits, sympy derivations,
bootstrap fits, per-replicate oracles — is analysis that can take longer
than the simulation at small budgets.  A claim's *record* is what its
``measure`` returned (measurements, before the run-wide Holm correction) and
its figure artifacts, stored under a key of

* the claim id, the budget (name and replicates) and the seed;
* the pack's name and the SHA-256 of the source its claims can compute with:
  every module of the pack and of the ``checks`` layer and every first-party
  module they import, read from their import statements
  (:func:`pack_source_version`), so an edit to that code recomputes the pack's
  claims, while an edit to another document's model (a module this pack never
  imports) leaves them (the simulation chunks, keyed by the code their own
  module imports, are reused when their code did not change);
* the versions of Python, numpy, sympy and mpmath.

Verdicts are never stored: the Holm correction and the verdicts are
recomputed from the records on every run (they depend on which other claims
share the run's Holm family), so a rerun's results.json is byte-identical to
the first run's.  A claim's slips are a function of its decided results (and
of the code), so they are kept under a key of those results: they are rebuilt
whenever a verdict or a number of the claim changes.

The record codec is faithful rather than convenient: dicts keep their
insertion order (results.json shows config keys in that order), tuples stay
tuples, and any value of a type it does not know makes the claim
uncacheable (it is then simply computed every time), never silently altered.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from moecl_verify.checks import pack as packs
from moecl_verify.checks import kinds
from moecl_verify.checks.entry_key import EntryKey
from moecl_verify.checks.model import ClaimResult, Slip
from moecl_verify.numeric.cache import ResultCache

FORMAT = 1
# The layers of moecl_verify whose code a claim's measurements can depend on.
LAYERS = ("theory", "numeric", "checks")
# Decided entries and slips, and every record a kind of evidence declares (checks/kinds, a pack's kinds
# included): a new kind's records are stored without an edit here.
_OWN_RECORDS = {"result": ClaimResult, "slip": Slip, "key": EntryKey}


_KNOWN: dict = {}


def _records() -> dict[str, type]:
    """Record tag -> dataclass: the machinery's and every registered kind's, read when used, so that a kind a
    pack registers (or registers anew) after this module was imported is stored too."""
    if _KNOWN.get("version") != kinds.VERSION[0]:
        records = {**_OWN_RECORDS, **kinds.RECORDS}
        _KNOWN.update(version=kinds.VERSION[0], records=records, tags={cls: tag for tag, cls in records.items()})
    return _KNOWN["records"]


def _tag_of(cls: type) -> str | None:
    _records()
    return _KNOWN["tags"].get(cls)


# numpy scalar kinds and how their Python value's repr is read back (no eval).
_LITERALS = {"f": float, "i": int, "u": int, "b": lambda text: text == "True"}


class Uncacheable(TypeError):
    """A measure output holds a value the record codec cannot store faithfully."""


def layer_roots(pack: "packs.Pack | None" = None) -> tuple[tuple[str, Path], ...]:
    """Where the installed ``moecl_verify`` keeps each layer a claim's result can depend on, and where the
    pack keeps its own modules (it may come from another distribution).

    Taken from the imported packages (an editable install maps each layer onto its folder of the checkout),
    so other files never enter the hash, whatever their names.
    """
    roots = tuple((f"moecl_verify.{layer}", Path(importlib.import_module(f"moecl_verify.{layer}").__file__).parent)
                  for layer in LAYERS)
    return roots if pack is None else roots + ((pack.modules[0], pack.root()),)


@functools.lru_cache(maxsize=None)
def source_version(roots: tuple[tuple[str, Path], ...] | None = None) -> str:
    """SHA-256 over the source files of the layers a claim's result can depend on (theory, numeric, checks;
    not the renderers or the command line), keyed by module path so that the hash does not depend on where
    the package is installed."""
    digest = hashlib.sha256()
    for package, root in roots or layer_roots():
        for path in sorted(root.rglob("*.py")):
            digest.update(f"{package}/{path.relative_to(root).as_posix()}".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def encode(value: Any) -> Any:
    """``value`` as JSON types, tagged so that :func:`decode` rebuilds it exactly."""
    tag = _tag_of(type(value))
    if tag is not None:
        # dataclasses.fields, not __dataclass_fields__: a kind's TAG is a ClassVar, not a field.
        return {"t": tag, "v": [[f.name, encode(getattr(value, f.name))] for f in dataclasses.fields(value)]}
    if isinstance(value, dict):
        return {"t": "dict", "v": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"t": "tuple", "v": [encode(v) for v in value]}
    if isinstance(value, list):
        return {"t": "list", "v": [encode(v) for v in value]}
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) is int:
        return value
    if type(value) is float:
        # JSON has no NaN or infinities; repr round-trips every finite float exactly.
        return value if math.isfinite(value) else {"t": "float", "v": repr(value)}
    if isinstance(value, (np.floating, np.integer, np.bool_)) and value.dtype.str[1] in _LITERALS:
        # numpy scalars stay numpy scalars of their dtype (their repr and arithmetic differ from Python's).
        return {"t": "numpy", "v": [value.dtype.str, repr(value.item())]}
    raise Uncacheable(f"cannot store a {type(value).__name__} in a claim record")


def decode(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    tag, body = value["t"], value["v"]
    records = _records()
    if tag in records:
        return records[tag](**{name: decode(v) for name, v in body})
    if tag == "dict":
        return {decode(k): decode(v) for k, v in body}
    if tag == "tuple":
        return tuple(decode(v) for v in body)
    if tag == "list":
        return [decode(v) for v in body]
    if tag == "float":
        return float(body)
    if tag == "numpy":
        dtype, text = body
        return np.dtype(dtype).type(_LITERALS[dtype[1]](text))
    raise ValueError(f"unknown record tag {tag!r}")


def _modules_under(package: str, root: Path) -> tuple[str, ...]:
    """The module names of the source files under ``root``, the folder of package ``package``."""
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join((package, *parts)))
    return tuple(names)


@functools.lru_cache(maxsize=None)
def pack_source_version(package: str, root: Path) -> str:
    """SHA-256 over the source the claims of the pack in ``package`` (folder ``root``) can compute with: every
    module of the pack and of the ``checks`` layer, and every first-party module they import, transitively
    (:func:`numeric.sources.import_closure`, read from the import statements).  A document's model that another
    pack never imports (the paper's ``theory/`` and deep-network engines, for the chapter) is not in it."""
    from moecl_verify.numeric import sources
    from moecl_verify.numeric.chunks import FIRST_PARTY

    checks_root = Path(importlib.import_module("moecl_verify.checks").__file__).parent
    start = _modules_under(package, root) + _modules_under("moecl_verify.checks", checks_root)
    prefixes = tuple(dict.fromkeys((*FIRST_PARTY, package)))
    return sources.digest(sources.import_closure(start, prefixes))


def claim_key(claim_id: str, budget: str, replicates: int, seed: int, versions: dict,
              pack: "packs.Pack | None" = None) -> tuple[str, dict]:
    """The record key of a claim: its id, budget, seed and library versions, and the source it can compute with
    (with a pack, :func:`pack_source_version`: only the code that pack imports; without one, every layer)."""
    code = source_version(layer_roots()) if pack is None else pack_source_version(pack.modules[0], pack.root())
    description = {"format": FORMAT, "claim": claim_id, "budget": budget, "replicates": replicates, "seed": seed,
                   "source_version": code, "versions": versions}
    if pack is not None:
        description["pack"] = pack.name
    text = json.dumps(description, sort_keys=True, separators=(",", ":"))
    return "claim-" + hashlib.sha256(text.encode()).hexdigest(), description


class ClaimStore:
    """Reads and writes finished-claim records in a :class:`ResultCache`."""

    def __init__(self, cache: ResultCache, budget: str, replicates: int, seed: int, versions: dict,
                 pack: "packs.Pack | None" = None):
        self.cache = cache
        self._key_parts = (budget, replicates, seed, versions, pack)
        self.reused: list[str] = []
        self.computed: list[str] = []
        self.uncacheable: list[str] = []

    def get(self, claim_id: str) -> tuple[list, dict] | None:
        key, _ = claim_key(claim_id, *self._key_parts)
        record = self.cache.get_record(key)
        if record is None:
            return None
        try:
            measured, artifacts = decode(record["measured"]), decode(record["artifacts"])
        except (KeyError, TypeError, ValueError) as exc:
            self.cache.discard_record(key, f"undecodable record: {exc}")
            return None
        self.reused.append(claim_id)
        return measured, artifacts

    def put(self, claim_id: str, measured: list, artifacts: dict) -> None:
        self.computed.append(claim_id)
        try:
            record = {"measured": encode(list(measured)), "artifacts": encode(dict(artifacts))}
        except Uncacheable:
            self.uncacheable.append(claim_id)
            return
        key, description = claim_key(claim_id, *self._key_parts)
        self.cache.put_record(key, record, description)

    def slips(self, claim_id: str, results: list, build) -> list:
        """``build(results)`` (the claim's slip builder), reused when the claim's decided results are unchanged."""
        try:
            encoded = encode(list(results))
        except Uncacheable:
            return build(results)
        key, description = claim_key(claim_id, *self._key_parts)
        description = {**description, "slips_of": hashlib.sha256(
            json.dumps(encoded, sort_keys=True).encode()).hexdigest()}
        key = "claim-slips-" + hashlib.sha256(json.dumps(description, sort_keys=True).encode()).hexdigest()
        record = self.cache.get_record(key)
        if record is not None:
            try:
                return decode(record["slips"])
            except (KeyError, TypeError, ValueError) as exc:
                self.cache.discard_record(key, f"undecodable record: {exc}")
        slips = build(results)
        try:
            self.cache.put_record(key, {"slips": encode(list(slips))}, description)
        except Uncacheable:
            pass
        return slips

    def summary(self) -> dict:
        return {"enabled": True, "reused": len(self.reused), "computed": len(self.computed),
                "uncacheable": list(self.uncacheable)}
