"""One unit of Monte Carlo work: a module-level engine function and its keyword arguments.

Kept apart from :mod:`moecl_verify.numeric.chunks` (keys, caching, the runner) so that the executors,
which only compute chunks, need not import the module that drives them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True, eq=False)
class Chunk:
    """``fn(**kwargs)`` for ``size`` replicates; everything picklable, so it runs in any worker."""

    fn: Callable[..., dict]
    kwargs: dict
    size: int  # replicates in this chunk, for progress

    @property
    def engine(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}"


def compute(chunk: Chunk) -> dict[str, np.ndarray]:
    return chunk.fn(**chunk.kwargs)
