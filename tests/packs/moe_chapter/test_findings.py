"""The chapter's headline and bottom line read what the theorems' and the gradient sentence's readings decide:
Theorem 1 depends on the reading (false literally on R^d, without content on compact sets), Theorem 2 stands on its
printed formulas but is undercut by the gate term's false justification (its effect derived here from plain
fractions), Theorem 3 is not checkable, and Gradients falls on the normalised K = 1 case, not on the literal
reading of the gradient sentence."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from moecl_verify.checks import runner
from moecl_verify.packs.moe_chapter import PACK
from moecl_verify.reports import bottom_line, headline

pytestmark = pytest.mark.claims


@pytest.fixture(scope="module")
def run():
    # fewer draws for the one sampled entry (the literal reading's effect size): the findings here are exact
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(PACK.budgets, "smoke", dataclasses.replace(PACK.budgets["smoke"], draws=300))
        return runner.run(["thm1.*", "thm2.*", "thm3.*", "expert.update_scale", "topk.normalised_k1"],
                          budget="smoke", seed=0, pack=PACK, reuse_claims=False)


def test_headline_verdicts(run):
    rows = {row.item.key: row.verdict for row in headline.rows(run)[0]}
    assert rows["thm1"] == headline.DEPENDS
    assert rows["thm2"] == headline.STANDS
    assert rows["thm3"] == headline.NOT_CHECKABLE
    assert rows["gradients"] == headline.FALLS


def test_bottom_line_sentences(run):
    found = bottom_line.sentences(run)
    by_slip = {s.slips[0]: s.text for s in found if s.kind == "cause"}
    # Theorem 1's literal reading breaks it under that reading only; the compact reading's slip only undercuts.
    assert "read literally on R^d, is false" in by_slip["thm1.uniform_on_Rd"]
    assert "under that reading" in by_slip["thm1.uniform_on_Rd"]
    assert "It undercuts Theorem 1" in by_slip["thm1.missing_quantifiers"]
    # The gate term: its share of the relative error at N = 10^6, d = 1024, h = 4096, K = 2, by hand.
    d, h, N, K = 1024, 4096, 10**6, 2
    with_gate = (Fraction(d * d + d * h + K * h * h + N * d, d * d + d * h + N * h * h + N * d) - Fraction(K, N)) \
        / Fraction(K, N)
    printed = Fraction((N - K) * d * (d + h), K * (N * h * h + d * d + d * h))
    assert f"adds {float(with_gate - printed):.3g}" in by_slip["thm2.gate_term_missing"]
    assert "It undercuts Theorem 2" in by_slip["thm2.gate_term_missing"]
    # Gradients falls on the K = 1 case (the normalised weights' root cause), not on the literal reading.
    k1 = next(s for s in found if "expert.update_scale.k1" in s.slips)
    assert k1.slips[0] == "topk.normalised_k1.no_gate_gradient" and "breaks Gradients" in k1.text
    opened = [s.text for s in found if s.kind == "open"]
    assert any("Not checkable: Theorem 3" in t for t in opened)
    assert not any("Theorem 1" in t for t in opened)
