"""Where Monte Carlo chunks run: in process, in a local process pool, or on Dask.

Every executor takes a list of picklable :class:`numeric.chunks.Chunk`s and
yields ``(position, arrays)`` pairs as chunks finish, in whatever order they
finish.  Callers place results by position, and every chunk draws from its own
stream (``generator_for(seed, *key, "chunk", i)``), so the result does not
depend on the executor, the number of workers or the finishing order.

Executors are context managers: pools and clusters are started once per run
and shut down at its end.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import numbers
from typing import Iterator, Sequence

from moecl_verify.numeric.chunk import compute

EXECUTORS = ("inprocess", "processes", "dask")


def _compute(chunk):
    return compute(chunk)


class InProcess:
    """Chunks one after another in this process (the default)."""

    name = "inprocess"
    workers = 1

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def map_unordered(self, chunks: Sequence) -> Iterator[tuple[int, dict]]:
        for position, chunk in enumerate(chunks):
            yield position, _compute(chunk)


class ProcessPool:
    """A local pool of ``jobs`` worker processes (``--jobs N``)."""

    name = "processes"

    def __init__(self, jobs: int):
        if isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral) or jobs < 1:
            raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
        self.workers = int(jobs)
        self._pool: cf.ProcessPoolExecutor | None = None

    def __enter__(self):
        # spawn, not fork: the parent may hold threads (BLAS, progress) and a cache lock.
        self._pool = cf.ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))
        return self

    def __exit__(self, *exc) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def map_unordered(self, chunks: Sequence) -> Iterator[tuple[int, dict]]:
        if self._pool is None:
            raise RuntimeError("ProcessPool must be entered (with ...) before use")
        futures = {self._pool.submit(_compute, chunk): position for position, chunk in enumerate(chunks)}
        for future in cf.as_completed(futures):
            yield futures[future], future.result()


class DaskExecutor:
    """Dask distributed: a scheduler at ``address``, or a LocalCluster on loopback.

    Needs the optional extra ``pip install ".[dask]"``.
    """

    name = "dask"

    def __init__(self, address: str | None = None, workers: int = 2):
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ImportError('the Dask executor needs the optional extra: pip install "moecl-verify[dask]" (from a checkout: pip install ".[dask]")') from None
        self.address = address
        self.workers = int(workers)
        self._client = None
        self._cluster = None

    def __enter__(self):
        from distributed import Client, LocalCluster

        if self.address:
            self._client = Client(self.address, timeout="20s")
        else:
            self._cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                         host="127.0.0.1", dashboard_address=None)
            self._client = Client(self._cluster)
        return self

    def __exit__(self, *exc) -> None:
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = None

    def map_unordered(self, chunks: Sequence) -> Iterator[tuple[int, dict]]:
        from distributed import as_completed

        if self._client is None:
            raise RuntimeError("DaskExecutor must be entered (with ...) before use")
        futures = [self._client.submit(_compute, chunk, pure=False) for chunk in chunks]
        positions = {f.key: i for i, f in enumerate(futures)}
        for future in as_completed(futures):
            yield positions[future.key], future.result()


def make_executor(name: str = "inprocess", jobs: int = 1, scheduler: str | None = None):
    if name not in EXECUTORS:
        raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, got {name!r}")
    if name == "inprocess":
        if jobs != 1:
            return ProcessPool(jobs)
        return InProcess()
    if name == "processes":
        return ProcessPool(jobs)
    return DaskExecutor(scheduler, workers=max(int(jobs), 1) if jobs > 1 else 2)
