"""The command line's simulation options: executor, workers, results cache.

``chunk_runner(args)`` turns ``--executor``, ``--jobs``, ``--scheduler``,
``--cache-dir`` and ``--no-cache`` into a :class:`numeric.chunks.ChunkRunner`
(and ``lanes(args)`` into the number of claims measured at once)
inside a context that holds the cache lock and the worker pool for the run,
and maps their failures to one-line usage errors.  The run that creates the
cache directory says so once on stderr, even under ``--quiet``: it is a new
directory in the user's tree, and ``cache clear`` or ``--no-cache`` are the
way out of it.  ``describe_cache`` is what ``cache info`` prints.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Iterator

from moecl_verify.errors import UsageError
from moecl_verify.parsing import int_at_least
from moecl_verify.numeric.cache import CacheLocked, CacheUnavailable, NotACache, ResultCache
from moecl_verify.numeric.chunks import ChunkRunner
from moecl_verify.numeric.executors import EXECUTORS, make_executor

DEFAULT_CACHE_DIR = ".moecl-cache"
# Worker processes beyond this many per core only queue for the processor (and each holds its own
# simulations in memory); more is a mistake, refused at once.
JOBS_PER_CORE = 8
CACHE_ENV = "MOECL_CACHE_DIR"


def default_cache_dir() -> str:
    return os.environ.get(CACHE_ENV) or DEFAULT_CACHE_DIR


def add_arguments(parser) -> None:
    cores = usable_cores()
    parser.add_argument("--jobs", type=int_at_least("--jobs", 1, JOBS_PER_CORE * cores,
                                                    f" ({JOBS_PER_CORE} per usable core; this machine has {cores})"),
                        default=None,
                        help="worker processes (default: the cores this process may use). With the default "
                             "executor, claims are measured in that many processes at once; with --executor "
                             "processes, one claim at a time spreads its simulation chunks over them. Results "
                             "do not depend on it")
    parser.add_argument("--executor", choices=EXECUTORS, default=None,
                        help="inprocess (default: each claim's chunks in the process measuring it), processes "
                             "(a local pool of --jobs for chunks), or dask")
    parser.add_argument("--scheduler", default=None,
                        help="Dask scheduler address (with --executor dask; default: a LocalCluster on loopback)")
    parser.add_argument("--cache-dir", default=None,
                        help=f"results cache directory (default ${CACHE_ENV} or {DEFAULT_CACHE_DIR})")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the results cache")
    parser.add_argument("--recompute-claims", action="store_true",
                        help="reuse cached simulation chunks but redo every claim's analysis "
                             "(finished claims are otherwise reused by an identical rerun)")


def _warn(message: str) -> None:
    print(f"moecl-verify: warning: {message}", file=sys.stderr)


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform tells)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - platforms without sched_getaffinity
        return max(1, os.cpu_count() or 1)


def jobs(args) -> int:
    return args.jobs if args.jobs is not None else usable_cores()


def lanes(args) -> int:
    """Processes measuring claims at once: ``--jobs`` with the default executor, else 1 (the executor
    spreads each claim's chunks instead)."""
    return jobs(args) if (args.executor or "inprocess") == "inprocess" else 1


@contextlib.contextmanager
def chunk_runner(args) -> Iterator[ChunkRunner]:
    name = args.executor or "inprocess"
    if args.scheduler and name != "dask":
        raise UsageError("--scheduler needs --executor dask")
    try:
        # In process, --jobs sets the lanes (claims at once), not a chunk pool.
        executor = make_executor(name, jobs=1 if name == "inprocess" else jobs(args), scheduler=args.scheduler)
    except ImportError as exc:
        raise UsageError(f"--executor {name}: {exc}") from None
    except ValueError as exc:
        # The library names its parameters; the user set them through these flags.
        raise UsageError(f"--executor/--jobs: {exc}") from None
    with contextlib.ExitStack() as stack:
        cache = None
        if not args.no_cache:
            cache = ResultCache(args.cache_dir or default_cache_dir(), on_problem=_warn)
            is_new = not cache.directory.exists()
            try:
                stack.enter_context(cache)
            except CacheLocked as exc:
                raise UsageError(f"--cache-dir: {exc}; wait for it, or pass --cache-dir DIR or --no-cache") from None
            except (CacheUnavailable, NotACache) as exc:
                raise UsageError(f"--cache-dir: {exc}") from None
            if is_new:
                print(f"moecl-verify: created results cache at {cache.directory}", file=sys.stderr)
        try:
            stack.enter_context(executor)
        except OSError as exc:
            raise UsageError(f"--executor {name}: cannot start ({exc})") from None
        yield ChunkRunner(executor=executor, cache=cache)


def cache_summary(runner: ChunkRunner) -> dict:
    if runner.cache is None:
        return {"enabled": False}
    s = runner.cache.stats
    return {"enabled": True, "directory": str(runner.cache.directory), "hits": s.hits, "misses": s.misses,
            "corrupt": s.corrupt, "hit_rate": round(s.hit_rate, 4)}


def human_bytes(n: int) -> str:
    """``n`` bytes in decimal units with three significant digits: 512 B, 1.2 kB, 160 MB, 3.4 GB."""
    size, unit = float(n), "B"
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if size < 999.5 or unit == "TB":
            break
        size /= 1000
    if unit == "B":
        return f"{n} B"
    return f"{size:.3g} {unit}" if size < 999.5 else f"{size:.0f} {unit}"


def describe_cache(directory: str) -> str:
    """What ``cache info`` prints: where the cache is, its size, and what it holds."""
    from moecl_verify.numeric import cache

    where = Path(directory).resolve()
    if not where.is_dir():
        return f"results cache: {where}\nnot created yet (the first run that uses it creates it)"
    info = cache.info(where)
    versions = ", ".join(v[:12] for v in info.engine_versions) or "none"
    return "\n".join([
        f"results cache: {where}",
        f"size: {human_bytes(info.total_bytes)} in {info.entries} entries "
        f"({info.claim_records} of them claim and slip records)",
        f"simulation chunks: {info.entries - info.claim_records}; incomplete (interrupted writes): {info.incomplete}",
        f"engine versions: {versions}",
    ])
