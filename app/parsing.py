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


def int_at_least(name: str, low: int, high: int | None = None, why_high: str = ""):
    """An integer in [low, high] (no upper bound when ``high`` is None); the error states the true range.
    ``why_high`` says where the upper bound comes from."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        span = f">= {low}" if high is None else f"between {low} and {high}{why_high}"
        if value is None:
            raise UsageError(f"{name} must be an integer {span}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise UsageError(f"{name} must be an integer {span}, got {value if abs(value) < 10**12 else text!r}")
        return value

    return parse


def positive_int(name: str):
    return int_at_least(name, 1)


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
    if not text or not text.strip():
        raise UsageError(f"--out must name a folder, got {text!r}")
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
