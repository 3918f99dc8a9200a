"""A quick picture for `moecl-verify simulate --plot`: F_t and G_t with 99% bands.

The file's suffix picks the format (``.png``, ``.pdf``, ``.svg``, ...; a name without a suffix is written as
PNG).  :func:`check_path` refuses a path the picture cannot be written to before the simulation starts, and
:func:`write` writes the picture to a temporary file beside it and renames it into place, so a failure while
saving leaves neither a partial picture nor a clobbered earlier one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from moecl_verify.errors import UsageError

Z99 = 2.576
DEFAULT_FORMAT = "png"
# Formats matplotlib lists but cannot write without software outside the tool: PGF runs a LaTeX installation.
NEEDS_MORE = {"pgf"}


def formats() -> list[str]:
    """The file suffixes (without the dot) the picture can be written as: those matplotlib's Agg canvas
    writes, less those needing a LaTeX installation."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    return sorted(set(FigureCanvasAgg.get_supported_filetypes()) - NEEDS_MORE)


def file_format(path: str | Path) -> str:
    """The format the picture is written in at ``path``: its suffix, lower case, or PNG without one. Raises
    :class:`UsageError` for a suffix the picture cannot be written as."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if not suffix:
        return DEFAULT_FORMAT
    known = formats()
    if suffix not in known:
        raise UsageError(f"--plot: cannot write a picture as .{suffix} ({str(path)!r}); name a file ending in one "
                         f"of {', '.join('.' + f for f in known)}")
    return suffix


def check_path(path: str | Path) -> str:
    """``--plot``: refuse, before any simulation, a path the picture cannot be written to (a folder that does
    not exist or cannot be written into, a path that is a folder, a suffix no writer knows), so that a long
    simulation is not thrown away at its end; returns the format. Writability is probed by creating and
    removing a temporary file in the folder (permission bits alone do not tell, e.g. for root or a read-only
    file system)."""
    path = Path(path)
    folder = path.parent
    if path.is_dir():
        raise UsageError(f"--plot: {str(path)!r} is a folder; name the picture's file")
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--plot: {str(folder)!r} is not a folder, so {str(path)!r} cannot be written")
    if not folder.is_dir():
        raise UsageError(f"--plot: the folder {str(folder)!r} does not exist (it is not created)")
    fmt = file_format(path)
    try:
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".moecl-write-test-")
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(f"--plot: cannot write into the folder of {str(path)!r} ({exc.strerror or exc})") from None
    return fmt


def _mode(path: Path) -> int:
    """The permissions the picture gets: those of the file it replaces, or what a new file gets (umask)."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def write(rows: list[dict], path: str | Path, title: str = "") -> Path:
    """Draw F_t and G_t of ``rows`` and write the picture to ``path`` in the format of its suffix
    (:func:`file_format`). Raises :class:`UsageError` when the file cannot be written (e.g. the disk is full),
    leaving no partial file behind."""
    import matplotlib.style
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = Path(path)
    fmt = file_format(path)
    with matplotlib.style.context("default"):
        fig = Figure(figsize=(10, 4), dpi=100, layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(1, 2)
        for ax, metric, label in zip(axes, ("forgetting", "generalization"), ("$F_t$", "$G_t$")):
            pts = [(r["t"], r[metric], r[metric + "_stderr"]) for r in rows if r[metric] is not None]
            t = [p[0] for p in pts]
            m = [p[1] for p in pts]
            ax.fill_between(t, [a - Z99 * b for _, a, b in pts], [a + Z99 * b for _, a, b in pts], alpha=0.25, linewidth=0)
            ax.plot(t, m)
            ax.set_xlabel("round t")
            ax.set_ylabel(label + " (mean, 99% band)")
            ax.grid(True, alpha=0.3)
        fig.suptitle(title)
        # PNG without matplotlib's version stamp, as before; the other formats keep their writers' defaults.
        metadata = {"Software": None} if fmt == "png" else None
        temporary = None
        try:
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
            with os.fdopen(handle, "wb") as stream:
                fig.savefig(stream, format=fmt, metadata=metadata)
            os.chmod(temporary, _mode(path))
            os.replace(temporary, path)
            temporary = None
        except OSError as exc:
            raise UsageError(f"--plot: cannot write {str(path)!r} ({exc.strerror or exc})") from None
        finally:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
    return path
