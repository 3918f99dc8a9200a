"""argparse types that name the parameter and its allowed range in their error."""

from __future__ import annotations

import math
from pathlib import Path

from moecl_verify.errors import UsageError


def nonneg_int(name: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise UsageError(f"{name} must be an integer >= 0, got {text!r}") from None
        if value < 0:
            raise UsageError(f"{name} must be an integer >= 0, got {value}")
        return value

    return parse


def positive_int(name: str):
    def parse(text: str) -> int:
        value = nonneg_int(name)(text) if text.strip().lstrip("-").isdigit() else None
        if value is None or value < 1:
            raise UsageError(f"{name} must be an integer >= 1, got {text!r}")
        return value

    return parse


def finite_float(name: str):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise UsageError(f"{name} must be a number, got {text!r}") from None
        if not math.isfinite(value):
            raise UsageError(f"{name} must be finite, got {text!r}")
        return value

    return parse


def nonneg_float(name: str):
    def parse(text: str) -> float:
        value = finite_float(name)(text)
        if value < 0:
            raise UsageError(f"{name} must be a number >= 0, got {text!r}")
        return value

    return parse


def writable_dir(text: str) -> Path:
    """``--out``: a directory, created if missing, that this process can write into."""
    out = Path(text)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".moecl-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"--out must be a writable directory; {text!r}: {exc.strerror or exc}") from None
    return out
