"""What each budget buys the chapter's claims (read as ``ctx.sizes``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Sizes:
    """``cases``: random instances per finite-difference or identity check; ``draws``: samples per Monte Carlo
    entry; ``search_evaluations``: evaluations of a worst-case search."""

    cases: int
    draws: int
    search_evaluations: int


BUDGETS = {
    "smoke": Sizes(cases=20, draws=2_000, search_evaluations=300),
    "standard": Sizes(cases=200, draws=20_000, search_evaluations=3_000),
    "full": Sizes(cases=2_000, draws=200_000, search_evaluations=10_000),
}
