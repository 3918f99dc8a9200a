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


def warning(budget: str, lanes: int, available: float | None, peaks: Mapping) -> str | None:
    """One line when a run at ``budget`` with ``lanes`` lanes may need more memory than ``available``
    (``peaks``: the pack's measured peaks); None when it fits (or nothing is known)."""
    need = need_gb(budget, lanes, peaks)
    if available is None or need is None or need <= available:
        return None
    advice = ""
    fewer = [n for n in range(lanes - 1, 0, -1) if need_gb(budget, n, peaks) <= available]
    smaller = "standard" if budget == "full" else "smoke"
    if fewer:
        advice = f"; with --jobs {fewer[0]} it needs about {need_gb(budget, fewer[0], peaks):.1f} GB"
    elif budget != "smoke" and need_gb(smaller, 1, peaks) is not None:
        advice = f"; --jobs 1 needs about {need_gb(budget, 1, peaks):.1f} GB, --budget {smaller} --jobs 1 about " \
                 f"{need_gb(smaller, 1, peaks):.1f} GB"
    return (f"a run of every claim at the {budget} budget with {lanes} claim lane{'s' if lanes != 1 else ''} needs "
            f"about {need:.1f} GB of memory at its peak, and {available:.1f} GB are available; it may be killed by "
            f"the operating system{advice}")
