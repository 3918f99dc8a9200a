"""The public API prints every kind of entry (the notebook's code cells rely on it)."""

from moecl_verify.checks.api import check


def test_check_prints_scaling_symbolic_and_not_checkable_entries():
    for claim_id in ("lemma6", "lemma4", "thm2.forgetting"):
        result = check(claim_id, budget="smoke", seed=0)
        text = str(result)
        assert text.startswith(claim_id)
        assert len(text.splitlines()) == 1 + len(result.results)


def test_printing_tolerates_missing_numbers():
    from moecl_verify.checks.api import ClaimCheck
    from moecl_verify.checks.model import ClaimResult

    def entry(**kw):
        base = dict(id="x", source="-", kind="probability", form="stated", verdict="refuted", expected=0.9,
                    observed=None, stderr=None, p_value=None, false_fail_rate=None, min_detectable=None,
                    config={"part": "p"}, evidence="e")
        return ClaimResult(**{**base, **kw})

    text = str(ClaimCheck("x", "smoke", 0, (entry(), entry(observed=0.5), entry(expected=None)), ()))
    assert len(text.splitlines()) == 4 and "measured — ± —" in text and "measured 0.5 ± —" in text
