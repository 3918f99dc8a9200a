"""Run selected claims and turn their measurements into verdicts.

Verdict rule for an expected-value identity (docs/design.md, 'From a claim to a verdict'):

1. Each horizon is a two-sided z-test; the horizons of one entry are combined
   by Bonferroni into the entry's p-value.
2. Holm's step-down across all entries of the run controls the family-wise
   false-fail rate at ``family_rate`` (default 1e-3); the threshold each entry
   faced is its reported ``false_fail_rate``.
3. Rejected -> ``refuted``.  Not rejected -> ``confirmed`` only if, at every
   horizon, the run would have detected a discrepancy of ``resolution * scale``
   with 90% power (``min_detectable`` is the worst horizon's); otherwise
   ``inconclusive``, because the run could not have refuted it.
"""

from __future__ import annotations

import math
import platform
import time
from typing import Callable

import mpmath
import numpy as np
import sympy

from moecl_verify.checks import stats
from moecl_verify.checks.claim_store import ClaimStore
from moecl_verify.checks.context import BUDGETS, Context
from moecl_verify.checks.model import ClaimResult, Measurement, RunResult
from moecl_verify.checks.registry import select
from moecl_verify.numeric.chunks import ChunkRunner

DEFAULT_FAMILY_RATE = 1e-3


def _case_p(m: Measurement, test) -> float:
    """p-value against the claim for one case: two-sided for identities; for a
    positive-margin criterion, P(Z <= z) under Delta = 0 (evidence that Delta < 0)."""
    if m.rule == "identity":
        return test.p_value
    return stats.one_sided_p(-test.z)


def entry_p(m: Measurement) -> float:
    return stats.bonferroni_min_p([_case_p(m, h.test) for h in m.tests])


def _horizon_name(m: Measurement) -> str:
    if m.horizon_name:
        return m.horizon_name
    return "t" if "t" in m.config else "T"


def decide(m: Measurement, threshold: float, rejected: bool) -> ClaimResult:
    """Verdict and evidence for one measurement, given its Holm threshold."""
    if m.rule == "positive":
        return _decide_positive(m, threshold, rejected)
    per_horizon_alpha = threshold / len(m.tests)
    mdes = [h.test.min_detectable(per_horizon_alpha) for h in m.tests]
    worst_mde = max(mdes)
    decisive = min(m.tests, key=lambda h: (h.test.p_value, str(h.horizon)))
    test = decisive.test
    hname = _horizon_name(m)
    target = m.resolution * m.scale
    if rejected:
        verdict = "refuted"
        judgement = f"refuted at false-fail rate {threshold:.2g}"
    elif m.not_exact_reason:
        verdict = "inconclusive"
        judgement = (
            f"not rejected (the run detects discrepancies >= {worst_mde:.3g}), but not confirmed: {m.not_exact_reason}"
        )
    elif worst_mde <= target:
        verdict = "confirmed"
        judgement = (
            f"not rejected, and the run detects any discrepancy >= {worst_mde:.3g} "
            f"(<= {m.resolution:.0%} of the error scale {m.scale:.3g}) with 90% power"
        )
    else:
        verdict = "inconclusive"
        judgement = (
            f"not rejected, but the run only detects discrepancies >= {worst_mde:.3g}, more than "
            f"{m.resolution:.0%} of the error scale {m.scale:.3g}; more replicates are needed"
        )
    evidence = (
        f"{m.form} form, {m.config.get('features', '-')} features, {test.n} replicates: at {hname} = {decisive.horizon} "
        f"formula {test.expected:.4g} vs Monte Carlo {test.observed:.4g} ± {test.stderr:.2g} "
        f"(z = {test.z:.1f}); {judgement}."
    )
    return _result(m, verdict, threshold, worst_mde, decisive, mdes, evidence, hname)


def _decide_positive(m: Measurement, threshold: float, rejected: bool) -> ClaimResult:
    """A criterion 'Delta > 0 in every case' (qualitative claims, DESIGN 'Verdicts')."""
    per_case_alpha = threshold / len(m.tests)
    z_crit = stats.normal_upper_quantile(per_case_alpha)
    mdes = [h.test.min_detectable(2 * per_case_alpha) for h in m.tests]  # one-sided at per_case_alpha
    worst_mde = max(mdes)
    decisive = min(m.tests, key=lambda h: (h.test.z, str(h.horizon)))
    hname = _horizon_name(m)
    if rejected:
        verdict = "refuted"
        judgement = f"the margin is significantly negative in case {decisive.horizon} (false-fail rate {threshold:.2g})"
    elif all(h.test.z >= z_crit for h in m.tests):
        verdict = "confirmed"
        judgement = f"every margin is significantly positive (z >= {z_crit:.2f} in each case)"
    else:
        verdict = "inconclusive"
        judgement = (
            f"no margin is significantly negative, but not every one is significantly positive; a true margin "
            f">= {worst_mde:.3g} would be confirmed with 90% power"
        )
    cases = "; ".join(f"{h.horizon}: {h.test.observed:.4g} ± {h.test.stderr:.2g}" for h in m.tests)
    evidence = f"criterion: {m.formula}. Margins (Delta ± s.e.) by case: {cases}. {judgement}."
    return _result(m, verdict, threshold, worst_mde, decisive, mdes, evidence, hname)


def _result(m, verdict, threshold, worst_mde, decisive, mdes, evidence, hname) -> ClaimResult:
    test = decisive.test
    horizons = [
        {
            hname: h.horizon,
            "expected": h.test.expected,
            "observed": h.test.observed,
            "stderr": h.test.stderr,
            "z": h.test.z,
            "p_value": _case_p(m, h.test),
            "min_detectable": mde,
        }
        for h, mde in zip(m.tests, mdes)
    ]
    config = dict(m.config)
    config["decisive_horizon"] = decisive.horizon
    return ClaimResult(
        id=m.claim_id,
        source=m.source,
        kind=m.kind,
        form=m.form,
        verdict=verdict,
        expected=test.expected,
        observed=test.observed,
        stderr=test.stderr,
        p_value=entry_p(m),
        false_fail_rate=threshold,
        min_detectable=worst_mde,
        config=config,
        evidence=evidence,
        horizons=horizons,
        formula=m.formula,
        difference=m.difference,
    )


def versions() -> dict:
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "sympy": sympy.__version__,
        "mpmath": mpmath.__version__,
    }


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
) -> RunResult:
    """Run the claims matching ``patterns`` and return verdicts, slips, readings.

    ``chunk_runner`` (executor and cache, :mod:`numeric.chunks`) changes where
    and whether simulation chunks are computed, never the results.  ``timings``,
    if given, is filled with each claim's wall seconds (for run-info.json, never
    for results.json, which must not depend on the machine).

    With a cache (and ``reuse_claims``), each claim's measurements and
    artifacts are kept as a record (:mod:`moecl_verify.checks.claim_store`) and an identical
    rerun reuses them; Holm, verdicts and slips are always recomputed.
    ``claim_records``, if given, is filled with how many were reused."""
    if budget not in BUDGETS:
        raise ValueError(f"budget must be one of {', '.join(BUDGETS)}, got {budget!r}")
    if not (0 < family_rate < 1) or math.isnan(family_rate):
        raise ValueError(f"family false-fail rate must be in (0, 1), got {family_rate}")
    claims = select(patterns)
    ctx = Context(budget=BUDGETS[budget], seed=seed)
    if chunk_runner is not None:
        ctx.runner = chunk_runner
    if progress is not None:
        ctx.progress = progress
    store = None
    if reuse_claims and ctx.runner.cache is not None:
        store = ClaimStore(ctx.runner.cache, budget, BUDGETS[budget].replicates, seed, versions())
    measured, artifacts = [], {}
    for claim in claims:
        started = time.perf_counter()
        record = store.get(claim.id) if store is not None else None
        if record is None:
            ms = claim.measure(ctx)
            claim_artifacts = {name: fn(ctx) for name, fn in claim.artifacts}
            if store is not None:
                store.put(claim.id, ms, claim_artifacts)
        else:
            ms, claim_artifacts = record
            ctx.progress(f"{claim.id} (reused)", 1, 1)
        measured.append((claim, ms))
        artifacts.update(claim_artifacts)
        if timings is not None:
            timings[claim.id] = round(time.perf_counter() - started, 3)
    if claim_records is not None and store is not None:
        claim_records.update(store.summary())
    # Symbolic results arrive decided (no sampling, no false-fail rate); only
    # Monte Carlo measurements enter the Holm family.
    flat = [m for _, ms in measured for m in ms if isinstance(m, Measurement)]
    holm = stats.holm([entry_p(m) for m in flat], family_rate)
    decided = iter(zip(flat, holm.thresholds, holm.rejected))
    results, slips, interpretations, seen = [], [], [], set()
    for claim, ms in measured:
        claim_results = [m if isinstance(m, ClaimResult) else decide(*next(decided)) for m in ms]
        results.extend(claim_results)
        if claim.slips is not None:
            slips.extend(claim.slips(claim_results) if store is None
                         else store.slips(claim.id, claim_results, claim.slips))
        for interp in claim.interpretations:
            if interp.id not in seen:
                seen.add(interp.id)
                interpretations.append(interp)
    meta = {
        "claims": [c.id for c in claims],
        "budget": budget,
        "replicates": BUDGETS[budget].replicates,
        "seed": seed,
        "family_false_fail_rate": family_rate,
        "power": stats.POWER,
        "versions": versions(),
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
    return RunResult(tuple(results), tuple(slips), tuple(interpretations), meta, claim_info, artifacts)
