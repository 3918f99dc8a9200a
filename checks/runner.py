"""Run selected claims: measure each (or reuse its finished record), then decide every verdict of the
run at once (:mod:`moecl_verify.checks.decide`) and collect slips and readings."""

from __future__ import annotations

import math
import platform
import time
from importlib import metadata
from typing import Callable

import mpmath
import numpy as np
import sympy

from moecl_verify.checks import causes, stats, strength
from moecl_verify.checks.claim_store import ClaimStore
from moecl_verify.checks.context import BUDGETS, context_for, measure_with_artifacts
from moecl_verify.checks.decide import decide_claims, is_exact
from moecl_verify.checks.model import RunResult
from moecl_verify.checks import lanes as lanes_module
from moecl_verify.checks import pack as packs
from moecl_verify.checks.registry import Claim, select
from moecl_verify.numeric.chunks import ChunkRunner

DEFAULT_FAMILY_RATE = 1e-3


# Optional libraries some claims compute with (deep networks); listed when installed, so a finished
# claim's record is not reused across versions of them, nor across their absence and presence.
OPTIONAL_LIBRARIES = ("jax", "jaxlib", "scikit-learn")
# Libraries every claim's numbers depend on besides numpy, sympy and mpmath.
CORE_LIBRARIES = ("scipy", "numba")


def versions() -> dict:
    out = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "sympy": sympy.__version__,
        "mpmath": mpmath.__version__,
    }
    for name in CORE_LIBRARIES + OPTIONAL_LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


def run(
    patterns: list[str] | None = None,
    budget: str = "standard",
    seed: int = 0,
    family_rate: float = DEFAULT_FAMILY_RATE,
    progress: Callable[[str, int, int], None] | None = None,
    chunk_runner: ChunkRunner | None = None,
    timings: dict | None = None,
    reuse_claims: bool = True,
    claim_records: dict | None = None,
    on_claim: Callable[[int, int, str, str], None] | None = None,
    options: dict | None = None,
    lanes: int = 1,
    pack: "str | packs.Pack | None" = None,
    group_memory: list | None = None,
) -> RunResult:
    """Run the claims matching ``patterns`` and return verdicts, slips, readings.

    ``chunk_runner`` (executor and cache, :mod:`numeric.chunks`) changes where
    and whether simulation chunks are computed, never the results.  ``timings``,
    if given, is filled with each claim's wall seconds (for run-info.json, never
    for results.json, which must not depend on the machine).

    With a cache (and ``reuse_claims``), each claim's measurements and
    artifacts are kept as a record (:mod:`moecl_verify.checks.claim_store`) and an identical
    rerun reuses them; Holm, verdicts and slips are always recomputed.
    ``claim_records``, if given, is filled with how many were reused.

    For a display: ``on_claim(index, total, claim_id, phase)`` (index from 1) is called with phase
    ``"start"`` before each claim and ``"done"`` or ``"reused"`` after it; ``progress(label, done,
    total)`` hears each claim's own work and then the step ``deciding verdicts (Holm across N
    entries)``.  Neither changes a result.

    ``pack``: the document whose claims run (:mod:`moecl_verify.checks.pack`; default: the default pack).
    ``options``: values of the pack's run options by name (``Context.options``); the given ones are part of
    the key of the finished claims' records.

    ``lanes`` > 1 measures the claims in that many worker processes (:mod:`moecl_verify.checks.lanes`),
    with the chunk runner's cache but not its executor (each lane computes its chunks in process); the
    results are the same as with one lane.  ``group_memory``, if given, is filled with each group's claims and
    the peak resident memory of its lane while it ran them (in lanes only; for run-info.json)."""
    if budget not in BUDGETS:
        raise ValueError(f"budget must be one of {', '.join(BUDGETS)}, got {budget!r}")
    if isinstance(lanes, bool) or not isinstance(lanes, int) or lanes < 1:
        raise ValueError(f"lanes must be an integer >= 1, got {lanes!r}")
    if not (0 < family_rate < 1) or math.isnan(family_rate):
        raise ValueError(f"family false-fail rate must be in (0, 1), got {family_rate}")
    pack = packs.get(pack)
    options = {name: value for name, value in (options or {}).items() if value is not None}
    claims = select(patterns, pack)
    ctx = context_for(pack, budget, seed, options)
    if chunk_runner is not None:
        ctx.runner = chunk_runner
    if progress is not None:
        ctx.progress = progress
    store = None
    if reuse_claims and ctx.runner.cache is not None:
        keyed = {**versions(), **{name: str(value) for name, value in sorted(options.items())}}
        store = ClaimStore(ctx.runner.cache, budget, BUDGETS[budget].replicates, seed, keyed, pack)
    measured: dict[str, list] = {}
    artifacts: dict = {}
    position = {claim.id: index for index, claim in enumerate(claims, 1)}
    finished = 0

    def keep(claim: Claim, ms: list, claim_artifacts: dict, seconds: float, phase: str) -> None:
        nonlocal finished
        measured[claim.id] = ms
        artifacts[claim.id] = claim_artifacts
        finished += 1
        if timings is not None:
            timings[claim.id] = round(seconds, 3)
        if on_claim is not None:
            # Sequentially the index is the claim's place; in lanes, how many have finished.
            on_claim(position[claim.id] if lanes == 1 else finished, len(claims), claim.id, phase)

    records = {claim.id: store.get(claim.id) if store is not None else None for claim in claims}
    todo = [claim for claim in claims if records[claim.id] is None]
    # In one process, shared work is dropped after the last claim that declares its namespace, so that a run
    # holds one group's simulations at a time, as a lane does.
    last_user = {name: claim.id for claim in todo for name in claim.shares}
    # Lanes pay for their start-up only with two groups or more to spread.
    lanes = min(lanes, len(lanes_module.groups(todo, pack.cost_hints))) if todo else 1
    for claim in claims:
        started = time.perf_counter()
        record = records.pop(claim.id)
        if record is not None:
            if lanes == 1 and on_claim is not None:
                on_claim(position[claim.id], len(claims), claim.id, "start")
            if lanes == 1:  # in lanes no claim is "running" yet, and the display would take it for a step
                ctx.progress(f"{claim.id} (reused)", 1, 1)
            keep(claim, *record, time.perf_counter() - started, "reused")
        elif lanes == 1:
            if on_claim is not None:
                on_claim(position[claim.id], len(claims), claim.id, "start")
            ms, claim_artifacts = measure_with_artifacts(claim, ctx)
            ctx.release(name for name in claim.shares if last_user[name] == claim.id)
            if store is not None:
                store.put(claim.id, ms, claim_artifacts)
            keep(claim, ms, claim_artifacts, time.perf_counter() - started, "done")
    if lanes > 1:
        cache = ctx.runner.cache
        by_id = {claim.id: claim for claim in todo}

        def add_counts(counts: dict) -> None:
            if cache is not None:
                for key in ("hits", "misses", "corrupt"):
                    setattr(cache.stats, key, getattr(cache.stats, key) + counts.get(key, 0))
                for message in counts.get("problems", ()):  # the lanes' cache warnings, said here
                    cache.note_problem(message)
            if group_memory is not None and "peak_rss_bytes" in counts:
                group_memory.append({"claims": counts["claims"], "peak_rss_bytes": counts["peak_rss_bytes"]})

        for done in lanes_module.measure_in_lanes(
                todo, lanes=lanes, budget=budget, seed=seed, options=options, pack=pack.name,
                cache_dir=None if cache is None else str(cache.directory),
                on_start=lambda claim_id: on_claim and on_claim(finished + 1, len(claims), claim_id, "start"),
                on_work=ctx.progress, on_counts=add_counts):
            if store is not None:
                store.put(done.claim_id, done.measurements, done.artifacts)
            keep(by_id[done.claim_id], done.measurements, done.artifacts, done.seconds, "done")
    # Registry order, whatever order the lanes finished in: nothing below depends on the schedule.
    measured = [(claim, measured[claim.id]) for claim in claims]
    artifacts = {name: value for claim in claims for name, value in artifacts[claim.id].items()}
    if claim_records is not None and store is not None:
        claim_records.update(store.summary())
    # Every verdict of the run is decided in one place, Holm across all non-exact entries.
    tested = sum(1 for _, ms in measured for item in ms if not is_exact(item))
    ctx.progress(f"deciding verdicts (Holm across {tested} entries)", 0, 1)
    decided_by_claim = decide_claims([ms for _, ms in measured], family_rate)
    results, slips, interpretations, seen = [], [], [], set()
    for (claim, _), claim_results in zip(measured, decided_by_claim):
        results.extend(claim_results)
        if claim.slips is not None:
            slips.extend(claim.slips(claim_results) if store is None
                         else store.slips(claim.id, claim_results, claim.slips))
        for interp in claim.interpretations:
            if interp.id not in seen:
                seen.add(interp.id)
                interpretations.append(interp)
    # A pack whose slips explain each other in a circle has a bug the report would hide: fail the run.
    causes.graph(slips)
    # Every slip states how sure it is: as its claim declared, else from its own entries.
    slips = list(strength.settle(slips, results))
    meta = {
        "pack": pack.name,
        **({"options": {name: str(value) for name, value in sorted(options.items())}} if options else {}),
        "claims": [c.id for c in claims],
        "budget": budget,
        "replicates": BUDGETS[budget].replicates,
        "seed": seed,
        "family_false_fail_rate": family_rate,
        "power": stats.POWER,
        "versions": versions(),
        "simulation": pack.simulation,
    }
    claim_info = tuple(
        {
            "id": c.id,
            "source": c.source,
            "kind": c.kind,
            "summary": c.summary,
            "notes": c.notes,
            "statement": c.statement,
            "preconditions": list(c.preconditions),
        }
        for c in claims
    )
    return RunResult(tuple(results), tuple(slips), tuple(interpretations), meta, claim_info, artifacts, pack.title)
