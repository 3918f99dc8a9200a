"""The exploration claims' entries from the sweep's samples (:mod:`checks.experiments.exploration_sweep`):
Wilson intervals and fitted exponents at the sweep's level, one scaling entry per hidden constant, the
reconciliation of the constants' verdicts, and the fitted exponents as slip text.

Shared by Lemmas 1, 5, 7, 8 and 9 (:mod:`checks.claims.exploration`); the verdict rules themselves are
:func:`checks.scaling.decide_scaling` and :func:`checks.scaling.reconcile_entries`.
"""

from __future__ import annotations

import numpy as np

from moecl_verify.checks import stats
from moecl_verify.checks.context import Context
from moecl_verify.checks.experiments.exploration_sweep import BASE, LEVEL, REPLICATES, SIGMA0, SIGMA_T
from moecl_verify.checks.model import ClaimResult
from moecl_verify.checks.scaling import ScalingFit, decide_scaling, fit_exponent, reconcile_entries
from moecl_verify.numeric.seeding import generator_for


def wilson(successes: int, trials: int, level: float = LEVEL) -> tuple[float, float]:
    """:func:`checks.stats.wilson` at this module's level."""
    return stats.wilson(successes, trials, level)


def fit_exponent_batched(sigma0: list[float], samples: list[np.ndarray], rng: np.random.Generator,
                         q: float | None = None, level: float = LEVEL, resamples: int = 2000) -> ScalingFit:
    """The mean (q None) or q-quantile scaling fit of :func:`checks.scaling.fit_exponent`."""
    return fit_exponent(sigma0, samples, rng, level=level, resamples=resamples, quantile=q)


def scaling_entry(ctx: Context, claim_id: str, source: str, part: str, law: str, k: float, samples: list[np.ndarray],
                  c: float, quantity: str, formula: str, *, quantile: float | None = None, tolerance: float = 0.1,
                  extra: dict | None = None, form: str = "stated", note: str = "") -> ClaimResult:
    """One scaling entry (one hidden constant): fitted exponent, 99% bootstrap interval, O/Theta/Omega verdict."""
    rng = generator_for(ctx.seed, "exploration", "bootstrap", claim_id, part, str(c))
    fit = fit_exponent_batched(list(SIGMA0), samples, rng, q=quantile)
    stat = "mean" if quantile is None else f"q{quantile:g}"
    verdict, reason = decide_scaling(fit, law, k, tolerance=tolerance)
    label = f"{part}, c = {c:g}"
    return ClaimResult(
        id=claim_id, source=source, kind="scaling", form=form, verdict=verdict, expected=k, observed=fit.exponent,
        stderr=(fit.high - fit.low) / (2 * 2.576), p_value=None, false_fail_rate=1 - fit.level,
        min_detectable=tolerance,
        config={"features": BASE["features"], "part": label, **{k_: v for k_, v in BASE.items() if k_ != "features"},
                "law": f"{law}(sigma0^{k})", "hidden_constant": c, **fit.summary(),
                "sigma0": list(SIGMA0), "sigma_t": SIGMA_T, "statistic": stat,
                "replicates": REPLICATES[ctx.budget.name], "seed": ctx.seed,
                "means": [{"sigma0": s0, f"{'mean' if quantile is None else 'mean_q'}_{quantity}": m}
                          for s0, m in zip(SIGMA0, fit.means)],
                **(extra or {})},
        evidence=f"{label}: {quantity} ({stat} over replicates) against sigma0: {fit}. Claim {law}(sigma0^{k}): "
        f"{verdict}, because {reason}." + (f" {note}" if note else ""),
        formula=formula,
    )


def reconcile(entries: list[ClaimResult]) -> list[ClaimResult]:
    """Per measured quantity (the part without ', c = ...'), a refutation contradicted by another c -> inconclusive."""
    return reconcile_entries(entries)


def refuted_at_every_constant(results: list[ClaimResult], part: str) -> list[ClaimResult]:
    """The entries of one quantity if every hidden constant refutes it, else []."""
    hits = [r for r in results if r.config.get("part", "").rsplit(", c =", 1)[0] == part]
    return hits if hits and all(r.verdict == "refuted" for r in hits) else []


def fits(entries: list[ClaimResult]) -> str:
    """The fitted exponents of one quantity's entries (one per hidden constant), for slip text."""
    return "; ".join(f"c = {r.config['hidden_constant']:g}: exponent {r.observed:.2f} (99% interval half-width "
                     f"{2.576 * r.stderr:.2f})" for r in entries)
