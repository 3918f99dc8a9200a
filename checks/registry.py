"""The claim registry: every checkable statement of a pack's document, by id.

A ``Claim`` names where the document states it, what kind of statement it is, its
statement in LaTeX, its preconditions, and two functions: ``measure`` runs the
experiment and returns measurements; ``slips`` (optional) turns final verdicts
into slip-audit entries.  Claim modules register themselves on import;
:func:`all_claims` finds and imports every module of a pack's claims package
(:mod:`moecl_verify.checks.pack`), so a claim is added by adding its module.
"""

from __future__ import annotations

import difflib
import fnmatch
import importlib
import pkgutil
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from moecl_verify.checks import pack as packs
from moecl_verify.numeric.chunks import count_as_first_party

if TYPE_CHECKING:  # pragma: no cover
    from moecl_verify.checks.context import Context
    from moecl_verify.checks.model import ClaimResult, Interpretation, Slip
    from moecl_verify.checks.kinds.mean import Measurement

KINDS = (
    "symbolic identity",
    "expected-value identity",
    "bound",
    "scaling",
    "probability",
    "qualitative",
    "precondition audit",
    # not a statement of the paper: a question it leaves open, answered by a stated hypothesis and a test
    "experiment",
)


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    kind: str
    statement: str
    preconditions: tuple[str, ...]
    measure: Callable[["Context"], list["Measurement"]]
    slips: Callable[[list["ClaimResult"]], list["Slip"]] | None = None
    interpretations: tuple["Interpretation", ...] = field(default=())
    summary: str = ""
    # What a reader must know to judge the entries (assumptions, model choices).
    notes: str = ""
    # The closed forms behind the claim (stated, corrected, derived), for `show`.
    forms: Callable[[], list] | None = None
    # Data for figures, computed by checks and stored in results.json under
    # "artifacts" so that renderers never simulate: (name, fn(ctx) -> dict).
    artifacts: tuple = ()
    # Namespaces of the work this claim fetches through Context.shared (the key's first element); claims
    # that share a namespace are measured in one process when claims run in parallel
    # (:mod:`moecl_verify.checks.lanes`).  Checked on every fetch, so a missing name fails every run.
    shares: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.id}: unknown kind {self.kind!r}")


# Keyed by (the module that registered the claim, id): two packs may use the same id, and a claim whose
# measure is built elsewhere (a shared builder, functools.partial) still belongs to the module registering it.
_REGISTRY: dict[tuple[str, str], Claim] = {}
_ORIGINS: dict[tuple[str, str], object] = {}


def register(module: str, claim: Claim) -> Claim:
    """Register ``claim`` as declared by the module named ``module``: a claims module calls
    ``register(__name__, Claim(...))`` at top level, and the pack's claims are those its claims package's
    modules register (:func:`all_claims`).  The module is said, not inferred from the caller's frame, so a
    claim registered from a helper or a loop belongs where the call says."""
    if not isinstance(module, str) or not module:
        raise TypeError(f"register(module, claim): module must be the registering module's __name__, got {module!r}")
    if not isinstance(claim, Claim):
        raise TypeError(f"register(module, claim): claim must be a Claim, got {type(claim).__name__}")
    # The module object registering (the one being imported, so already in sys.modules): a name that is no loaded
    # module (a typo) would register a claim no pack ever finds.
    origin = sys.modules.get(module)
    if origin is None:
        raise TypeError(f"register(module, claim): no module named {module!r} is loaded; pass the registering "
                        "module's own __name__")
    # A module imported anew (its entry removed from sys.modules, as a test of a pack from another distribution
    # does) replaces all its claims, those it no longer registers included; one module registering an id twice
    # is an error.
    for stale in [k for k, o in _ORIGINS.items() if k[0] == module and o is not origin]:
        del _REGISTRY[stale], _ORIGINS[stale]
    key = (module, claim.id)
    if key in _REGISTRY and _REGISTRY[key] is not claim:
        raise ValueError(f"claim {claim.id!r} registered twice")
    _REGISTRY[key] = claim
    _ORIGINS[key] = origin
    return claim


def claim_modules(pack: "str | packs.Pack | None" = None) -> list[str]:
    """Every module of the pack's claims package, found on disk: a claim is added by adding its module,
    with no list to keep."""
    pack = packs.get(pack)
    package_name = pack.claims
    # A pack from another distribution: its code enters the simulation chunks' cache keys too.
    count_as_first_party(pack.modules[0])
    package = importlib.import_module(package_name)
    return sorted(info.name for info in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}.")
                  if not info.ispkg)


def all_claims(pack: "str | packs.Pack | None" = None) -> list[Claim]:
    """The pack's claims (default: the default pack), sorted by id."""
    modules = claim_modules(pack)
    for name in modules:
        importlib.import_module(name)
    inside = set(modules)
    found: dict[str, Claim] = {}
    for (module, claim_id), claim in _REGISTRY.items():
        if module in inside:
            if claim_id in found:
                raise ValueError(f"claim {claim_id!r} registered twice in {packs.get(pack).name}")
            found[claim_id] = claim
    return [found[k] for k in sorted(found)]


class UnknownClaimPattern(ValueError):
    """A claim id or id pattern that matches no registered claim; ``suggestions`` are the closest ids."""

    def __init__(self, pattern: str, known: list[str]):
        self.pattern = pattern
        # Only claim ids are offered, never the pattern just refused: a misspelt id finds the one meant, and a
        # pattern whose stem is an id (``name.*`` where only ``name`` exists) finds that id.
        stem = pattern.rstrip("*").rstrip(".")
        close = difflib.get_close_matches(stem, sorted(set(known)), n=3, cutoff=0.6)
        self.suggestions = [k for k in close if k != pattern]
        hint = f"; did you mean {', '.join(self.suggestions)}?" if self.suggestions else ""
        super().__init__(f"no claim matches {pattern!r}{hint} (all ids: moecl-verify list)")


def select(patterns: list[str] | None, pack: "str | packs.Pack | None" = None) -> list[Claim]:
    """The pack's claims whose id matches any shell-style pattern (all when None)."""
    claims = all_claims(pack)
    if not patterns:
        return claims
    chosen: list[Claim] = []
    for pattern in patterns:
        hits = [c for c in claims if fnmatch.fnmatchcase(c.id, pattern)]
        if not hits:
            raise UnknownClaimPattern(pattern, [c.id for c in claims])
        chosen.extend(c for c in hits if c not in chosen)
    return sorted(chosen, key=lambda c: c.id)


def get(claim_id: str, pack: "str | packs.Pack | None" = None) -> Claim:
    claims = {c.id: c for c in all_claims(pack)}
    if claim_id not in claims:
        raise UnknownClaimPattern(claim_id, list(claims))
    return claims[claim_id]
