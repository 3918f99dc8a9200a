"""The entries of the router-learning-phase claims (Propositions 1 and 3, Lemmas 13-15) from the samples of
:mod:`packs.moe_cl.experiments.router_phase`: one probability or scaling entry's evidence per hidden constant,
the notes and slip text they share.

"With probability at least 1 - o(1)" is :class:`moecl_verify.checks.kinds.proportion.ProportionEvidence`
with ``claim="vanishing"`` (the reading ``router_phase.PROBABILITY_RULE``); with fewer than three values of
sigma0 that have a testable replicate the entry is an exact ``inconclusive`` with that reason (nothing to
test).  No sampled verdict is decided here: :mod:`moecl_verify.checks.decide` decides every entry under the
run's error control and reconciles the hidden constants' verdicts.
"""

from __future__ import annotations

import numpy as np

from moecl_verify.checks.context import Context
from moecl_verify.checks.kinds.proportion import ProportionEvidence, ProportionRow
from moecl_verify.checks.kinds.scaling import ScalingEvidence
from moecl_verify.checks.model import ClaimResult, Slip, exact_result, keys_of
from moecl_verify.packs.moe_cl import texts
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.packs.moe_cl.experiments.gate_training import BASE
from moecl_verify.packs.moe_cl.experiments.pools import POOL_SEED
from moecl_verify.packs.moe_cl.experiments import router_phase
from moecl_verify.packs.moe_cl.experiments.router_phase import failure_slope
from moecl_verify.packs.moe_cl.experiments.sweep_design import DESIGN_NOTE, design_config, fit_sweep


def probability_entry(ctx: Context, claim_id: str, source: str, part: str, c: float, rows: list[ProportionRow],
                      formula: str, what: str, extra: dict | None = None, note: str = "", role: str = "statement"
                      ) -> ProportionEvidence | ClaimResult:
    """One 'with probability 1 - o(1)' entry at hidden constant c (:class:`ProportionEvidence`, ``vanishing``).
    Values of sigma0 without a single testable replicate are left out; with fewer than three left, the entry is
    an exact ``inconclusive`` (nothing to test)."""
    config = {"features": BASE["features"], "part": part, "role": role, **BASE, "hidden_constant": c,
              "seed": ctx.seed, **(extra or {})}
    rows = sorted((r for r in rows if r.trials > 0), key=lambda r: -r.x)
    if not rows:
        raise ValueError(f"{claim_id} {part}: no replicate could be tested at any sigma0")
    if len(rows) < 3:
        return exact_result(claim_id, source, "probability", config.pop("part"), "inconclusive",
                            f"{what} (hidden constant c = {c:g}): only {len(rows)} sigma0 value(s) with testable "
                            "replicates, too few to see a trend", formula, **{k: v for k, v in config.items()
                                                                              if k != "features"})
    slope = failure_slope(rows, generator_for(ctx.seed, claim_id, "probability", part, str(c)))
    return ProportionEvidence(
        parameter="sigma0",
        claim_id=claim_id, source=source, kind="probability", config=config, formula=formula,
        what=f"{what} (hidden constant c = {c:g})", rows=tuple(rows), claim="vanishing", failure_slope=slope,
        note=note)


def scaling_entry(ctx: Context, claim_id: str, source: str, part: str, c: float, law: str, k: float,
                  samples: list[np.ndarray], formula: str, what: str, tolerance: float = 0.15,
                  extra: dict | None = None, note: str = "", role: str = "statement") -> ScalingEvidence:
    """One scaling entry's evidence (fitted exponent of the per-replicate ``samples`` against the experiment's
    SWEEP) at hidden constant c."""
    # NaN (no value at that sigma0) is left out of that sigma0's mean; pairs across sigma0 are kept.
    fit = fit_sweep(list(router_phase.SWEEP), [np.asarray(x, dtype=float) for x in samples],
                    generator_for(ctx.seed, claim_id, "bootstrap", part, str(c)), ctx.sizes)
    used = [int(np.isfinite(np.asarray(x, dtype=float)).sum()) for x in samples]
    return ScalingEvidence(
        claim_id=claim_id, source=source, fit=fit, law=law, exponent=k, tolerance=tolerance,
        config={"features": BASE["features"], "part": part, "role": role, **BASE, "hidden_constant": c,
                "seed": ctx.seed, **design_config(ctx.sizes, len(samples[0])),
                "means": [{"sigma0": s0, "mean": m, "used_replicates": n}
                          for s0, m, n in zip(router_phase.SWEEP, fit.means, used)], **(extra or {})},
        what=f"{what} (hidden constant c = {c:g})", formula=formula,
        note=f"{note} {DESIGN_NOTE.format(pools=fit.pools, seed=POOL_SEED)}".strip(),
    )


def share_note(shares: dict[float, np.ndarray]) -> str:
    return "Mean share of rounds at which it holds: " + ", ".join(
        f"sigma0 = {s0:g}: {float(v.mean()):.3f}" for s0, v in shares.items()) + "."


def share_range(results: list[ClaimResult], key: str, field: str) -> str:
    values = [row[field] for r in results for row in r.config.get(key, [])]
    if not values:
        return "a share"
    low, high = f"{min(values):.0%}", f"{max(values):.0%}"
    return low if low == high else f"{low} to {high}"


def measured(r: ClaimResult) -> str:
    c = r.config["hidden_constant"]
    if r.kind == "scaling" and r.config.get("exponent_interval"):
        lo, hi = r.config["exponent_interval"]
        return f"c = {c:g}: fitted exponent {r.observed:.2f} (99% interval [{lo:.2f}, {hi:.2f}]) against {r.expected}"
    if r.kind == "probability":
        best = max(r.config["probabilities"], key=lambda row: row["probability"])
        return (f"c = {c:g}: probability {r.observed:.2f} at the smallest sigma0, at most {best['probability']:.2f} "
                f"(sigma0 = {best['sigma0']:g}) over the sweep")
    return f"c = {c:g}: {r.evidence}"


def refuted_part_slips(results: list[ClaimResult], table: dict) -> list[Slip]:
    """One slip per part refuted at every hidden constant (after reconciliation).

    ``table`` maps (claim id, part prefix) to (slip id, location, slip class, stated)."""
    out = []
    for (claim_id, prefix), (slip_id, location, klass, stated) in table.items():
        hits = [r for r in results if r.id == claim_id and r.key.part.startswith(prefix)]
        if hits and all(r.verdict == "refuted" for r in hits):
            out.append(Slip(id=slip_id, entries=keys_of(hits), location=location, slip_class=klass, stated=stated,
                            strength="reading", strength_note=texts.READING_GATE,
                            holds="measured in the paper's setting, refuted at every hidden constant tried: "
                            + "; ".join(measured(r) for r in hits),
                            evidence=" | ".join(r.evidence for r in hits)))
    return out
