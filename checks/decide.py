"""The one place where verdicts are decided.

Claims return evidence (a kind of :mod:`moecl_verify.checks.kinds`) and exact entries;
:func:`decide_claims` turns all of a run's evidence into verdicts at once:

1. every non-exact entry gets its p-value against its claim;
2. Holm's step-down across all of them controls the family-wise false-fail rate (the probability
   of refuting any true claim) at the run's rate; each entry records the threshold it faced, so it
   can be re-decided alone (:func:`decide_entry`);
3. each entry's kind turns (threshold, rejected) into ``refuted``, ``confirmed`` (only when the
   run could have detected a discrepancy of the entry's resolution) or ``inconclusive``
   (``decide``: the kind's own rule; nothing here knows the kinds);
4. per claim, a refutation at one hidden constant that another constant confirms becomes
   ``inconclusive``, since the document leaves its constants free
   (:func:`moecl_verify.checks.scaling.reconcile_entries`).

Exact entries (sympy identities, rational counterexamples, stated reasons) are decided where they
are computed and pass through unchanged; a claim that returns a decided entry with a p-value or a
false-fail rate is an error, so no sampled verdict escapes the run's error control.
"""

from __future__ import annotations

from moecl_verify.checks import stats
from moecl_verify.checks.kinds import is_evidence
from moecl_verify.checks.model import ClaimResult
from moecl_verify.checks.scaling import reconcile_entries


def is_exact(item) -> bool:
    return isinstance(item, ClaimResult)


def check_exact(item: ClaimResult) -> ClaimResult:
    """An entry a claim decided itself must be exact: no p-value, no false-fail rate."""
    if item.p_value is not None or item.false_fail_rate is not None or item.evidence_type != "exact":
        raise TypeError(f"{item.key.text}: a claim returned a decided entry "
                        "that is not exact; return evidence instead, so the run's error control decides it")
    return item


def p_value(item) -> float:
    """The entry's p-value against its claim (small: evidence that the claim fails)."""
    if not is_evidence(item):
        raise TypeError(f"not evidence: {type(item).__name__}")
    return item.p_value


def decide_entry(item, threshold: float, rejected: bool | None = None) -> ClaimResult:
    """One entry's result at ``threshold`` (rejected, unless given, when its p-value is at most the threshold)."""
    if is_exact(item):
        return check_exact(item)
    p = p_value(item)
    return item.decide(threshold, p <= threshold if rejected is None else rejected)


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
