"""Lemma 4: the statement holds symbolically; the proof's aux factor does not."""

from moecl_verify.checks import runner


def test_lemma4_entries_and_slip():
    run = runner.run(["lemma4"], budget="smoke", seed=0)
    verdicts = {r.key.part: r.verdict for r in run.results}
    assert verdicts == {"statement": "confirmed", "proof.loc_gradient": "confirmed", "proof.aux_gradient": "refuted"}
    roles = {r.key.part: r.key.role for r in run.results}
    assert roles == {"statement": "statement", "proof.loc_gradient": "proof step", "proof.aux_gradient": "proof step"}
    assert all(r.false_fail_rate is None for r in run.results)  # exact, not sampled
    (slip,) = run.slips
    assert slip.id == "lemma4.aux_gradient_factor" and "t**2" in slip.evidence
