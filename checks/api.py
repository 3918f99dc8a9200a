"""The public Python API: check one claim, get a small printable result.

``check(claim_id, budget="smoke", seed=0)`` reruns one claim's
experiment.  Alone, its entries are Holm-corrected among themselves; to
reproduce the verdicts of a whole run exactly, pass the thresholds that run
recorded (``false_fail_rates`` keyed ``"form/features"``, as in
results.json), since with the convention of :func:`checks.stats.holm` an entry
is refuted exactly when its p-value is at or below its recorded threshold.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from moecl_verify.checks import pack as packs
from moecl_verify.checks import strength
from moecl_verify.checks.context import BUDGETS, Context, context_for, measure_claim
from moecl_verify.checks.entry_key import EntryKey
from moecl_verify.checks.model import ClaimResult, Slip
from moecl_verify.checks.registry import get
from moecl_verify.checks.decide import decide_claims, is_exact
from moecl_verify.checks.runner import DEFAULT_FAMILY_RATE
from moecl_verify.numeric.cache import CacheLocked, CacheUnavailable, NotACache, ResultCache
from moecl_verify.numeric.chunks import ChunkRunner

KERNEL_CACHE_ENV = "MOECL_KERNEL_CACHE_DIR"  # = reports.notebook.KERNEL_CACHE_ENV


def entry_key(item) -> str:
    """How an entry (a decided result, or evidence before its decision) is named within its claim:
    form/features, then its label (:attr:`~moecl_verify.checks.entry_key.EntryKey.label`) where it has one."""
    key = item.key if isinstance(item, ClaimResult) else EntryKey.of(item.claim_id, item.form, item.config)[0]
    name = f"{key.form}/{key.features or '-'}"
    return f"{name}/{key.label}" if key.label else name


def _fmt(value, spec: str) -> str:
    return "—" if value is None else format(value, spec)


@dataclass(frozen=True)
class ClaimCheck:
    """The verdicts of one claim; printing it shows one line per entry."""

    claim_id: str
    budget: str
    seed: int
    results: tuple[ClaimResult, ...]
    slips: tuple[Slip, ...]

    def verdicts(self) -> dict[str, str]:
        return {entry_key(r): r.verdict for r in self.results}

    def __str__(self) -> str:
        lines = [f"{self.claim_id} (budget {self.budget}, seed {self.seed})"]
        for r in self.results:
            head = f"  {entry_key(r):<24} {r.verdict:<13} "
            if r.expected is None:
                lines.append(head + "(symbolic) " + r.evidence)
                continue
            lines.append(
                head + f"claimed {_fmt(r.expected, '.4g')}  measured {_fmt(r.observed, '.4g')} ± "
                f"{_fmt(r.stderr, '.2g')}  p {_fmt(r.p_value, '.2g')}  false-fail rate {_fmt(r.false_fail_rate, '.2g')}"
            )
        return "\n".join(lines)

    __repr__ = __str__


_CONTEXTS: dict[tuple, Context] = {}


def _context(budget: str, seed: int, pack: str, options: dict) -> Context:
    """One context per (budget, seed, pack, options) in a process, so claims that share an experiment
    (claims declaring one namespace) simulate it once per notebook kernel, as in a run.  The
    shared simulations are deterministic functions of those."""
    key = (budget, seed, pack, tuple(sorted(options.items())))
    if key not in _CONTEXTS:
        _CONTEXTS[key] = context_for(packs.get(pack), budget, seed, options)
    return _CONTEXTS[key]


def _measure(claim, ctx: Context) -> list:
    """Measure, reading and filling the results cache a notebook kernel was given
    (``MOECL_KERNEL_CACHE_DIR``, set by the report's notebook execution); without
    it, or if another run holds the cache, everything is computed."""
    directory = os.environ.get(KERNEL_CACHE_ENV)
    if not directory:
        return measure_claim(claim, ctx)
    try:
        with ResultCache(directory) as cache:
            ctx.runner = ChunkRunner(cache=cache)
            try:
                return measure_claim(claim, ctx)
            finally:
                ctx.runner = ChunkRunner()
    except (CacheLocked, CacheUnavailable, NotACache):
        return measure_claim(claim, ctx)


def check(
    claim_id: str,
    *,
    budget: str = "smoke",
    seed: int = 0,
    false_fail_rates: dict[str, float] | None = None,
    family_rate: float = DEFAULT_FAMILY_RATE,
    pack: str | None = None,
    options: dict | None = None,
) -> ClaimCheck:
    """Rerun one claim of ``pack`` (default: the default pack) with the pack's run ``options`` (as the run
    recorded them, ``meta.options``) and decide its entries."""
    if budget not in BUDGETS:
        raise ValueError(f"budget must be one of {', '.join(BUDGETS)}, got {budget!r}")
    claim = get(claim_id, pack)
    measured = _measure(claim, _context(budget, seed, packs.get(pack).name, options or {}))
    thresholds = None
    if false_fail_rates is not None:
        keys = [entry_key(m) for m in measured if not is_exact(m)]
        false_fail_rates = {k: v for k, v in false_fail_rates.items() if v is not None}
        missing = [k for k in keys if k not in false_fail_rates]
        if missing:
            raise ValueError(f"false_fail_rates lacks entries {missing}")
        thresholds = [false_fail_rates[k] for k in keys]
    results = tuple(decide_claims([measured], family_rate, thresholds)[0])
    slips = strength.settle(claim.slips(list(results)), results) if claim.slips else ()
    return ClaimCheck(claim_id, budget, seed, results, slips)
