"""The kinds of evidence: the machinery's own, and those a pack adds.

One module per kind (:mod:`.mean` for means and criteria, :mod:`.proportion`, :mod:`.scaling`), each
behind the protocol of :mod:`.base`: its p-value, its decision at the threshold Holm gives it, its
resolution, its evidence sentence, the records the results cache stores (``RECORDS``) and the report's
table of its entries (``TABLES``).  Exact entries (sympy, rational arithmetic, a stated reason) are not
evidence: claims return them decided (:func:`moecl_verify.checks.model.exact_result`).

Adding a kind is one module with those names.  The machinery's are listed in ``BUILT_IN``; a pack adds its
own by calling :func:`register_kind` with its module (from the pack's package, so that every process that
loads the pack, a claim lane included, has it), and the module is checked there: a missing or mistyped name,
a tag that another kind already uses, or an evidence class that does not meet the :class:`Evidence`
protocol fails at once, in one line.  The results file's schema lists the registered tags
(:func:`tags`), and the results cache stores every registered record.
"""

from __future__ import annotations

import dataclasses
from types import ModuleType

from moecl_verify.checks.kinds import mean, proportion, scaling
from moecl_verify.checks.kinds.base import Evidence, Table

BUILT_IN = (mean, proportion, scaling)
# The tag of entries decided without evidence (checks/model.py::exact_result).
EXACT = "exact"

_MODULES: list[ModuleType] = []
# Bumped by every registration and removal, so that what is built from the registry (the results cache's codec)
# knows when to rebuild, whatever the number of kinds.
VERSION = [0]
# Tags the results cache's codec uses for its own records and containers (checks/claim_store.py): never a kind's.
RESERVED_RECORD_TAGS = frozenset({"result", "slip", "key", "dict", "tuple", "list", "float", "numpy"})
# Evidence type tag -> how the report tables its entries, in the order the report shows the tables.
TABLES: dict[str, Table] = {}
# Record tag -> dataclass, for the results cache's faithful codec (checks/claim_store.py).
RECORDS: dict[str, type] = {}


class KindError(ValueError):
    """A kind module that does not declare what the machinery needs of it."""


def _check(module: ModuleType, replacing: tuple[ModuleType, ...] = ()) -> None:
    name = getattr(module, "__name__", repr(module))
    tables, records = getattr(module, "TABLES", None), getattr(module, "RECORDS", None)
    if not isinstance(tables, dict) or not tables:
        raise KindError(f"evidence kind {name}: TABLES must map each evidence tag to a kinds.base.Table")
    if not isinstance(records, dict) or not records:
        raise KindError(f"evidence kind {name}: RECORDS must map each record tag to its frozen dataclass")
    for tag, table in tables.items():
        if not isinstance(tag, str) or not tag or not isinstance(table, Table):
            raise KindError(f"evidence kind {name}: TABLES[{tag!r}] must be a kinds.base.Table under a non-empty tag")
        if tag == EXACT or (tag in TABLES and not any(tag in m.TABLES for m in replacing)):
            raise KindError(f"evidence kind {name}: the evidence tag {tag!r} is already taken")
    evidence_tags = set()
    for tag, cls in records.items():
        if not isinstance(tag, str) or not tag or not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
            raise KindError(f"evidence kind {name}: RECORDS[{tag!r}] must be a dataclass under a non-empty tag")
        if tag in RESERVED_RECORD_TAGS or (tag in RECORDS and not any(tag in m.RECORDS for m in replacing)):
            raise KindError(f"evidence kind {name}: the record tag {tag!r} is already taken")
        if not cls.__dataclass_params__.frozen:
            raise KindError(f"evidence kind {name}: {cls.__name__} must be a frozen dataclass (results are values)")
        kind_tag = getattr(cls, "TAG", None)
        if kind_tag is not None:
            missing = [m for m in ("p_value", "detectable", "decide") if not callable(getattr(cls, m, None))
                       and not isinstance(getattr(cls, m, None), property)]
            if "claim_id" not in {f.name for f in dataclasses.fields(cls)}:
                missing.append("claim_id")
            if missing:
                raise KindError(f"evidence kind {name}: {cls.__name__} (TAG {kind_tag!r}) lacks {', '.join(missing)} "
                                "of the Evidence protocol (kinds/base.py)")
            if isinstance(kind_tag, str):  # a TAG that is a property (means and criteria) names its tag per entry
                evidence_tags.add(kind_tag)
    if not any(hasattr(cls, "TAG") for cls in records.values()):
        raise KindError(f"evidence kind {name}: no class in RECORDS declares TAG, the evidence type its entries carry "
                        "(the Evidence protocol, kinds/base.py)")
    unlisted = evidence_tags - set(tables)
    if unlisted:
        raise KindError(f"evidence kind {name}: evidence tag(s) {', '.join(sorted(unlisted))} have no table in TABLES")


def _forget(module: ModuleType) -> None:
    _MODULES.remove(module)
    for tag in module.TABLES:
        TABLES.pop(tag, None)
    for tag in module.RECORDS:
        RECORDS.pop(tag, None)
    VERSION[0] += 1


def register_kind(module: ModuleType) -> ModuleType:
    """Add the evidence kind ``module`` (checked first, :class:`KindError` naming what is wrong); registering the
    same module again does nothing, and a module of the same name imported anew (a reload) takes its place."""
    if module in _MODULES:
        return module
    older = tuple(m for m in _MODULES if m.__name__ == module.__name__)
    _check(module, replacing=older)  # before anything is forgotten: a failing reload leaves the old kind in place
    for old in older:
        _forget(old)
    _MODULES.append(module)
    TABLES.update(module.TABLES)
    RECORDS.update(module.RECORDS)
    VERSION[0] += 1
    return module


def unregister_kind(module: ModuleType) -> None:
    """Take a kind module's tags out of the registry (a pack unloaded, as tests of another distribution's pack
    do); the machinery's own kinds stay."""
    if module in _MODULES and module not in BUILT_IN:
        _forget(module)


def modules() -> tuple[ModuleType, ...]:
    """Every registered kind module, the machinery's first."""
    return tuple(_MODULES)


def tags() -> tuple[str, ...]:
    """Every evidence type an entry may carry: each registered kind's tags, then ``exact``."""
    return (*TABLES, EXACT)


def figure_of(entry) -> str:
    """The family of figures an entry's kind is drawn in (its Table's ``figure``; "" for exact entries and for
    a kind this installation does not have)."""
    table = TABLES.get(getattr(entry, "evidence_type", "") or "")
    return table.figure if table is not None else ""


def is_evidence(item) -> bool:
    """Whether ``item`` is undecided evidence of a registered kind (else it must be a decided exact entry)."""
    return isinstance(item, Evidence)


for _module in BUILT_IN:
    register_kind(_module)

__all__ = ["BUILT_IN", "EXACT", "Evidence", "KindError", "RECORDS", "TABLES", "Table", "figure_of", "is_evidence",
           "modules",
           "register_kind", "tags", "unregister_kind"]
