"""The results cache: one entry per Monte Carlo chunk, reused by reruns.

An entry is a pair of files named by the chunk's key (a SHA-256 of the
canonical JSON of the engine, the engine-code version, the full
configuration, the seed and the chunk index):

* ``<key>.npz``  the chunk's arrays (numpy's npz, loaded with
  ``allow_pickle=False``: nothing executable is ever read back);
* ``<key>.json`` the entry's description and the SHA-256 of the npz bytes,
  written last, so an entry without it was interrupted and is ignored.

A finished claim's record (``checks.claim_store``) is an entry of the same
shape whose data file is ``<key>.record``, UTF-8 JSON, so it shares the
checksum, atomic writes and corruption handling.

Both are written atomically (a temporary ``.<name>.*.tmp`` file in the same
directory, then ``os.replace``), so a run killed at any instant leaves either
a whole entry or none, plus at most an orphaned temporary file, which the next
holder of the lock deletes.  Files are not fsynced: after a crash of the
operating system an entry may be torn, and then fails its checksum.  A corrupt or truncated entry (checksum mismatch, unreadable file) is
reported through ``on_problem``, deleted and recomputed, never used.

A run holds an exclusive ``flock`` on ``<dir>/lock`` for its lifetime, so two
runs cannot write one cache at once; the OS drops the lock when the holder
dies, even by SIGKILL.

The tool deletes only what it owns.  A cache folder carries a marker,
``moecl-cache.json`` (the tool's name, the cache format, the version that made
it and the pattern of the entries' file names), written when the cache is
created.  A folder is taken as a cache only if it holds the marker, is empty,
or holds nothing but entries of this format (a cache made before the marker
existed, which is then marked); any other folder is refused
(:class:`NotACache`), and ``clear`` refuses every folder without the marker and
deletes only the files whose names the marker's pattern matches.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import io
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

FORMAT = 1

MARKER = "moecl-cache.json"
LOCK = "lock"
# The file names of entries (chunk: <sha256>.npz and .json; claim record: claim-<sha256>.record and .json; slips
# record: claim-slips-<sha256>...) and of temporary files (.<name>.<random>.tmp): all this cache ever writes.
ENTRY_PATTERN = r"(?:claim-(?:slips-)?)?[0-9a-f]{64}\.(?:npz|json|record)|\..+\.tmp"
_ENTRY = re.compile(ENTRY_PATTERN)
_KEY = re.compile(r"(?:claim-(?:slips-)?)?[0-9a-f]{64}")
_FORMATS = {FORMAT: _ENTRY}  # the entries each cache format writes


class CacheLocked(RuntimeError):
    """Another process holds the cache directory's lock."""


class CacheUnavailable(RuntimeError):
    """The cache directory cannot be created or written."""


class NotACache(RuntimeError):
    """The folder holds files the cache did not write, and no marker: it is someone else's folder."""


def _marker_text() -> str:
    try:
        from importlib.metadata import version

        made_by = version("moecl-verify")
    except Exception:  # pragma: no cover - imported without being installed
        made_by = "unknown"
    return json.dumps({"tool": "moecl-verify", "kind": "results cache", "format": FORMAT, "version": made_by,
                       "entries": ENTRY_PATTERN}, indent=2) + "\n"


def marker(directory: str | os.PathLike) -> dict | None:
    """The folder's cache marker, or None where there is none (or it is not one this tool wrote)."""
    try:
        found = json.loads((Path(directory) / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or found.get("tool") != "moecl-verify" or not isinstance(found.get("entries"), str):
        return None
    return found


def _own_lock(path: Path) -> bool:
    """A lock file this cache wrote (empty, or its holder's pid); a user's file named ``lock`` is not one."""
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > 32:
            return False
        text = path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return False
    return text == "" or text.isdigit()


def _foreign(directory: Path) -> list[str]:
    """Names in an unmarked ``directory`` that no cache of this format writes (a file named like the marker that is
    not one counts: it is someone else's)."""
    return sorted(p.name for p in directory.iterdir()
                  if not (p.name == LOCK and _own_lock(p)) and not _ENTRY.fullmatch(p.name))


def claim_folder(directory: str | os.PathLike) -> None:
    """Make ``directory`` a cache, or refuse: create it with its marker where it is missing, mark an empty folder
    or an unmarked one holding only entries, and raise :class:`NotACache` for any other unmarked folder."""
    path = Path(directory)
    try:
        path.mkdir(parents=True, exist_ok=True)
        if marker(path) is not None:
            return
        foreign = _foreign(path)
        if foreign:
            shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
            raise NotACache(f"{str(path)!r} is not a moecl-verify results cache (no {MARKER}, and it holds files the "
                            f"cache did not write: {shown}); name a new or empty folder")
        _atomic_write(path / MARKER, _marker_text().encode("utf-8"))
        return
    except OSError as exc:
        raise CacheUnavailable(f"cache directory {str(path)!r} is not writable ({exc.strerror or exc})") from None


def _probe_writable(path: Path) -> None:
    """Raise :class:`CacheUnavailable` now, rather than mid-run, where entries cannot be written here."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path, prefix=".probe.", suffix=".tmp")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise CacheUnavailable(f"cache directory {str(path)!r} is not writable ({exc.strerror or exc})") from None


def _atomic_write(path: Path, data: bytes | memoryview) -> None:
    # The temporary name ends in ".tmp", so no reader ever mistakes a half-written file for an entry.  No
    # fsync: the rename makes an entry whole or absent for a killed run, and after a crash of the OS itself
    # a torn file fails its checksum and is recomputed; syncing gigabytes of chunks cost a full-budget run
    # about a second per GB.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# The one atomic write of the tool's files, shared with the output folders (app/outputs.py).
atomic_write = _atomic_write


def _npz_bytes(arrays: dict[str, np.ndarray]) -> memoryview:
    """The npz file's bytes, as a view of the buffer (hashed and written without another copy)."""
    buf = io.BytesIO()
    np.savez(buf, **{k: np.asarray(v) for k, v in arrays.items()})
    return buf.getbuffer()


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    corrupt: int = 0
    problems: list = field(default_factory=list)

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


class ResultCache:
    """A directory of chunk results; use as a context manager to hold its lock."""

    def __init__(self, directory: str | os.PathLike, on_problem: Callable[[str], object] | None = None):
        self.directory = Path(directory)
        self.stats = CacheStats()
        self._on_problem = on_problem
        self._lock_fh = None
        # Set when the disk filled up: the run goes on, computing what it cannot store.
        self.full = False

    # -- lifetime -------------------------------------------------------------
    def __enter__(self) -> "ResultCache":
        claim_folder(self.directory)
        _probe_writable(self.directory)
        try:
            fh = open(self.directory / LOCK, "a+")
        except OSError as exc:
            raise CacheUnavailable(f"cache directory {str(self.directory)!r} is not writable ({exc.strerror})") from None
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "unknown"
            fh.close()
            raise CacheLocked(f"cache directory {str(self.directory)!r} is locked by another run (pid {holder})") from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._lock_fh = fh
        # Holding the lock, any temporary file here was left by a run that was killed mid-write.
        try:
            for orphan in self.directory.glob(".*.tmp"):
                orphan.unlink()
        except OSError as exc:
            self.__exit__()
            raise CacheUnavailable(f"cache directory {str(self.directory)!r} is not writable ({exc.strerror})") from None
        return self

    def __exit__(self, *exc) -> None:
        if self._lock_fh is not None:
            fcntl.flock(self._lock_fh.fileno(), fcntl.LOCK_UN)
            self._lock_fh.close()
            self._lock_fh = None

    # -- entries ----------------------------------------------------------------
    def _paths(self, key: str, suffix: str = ".npz") -> tuple[Path, Path]:
        if not _KEY.fullmatch(key):  # only names ``clear`` would delete, and nothing outside the folder
            raise ValueError(f"cache key {key!r} is not a SHA-256 hex digest (optionally 'claim-' or 'claim-slips-')")
        return self.directory / f"{key}{suffix}", self.directory / f"{key}.json"

    def note_problem(self, message: str) -> None:
        """Record a problem with an entry and pass it to ``on_problem`` (also for problems another process
        using this directory met, e.g. a lane of the run)."""
        self.stats.problems.append(message)
        if self._on_problem is not None:
            self._on_problem(message)

    def _problem(self, key: str, reason: str, suffix: str) -> None:
        self.stats.corrupt += 1
        self.note_problem(f"cache entry {key[:12]} is corrupt ({reason}); recomputing it")
        for path in self._paths(key, suffix):
            if path.exists():
                path.unlink()

    def _verified_bytes(self, key: str, suffix: str) -> bytes | None:
        """The data file's bytes if the entry is complete and its checksum holds;
        None for a missing entry; a corrupt one is reported and deleted."""
        data_path, meta_path = self._paths(key, suffix)
        if not meta_path.exists():
            return None
        try:
            meta = json.loads(meta_path.read_text())
            data = data_path.read_bytes()
        except (OSError, ValueError) as exc:
            self._problem(key, f"unreadable: {exc}", suffix)
            return None
        if not isinstance(meta, dict):
            self._problem(key, "description is not a JSON object", suffix)
            return None
        if meta.get("format") != FORMAT or meta.get("sha256") != hashlib.sha256(data).hexdigest():
            self._problem(key, "checksum mismatch" if meta.get("format") == FORMAT else "unknown format", suffix)
            return None
        return data

    def _write(self, key: str, suffix: str, data: bytes | memoryview, description: dict) -> None:
        """Store an entry; on a full disk (or quota), drop it, say so once, and store nothing more: a cache
        that cannot grow costs only the reuse, so it must not end the run that feeds it."""
        if self.full:
            return
        data_path, meta_path = self._paths(key, suffix)
        meta = {"format": FORMAT, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
                "description": description}
        try:
            _atomic_write(data_path, data)
            _atomic_write(meta_path, json.dumps(meta, sort_keys=True).encode())
        except OSError as exc:
            # Other errors (a folder made read-only mid-run) end the run: the probe on entering catches the
            # common case, a read-only cache, before anything is computed.
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            for path in (data_path, meta_path):
                if path.exists():
                    path.unlink()
            self.full = True
            self.note_problem(f"cache directory {str(self.directory)!r} is full ({exc.strerror}); the run goes on "
                              "without storing more results (free space or use --cache-dir elsewhere to keep them)")

    def get(self, key: str) -> dict[str, np.ndarray] | None:
        data = self._verified_bytes(key, ".npz")
        arrays = None
        if data is not None:
            try:
                with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                    arrays = {name: npz[name] for name in npz.files}
            except (OSError, ValueError) as exc:
                self._problem(key, f"unloadable npz: {exc}", ".npz")
        if arrays is None:
            self.stats.misses += 1
        else:
            self.stats.hits += 1
        return arrays

    def put(self, key: str, arrays: dict[str, np.ndarray], description: dict) -> None:
        self._write(key, ".npz", _npz_bytes(arrays), description)

    def get_record(self, key: str) -> object | None:
        """A JSON record stored by :meth:`put_record`, or None (missing or corrupt;
        chunk hit/miss counts are not touched)."""
        data = self._verified_bytes(key, ".record")
        if data is None:
            return None
        try:
            return json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            self._problem(key, f"unparsable record: {exc}", ".record")
            return None

    def discard_record(self, key: str, reason: str) -> None:
        """Report and delete a record whose content its reader cannot use (checksum intact)."""
        self._problem(key, reason, ".record")

    def put_record(self, key: str, record: object, description: dict) -> None:
        self._write(key, ".record", json.dumps(record, sort_keys=True).encode("utf-8"), description)


@dataclass(frozen=True)
class CacheInfo:
    directory: str
    entries: int
    incomplete: int
    total_bytes: int
    engine_versions: tuple[str, ...]
    claim_records: int = 0

    def __str__(self) -> str:
        versions = ", ".join(v[:12] for v in self.engine_versions) or "none"
        return (f"cache {self.directory}: {self.entries} entries ({self.claim_records} of them claim and slip records), "
                f"{self.total_bytes / 1e6:.1f} MB, {self.incomplete} incomplete, engine versions: {versions}")


def info(directory: str | os.PathLike) -> CacheInfo:
    path = Path(directory)
    metas = sorted(p for p in path.glob("*.json") if _ENTRY.fullmatch(p.name)) if path.is_dir() else []
    datas = sorted(p for p in [*path.glob("*.npz"), *path.glob("*.record")] if _ENTRY.fullmatch(p.name)) if path.is_dir() else []
    versions = set()
    for meta_path in metas:
        try:
            description = json.loads(meta_path.read_text())["description"]
            versions.add(description["engine_version"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    total = sum(p.stat().st_size for p in metas + datas)
    complete = {p.stem for p in metas}
    records = sum(1 for p in datas if p.suffix == ".record" and p.stem in complete)
    return CacheInfo(str(path), len(metas), sum(1 for p in datas if p.stem not in complete), total,
                     tuple(sorted(versions)), records)


def clear(directory: str | os.PathLike) -> int:
    """Delete every entry (under the lock), and only entries: the files the marker's pattern names.  A folder
    without the marker is refused (:class:`NotACache`), whatever it holds; the marker and the lock stay, so the
    folder is still a cache.  Returns how many files went."""
    path = Path(directory)
    if not path.exists():
        return 0
    if not path.is_dir():
        raise NotACache(f"{str(path)!r} is not a folder, let alone a moecl-verify results cache")
    found = marker(path)
    if found is None:
        raise NotACache(f"{str(path)!r} is not a moecl-verify results cache (it has no {MARKER}); nothing was deleted")
    # The format decides what may go, not the marker's own text: an edited marker cannot widen the deletion.
    pattern = _FORMATS.get(found.get("format"))
    if pattern is None:
        raise NotACache(f"{str(path)!r} is a results cache of format {found.get('format')!r}, which this version does "
                        f"not know (it knows {', '.join(map(str, _FORMATS))}); nothing was deleted")
    removed = 0
    with ResultCache(path):
        try:
            for entry in sorted(path.iterdir()):
                if entry.name not in (MARKER, LOCK) and pattern.fullmatch(entry.name) and entry.is_file() \
                        and not entry.is_symlink():
                    entry.unlink()
                    removed += 1
        except OSError as exc:
            raise CacheUnavailable(f"cache directory {str(path)!r} is not writable ({exc.strerror}); "
                                   f"{removed} files were removed before it stopped") from None
    return removed
