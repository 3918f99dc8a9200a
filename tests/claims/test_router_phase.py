"""Propositions 1 and 3, Lemmas 13-15: the decision rules on manufactured data, the exact steps, the plumbing."""

import dataclasses
import math

import numpy as np
import pytest
import sympy as sp

import moecl_verify.packs.moe_cl.claims.router.lemma13 as lemma13
import moecl_verify.packs.moe_cl.claims.router.lemma14 as lemma14
import moecl_verify.packs.moe_cl.claims.router.lemma15 as lemma15
import moecl_verify.packs.moe_cl.claims.router.prop1 as prop1
import moecl_verify.packs.moe_cl.claims.router.prop3 as prop3
from moecl_verify.checks import stats
from moecl_verify.packs.moe_cl.entries import router_phase as rpe
from moecl_verify.packs.moe_cl.experiments import router_phase as rp
from moecl_verify.packs.moe_cl.experiments.router_phase import chi2_uniform
from moecl_verify.checks.context import context_for
from moecl_verify.packs.moe_cl import PACK
from moecl_verify.checks.decide import decide_claims, decide_entry
from moecl_verify.checks.kinds.proportion import ProportionEvidence, ProportionRow
from moecl_verify.numeric.seeding import generator_for


def test_wilson_interval_matches_published_values():
    # Wilson 95%: 0/10 -> [0, 0.2775] (Newcombe 1998, Table I);
    # 5/10 by hand: 0.5 +- 1.96 sqrt(0.025 + 1.96^2 / 400) / (1 + 1.96^2 / 10)
    lo, hi = stats.wilson(0, 10, level=0.95)
    assert lo == pytest.approx(0, abs=1e-12) and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = stats.wilson(5, 10, level=0.95)
    assert (lo, hi) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))


def test_chi_square_tail_closed_forms():
    for x in (0.3, 2.0, 9.0, 40.0):
        assert stats.chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)  # df = 2: exponential tail
        assert stats.chi2_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-12)
    assert chi2_uniform(np.array([15, 4])) == (pytest.approx(2 * 5.5**2 / 9.5), 1)


SWEEP = (0.4, 0.2, 0.1, 0.05, 0.025)


def _rows(probabilities, n):
    return [ProportionRow(s0, int(round(p * n)), n) for s0, p in zip(SWEEP, probabilities)]


def _vanishing(rows, part="a", c=1.0):
    """The evidence a 'with probability 1 - o(1)' entry builds (as router_phase.probability_entry does)."""
    return ProportionEvidence(
        claim_id="x", source="s", kind="probability", config={"features": "-", "part": part,
                                                               "hidden_constant": c},
        formula="f", what="event", rows=tuple(rows), claim="vanishing",
        failure_slope=rp.failure_slope(rows, generator_for(0, "test-rule")))


# Decided alone at the run's family-wise rate (a one-entry run: Holm's threshold is the rate itself).
RATE = 1e-3


@pytest.mark.parametrize("probabilities, n, verdict", [
    ((1, 1, 1, 1, 1), 200, "confirmed"),  # certain everywhere
    ((0.3, 0.5, 0.8, 0.95, 0.99), 200, "confirmed"),  # rises toward 1
    ((0, 0, 0, 0, 0), 200, "refuted"),  # never
    ((0.5, 0.5, 0.5, 0.5, 0.5), 400, "refuted"),  # bounded away from 1, flat
    ((0.9, 0.8, 0.6, 0.4, 0.3), 200, "refuted"),  # falls
    ((0.1, 0.2, 0.3, 0.4, 0.5), 200, "inconclusive"),  # rises, but still far from 1
    ((0.8, 0.8, 0.8, 0.8, 0.8), 10, "inconclusive"),  # too few replicates to tell
])
def test_probability_rule_on_manufactured_counts(probabilities, n, verdict):
    ev = _vanishing(_rows(probabilities, n))
    got = decide_entry(ev, RATE)
    assert got.verdict == verdict, got.evidence
    # the p-value is evidence against "failures vanish": small exactly when the entry is refuted
    assert (ev.p_value <= RATE) == (verdict == "refuted")
    assert got.observed == probabilities[-1] and got.evidence_type == "proportion"


def test_failure_slope_sign_and_bootstrap_error():
    # failures halve with each halving of sigma0: log q against log sigma0 has slope about 1
    rows = [ProportionRow(s0, n - f, n) for s0, f, n in zip(SWEEP, (320, 160, 80, 40, 20), (400,) * 5)]
    slope, se = rp.failure_slope(rows, generator_for(0, "test-slope"))
    assert slope == pytest.approx(1.0, abs=0.05) and 0 < se < 0.1
    flat = [ProportionRow(s0, 200, 400) for s0 in SWEEP]
    slope, se = rp.failure_slope(flat, generator_for(0, "test-slope"))
    assert slope == pytest.approx(0.0, abs=1e-12) and se > 0


def test_equal_probability_step_exact():
    g, lam = sp.symbols("g lambda", positive=True)
    # by hand: expert 2 wins iff r2 - r1 > g, the triangle of area (lambda - g)^2 / 2 in the lambda x lambda square
    assert sp.simplify(prop3.lower_choice_probability() - (lam - g) ** 2 / (2 * lam**2)) == 0
    entry = prop3._uniform_step_entry()
    assert entry.verdict == "refuted"
    slip = prop3.prop3_slips([entry])
    assert [s.id for s in slip] == ["prop3.equal_probability_step"]


def test_aux_weight_step_is_exact_and_holds_for_the_constants_run():
    entry = lemma14._aux_weight_entry()
    assert entry.verdict == "confirmed" and "c_alpha*c_eta*sigma0" in entry.evidence


def test_run_reconciles_a_refutation_another_constant_contradicts():
    """The keys the router-phase entries carry (part and hidden constant) let the run reconcile them across
    constants."""
    ctx = context_for(PACK, "smoke", 0)
    flat, certain = _rows((0.5,) * 5, 400), _rows((1,) * 5, 200)
    entries = [rpe.probability_entry(ctx, "x", "s", part, c, rows, "f", "event")
               for part, c, rows in (("a", 1.0, flat), ("a", 0.5, certain), ("b", 1.0, flat), ("b", 0.5, flat))]
    assert all(isinstance(e, ProportionEvidence) and e.claim == "vanishing" for e in entries)
    assert [(e.config["part"], e.config["hidden_constant"]) for e in entries] == [
        ("a", 1.0), ("a", 0.5), ("b", 1.0), ("b", 0.5)]
    out = decide_claims([entries], RATE)[0]
    assert [r.key.label for r in out] == ["a, c = 1", "a, c = 0.5", "b, c = 1", "b, c = 0.5"]
    assert [r.verdict for r in out] == ["inconclusive", "confirmed", "refuted", "refuted"]


def test_probability_entry_needs_three_testable_sigma0():
    ctx = context_for(PACK, "smoke", 0)
    rows = [ProportionRow(0.4, 5, 10), ProportionRow(0.2, 0, 0), ProportionRow(0.1, 3, 10)]
    entry = rpe.probability_entry(ctx, "x", "s", "a", 1.0, rows, "f", "event")
    assert entry.evidence_type == "exact" and entry.verdict == "inconclusive" and entry.p_value is None
    assert (entry.key.part, entry.key.constant, entry.key.label) == ("a", 1.0, "a, c = 1")


def test_lemma13_gap_step_is_a_sign_criterion_when_a_mean_is_not_positive(monkeypatch):
    """Omega(sigma0^0.5) needs a positive lower bound: with a non-positive mean no power law fits, and the step is
    the criterion 'mean gap > 0 at every sigma0', refuted only where a mean is significantly negative."""
    for module in (rp, lemma13):
        monkeypatch.setattr(module, "SWEEP", (0.4, 0.2, 0.1))
    ctx = context_for(PACK, "smoke", 0)
    rng = np.random.default_rng(0)
    positive = [rng.normal(m, 0.01, 200) for m in (0.3, 0.2, 0.1)]
    negative = [rng.normal(m, 0.01, 200) for m in (0.3, 0.2, -0.05)]
    args = ("lemma13", "s", "proof step (35)", 1.0, "Omega", 0.5)
    fit = lemma13._scaling_or_sign(ctx, *args, positive, "f", "gap", role="proof step")
    assert fit.kind == "scaling" and fit.law == "Omega"
    sign = lemma13._scaling_or_sign(ctx, *args, negative, "f", "gap", role="proof step")
    assert sign.rule == "positive" and [h.horizon for h in sign.tests] == ["sigma0=0.4", "sigma0=0.2", "sigma0=0.1"]
    assert sign.tests[-1].test.observed == pytest.approx(-0.05, abs=0.005)
    decided = decide_entry(sign, RATE)
    assert decided.verdict == "refuted" and decided.evidence_type == "criterion"
    assert (decided.key.part, decided.key.constant, decided.key.role) == ("proof step (35)", 1.0, "proof step")
    assert decided.key.label == "proof step (35), c = 1"
    assert decide_entry(fit, RATE).key.role == "proof step"  # the scaling path keeps the role too
    noisy = [rng.normal(m, 1.0, 200) for m in (0.3, 0.2, -0.01)]
    assert decide_entry(lemma13._scaling_or_sign(ctx, *args, noisy, "f", "gap"), RATE).verdict == "inconclusive"


def test_claims_end_to_end_on_a_small_sweep(monkeypatch):
    """Every id measures, entries carry the parts the report needs, and a rerun gives identical verdicts."""
    small = (0.4, 0.2, 0.1)
    for module in (rp, prop1, prop3, lemma13, lemma14):
        monkeypatch.setattr(module, "SWEEP", small)
    monkeypatch.setattr(rp, "POST_T1", 40)

    def run():
        ctx = context_for(PACK, "smoke", 3)
        # six replicates of Algorithm 1 and of the phase runs (prop2's replicates, replayed)
        ctx.sizes = dataclasses.replace(ctx.sizes, router_algorithm1_replicates=6, prop2_replicates=6)
        return {f.__name__: f(ctx) for f in (prop1.measure_prop1, prop3.measure_prop3, lemma13.measure_lemma13,
                                             lemma14.measure_lemma14, lemma15.measure_lemma15)}

    first, second = run(), run()
    assert [len(v) for v in first.values()] == [8, 12, 9, 3, 4]  # prop3, lemma13: + the derived-bound entry
    # Sampled entries are evidence (decided by the run), exact ones are exact results.
    for entries in first.values():
        for e in entries:
            assert getattr(e, "evidence_type", None) == "exact" or not hasattr(e, "verdict")
    first = dict(zip(first, decide_claims(list(first.values()), RATE)))
    second = dict(zip(second, decide_claims(list(second.values()), RATE)))
    for name, entries in first.items():
        assert [e.verdict for e in entries] == [e.verdict for e in second[name]]
        assert [e.observed for e in entries] == [e.observed for e in second[name]]
        assert [e.p_value for e in entries] == [e.p_value for e in second[name]]
        for e in entries:
            assert e.key.part
    # Every prop1 model-unchanged entry: the experts move after T1 at every sigma0 (Lemma 3 is false).
    moved = [e for e in first["measure_prop1"] if e.key.part.startswith("(b)")]
    assert all(row["probability"] == 0 for e in moved for row in e.config["probabilities"])
