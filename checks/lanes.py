"""Claims measured in parallel worker processes ("lanes"), results identical to a sequential run.

A claim's measurements are a pure function of the budget, the seed and the claim (every random number
comes from a keyed stream, :mod:`numeric.seeding`), so claims can be measured in any order and in any
process.  What they share is work fetched through :meth:`checks.context.Context.shared` (one simulation
may serve several statements of a document).  Shared work lives in one
process's memory, so the claims that share a namespace (``Claim.shares``, checked on every fetch) form one
*group* and run in one process, in registry order; groups are handed to ``lanes`` worker processes, the
costliest first, each lane taking the next group as it frees up.

Nothing here changes a number: the parent collects each claim's measurements as it finishes, and the
runner orders them as the registry does before deciding verdicts.  Workers use the run's results cache
without taking its lock (the parent holds it for the run; entries are written atomically).
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import queue
import sys
import tempfile
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence

from moecl_verify.checks import pack as packs
from moecl_verify.checks.registry import Claim

# Progress from a worker is forwarded at most this often per label (the last step of each is always sent).
PROGRESS_INTERVAL = 0.25


def groups(claims: Sequence[Claim], cost_hints: Mapping[str, float] | None = None) -> list[list[Claim]]:
    """The claims joined wherever they declare a common namespace (transitively), each group in the order
    given, groups ordered by their summed cost hints (the pack's seconds per claim, measured once; a claim
    missing there counts 1 s), costliest first (ties: first claim's order)."""
    cost_hints = cost_hints or {}
    parent = list(range(len(claims)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, claim in enumerate(claims):
        for name in claim.shares:
            if name in owner:
                parent[find(i)] = find(owner[name])
            else:
                owner[name] = i
    joined: dict[int, list[int]] = {}
    for i in range(len(claims)):
        joined.setdefault(find(i), []).append(i)
    ordered = sorted(joined.values(), key=lambda idx: (-sum(cost_hints.get(claims[i].id, 1.0) for i in idx), idx[0]))
    return [[claims[i] for i in idx] for idx in ordered]


@dataclass(frozen=True)
class Finished:
    """One claim measured in a lane: what ``measure`` returned, its figure artifacts, its wall seconds."""

    claim_id: str
    measurements: list
    artifacts: dict
    seconds: float


class LaneError(RuntimeError):
    """A claim failed in a lane; the message carries its exception and the lane's traceback."""


_EVENTS = None  # a lane's queue to the parent, set by :func:`_lane_start`


def _lane_start(events) -> None:
    """A lane process's initializer: keep the event queue, and die with the parent (Linux), so that a run
    killed outright leaves no lane writing to its cache."""
    global _EVENTS
    import signal

    _EVENTS = events
    # Ctrl-C reaches the whole process group; the parent alone answers it (it stops the lanes), so a lane
    # prints no traceback of its own ("Process SpawnProcess-2: ...").
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - without prctl the lane simply outlives a kill
            pass


def _reset_peak_memory() -> None:
    """Give the memory the previous group freed back to the system, then start this process's peak resident
    memory afresh (Linux: VmHWM), so that a group's peak is its own and not the largest of the groups this
    lane ran before; elsewhere the peak stays the process's.

    (See :func:`checks.context.return_freed_memory` for why the heap needs giving back.)"""
    from moecl_verify.checks.context import return_freed_memory

    return_freed_memory()
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def peak_memory_bytes() -> int:
    """This process's peak resident memory since :func:`_reset_peak_memory` (Linux), else since it started."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _measure_group(claim_ids: list[str], budget: str, seed: int, options: dict, pack: str,
                   cache_dir: str | None, outbox: str) -> dict:
    """A lane's work: measure ``claim_ids`` in order in this process, sending ("start", id),
    ("work", label, done, total) and ("done", id, path) to the parent; returns the chunk cache's counts and
    problems, with the group's claims and its peak resident memory.  A claim's :class:`Finished` is pickled here, inside the error handling, into a file of
    ``outbox`` renamed into place before its "done" is sent: the queue carries only short messages (within
    the pipe's atomic write size), so a lane killed mid-way cannot leave the parent reading half of one."""
    from moecl_verify.checks.context import context_for, measure_with_artifacts
    from moecl_verify.checks.registry import get
    from moecl_verify.numeric.cache import ResultCache
    from moecl_verify.numeric.chunks import ChunkRunner

    events = _EVENTS
    _reset_peak_memory()
    cache = None if cache_dir is None else ResultCache(cache_dir)
    ctx = context_for(packs.get(pack), budget, seed, options, ChunkRunner(cache=cache))
    last: dict[str, float] = {}

    def progress(label: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - last.get(label, 0.0) >= PROGRESS_INTERVAL:
            last[label] = now
            events.put(("work", label, done, total))

    ctx.progress = progress
    for claim_id in claim_ids:
        try:
            claim = get(claim_id, pack)
            events.put(("start", claim_id))
            started = time.perf_counter()
            measurements, artifacts = measure_with_artifacts(claim, ctx)
            payload = pickle.dumps(Finished(claim_id, measurements, artifacts, time.perf_counter() - started),
                                   protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            # Re-raised as text: not every exception survives pickling back to the parent.
            raise LaneError(f"{claim_id}: {type(exc).__name__}: {exc}\n\nin the lane:\n"
                            f"{traceback.format_exc()}") from None
        path = Path(outbox) / f"{claim_id}.pickle"
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(payload)
        os.replace(partial, path)
        events.put(("done", claim_id, str(path)))
    stats = cache.stats if cache is not None else None
    memory = {"claims": list(claim_ids), "peak_rss_bytes": peak_memory_bytes()}
    return memory if stats is None else {"hits": stats.hits, "misses": stats.misses, "corrupt": stats.corrupt,
                                         "problems": list(stats.problems), **memory}


def measure_in_lanes(claims: Sequence[Claim], *, lanes: int, budget: str, seed: int, options: dict | None = None,
                     pack: str | None = None, cache_dir: str | None, on_start: Callable[[str], None],
                     on_work: Callable[[str, int, int], None],
                     on_counts: Callable[[dict], None] = lambda counts: None) -> Iterator[Finished]:
    """Measure ``claims`` in ``lanes`` worker processes; yields each claim as it finishes (in finishing
    order), after calling ``on_start(claim_id)`` as it starts and ``on_work`` for its progress, and
    ``on_counts`` with each lane's chunk-cache counts and problems as its group ends.  A worker's exception is raised
    here once the other lanes have been stopped."""
    pack = packs.get(pack).name
    spawn = multiprocessing.get_context("spawn")  # fork would copy the parent's threads and numba state
    events = spawn.Queue()
    waiting = {claim.id for claim in claims}
    with tempfile.TemporaryDirectory(prefix="moecl-lanes-") as outbox, \
            ProcessPoolExecutor(max_workers=lanes, mp_context=spawn, initializer=_lane_start,
                                initargs=(events,)) as pool:
        pending: set[Future] = {
            pool.submit(_measure_group, [c.id for c in group], budget, seed, dict(options or {}), pack,
                        cache_dir, outbox)
            for group in groups(claims, packs.get(pack).cost_hints)}
        try:
            # A lane's events and its group's return travel on different pipes, so the run ends when every
            # claim has been received, not when the futures are done.
            while waiting:
                try:
                    event = events.get(timeout=0.2)
                except queue.Empty:
                    event = None
                finished, pending = wait(pending, timeout=0, return_when=FIRST_COMPLETED)
                for future in finished:
                    on_counts(future.result())  # a lane's exception surfaces here
                if event is None:
                    if pending:
                        continue
                    try:
                        event = events.get(timeout=10)  # the last events of a finished lane
                    except queue.Empty:
                        raise LaneError("every lane has finished, but no result arrived for: "
                                        + ", ".join(sorted(waiting))) from None
                kind = event[0]
                if kind == "start":
                    on_start(event[1])
                elif kind == "work":
                    on_work(*event[1:])
                else:
                    waiting.discard(event[1])
                    path = Path(event[2])
                    done = pickle.loads(path.read_bytes())
                    path.unlink()
                    yield done
            for future in pending:
                on_counts(future.result())
        except BaseException:
            # Stop the other lanes now rather than let them finish their groups: the run has failed (or was
            # interrupted), and what they finished is already in the results cache.  concurrent.futures has
            # no public way to end running tasks before Python 3.14, hence its process table.
            processes = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for process in processes:
                process.terminate()
            raise
