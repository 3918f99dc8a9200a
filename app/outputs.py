"""Output folders a user can trust: the tool writes only into a folder that is its own, replaces only files it
wrote, and swaps a whole set of reports in at once.

A folder ``run`` or ``report`` writes into (``--out``) carries a manifest, ``moecl-manifest.json``: which files
the tool wrote there, the SHA-256 of each, and the digest of the results document they were rendered from.  The
rules that follow from it:

* **The folder is the tool's or is refused.**  A new or empty folder becomes the tool's.  A non-empty folder
  without a manifest, or holding a file the manifest does not list or that changed since the tool wrote it, is
  someone else's: the command stops at once, in one line naming the file and ``--force`` (which writes into the
  folder anyway, replacing only files of the names it writes, and deleting nothing it did not write).
* **One run at a time.**  The command holds an exclusive ``flock`` on ``.moecl-lock`` in the folder from the
  start, so a second command on the same folder stops at once, naming the holder's pid (the OS drops the lock
  when the holder dies, even by SIGKILL).
* **All or nothing.**  Every output is written into a staging folder inside the output folder.  Only when all of
  them are whole does the commit begin: a journal (``.moecl-commit.json``) listing the moves is written
  atomically, the staged files are renamed into place (``results.json`` last), files of an earlier run that this
  one did not write are removed, the manifest is replaced, and the journal deleted.  A command killed before the
  journal exists leaves the old set untouched (the staging folder is swept by the next holder); one killed after
  it leaves a journal that the next command on the folder completes before anything else, so the folder holds
  either the old set or the new one, never a mixture that looks whole.
* **No stale paths.**  A file of an earlier run that this run does not write is removed when it was rendered from
  other results (its paths would describe another run); one rendered from the same results document stays and
  stays listed.  A file the user changed is never removed.  What was removed is said on stderr.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from moecl_verify.errors import UsageError
from moecl_verify.numeric.cache import atomic_write

MANIFEST = "moecl-manifest.json"
LOCK = ".moecl-lock"
JOURNAL = ".moecl-commit.json"
STAGING_PREFIX = ".moecl-staging-"
FORMAT = 1
# Written last, so a reader that finds the new results.json finds the new reports beside it.
LAST = "results.json"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _atomic_write_text(path: Path, text: str) -> None:
    """A temporary file beside ``path``, renamed over it: a killed command leaves the old file or the new one."""
    atomic_write(path, text.encode("utf-8"))


def _replace(source: Path, target: Path) -> None:
    """One move of a commit (a seam for the tests that kill a commit half-way)."""
    os.replace(source, target)


def is_bookkeeping(name: str) -> bool:
    """The folder's bookkeeping: the manifest, the lock, the journal, staging folders and temporary files."""
    return name in (MANIFEST, LOCK, JOURNAL) or name.startswith(STAGING_PREFIX) or (
        name.startswith(f".{MANIFEST}.") or name.startswith(f".{JOURNAL}.")) and name.endswith(".tmp")


def read_manifest(folder: Path) -> dict | None:
    """The folder's manifest, or None where there is none or it is not one the tool wrote."""
    try:
        found = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (isinstance(found, dict) and found.get("tool") == "moecl-verify" and isinstance(found.get("files"), dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in found["files"].items())):
        return None
    return found


def _safe_name(name: str) -> bool:
    """A manifest's or journal's file name that stays inside the folder (an edited manifest cannot point the
    tool at a file elsewhere)."""
    parts = Path(name).parts
    return bool(parts) and not Path(name).is_absolute() and ".." not in parts and not is_bookkeeping(parts[0])


def _listing(folder: Path) -> list[str]:
    """Every file below ``folder`` (relative names, sorted), the tool's bookkeeping left out."""
    found = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if is_bookkeeping(rel.parts[0]):
            continue
        if path.is_file() or path.is_symlink():
            found.append(str(rel))
    return found


def results_digest(document_text: str) -> str:
    """The digest by which a manifest names the results document its files were rendered from."""
    return hashlib.sha256(document_text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Committed:
    """What a commit did: the files now in the folder from this command, those kept from an earlier run of the
    same results, and those of an earlier run that were removed."""

    written: tuple[str, ...]
    kept: tuple[str, ...]
    removed: tuple[str, ...]

    def names(self) -> set[str]:
        return set(self.written) | set(self.kept)


def _complete(folder: Path, journal: dict) -> None:
    """Carry out a commit's journal (again, where a killed command left it half done): every move whose staged
    file is still there, every removal, the manifest; then delete the journal and the staging folder."""
    staging = folder / journal["staging"]
    for name in journal["moves"]:
        source = staging / name
        if source.exists():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            _replace(source, folder / name)
    for name in journal["remove"]:
        try:
            (folder / name).unlink()
        except FileNotFoundError:
            pass
    _atomic_write_text(folder / MANIFEST, json.dumps(journal["manifest"], indent=2, sort_keys=True) + "\n")
    (folder / JOURNAL).unlink()
    shutil.rmtree(staging, ignore_errors=True)


def _valid_journal(folder: Path, journal: object) -> bool:
    return (isinstance(journal, dict) and isinstance(journal.get("staging"), str)
            and journal["staging"].startswith(STAGING_PREFIX) and "/" not in journal["staging"]
            and isinstance(journal.get("moves"), list) and isinstance(journal.get("remove"), list)
            and all(isinstance(n, str) and _safe_name(n) for n in journal["moves"] + journal["remove"])
            and isinstance(journal.get("manifest"), dict))


class OutputFolder:
    """``--out`` as a context: checked, locked and recovered on entry; outputs are written into
    :attr:`staging` and swapped in by :meth:`commit`; on exit without a commit the staging folder goes and the
    folder is as it was."""

    def __init__(self, text: str, *, force: bool = False, flag: str = "--out", keep: Path | None = None):
        if not text or not text.strip():
            raise UsageError(f"{flag} must name a folder, got {text!r}")
        self.path = Path(text)
        self.flag = flag
        self.force = force
        self.keep = keep  # a file this command reads (report --from): never removed as stale
        self.staging: Path | None = None
        self._lock = None
        self._manifest: dict | None = None

    def _error(self, message: str) -> UsageError:
        return UsageError(f"{self.flag}: {message}")

    def _check_path(self) -> None:
        path = self.path
        if path.is_symlink() and not path.exists():
            try:
                path.resolve(strict=True)
            except RuntimeError:
                raise self._error(f"{str(path)!r} is a symbolic link in a loop") from None
            except OSError:
                pass
            raise self._error(f"{str(path)!r} is a symbolic link to {os.readlink(path)!r}, which does not exist")
        if path.exists() and not path.is_dir():
            raise self._error(f"{str(path)!r} exists and is not a folder")

    def __enter__(self) -> "OutputFolder":
        self._check_path()
        if self.path.is_dir() and not (self.path / JOURNAL).exists():
            self._claim()  # refuse someone else's folder before writing anything into it, the lock included
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            fh = open(self.path / LOCK, "a+")
        except RuntimeError:  # pathlib's answer to a symbolic-link loop on the way
            raise self._error(f"{str(self.path)!r} is reached through a symbolic link in a loop") from None
        except OSError as exc:
            raise self._error(f"{str(self.path)!r} is not a writable folder ({exc.strerror or exc})") from None
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "unknown"
            fh.close()
            raise self._error(f"{str(self.path)!r} is being written by another moecl-verify command (pid {holder}); "
                              "wait for it, or name another folder") from None
        self._lock = fh
        try:
            fh.seek(0)
            fh.truncate()
            fh.write(str(os.getpid()))
            fh.flush()
            self._recover()
            self._claim()  # again, holding the lock: what was checked may have changed meanwhile
            self.staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=self.path))
        except OSError as exc:
            self._release()
            raise self._error(f"{str(self.path)!r} is not a writable folder ({exc.strerror or exc})") from None
        except BaseException:
            self._release()
            raise
        return self

    def _recover(self) -> None:
        """Finish a commit a killed command left half done, then sweep staging folders of commands killed
        before their commit (holding the lock, no other command is using them)."""
        journal_path = self.path / JOURNAL
        if journal_path.exists():
            try:
                journal = json.loads(journal_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                journal = None
            if not _valid_journal(self.path, journal):
                raise self._error(f"{str(journal_path)!r} is damaged; the folder's last write is unfinished "
                                  "(move the folder away, or delete that file and pass --force)")
            _complete(self.path, journal)
        for leftover in self.path.iterdir():
            if leftover.name.startswith(STAGING_PREFIX) and leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover, ignore_errors=True)

    def _claim(self) -> None:
        """Refuse a folder that is not the tool's (unless forced): no manifest but files, or files the manifest
        does not account for."""
        self._manifest = read_manifest(self.path)
        files = _listing(self.path)
        if self._manifest is None:
            if files and not self.force:
                raise self._error(
                    f"{str(self.path)!r} is not empty and is not a folder moecl-verify wrote (no {MANIFEST}; it holds "
                    f"{shown(files)}); name a new or empty folder, or pass --force to write into it (replacing "
                    "files of the names the tool writes)")
            return
        listed = self._manifest["files"]
        foreign = [name for name in files if name not in listed or _sha256(self.path / name) != listed[name]]
        if foreign and not self.force:
            raise self._error(
                f"{str(self.path)!r} holds files moecl-verify did not write there, or that changed since it wrote "
                f"them ({shown(foreign)}); move them away, or pass --force to write beside them (replacing "
                "files of the names the tool writes)")

    def commit(self, digest: str, command: str) -> Committed:
        """Swap the staged files in (``results.json`` last), remove the earlier run's files that belong to other
        results, and write the new manifest; see the module's docstring for what a kill at any point leaves."""
        assert self.staging is not None, "commit outside the context"
        staged = sorted(str(p.relative_to(self.staging)) for p in self.staging.rglob("*") if p.is_file())
        moves = sorted(staged, key=lambda name: (name == LAST, name))
        old = self._manifest or {"files": {}, "results_sha256": None}
        old_files = {name: sha for name, sha in old["files"].items() if _safe_name(name)}
        same_results = old.get("results_sha256") == digest
        kept, remove = [], []
        for name, sha in sorted(old_files.items()):
            if name in staged:
                continue
            path = self.path / name
            if not path.is_file() or path.is_symlink() or _sha256(path) != sha:
                continue  # gone, or the user's now: neither listed nor touched
            if same_results or (self.keep is not None and path.resolve() == self.keep.resolve()):
                kept.append(name)
            else:
                remove.append(name)
        files = {name: _sha256(self.staging / name) for name in staged}
        files.update({name: old_files[name] for name in kept})
        manifest = {"tool": "moecl-verify", "format": FORMAT, "version": _version(), "command": command,
                    "results_sha256": digest, "files": dict(sorted(files.items()))}
        journal = {"staging": self.staging.name, "moves": moves, "remove": remove, "manifest": manifest}
        _atomic_write_text(self.path / JOURNAL, json.dumps(journal, indent=2) + "\n")
        _complete(self.path, journal)
        self.staging = None
        self._manifest = manifest
        return Committed(tuple(moves), tuple(kept), tuple(remove))

    def _release(self) -> None:
        if self._lock is not None:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None

    def __exit__(self, *exc) -> None:
        try:
            if self.staging is not None and (self.path / JOURNAL).exists():
                # Interrupted during the commit (Ctrl-C between two moves): the journal says how to finish, and
                # finishing is a few renames; if even that fails, the next command on the folder finishes it.
                try:
                    _complete(self.path, json.loads((self.path / JOURNAL).read_text(encoding="utf-8")))
                except (OSError, ValueError):
                    pass
                self.staging = None
            elif self.staging is not None:  # not committed: the folder stays as it was
                shutil.rmtree(self.staging, ignore_errors=True)
                self.staging = None
        finally:
            self._release()


def shown(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("moecl-verify")
    except PackageNotFoundError:  # pragma: no cover - only when imported without being installed
        return "unknown"
