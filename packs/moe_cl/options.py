"""``run --mnist DIR``: Figure 3 on MNIST's IDX files instead of scikit-learn's bundled 8 x 8 digits."""

from __future__ import annotations

from pathlib import Path

from moecl_verify.checks.pack import RunOption
from moecl_verify.errors import UsageError


def mnist_dir(value: str | None) -> str | None:
    """``--mnist``: an existing folder holding MNIST's four IDX files, as an absolute path (None: not given).

    Checked here, before any claim runs, so that a folder Figure 3 cannot use is a one-line error naming the
    file, not a traceback minutes into the run: first each file's header against its length and the images
    against the labels, without loading the data (numeric/idx.py::check_mnist), then the content against what
    every Figure 3 run needs (packs/moe_cl/experiments/fig3_runs.py::check_mnist_content: enough images of
    every digit for each task, images that are not blank)."""
    if value is None:
        return None
    from moecl_verify.numeric.idx import check_mnist
    from moecl_verify.packs.moe_cl.experiments.fig3_runs import check_mnist_content

    folder = Path(value)
    try:
        if not folder.is_dir():
            raise UsageError(f"--mnist must name a folder holding MNIST's IDX files, got {value!r}")
        check_mnist_content(folder, check_mnist(folder))
        return str(folder.resolve())
    except (FileNotFoundError, ValueError) as exc:  # IdxError (a malformed file) is a ValueError
        raise UsageError(f"--mnist: {exc}") from None
    except OSError as exc:
        raise UsageError(f"--mnist: {exc.filename or value}: cannot read ({exc.strerror or exc})") from None


MNIST = RunOption("mnist_dir", "--mnist", "DIR",
                  "folder with MNIST's four IDX files (.gz or plain) for Figure 3; default: the 8 x 8 digits bundled "
                  "with scikit-learn (nothing is downloaded)", mnist_dir)
