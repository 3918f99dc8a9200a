"""What a claim's experiment gets: the budget, the seed, a shared cache, progress.

Claims that share an experiment (two statements read off the same
simulations) fetch it through :meth:`Context.shared`, keyed by a
stable description, so it runs once per run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

from moecl_verify.numeric.chunks import ChunkRunner


class UndeclaredShare(RuntimeError):
    """A claim fetched shared work under a namespace its registration does not declare."""


@dataclass(frozen=True)
class Budget:
    """How much Monte Carlo a run may spend.

    ``replicates`` is the number of independent replicates of each simulated
    configuration.  The smoke budget may end in ``inconclusive``, never in a
    wrong verdict: the verdict rule only confirms what the run could resolve.
    """

    name: str
    replicates: int


BUDGETS = {
    "smoke": Budget("smoke", replicates=2_000),
    "standard": Budget("standard", replicates=20_000),
    "full": Budget("full", replicates=200_000),
}


@dataclass
class Context:
    budget: Budget
    seed: int
    progress: Callable[[str, int, int], None] = lambda label, done, total: None
    # Where simulation chunks run and whether they are cached; results do not depend on it.
    runner: ChunkRunner = field(default_factory=ChunkRunner)
    # The values of the pack's run options (checks.pack.RunOption), by name; a missing name means not given.
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    # What the budget buys in the pack's own terms (replicates per experiment, pools, sweep depth, epochs):
    # the pack's entry for this budget (Pack.budgets), so that no claim reads the budget's name.
    sizes: Any = None
    # The claim being measured and the namespaces it declares (Claim.shares); None outside a claim.
    claim_id: str | None = None
    declared: tuple[str, ...] | None = None
    _shared: dict = field(default_factory=dict)

    def shared(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """``compute()``, once per run and key.  Claims measured in parallel share only what runs in one
        process, so a claim must declare the key's namespace (its first element) in ``Claim.shares``."""
        if self.declared is not None and key[0] not in self.declared:
            raise UndeclaredShare(f"claim {self.claim_id} fetches shared work {key[0]!r} without declaring it "
                                  f"in its Claim.shares {self.declared!r}")
        if key not in self._shared:
            self._shared[key] = compute()
        return self._shared[key]

    def release(self, namespaces) -> None:
        """Drop the shared work of ``namespaces`` (no claim still to be measured declares them) and give the
        freed memory back to the system; a later fetch would compute it again."""
        gone = set(namespaces)
        for key in [k for k in self._shared if k[0] in gone]:
            del self._shared[key]
        if gone:
            return_freed_memory()


def context_for(pack, budget: str, seed: int, options: Mapping[str, Any] | None = None,
                runner: ChunkRunner | None = None) -> Context:
    """The context a claim of ``pack`` is measured in at ``budget`` (its name), with the pack's sizes."""
    ctx = Context(budget=BUDGETS[budget], seed=seed, options=dict(options or {}),
                  sizes=pack.budgets.get(budget) if pack.budgets else None)
    if runner is not None:
        ctx.runner = runner
    return ctx


def measure_claim(claim, ctx: Context) -> list:
    """``claim.measure(ctx)``, with every fetch of shared work checked against the claim's declared
    namespaces (the one way a claim is measured: in a run, in a lane, through the API)."""
    ctx.claim_id, ctx.declared = claim.id, claim.shares
    try:
        return claim.measure(ctx)
    finally:
        ctx.claim_id = ctx.declared = None


def measure_with_artifacts(claim, ctx: Context) -> tuple[list, dict]:
    """The claim's measurements and its figure artifacts, under the same check."""
    ctx.claim_id, ctx.declared = claim.id, claim.shares
    try:
        return claim.measure(ctx), {name: fn(ctx) for name, fn in claim.artifacts}
    finally:
        ctx.claim_id = ctx.declared = None


def return_freed_memory() -> None:
    """Ask glibc's malloc to return freed heap to the system (``malloc_trim``); elsewhere nothing.

    Freed numpy buffers smaller than malloc's (adaptive) mmap threshold stay in the heap for reuse, so a
    process that once held a large simulation keeps its resident size: a lane held 2.1 GB it no longer used
    after its costliest group, and a one-lane run of the full budget grew to 3.7 GB."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim
        pass
