"""The one place where verdicts are decided.

Claims return evidence (:mod:`moecl_verify.checks.evidence`, :class:`moecl_verify.checks.model.Measurement`)
and exact entries; :func:`decide_run` turns all of a run's evidence into verdicts at once:

1. every non-exact entry gets its p-value against its claim;
2. Holm's step-down across all of them controls the family-wise false-fail rate (the probability
   of refuting any true claim) at the run's rate; each entry records the threshold it faced, so it
   can be re-decided alone (:func:`decide_entry`);
3. each entry's own rule turns (threshold, rejected) into ``refuted``, ``confirmed`` (only when the
   run could have detected a discrepancy of the entry's resolution) or ``inconclusive``;
4. per claim, a refutation at one hidden constant that another constant confirms becomes
   ``inconclusive``, since the paper leaves its constants free
   (:func:`moecl_verify.checks.scaling.reconcile_entries`).

Exact entries (sympy identities, rational counterexamples, stated reasons) are decided where they
are computed and pass through unchanged; a claim that returns a decided entry with a p-value or a
false-fail rate is an error, so no sampled verdict escapes the run's error control.

Rules for a mean at several horizons (``rule="identity"``): each horizon is a two-sided z-test,
combined within the entry by Bonferroni; not rejected is ``confirmed`` only if at every horizon the
run would have detected a discrepancy of ``resolution * scale`` with 90% power. For a criterion
(``rule="positive"``): refuted when some margin is significantly negative, confirmed when every
margin is significantly positive.
"""

from __future__ import annotations

from moecl_verify.checks import stats
from moecl_verify.checks.evidence import ProportionEvidence, ScalingEvidence
from moecl_verify.checks.model import ClaimResult, Measurement
from moecl_verify.checks.scaling import reconcile_entries

EVIDENCE_TYPES = (Measurement, ProportionEvidence, ScalingEvidence)


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


def decide_measurement(m: Measurement, threshold: float, rejected: bool) -> ClaimResult:
    """Verdict and evidence for one mean or criterion measurement, given its Holm threshold."""
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
    """A criterion 'Delta > 0 in every case' (qualitative claims)."""
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
            **h.extra,
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
        evidence_type="mean" if m.rule == "identity" else "criterion",
    )


def is_exact(item) -> bool:
    return isinstance(item, ClaimResult)


def check_exact(item: ClaimResult) -> ClaimResult:
    """An entry a claim decided itself must be exact: no p-value, no false-fail rate."""
    if item.p_value is not None or item.false_fail_rate is not None or item.evidence_type != "exact":
        raise TypeError(f"{item.id} ({item.config.get('part', item.form)}): a claim returned a decided entry "
                        "that is not exact; return evidence instead, so the run's error control decides it")
    return item


def p_value(item) -> float:
    """The entry's p-value against its claim (small: evidence that the claim fails)."""
    if isinstance(item, Measurement):
        return entry_p(item)
    if isinstance(item, (ProportionEvidence, ScalingEvidence)):
        return item.p_value
    raise TypeError(f"not evidence: {type(item).__name__}")


def decide_entry(item, threshold: float, rejected: bool | None = None) -> ClaimResult:
    """One entry's result at ``threshold`` (rejected, unless given, when its p-value is at most the threshold)."""
    if is_exact(item):
        return check_exact(item)
    p = p_value(item)
    if rejected is None:
        rejected = p <= threshold
    if isinstance(item, Measurement):
        return decide_measurement(item, threshold, rejected)
    judgement = item.judge(threshold, rejected)
    return ClaimResult(
        id=item.claim_id, source=item.source, kind=item.kind, form=item.form, verdict=judgement.verdict,
        expected=item.expected, observed=item.observed, stderr=item.stderr, p_value=p, false_fail_rate=threshold,
        min_detectable=judgement.min_detectable, config={**item.config, **item.report_config()},
        evidence=item.describe(judgement), formula=item.formula, difference=item.difference,
        evidence_type="proportion" if isinstance(item, ProportionEvidence) else "scaling",
    )


def decide_claims(measured: list[list], family_rate: float, thresholds: list[float] | None = None
                  ) -> list[list[ClaimResult]]:
    """Each claim's entries decided, Holm across every non-exact entry of all claims at ``family_rate``
    (or at the given per-entry ``thresholds``, in the order of the non-exact entries, to re-decide
    entries of an earlier run)."""
    flat = [item for items in measured for item in items if not is_exact(item)]
    p_values = [p_value(item) for item in flat]
    if thresholds is None:
        holm = stats.holm(p_values, family_rate)
        thresholds, rejected = list(holm.thresholds), list(holm.rejected)
    else:
        if len(thresholds) != len(flat):
            raise ValueError(f"{len(thresholds)} thresholds for {len(flat)} entries")
        rejected = [p <= t for p, t in zip(p_values, thresholds)]
    decided = iter(decide_entry(item, t, r) for item, t, r in zip(flat, thresholds, rejected))
    out = []
    for items in measured:
        results = [check_exact(item) if is_exact(item) else next(decided) for item in items]
        out.append(reconcile_entries(results))
    return out
