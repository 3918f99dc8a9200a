"""The per-statement status table (reports/statements.py) on a planted run of the paper's pack: each status from
the statement's entries and the classes of its slips, "used by" from the pack's proof uses, and "changes" from the
cause graph; and the bottom line counts the lemma chain apart from the headline results."""

import pytest

from moecl_verify.checks.model import ClaimResult, RunResult, Slip
from moecl_verify.reports import bottom_line, statements

pytestmark = pytest.mark.app


def entry(claim_id, verdict):
    return ClaimResult(id=claim_id, source="-", kind="bound", form="stated", verdict=verdict, expected=0.0,
                       observed=0.1, stderr=0.01, p_value=1e-9, false_fail_rate=1e-3, min_detectable=None,
                       config={"features": "gaussian"}, evidence="z-test", evidence_type="criterion")


def planted():
    results = (entry("lemma2", "refuted"), entry("lemma3", "refuted"), entry("lemma6", "confirmed"),
               entry("lemma9", "confirmed"), entry("prop1", "refuted"), entry("lemma13", "inconclusive"))
    by = {r.id: r.key for r in results}
    slips = (Slip("lemma2.constant", "-", "wrong constant or exponent", "-", "-", "-", entries=(by["lemma2"],)),
             Slip("lemma3.moves", "-", "false statement", "-", "-", "-", entries=(by["lemma3"],)),
             Slip("lemma9.step", "-", "false intermediate step", "-", "-", "-"),
             Slip("prop1.moving", "-", "false statement", "-", "-", "-", entries=(by["prop1"],),
                  causes=("lemma3.moves",)))
    claims = tuple({"id": r.id, "summary": f"what {r.id} says", "source": "-", "kind": "bound", "statement": "x",
                    "preconditions": [], "notes": ""} for r in results)
    return RunResult(results, slips, (), {"budget": "smoke", "seed": 0, "claims": [r.id for r in results]}, claims, {})


def test_each_statement_gets_its_status_uses_and_consequences():
    rows = {r.title: r for r in statements.rows(planted())}
    # only statements with entries in the run, in the paper's order: results first, then the lemmas
    assert list(rows) == ["Proposition 1", "Lemma 2", "Lemma 3", "Lemma 6", "Lemma 9", "Lemma 13"]
    assert rows["Lemma 2"].status == statements.FALSE_CORRECTABLE  # refuted only by its constant
    assert rows["Lemma 3"].status == statements.FALSE
    assert rows["Lemma 6"].status == statements.HOLDS
    assert rows["Lemma 9"].status == statements.CORRECTED  # confirmed, with a false step in its proof
    assert rows["Lemma 13"].status == statements.NOT_SETTLED
    assert rows["Proposition 1"].status == statements.FALSE and rows["Proposition 1"].headline
    # Lemma 3 is used by Propositions 1's and Theorem 1's proofs; correcting it changes Proposition 1, whose slip
    # follows from it; Lemma 2's slip changes nothing the run found broken
    assert rows["Lemma 3"].used_by == ("Proposition 1", "Theorem 1")
    assert rows["Lemma 3"].changes == ("Proposition 1",) and rows["Lemma 2"].changes == ()
    text = "\n".join(statements.section(planted(), lambda s: f"`{s}`"))
    assert "| **Lemma 3** | what lemma3 says | false | Proposition 1, Theorem 1 | Proposition 1 | `lemma3.moves` |" in text
    assert "| **Proposition 1** | after exploration" in text and "– (a headline result itself)" in text
    assert text.startswith("Every statement of the paper, one status each (1 holds, 1 holds with a corrected "
                           "constant or step, 1 false as printed, holds with a corrected constant, 2 false, "
                           "1 not settled):")


def test_the_bottom_line_counts_the_lemma_chain_apart():
    (sentence,) = [s for s in bottom_line.sentences(planted()) if s.kind == "verdicts"]
    assert sentence.text.startswith("Of the paper's one headline result, Proposition 1")
    assert "Lemmas 1-16" not in sentence.text.split(".")[0]
    assert ("Of the 5 lemmas behind them (Lemmas 1-16, Corollary 1), 2 fall, 2 stand and 1 open (their statements' "
            "verdicts)." in sentence.text)
