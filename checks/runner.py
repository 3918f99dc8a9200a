"""Run selected claims: measure each (or reuse its finished record), then decide every verdict of the
run at once (:mod:`moecl_verify.checks.decide`) and collect slips and readings."""

from __future__ import annotations

import dataclasses
import math
import os
import platform
import time
from importlib import metadata
from dataclasses import dataclass
from collections.abc import Mapping
from typing import Callable

import mpmath
import numpy as np
import sympy

from moecl_verify.checks import causes, stats, strength
from moecl_verify.checks.claim_store import ClaimStore
from moecl_verify.checks.context import BUDGETS, Context, context_for, measure_with_artifacts
from moecl_verify.checks.decide import decide_claims, is_exact
from moecl_verify.checks.model import RunResult
from moecl_verify.checks import lanes as lanes_module
from moecl_verify.checks import pack as packs
from moecl_verify.checks.registry import Claim, select
from moecl_verify.numeric.chunks import ChunkRunner

DEFAULT_FAMILY_RATE = 1e-3


# Optional libraries some claims compute with (deep networks); listed when installed, so a finished
# claim's record is not reused across versions of them, nor across their absence and presence.
OPTIONAL_LIBRARIES = ("jax", "jaxlib", "scikit-learn",
                      # JAX's accelerator builds: with one installed, JAX computes on the accelerator (its results
                      # differ from the CPU's, replicate by replicate), so a finished claim is not reused across
                      # their presence and absence.
                      "jax-cuda12-plugin", "jax-cuda12-pjrt", "jax-cuda13-plugin", "jax-cuda13-pjrt", "libtpu")
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
    if os.environ.get("JAX_PLATFORMS"):  # a device forced (e.g. the CPU on a GPU machine)
        out["JAX_PLATFORMS"] = os.environ["JAX_PLATFORMS"]
    return out


@dataclass(frozen=True)
class Observers:
    """What a caller hears during a run, none of which changes a result: ``progress(label, done, total)`` (each
    claim's own work, then the deciding step), ``on_claim(index, total, claim_id, phase)`` (phase "start",
    "done" or "reused"), and the dicts and lists filled for run-info.json: ``timings`` (each claim's wall
    seconds), ``claim_records`` (how many records were reused), ``group_memory`` (each lane group's claims and
    peak resident memory)."""

    progress: Callable[[str, int, int], None] | None = None
    on_claim: Callable[[int, int, str, str], None] | None = None
    timings: dict | None = None
    claim_records: dict | None = None
    group_memory: list | None = None


@dataclass(frozen=True, eq=False)
class RunPlan:
    """What a run will do, fixed before any claim is measured: the pack and its selected claims in registry
    order, the context they measure in, the store of finished claims (None: no reuse), and how."""

    pack: "packs.Pack"
    claims: tuple[Claim, ...]
    ctx: Context
    store: ClaimStore | None
    budget: str
    seed: int
    family_rate: float
    options: dict
    lanes: int


def plan(patterns: list[str] | None, budget: str, seed: int, family_rate: float, chunk_runner: ChunkRunner | None,
         reuse_claims: bool, options: dict | None, lanes: int, pack: "str | packs.Pack | None",
         progress: Callable[[str, int, int], None] | None = None) -> RunPlan:
    """Check the run's parameters and fix what it will do (:class:`RunPlan`); a bad value raises ValueError."""
    if budget not in BUDGETS:
        raise ValueError(f"budget must be one of {', '.join(BUDGETS)}, got {budget!r}")
    if isinstance(lanes, bool) or not isinstance(lanes, int) or lanes < 1:
        raise ValueError(f"lanes must be an integer >= 1, got {lanes!r}")
    if not (0 < family_rate < 1) or math.isnan(family_rate):
        raise ValueError(f"family false-fail rate must be in (0, 1), got {family_rate}")
    pack = packs.get(pack)
    options = {name: value for name, value in (options or {}).items() if value is not None}
    claims = tuple(select(patterns, pack))
    ctx = context_for(pack, budget, seed, options)
    if chunk_runner is not None:
        ctx.runner = chunk_runner
    if progress is not None:
        ctx.progress = progress
    store = None
    if reuse_claims and ctx.runner.cache is not None:
        keyed = {**versions(), **{name: str(value) for name, value in sorted(options.items())}}
        store = ClaimStore(ctx.runner.cache, budget, BUDGETS[budget].replicates, seed, keyed, pack)
    return RunPlan(pack, claims, ctx, store, budget, seed, family_rate, options, lanes)


def measure(run_plan: RunPlan, observers: Observers = Observers()) -> tuple[list[tuple[Claim, list]], dict]:
    """Every planned claim's measurements and artifacts, each reused from its record where the store has one,
    else measured (in this process, or in lanes when the plan has more than one and there are groups to
    spread) and kept.  Returned in registry order, whatever order the lanes finished in."""
    claims, ctx, store, pack = run_plan.claims, run_plan.ctx, run_plan.store, run_plan.pack
    on_claim, timings = observers.on_claim, observers.timings
    measured: dict[str, list] = {}
    artifacts: dict = {}
    position = {claim.id: index for index, claim in enumerate(claims, 1)}
    finished = 0
    records = {claim.id: store.get(claim.id) if store is not None else None for claim in claims}
    todo = [claim for claim in claims if records[claim.id] is None]
    # Lanes pay for their start-up only with two groups or more to spread.
    lanes = min(run_plan.lanes, len(lanes_module.groups(todo, pack.cost_hints))) if todo else 1

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

    # In one process, shared work is dropped after the last claim that declares its namespace, so that a run
    # holds one group's simulations at a time, as a lane does.
    last_user = {name: claim.id for claim in todo for name in claim.shares}
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
            if observers.group_memory is not None and "peak_rss_bytes" in counts:
                observers.group_memory.append({"claims": counts["claims"], "peak_rss_bytes": counts["peak_rss_bytes"]})

        for done in lanes_module.measure_in_lanes(
                todo, lanes=lanes, budget=run_plan.budget, seed=run_plan.seed, options=run_plan.options,
                pack=pack.name, cache_dir=None if cache is None else str(cache.directory),
                on_start=lambda claim_id: on_claim and on_claim(finished + 1, len(claims), claim_id, "start"),
                on_work=ctx.progress, on_counts=add_counts):
            if store is not None:
                store.put(done.claim_id, done.measurements, done.artifacts)
            keep(by_id[done.claim_id], done.measurements, done.artifacts, done.seconds, "done")
    if observers.claim_records is not None and store is not None:
        observers.claim_records.update(store.summary())
    return ([(claim, measured[claim.id]) for claim in claims],
            {name: value for claim in claims for name, value in artifacts[claim.id].items()})


def decide(run_plan: RunPlan, measured: list[tuple[Claim, list]]) -> tuple[list, list, list]:
    """Every verdict of the run, decided in one place (Holm across all non-exact entries,
    :func:`checks.decide.decide_claims`), then each claim's slips (reused where its decided results are
    unchanged), their causes checked for circles and their strength settled, and the readings in claim order."""
    ctx, store = run_plan.ctx, run_plan.store
    tested = sum(1 for _, ms in measured for item in ms if not is_exact(item))
    ctx.progress(f"deciding verdicts (Holm across {tested} entries)", 0, 1)
    decided_by_claim = decide_claims([ms for _, ms in measured], run_plan.family_rate)
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
    return results, list(strength.settle(slips, results)), interpretations


def _sizes(sizes) -> dict:
    """A pack's sizes for one budget (a dataclass, a mapping, or one value, shown as ``size``) as JSON values:
    numbers, strings and booleans as they are, sequences as lists, anything else (a fraction) as its text."""
    def plain(value):
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return str(value)

    if dataclasses.is_dataclass(sizes):
        items = {f.name: getattr(sizes, f.name) for f in dataclasses.fields(sizes)}
    elif isinstance(sizes, Mapping):
        items = dict(sizes)
    else:  # one number buys everything (a small pack)
        items = {"size": sizes}
    return {str(name): plain(value) for name, value in items.items()}


def assemble(run_plan: RunPlan, results: list, slips: list, interpretations: list, artifacts: dict) -> RunResult:
    """The run's :class:`RunResult`: the decided entries, slips and readings, the run's meta data and each
    claim's statement."""
    pack, options = run_plan.pack, run_plan.options
    meta = {
        "pack": pack.name,
        **({"options": {name: str(value) for name, value in sorted(options.items())}} if options else {}),
        "claims": [c.id for c in run_plan.claims],
        "budget": run_plan.budget,
        # What the budget buys in the pack's own terms (its Pack.budgets entry), not a number of the machinery's.
        **({"sizes": _sizes(run_plan.ctx.sizes)} if run_plan.ctx.sizes is not None else {}),
        "seed": run_plan.seed,
        "family_false_fail_rate": run_plan.family_rate,
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
        for c in run_plan.claims
    )
    return RunResult(tuple(results), tuple(slips), tuple(interpretations), meta, claim_info, artifacts, pack.title)


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
    """Run the claims matching ``patterns`` and return verdicts, slips, readings: :func:`plan`, then
    :func:`measure`, :func:`decide` and :func:`assemble`.

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
    run_plan = plan(patterns, budget, seed, family_rate, chunk_runner, reuse_claims, options, lanes, pack, progress)
    observers = Observers(progress=progress, on_claim=on_claim, timings=timings, claim_records=claim_records,
                          group_memory=group_memory)
    measured, artifacts = measure(run_plan, observers)
    results, slips, interpretations = decide(run_plan, measured)
    return assemble(run_plan, results, slips, interpretations, artifacts)
