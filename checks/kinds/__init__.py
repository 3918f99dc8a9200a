"""The kinds of evidence, registered in one place.

One module per kind (:mod:`.mean` for means and criteria, :mod:`.proportion`, :mod:`.scaling`), each
behind the protocol of :mod:`.base`: its p-value, its decision at the threshold Holm gives it, its
resolution, its evidence sentence, the records the results cache stores (``RECORDS``) and the report's
table of its entries (``TABLES``). Exact entries (sympy, rational arithmetic, a stated reason) are not
evidence: claims return them decided (:func:`moecl_verify.checks.model.exact_result`).

Adding a kind is one module with those names, listed in ``MODULES`` below, plus its tests.
"""

from __future__ import annotations

from moecl_verify.checks.kinds import mean, proportion, scaling
from moecl_verify.checks.kinds.base import Evidence, Table

MODULES = (mean, proportion, scaling)

# Evidence type tag -> how the report tables its entries, in the order the report shows the tables.
TABLES: dict[str, Table] = {tag: table for module in MODULES for tag, table in module.TABLES.items()}
# Record tag -> dataclass, for the results cache's faithful codec (checks/claim_store.py).
RECORDS: dict[str, type] = {tag: cls for module in MODULES for tag, cls in module.RECORDS.items()}


def is_evidence(item) -> bool:
    """Whether ``item`` is undecided evidence of a registered kind (else it must be a decided exact entry)."""
    return isinstance(item, Evidence)


__all__ = ["Evidence", "MODULES", "RECORDS", "TABLES", "Table", "is_evidence"]
