"""The memory a run needs at its peak, and what the machine has free: said before a run starts.

A run killed by the operating system for want of memory says nothing; so ``run`` compares what it will need
with what is available and warns first, naming the option that needs less (fewer claim lanes: each lane holds
its own claims' simulations).  The needs are measured peaks (``bench/bench_memory.py``, summed resident memory
of the command and its lanes, every claim, a fresh cache), rounded up; what is available is the kernel's own
estimate, ``MemAvailable`` of /proc/meminfo, read through psutil.
"""

from __future__ import annotations

from typing import Mapping

# The pack declares its measured peaks (Pack.peak_memory_gb: GB by (budget, claim lanes) for one lane and two,
# every claim, fresh cache, summed over the command and its lanes); MARGIN leaves room for other machines'
# libraries and allocators.
MARGIN = 1.15


def need_gb(budget: str, lanes: int, peaks: Mapping) -> float | None:
    """The memory a run of every claim at ``budget`` needs with ``lanes`` claim lanes (more lanes than two:
    each further lane as much again as the second added, and never less than two lanes need); None when
    the pack measured nothing for the budget."""
    if (budget, 1) not in peaks or (budget, 2) not in peaks:
        return None
    one, two = peaks[(budget, 1)], peaks[(budget, 2)]
    if lanes <= 1:
        return MARGIN * one
    return MARGIN * (two + max(0.0, two - one) * (lanes - 2))


def available_gb() -> float | None:
    """Memory available to a new process, in GB (None where the platform does not say)."""
    try:
        import psutil

        return psutil.virtual_memory().available / 1e9
    except Exception:  # pragma: no cover - psutil is a dependency; a platform it does not know says nothing
        return None


def most_lanes(budget: str, available: float, peaks: Mapping, below: int) -> int | None:
    """The most lanes under ``below`` whose need fits in ``available`` (None if not even one fits).  The need
    grows linearly past two lanes, so this is solved, not searched: ``--jobs`` may be any size."""
    if below <= 1 or need_gb(budget, 1, peaks) > available:
        return None
    if below == 2 or need_gb(budget, 2, peaks) > available:
        return 1
    one, two = peaks[(budget, 1)], peaks[(budget, 2)]
    step = max(0.0, two - one)
    if step == 0:
        return below - 1
    fits = 2 + int((available / MARGIN - two) // step)
    return max(2, min(below - 1, fits))


def warning(budget: str, lanes: int, available: float | None, peaks: Mapping,
            claims: int | None = None) -> str | None:
    """One line when a run at ``budget`` with ``lanes`` lanes may need more memory than ``available``
    (``peaks``: the pack's measured peaks, for a run of every claim); None when it fits (or nothing is known).
    ``claims``: how many claims a run of only some of them measures (None: every claim); no more lanes than
    claims are busy, and the measured need of every claim is then an upper bound, said as such."""
    if claims is not None:
        lanes = max(1, min(lanes, claims))
    need = need_gb(budget, lanes, peaks)
    if available is None or need is None or need <= available:
        return None
    advice = ""
    fewest = most_lanes(budget, available, peaks, lanes)
    fewer = [fewest] if fewest is not None else []
    smaller = "standard" if budget == "full" else "smoke"
    if fewer:
        advice = f"; with --jobs {fewer[0]} it needs about {need_gb(budget, fewer[0], peaks):.1f} GB"
    elif budget != "smoke" and need_gb(smaller, 1, peaks) is not None:
        advice = f"; --jobs 1 needs about {need_gb(budget, 1, peaks):.1f} GB, --budget {smaller} --jobs 1 about " \
                 f"{need_gb(smaller, 1, peaks):.1f} GB"
    what = "a run of every claim" if claims is None else f"a run of {claims} claim{'s' if claims != 1 else ''}"
    how_much = f"about {need:.1f} GB" if claims is None else f"at most about {need:.1f} GB (measured on every claim)"
    return (f"{what} at the {budget} budget with {lanes} claim lane{'s' if lanes != 1 else ''} needs "
            f"{how_much} of memory at its peak, and {available:.1f} GB are available; it may be killed by "
            f"the operating system{advice}")
