"""The public API prints every kind of entry (the notebook's code cells rely on it)."""

from checks.api import check


def test_check_prints_scaling_symbolic_and_not_checkable_entries():
    for claim_id in ("lemma6", "lemma4", "thm2.forgetting"):
        result = check(claim_id, budget="smoke", seed=0)
        text = str(result)
        assert text.startswith(claim_id)
        assert len(text.splitlines()) == 1 + len(result.results)
