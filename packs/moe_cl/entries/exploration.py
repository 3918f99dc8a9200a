"""The exploration claims' entries from the sweep's samples (:mod:`packs.moe_cl.experiments.exploration_sweep`):
fitted exponents (bootstrap at the sweep's level), one scaling entry's evidence per hidden constant
(:class:`moecl_verify.checks.kinds.scaling.ScalingEvidence`), the fitted exponents as slip text.

Shared by Lemmas 1, 5, 7, 8 and 9 (:mod:`packs.moe_cl.claims.exploration`). No verdict is decided here:
:mod:`moecl_verify.checks.decide` decides every entry under the run's error control and reconciles the
hidden constants' verdicts.
"""

from __future__ import annotations

import numpy as np

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl import texts
from moecl_verify.packs.moe_cl.experiments.exploration_sweep import BASE, LEVEL, SIGMA0, SIGMA_T
from moecl_verify.packs.moe_cl.experiments.pools import POOL_SEED
from moecl_verify.packs.moe_cl.experiments.sweep_design import DESIGN_NOTE, design_config, fit_sweep
from moecl_verify.checks.model import ClaimResult
from moecl_verify.checks.kinds.scaling import ScalingEvidence
from moecl_verify.numeric.seeding import generator_for


def scaling_entry(ctx: Context, claim_id: str, source: str, part: str, law: str, k: float, samples: list[np.ndarray],
                  c: float, quantity: str, formula: str, *, quantile: float | None = None, tolerance: float = 0.1,
                  extra: dict | None = None, form: str = "stated", note: str = "",
                  role: str = "statement") -> ScalingEvidence:
    """One scaling entry's evidence (one hidden constant): fitted exponent with its bootstrap standard error,
    decided against law(sigma0^k) by :mod:`moecl_verify.checks.decide`."""
    rng = generator_for(ctx.seed, "exploration", "bootstrap", claim_id, part, str(c))
    fit = fit_sweep(list(SIGMA0), samples, rng, ctx.sizes, quantile=quantile, level=LEVEL)
    stat = "mean" if quantile is None else f"q{quantile:g}"
    label = f"{part}, c = {c:g}"
    return ScalingEvidence(
        claim_id=claim_id, source=source, form=form, fit=fit, law=law, exponent=k, tolerance=tolerance,
        config={"features": BASE["features"], "part": part, "role": role, **{k_: v for k_, v in BASE.items() if k_ != "features"},
                "hidden_constant": c, "sigma0": list(SIGMA0), "sigma_t": SIGMA_T, "statistic": stat,
                "replicates": ctx.sizes.exploration_replicates, "seed": ctx.seed,
                **design_config(ctx.sizes, ctx.sizes.exploration_replicates),
                "means": [{"sigma0": s0, f"{'mean' if quantile is None else 'mean_q'}_{quantity}": m}
                          for s0, m in zip(SIGMA0, fit.means)],
                **(extra or {})},
        what=f"{label}: {quantity} ({stat} over replicates)", formula=formula,
        note=f"{note} {DESIGN_NOTE.format(pools=fit.pools, seed=POOL_SEED)}".strip(),
    )


def refuted_at_every_constant(results: list[ClaimResult], part: str) -> list[ClaimResult]:
    """The entries of one quantity if every hidden constant refutes it, else []."""
    hits = [r for r in results if r.key.part == part and r.key.constant is not None]
    return hits if hits and all(r.verdict == "refuted" for r in hits) else []


def fits(entries: list[ClaimResult]) -> str:
    """The fitted exponents of one quantity's entries (one per hidden constant), for slip text."""
    return "; ".join(f"exponent {r.observed:.2f} ± {r.stderr:.2f} (bootstrap s.e.) with "
                     f"{texts.steps(r.config['hidden_constant'])}" for r in entries)
