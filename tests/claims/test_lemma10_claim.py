"""Lemma 10 (softmax gap): verdicts and the facts behind them."""

import math

import numpy as np
import sympy as sp

import moecl_verify.packs.moe_cl.claims.router.lemma10 as mod
from moecl_verify.checks.context import context_for
from moecl_verify.packs.moe_cl import PACK
from moecl_verify.theory import softmax_gap


def test_lemma10_entries_and_slips():
    out = mod.measure_lemma10(context_for(PACK, "smoke", 0))
    verdicts = {r.key.part: r.verdict for r in out}
    assert verdicts == {
        "statement.O": "confirmed",
        "statement.Omega (uniform)": "refuted",
        "statement.Omega (regime)": "confirmed",
        "proof.identity": "refuted",
        "proof.taylor": "confirmed",
        "proof.lower_bound": "refuted",
        "derived.tanh": "confirmed",
    }
    # The proof's steps and the derivation are told from the statement by their keys, not by their labels.
    roles = {r.key.part: (r.form, r.key.role) for r in out}
    assert {p for p, (form, role) in roles.items() if role == "proof step"} == {
        "proof.identity", "proof.taylor", "proof.lower_bound"}
    assert roles["derived.tanh"][0] == "derived"
    assert {r.key.part for r in out if r.key.is_statement} == {
        "statement.O", "statement.Omega (uniform)", "statement.Omega (regime)"}
    assert {s.id for s in mod.slips_lemma10(out)} == {"lemma10.omega_part", "lemma10.identity",
                                                      "lemma10.lower_bound_orientation"}


def test_softmax_gap_identity_numerically():
    # independent of sympy: pi_m - pi_m' = (pi_m + pi_m') tanh((h_m - h_m')/2) on random gates
    rng = np.random.default_rng(3)
    h = rng.normal(scale=3, size=(200, 5))
    pi = np.exp(h) / np.exp(h).sum(axis=1, keepdims=True)
    lhs = pi[:, 0] - pi[:, 1]
    rhs = (pi[:, 0] + pi[:, 1]) * np.tanh((h[:, 0] - h[:, 1]) / 2)
    assert np.allclose(lhs, rhs, atol=1e-14)
    # the printed identity with exp(h_m - h_m' - pi_m') is wrong at M = 2, h = (1, 0): hand value
    p1 = 1 / (1 + math.e)
    assert abs((1 - 2 * p1) - p1 * (math.exp(1 - p1) - 1) - float(mod.printed_identity_difference())) < 1e-12


def test_omega_readings_are_separate_exact_entries():
    out = mod.measure_lemma10(context_for(PACK, "smoke", 0))
    by = {r.key.part: r for r in out}
    uni, reg = by[mod.OMEGA_UNIFORM], by[mod.OMEGA_REGIME]
    assert uni.config["reading"] == "uniform" and reg.config["reading"] == "regime"
    assert uni.key.reading == "uniform" and reg.key.reading == "regime"
    assert uni.evidence_type == reg.evidence_type == "exact"
    assert uni.p_value is None and reg.p_value is None and reg.false_fail_rate is None
    assert "M = 5: 1/5" in reg.evidence and "1/M" in reg.evidence
    # each reading has its own interpretation, and the notes say which reading decides what
    options = {it.id: it.option for it in mod.INTERPRETATIONS}
    assert options["lemma10.omega_reading"] == "reading=uniform" and options["lemma10.omega_regime"] == "reading=regime"
    from moecl_verify.checks.registry import all_claims
    notes = next(c for c in all_claims() if c.id == "lemma10").notes
    assert "refuted under the uniform reading" in notes and "confirmed under the regime reading" in notes


def test_regime_bounds_by_hand_and_on_random_gates():
    r = softmax_gap.r
    lo, hi = softmax_gap.ratio_bounds()
    # M = 2: the ratio is tanh(delta/2)/delta with delta <= 2r, so it lies in [tanh(r)/(2r), 1/2]
    assert sp.simplify(lo.subs(softmax_gap.M, 2) - sp.tanh(r) / (2 * r)) == 0
    assert hi.subs(softmax_gap.M, 2) == sp.Rational(1, 2)
    # the mass bound is attained: M = 4, r = 1/2, h = (-r, -r, r, r) gives pi_0 + pi_1 = 2 / (2 + 2e)
    h = np.array([-0.5, -0.5, 0.5, 0.5])
    pi = np.exp(h) / np.exp(h).sum()
    assert abs(pi[0] + pi[1] - float(softmax_gap.pair_mass_bounds(4, sp.Rational(1, 2))[0])) < 1e-14
    assert abs(pi[0] + pi[1] - 2 / (2 + 2 * math.e)) < 1e-14
    # independent of sympy: the ratio on random gates with ||h||_inf <= r lies in [L_M(r), U_M(r)]
    rng = np.random.default_rng(7)
    for M in (2, 3, 5, 8):
        for rad in (2.0, 1.0, 0.1, 1e-3):
            L = math.tanh(rad) / (rad * (2 + (M - 2) * math.exp(2 * rad)))
            U = 1 / (2 + (M - 2) * math.exp(-2 * rad))
            assert abs(L - float(lo.subs({softmax_gap.M: M, r: rad}))) < 1e-12
            assert abs(U - float(hi.subs({softmax_gap.M: M, r: rad}))) < 1e-12
            hs = rng.uniform(-rad, rad, size=(500, M))
            hs[:5, :2] = [[-rad, rad]] * 5  # the largest gap
            p = np.exp(hs) / np.exp(hs).sum(axis=1, keepdims=True)
            ratio = np.abs(p[:, 0] - p[:, 1]) / np.abs(hs[:, 0] - hs[:, 1])
            assert ratio.min() >= L - 1e-9 and ratio.max() <= U + 1e-9  # float cancellation at tiny gaps
            if rad == 1e-3:  # both bounds within 0.5% of 1/M
                assert abs(L * M - 1) < 5e-3 and abs(U * M - 1) < 5e-3
    # the constant once ||h||_inf <= 1, M = 5: tanh(1) / (3 e^2 + 2)
    assert abs(float(lo.subs({softmax_gap.M: 5, r: 1})) - math.tanh(1) / (3 * math.e ** 2 + 2)) < 1e-14


def test_regime_decision_rule_on_manufactured_facts():
    facts = mod.regime_facts()
    assert facts["limits"] == (1 / softmax_gap.M, 1 / softmax_gap.M)
    assert facts["directional"] == {m: sp.Rational(1, m) for m in mod.REGIME_M}
    assert mod.regime_decided(facts)
    # a wrong directional limit, a limit of 0 (the uniform failure) or a failed monotonicity step each block it
    assert not mod.regime_decided({**facts, "directional": {**facts["directional"], 3: sp.Rational(1, 6)}})
    assert not mod.regime_decided({**facts, "limits": (sp.Integer(0), 1 / softmax_gap.M)})
    assert not mod.regime_decided({**facts, "lower_decreasing": False})
    assert not mod.regime_decided({**facts, "sigma0_path": sp.Integer(0)})
