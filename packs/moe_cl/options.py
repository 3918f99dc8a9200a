"""``run --mnist DIR``: Figure 3 on MNIST's IDX files instead of scikit-learn's bundled 8 x 8 digits."""

from __future__ import annotations

from pathlib import Path

from moecl_verify.checks.pack import RunOption
from moecl_verify.errors import UsageError


def mnist_dir(value: str | None) -> str | None:
    """``--mnist``: an existing folder holding MNIST's four IDX files, as an absolute path (None: not given).

    Each file's header is checked against its length and the images against the labels here, before any
    claim runs, without loading the data (numeric/idx.py::check_mnist): a damaged or unreadable file is a
    one-line error naming it, not a traceback minutes into the run."""
    if value is None:
        return None
    from moecl_verify.numeric.idx import IdxError, check_mnist

    folder = Path(value)
    try:
        if not folder.is_dir():
            raise UsageError(f"--mnist must name a folder holding MNIST's IDX files, got {value!r}")
        check_mnist(folder)
        return str(folder.resolve())
    except (FileNotFoundError, IdxError) as exc:
        raise UsageError(f"--mnist: {exc}") from None
    except OSError as exc:
        raise UsageError(f"--mnist: {exc.filename or value}: cannot read ({exc.strerror or exc})") from None


MNIST = RunOption("mnist_dir", "--mnist", "DIR",
                  "folder with MNIST's four IDX files (.gz or plain) for Figure 3; default: the 8 x 8 digits bundled "
                  "with scikit-learn (nothing is downloaded)", mnist_dir)
