"""Reproducible, process-independent random streams.

Every random draw in ``numeric`` comes from an explicit
:class:`numpy.random.Generator` built here, so that a result is a pure
function of ``(seed, key)``.  Keys are turned into a ``SeedSequence`` spawn
key with a *stable* hash (CRC-32 of the UTF-8 bytes) rather than Python's
``hash()``, which is salted per process (PYTHONHASHSEED) and would make runs
irreproducible across processes.
"""

from __future__ import annotations

import numbers
import zlib

import numpy as np

__all__ = ["spawn_key_for", "generator_for"]


def _key_word(part: object) -> int:
    # bool is an int subclass; accepting it would silently alias True with 1.
    if isinstance(part, bool):
        raise TypeError(f"key parts must be str or non-negative int, got bool {part!r}")
    if isinstance(part, str):
        return zlib.crc32(part.encode("utf-8"))
    if isinstance(part, numbers.Integral):
        value = int(part)
        if value < 0:
            raise ValueError(f"integer key parts must be >= 0, got {value}")
        return value
    raise TypeError(f"key parts must be str or non-negative int, got {type(part).__name__}")


def spawn_key_for(*key: object) -> tuple[int, ...]:
    """Map a key of strings and non-negative ints to a SeedSequence spawn key.

    Strings become ``zlib.crc32(s.encode("utf-8"))``; ints are used as is.
    """
    return tuple(_key_word(part) for part in key)


def generator_for(seed: int, *key: object) -> np.random.Generator:
    """Return a Generator whose stream depends only on ``(seed, key)``.

    Parameters
    ----------
    seed:
        Non-negative integer entropy for ``numpy.random.SeedSequence``.
    *key:
        Strings and non-negative ints naming the stream, e.g.
        ``generator_for(0, "single_expert", "chunk", 3)``.
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or int(seed) < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    sequence = np.random.SeedSequence(int(seed), spawn_key=spawn_key_for(*key))
    return np.random.Generator(np.random.PCG64(sequence))
