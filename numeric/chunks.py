"""Monte Carlo chunks: what one unit of simulation work is, its cache key, and how a run executes them.

A :class:`Chunk` is a module-level engine function and its keyword arguments
(all picklable: arrays, frozen dataclasses, numbers, strings), so it can run in
this process, in a worker process or on a Dask worker.  Its result is a flat
``dict[str, ndarray]`` — exactly what the cache stores as npz.

The cache key is the SHA-256 of a canonical JSON of the engine's name, the
engine-code version (a hash of the source of every first-party module the chunk
function's module imports, transitively, read from its import statements:
:func:`chunk_engine_version`, so editing the simulator invalidates its entries
and editing another document's model does not), a hash of the sources of the
module that defines the chunk function and of every first-party module it
holds at top level (:func:`module_closure`), and every argument; arrays enter
by dtype, shape and a hash of their bytes.  The seed, the claim's key and the
chunk index are arguments, so they are part of the key.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import json
import math
import numbers
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from moecl_verify.numeric.cache import ResultCache
from moecl_verify.numeric.chunk import Chunk, compute  # noqa: F401  (callers import them from here)
from moecl_verify.numeric.executors import InProcess

def _canonical(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return {"ndarray": str(value.dtype), "shape": list(value.shape),
                "sha256": hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"dataclass": type(value).__name__,
                "fields": {f.name: _canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else repr(value)
    raise TypeError(f"cannot key a chunk argument of type {type(value).__name__}")


# The packages whose code a chunk computes with: this distribution's, and those of packs installed from other
# distributions (added by the claim registry as it loads a pack, :func:`count_as_first_party`).
FIRST_PARTY = ["moecl_verify"]
# Where and whether a chunk runs, never what it computes: left out of the code a chunk depends on.
INFRASTRUCTURE = frozenset({"moecl_verify.numeric.cache", "moecl_verify.numeric.chunk", "moecl_verify.numeric.chunks",
                            "moecl_verify.numeric.executors"})


def count_as_first_party(package: str) -> None:
    """Let ``package``'s modules enter the code version of the chunks that reach them (a pack's own
    experiments and claims, or the verification layer)."""
    if not any(package == p or package.startswith(p + ".") for p in FIRST_PARTY):
        FIRST_PARTY.append(package)
        module_closure.cache_clear()
        _module_version.cache_clear()
        chunk_engine_version.cache_clear()


def _first_party_module(value: Any) -> str | None:
    name = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", None)
    if isinstance(name, str) and any(name == p or name.startswith(p + ".") for p in FIRST_PARTY) \
            and name not in INFRASTRUCTURE:
        return name
    return None


@functools.lru_cache(maxsize=None)
def module_closure(module_name: str) -> tuple[str, ...]:
    """The first-party modules a chunk function's module can reach: itself, then every module, function or
    class it holds at top level that comes from ``moecl_verify`` or a package added by
    :func:`count_as_first_party`, transitively (the renderers and the command line are never reached: the
    layers only import downwards).

    Over-inclusive on purpose (a helper module that a chunk never calls still counts), so that an edit to
    anything a chunk computes with, e.g. theory/routing.py under Lemma 2's exact grid audit, changes its key.
    Assumes chunk code imports at module level: a module imported only inside a function is not seen.
    """
    seen, todo = set(), [module_name]
    while todo:
        name = todo.pop()
        if name in seen or name not in sys.modules:
            continue
        seen.add(name)
        for value in list(vars(sys.modules[name]).values()):
            found = _first_party_module(value)
            if found is not None and found not in seen:
                todo.append(found)
    return tuple(sorted(seen))


@functools.lru_cache(maxsize=None)
def _module_version(module_name: str) -> str:
    """SHA-256 of the source files of a chunk function's module and of every first-party module it reaches."""
    digest = hashlib.sha256()
    for name in module_closure(module_name):
        source = inspect.getsourcefile(sys.modules[name])
        if source is None:
            continue
        digest.update(name.encode())
        digest.update(Path(source).read_bytes())
    return digest.hexdigest()


@functools.lru_cache(maxsize=None)
def chunk_engine_version(module_name: str) -> str:
    """SHA-256 of the source a chunk function's module imports, transitively, read from its import statements
    (:func:`numeric.sources.import_closure`: functions' own imports included, nothing run), less the
    plumbing that only moves and stores results.  Editing one document's model changes only the keys of the
    chunks whose code imports it."""
    from moecl_verify.numeric import sources

    return sources.digest(sources.import_closure((module_name,), tuple(FIRST_PARTY), INFRASTRUCTURE))


def description(chunk: Chunk) -> dict:
    return {"engine": chunk.engine, "engine_version": chunk_engine_version(chunk.fn.__module__),
            "code_version": _module_version(chunk.fn.__module__), "kwargs": _canonical(chunk.kwargs)}


def cache_key(chunk: Chunk) -> str:
    text = json.dumps(description(chunk), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class ChunkRunner:
    """Runs chunks on an executor, reusing and filling a cache.

    Chunks finished by an interrupted run are in the cache, so the same
    command resumes where it stopped; results are placed by position, so they
    are identical whatever the executor or finishing order.
    """

    executor: Any = field(default_factory=InProcess)
    cache: ResultCache | None = None

    def run(self, chunks: Sequence[Chunk], progress: Callable[[int, int], object] | None = None,
            reduce: Callable[[dict], Any] | None = None) -> list:
        """Each chunk's arrays, in the chunks' order; with ``reduce``, ``reduce(arrays)`` of each instead, applied
        as the chunk arrives (the cache stores the whole arrays), so only the reduced results are held."""
        keep = reduce or (lambda arrays: arrays)
        total = sum(c.size for c in chunks)
        results: list[dict | None] = [None] * len(chunks)
        keys = [cache_key(c) for c in chunks] if self.cache is not None else [None] * len(chunks)
        done = 0
        pending = []
        for i, chunk in enumerate(chunks):
            hit = self.cache.get(keys[i]) if self.cache is not None else None
            if hit is None:
                pending.append(i)
            else:
                results[i] = keep(hit)
                done += chunk.size
        if done and progress is not None:
            progress(done, total)
        for position, arrays in self.executor.map_unordered([chunks[i] for i in pending]):
            i = pending[position]
            if self.cache is not None:
                self.cache.put(keys[i], arrays, description(chunks[i]))
            results[i] = keep(arrays)
            done += chunks[i].size
            if progress is not None:
                progress(done, total)
        return results  # type: ignore[return-value]


def chunk_sizes(R: int, chunk_size: int) -> list[int]:
    """Replicates per chunk: R split into consecutive chunks of ``chunk_size`` (the last one shorter)."""
    if isinstance(R, bool) or not isinstance(R, numbers.Integral) or R < 1:
        raise ValueError(f"R must be an integer >= 1, got {R!r}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, numbers.Integral) or chunk_size < 1:
        raise ValueError(f"chunk_size must be an integer >= 1, got {chunk_size!r}")
    return [min(int(chunk_size), int(R) - start) for start in range(0, int(R), int(chunk_size))]


CHUNK_FEATURE_BYTES = 256 * 2**20


def bounded_chunk_size(T: int, d: int, s: int, cap: int, budget: int = CHUNK_FEATURE_BYTES) -> int:
    """Replicates per chunk such that one chunk's features (R x T x d x s float64, twice while
    Definition 1 draws them) stay within ``budget`` bytes; at most ``cap``, at least 1.  A
    deterministic function of its arguments, so results stay reproducible."""
    per_replicate = 2 * 8 * T * d * s
    return int(max(1, min(cap, budget // per_replicate)))


def default_runner() -> ChunkRunner:
    return ChunkRunner()
