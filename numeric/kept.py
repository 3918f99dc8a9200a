"""What a simulation keeps of its chunks: only the records its claims read.

A run of Algorithm 1 holds five (R, T) records (tasks, routed experts, E_t, F_t, G_t) and a few per-replicate
ones.  At the full budget Theorem 1's and 2's settings run 40,000 replicates of 200 rounds, 28 times; kept
whole, their records took 11.6 GB.  The claims read far less: the routed experts and tasks of every round
(the right-hand sides of eq. (19)-(22) and the conditional oracle need them), but F_t and G_t only at a few
rounds.  A :class:`Keep` names what is read; :func:`reduce_arrays` applies it to each chunk as it arrives, so
neither the whole run nor the list of its chunks is ever in memory.

Reducing selects values; it computes nothing, so every number a claim derives from a kept record is the one
it derived from the whole record.  The cache stores whole chunks, so a claim that reads more later reuses
them.  A read outside what was kept fails loudly (:class:`RoundColumns`), never with a silently wrong column.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np


@dataclass(frozen=True)
class Keep:
    """Records kept whole (``whole``: names of a run's fields) and records kept at some rounds only
    (``rounds``: field name -> 1-based rounds t, e.g. ``{"forgetting": (2, 5, 200)}``)."""

    whole: tuple[str, ...] = ()
    rounds: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    def __post_init__(self):
        both = set(self.whole) & set(self.rounds)
        if both:
            raise ValueError(f"a record is kept either whole or at some rounds, not both: {sorted(both)}")
        for name, ts in self.rounds.items():
            if not ts or any(int(t) < 1 for t in ts):
                raise ValueError(f"rounds kept of {name!r} must be non-empty and >= 1, got {ts!r}")

    def columns(self, name: str, T: int) -> tuple[int, ...]:
        """The 0-based columns of record ``name`` kept at horizon ``T`` (rounds beyond T left out)."""
        return tuple(sorted({int(t) - 1 for t in self.rounds[name] if int(t) <= T}))


def reduce_arrays(arrays: Mapping[str, np.ndarray], keep: Keep, T: int) -> dict[str, np.ndarray]:
    """One chunk's flat arrays (a run's ``to_arrays``) cut to what ``keep`` names; ``KeyError`` naming a field
    the chunk does not have."""
    out = {}
    for name in keep.whole:
        out[name] = np.ascontiguousarray(arrays[name])
    for name in keep.rounds:
        out[name] = np.ascontiguousarray(arrays[name][:, list(keep.columns(name, T))])
    return out


class RoundColumns:
    """A per-round record (R, T) of which only some columns were kept.

    Reads as the whole record does for the kept rounds, ``x[:, t - 1]`` (or ``x[:, -1]`` for round T, or
    ``x[:, ts - 1]`` for an integer array ``ts`` of kept rounds), and raises ``IndexError`` naming the rounds kept
    for any other read.
    """

    def __init__(self, values: np.ndarray, columns: Sequence[int], T: int, name: str):
        self._values, self._columns, self._T, self._name = values, tuple(columns), T, name
        self._position = {c: i for i, c in enumerate(self._columns)}

    @property
    def shape(self) -> tuple[int, int]:
        """The whole record's shape (R, T)."""
        return (self._values.shape[0], self._T)

    def __getitem__(self, key):
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], slice) and key[0] == slice(None):
            wanted = key[1]
            if isinstance(wanted, (int, np.integer)):
                column = self._column(wanted)
                if column in self._position:
                    return self._values[:, self._position[column]]
            elif isinstance(wanted, np.ndarray) and wanted.ndim == 1 and wanted.dtype.kind in "iu":
                columns = [self._column(c) for c in wanted]
                if all(c in self._position for c in columns):
                    return self._values[:, [self._position[c] for c in columns]]
        kept = ", ".join(str(c + 1) for c in self._columns)
        raise IndexError(f"{self._name}: only rounds t in {{{kept}}} were kept (read as [:, t - 1]); got {key!r}")

    def _column(self, index) -> int:
        return int(index) + (self._T if int(index) < 0 else 0)


@dataclass(frozen=True)
class KeptRun:
    """A run's records as :class:`Keep` left them: whole records as arrays (integer records restored to int64),
    per-round records kept at some rounds as :class:`RoundColumns`.  Attributes as a whole run's."""

    arrays: Mapping[str, np.ndarray]
    keep: Keep
    T: int

    @staticmethod
    def concatenate(chunks: Sequence[Mapping[str, np.ndarray]], keep: Keep, T: int) -> "KeptRun":
        if not chunks:
            raise ValueError("chunks must be non-empty")
        return KeptRun({name: np.concatenate([c[name] for c in chunks]) for name in chunks[0]}, keep, T)

    def __getattr__(self, name: str):
        arrays = object.__getattribute__(self, "arrays")
        if name not in arrays:
            keep = object.__getattribute__(self, "keep")
            kept = ", ".join(sorted([*keep.whole, *keep.rounds]))
            raise AttributeError(f"{name!r} was not kept by this run (kept: {kept})")
        values = arrays[name]
        if name in self.keep.rounds:
            return RoundColumns(values, self.keep.columns(name, self.T), self.T, name)
        # Integer records are stored as int16 where they fit (the cache's layout); callers get int64, as from a
        # whole run, one record at a time.
        return values.astype(np.int64) if values.dtype == np.int16 else values

    @property
    def R(self) -> int:
        """Replicates."""
        return next(iter(self.arrays.values())).shape[0]

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays.values())
