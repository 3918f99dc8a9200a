"""Lemma 2 and Corollary 1: verdicts, and the exact numbers behind them against hand derivations."""

import dataclasses
from fractions import Fraction as F

import pytest

import moecl_verify.packs.moe_cl.claims.router.cor1 as cor1
import moecl_verify.packs.moe_cl.claims.router.lemma2 as lemma2
import moecl_verify.packs.moe_cl.experiments.smooth_router as smooth_router
from moecl_verify.checks import runner
from moecl_verify.checks.context import context_for
from moecl_verify.packs.moe_cl import PACK
from moecl_verify.checks.decide import decide_claims
from moecl_verify.checks.entry_key import EntryKey
from moecl_verify.checks.kinds.scaling import ScalingEvidence
from moecl_verify.checks.model import ClaimResult

SMOKE = PACK.budgets["smoke"]


def _key(item) -> EntryKey:
    """The key of a decided entry, or the one its evidence declares (decided later, by the run)."""
    return item.key if isinstance(item, ClaimResult) else EntryKey.of(item.claim_id, item.form, item.config)[0]


def test_lemma2_entries_and_slips(monkeypatch):
    small = dataclasses.replace(SMOKE, lemma2_grid=(F(-1, 2), F(0)))
    monkeypatch.setitem(PACK.budgets, "smoke", small)  # a smaller exact grid keeps the test fast
    run = runner.run(["lemma2"], budget="smoke", seed=0)
    verdicts = {(r.key.form, r.key.part): r.verdict for r in run.results}
    assert verdicts == {
        ("stated", "statement"): "refuted",
        ("derived", "derived.lipschitz"): "confirmed",
        ("stated", "proof.step1"): "confirmed",
        ("stated", "proof.step2"): "confirmed",
        ("stated", "proof.step3"): "refuted",
        ("stated", "proof.step4"): "refuted",
        ("stated", "proof.conclusion"): "refuted",
        # The worst-case search finds the stated constant's violation on its own (and the hand-made smallest
        # counterexample below, once shrunk); on the sharp constant it finds none, which proves nothing.
        ("stated", "worst case searched"): "refuted",
        ("derived", "worst case searched"): "inconclusive",
    }
    searched = next(r for r in run.results if r.key.part == "worst case searched" and r.key.form == "stated")
    assert "M = 2, h = (0, 0), g = (1, 0), lam = 1; exact slack = -1/4" in searched.evidence
    # The proof's steps are told from the statement by their role, not by their labels.
    assert {r.key.part for r in run.results if r.key.role == "proof step"} == {
        "proof.step1", "proof.step2", "proof.step3", "proof.step4", "proof.conclusion"}
    assert {s.id for s in run.slips} == {"lemma2.statement", "lemma2.union_bound_factor",
                                         "lemma2.proof_statement_mismatch"}
    assert all(r.false_fail_rate is None for r in run.results)


def test_smallest_counterexample_by_hand():
    # M = 2, lambda = 1, h = 0: p = (1/2, 1/2); h_hat = (1, 0) wins surely: ||dp|| = 1/2 > 1/4 * 1
    ce = lemma2.smallest_counterexample()
    assert (ce["M"], ce["h_hat"], ce["p_hat"], ce["lhs"], ce["rhs"]) == (2, (1, 0), (1, 0), F(1, 2), F(1, 4))


def test_grid_ratio_matches_the_two_expert_formula():
    # pairs (h, h + eps(1, -1)) at h = 0: dp_1 = G(2 eps) - 1/2 with G(z) = 1/2 + z - z^2/2, so the ratio is
    # 2 - 2 eps, largest at eps = 1/8: 7/4 (the other grid points are further from equal outputs).
    audit = smooth_router.grid_audit(2, SMOKE.lemma2_grid)
    assert audit["worst_ratio"] == F(7, 4) and audit["max_diag"] == 1 and audit["rows_ok"]
    # sharpness: the ratio 2 - 2 eps approaches 2 / lambda = 2
    assert lemma2.sharpness(2) == [(e, 2 - 2 * e) for e in lemma2.SHARP_EPS]


def test_step_counterexamples_by_hand():
    # P(switch) at h = 0, h_hat = (eps, 0) is z - z^2/2 with z = eps / lambda
    ce3 = lemma2.step_counterexample(lambda M, lam, eps: lam * M * M * eps)
    z = ce3["h_hat"][0] / ce3["lam"]
    assert ce3["switch"] == z - z * z / 2 > ce3["lam"] * 4 * ce3["h_hat"][0]


def test_corollary_worst_case_matches_hand_formula():
    # h_hat = z (1, -1), lambda = 1: dp = G(2z) - 1/2 = 2z - 2z^2 with z = sigma0^0.25 / c = 10^-k / c
    for k, c in ((1, F(1)), (2, F(1, 2))):
        z = F(1, 10**k) / c
        value, bound = cor1.worst_case_under_lemma1(k, c, 2)
        assert value == 2 * z - 2 * z * z and bound == 2 * z


def test_cor1_entries_on_a_tiny_sweep(monkeypatch):
    monkeypatch.setattr(cor1, "SIGMA0", (0.4, 0.1, 0.025))
    monkeypatch.setattr(cor1, "COR_PAIRS", 1)
    monkeypatch.setattr(cor1, "BOOTSTRAP", 100)
    ctx = context_for(PACK, "smoke", 0)
    ctx.sizes = dataclasses.replace(ctx.sizes, cor1_replicates=6)
    out = cor1.measure_cor1(ctx)
    # The measured entries are evidence (a fitted exponent against O(sigma0^2.75)), decided by the run.
    evidence = [e for e in out if _key(e).part.startswith("measured")]
    assert len(evidence) == len(cor1.CONSTANTS)
    assert sorted(_key(e).constant for e in evidence) == sorted(float(c) for c in cor1.CONSTANTS)
    assert all(isinstance(e, ScalingEvidence) and (e.law, e.exponent) == ("O", 2.75) for e in evidence)
    assert all(e.fit.x == (0.4, 0.1, 0.025) and e.fit.stderr > 0 for e in evidence)
    decided = decide_claims([out], 1e-3)[0]
    parts = {r.key.label: r for r in decided}
    assert len(parts) == len(decided)  # one entry per label
    assert parts["from printed Lemma 2"].verdict == "confirmed"
    assert parts["from corrected Lemma 2"].verdict == "refuted"
    measured = [r for p, r in parts.items() if p.startswith("measured")]
    assert len(measured) == len(cor1.CONSTANTS)
    assert {r.key.label for r in measured} == {f"measured, c = {float(c):g}" for c in cor1.CONSTANTS}
    assert all(r.evidence_type == "scaling" and r.expected == 2.75 for r in measured)
    assert all("violating the corrected Lemma 2 (||dp|| <= 2||dh||/lambda): 0 of" in r.evidence for r in measured)
    assert cor1.slips_cor1(decided)[0].id == "cor1.lambda_factor"


@pytest.mark.parametrize("M", [2, 3, 4])
def test_scale_invariance(M):
    assert lemma2.scale_invariant(M)


def test_chunked_and_cached_grid_audit_is_one_pass_over_the_grid(tmp_path):
    """Parts merged in grid order, through the cache's JSON-in-npz round trip, give the single-pass audit
    (the first pair attaining the worst ratio included)."""
    from moecl_verify.numeric.cache import ResultCache
    from moecl_verify.numeric.chunks import ChunkRunner

    one_pass = smooth_router.audit_points(3, smooth_router.grid_points(3, SMOKE.lemma2_grid))
    with ResultCache(tmp_path) as cache:
        first = smooth_router.grid_audit(3, SMOKE.lemma2_grid, ChunkRunner(cache=cache))
        again = smooth_router.grid_audit(3, SMOKE.lemma2_grid, ChunkRunner(cache=cache))
        assert cache.stats.hits == len(SMOKE.lemma2_grid)
    assert first == again == one_pass and one_pass["pairs"] == 3 * 3 * 4 * 2
