"""Requests to the authors (checks/requests.py, reports/requests.py, packs/moe_cl/requests.py): a request appears
only where the run established the slip it rests on, links its evidence, and a corrected statement is LaTeX that
sympy wrote from an expression checked against the derived form, which the page's math converter accepts."""

import sympy as sp
import pytest
from latex2mathml.converter import convert

from moecl_verify.checks.model import ClaimResult, RunResult, Slip
from moecl_verify.checks.requests import Request, request
from moecl_verify.packs.moe_cl import requests as moe_requests
from moecl_verify.reports import requests
from moecl_verify.theory import single_expert

pytestmark = pytest.mark.app


def slip(slip_id):
    return Slip(slip_id, "here", "false statement", "-", "-", "-")


def run_with(*slip_ids):
    meta = {"budget": "smoke", "seed": 0, "claims": [], "pack": "moe-cl"}
    return RunResult((), tuple(slip(s) for s in slip_ids), (), meta, (), {})


def test_a_request_needs_its_evidence_and_a_sympy_statement():
    with pytest.raises(ValueError, match="action"):
        Request("ask", "x", ("a",))
    with pytest.raises(ValueError, match="evidence"):
        Request("prove", "x", ())
    with pytest.raises(TypeError, match="sympy"):
        request("restate", "x", ("a",), statement="w_t = w_{t-1}")  # typed by hand: refused
    r = request("restate", "x", ("a",), sp.Eq(sp.Symbol("a"), sp.Symbol("b") / 2, evaluate=False))
    assert r.latex == r"a = \frac{b}{2}" and r.to_json()["latex"] == r.latex


def test_requests_follow_the_slips_the_run_established():
    assert requests.of(run_with()) == []
    only_lemma3 = requests.of(run_with("lemma3.expert_moves"))
    assert [r.evidence for r in only_lemma3] == [("lemma3.expert_moves",)]
    assert "Replace Lemma 3" in only_lemma3[0].text
    # evidence the run lacks is dropped from a request that has other evidence, and a request left without
    # evidence is not asked
    some = requests.of(run_with("prop3.routing_outside_sets"))
    assert all(r.evidence == ("prop3.routing_outside_sets",) for r in some) and len(some) == 2
    text = "\n".join(requests.section(run_with("lemma3.expert_moves", "thm1.eq19.bound_fails")))
    assert "1. **Restate.** Replace Lemma 3" in text and "2. **Restate.** Correct eq. (19)" in text
    assert "[`lemma3.expert_moves`](#slip-lemma3-expert_moves)" in text
    assert requests.section(run_with()) == []


def test_requests_md_links_into_the_slip_audit(tmp_path):
    path = requests.write(run_with("lemma3.expert_moves"), tmp_path / requests.FILE, "report-details.md")
    text = path.read_text()
    assert text.startswith("# Requests to the authors: *Theory on Mixture-of-Experts in Continual Learning*")
    assert "(report-details.md#slip-lemma3-expert_moves)" in text and "$$ w_{t} - w_{t-1} = P_{t}" in text
    assert requests.write(run_with(), tmp_path / "none.md", "report-details.md") is None
    assert not (tmp_path / "none.md").exists()


def test_every_corrected_statement_converts_to_mathml_and_was_checked():
    every = requests.of(run_with(*{e for r in moe_requests.requests(run_with(
        "lemma3.expert_moves", "prop4.eq17.s_coefficient", "prop4.eq18.same_task_gap", "thm1.eq19.bound_fails",
        "lemma16.definition1")) for e in r.evidence}))
    formulas = [r.latex for r in every if r.latex]
    assert len(formulas) == 5
    for latex in formulas:
        assert "<mi>" in convert(latex)
    # the written forms are checked against the derived ones: a wrong grouping is refused
    with pytest.raises(AssertionError, match="not the derived"):
        moe_requests._checked(sp.Symbol("S") + 1, single_expert.forgetting_term())
    # eq. (17)'s corrected summand is one expert's derived forgetting term, by hand at r = 1/2, t = 3, tau = 1:
    # (r^3 - r) S + (r - r^3) D + (1 - r)(1 - r^2) D = -3/8 S + 3/8 D + 3/8 D
    from moecl_verify.theory.symbols import D as D_, S as S_, r as r_, t as t_, tau as tau_
    value = single_expert.forgetting_term().subs({r_: sp.Rational(1, 2), t_: 3, tau_: 1})
    assert sp.simplify(value - (-sp.Rational(3, 8) * S_ + sp.Rational(3, 4) * D_)) == 0
