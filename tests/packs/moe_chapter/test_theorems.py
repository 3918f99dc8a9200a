"""The chapter's three theorems (thm1, thm2, thm3): verdicts on tiny contexts, and every exact recheck against a
case computed by hand here (fractions and arithmetic written out, never copied from the tool's output)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

import moecl_verify.packs.moe_chapter.claims.thm1 as thm1
import moecl_verify.packs.moe_chapter.claims.thm2 as thm2
import moecl_verify.packs.moe_chapter.claims.thm3 as thm3
from moecl_verify.checks import runner
from moecl_verify.checks.context import context_for
from moecl_verify.packs.moe_chapter import PACK

pytestmark = pytest.mark.claims
# The label the definition check carries, so that a reader never takes it for the theorem.
PART_MEAN_LABEL = "definition check, not the theorem"


def _by_part(results):
    return {(r.key.part, r.key.reading): r for r in results}


# ---------------------------------------------------------------------------------------------- Theorem 2


def test_thm2_ratio_verdicts_and_roles():
    out = thm2.measure_ratio(context_for(PACK, "smoke", 0))
    got = {(r.key.part, r.form, r.key.role): r.verdict for r in out}
    assert got == {
        (thm2.PART_H_FIRST, "stated", "statement"): "confirmed",
        (thm2.PART_JOINT, "stated", "statement"): "confirmed",
        (thm2.PART_N_ONLY, "derived", "statement"): "confirmed",
        (thm2.PART_REL, "derived", "statement"): "confirmed",
        (thm2.PART_EXPERTS, "stated", "proof step"): "refuted",
    }
    assert [s.id for s in thm2.slips_ratio(out)] == ["thm2.expert_dimensions"]


def test_thm2_ratio_by_hand():
    # d = h = 1, N = 64, K = 2: ratio = (1 + 1 + 2)/(1 + 1 + 64) = 4/66 = 2/33; K/N = 1/32;
    # relative error (2/33 - 1/32)/(1/32) = 64/33 - 1 = 31/33 (the formula (N - K) 2 / (K (N + 2)) = 124/132).
    assert thm2.ratio_at(1, 1, 64, 2) == Fraction(2, 33)
    rel = thm2.relative_error()
    assert rel.subs({thm2.d: 1, thm2.h: 1, thm2.N: 64, thm2.K: 2}) == sp.Rational(31, 33)
    # h = 4d (d = 1, h = 4), N = 8, K = 2: ratio = (1 + 4 + 32)/(1 + 4 + 128) = 37/133, K/N = 1/4.
    assert thm2.ratio_at(1, 4, 8, 2) == Fraction(37, 133)
    assert rel.subs({thm2.d: 1, thm2.h: 4, thm2.N: 8, thm2.K: 2}) == (Fraction(37, 133) - Fraction(1, 4)) * 4
    lim = thm2.limits()
    # h -> oo at fixed N, K: the quadratic terms dominate: K/N. N -> oo with h = d: (2 + K)/K.
    assert lim["h"] == thm2.K / thm2.N
    assert sp.simplify(lim["N_rel_h_eq_d"] - (2 + thm2.K) / thm2.K) == 0
    assert lim["N"] == 0
    # Far along h: at d = 1, h = 10^6, N = 8, K = 2 the ratio exceeds 1/4 by
    # (1/4) (N - K) d (d + h) / (K (N h^2 + d^2 + d h)) = (1/4) 6 (10^6 + 1) / (2 (8 10^12 + 10^6 + 1)), about 9.4e-8.
    excess = float(thm2.ratio_at(1, 10**6, 8, 2)) - 0.25
    assert abs(excess - 0.25 * 6 * (1e6 + 1) / (2 * (8e12 + 1e6 + 1))) < 1e-15 and 0 < excess < 1e-7


def test_thm2_expert_term_is_h_squared_per_expert():
    # P_dense / L = d^2 + d h + N h^2: one more expert adds h^2, while E_i: R^d -> R^h has d h + h parameters.
    dv, hv = 3, 5
    one_more = thm2.P_DENSE.subs({thm2.N: 7, thm2.d: dv, thm2.h: hv, thm2.L: 1}) - \
        thm2.P_DENSE.subs({thm2.N: 6, thm2.d: dv, thm2.h: hv, thm2.L: 1})
    assert one_more == hv * hv == 25 and dv * hv + hv == 20
    entry = thm2.expert_terms_entry()
    assert entry.verdict == "refuted" and entry.key.role == "proof step" and entry.key.reading == "expert size"


def test_thm2_gate_parameters():
    out = thm2.measure_gate(context_for(PACK, "smoke", 0))
    got = {(r.key.part, r.form, r.key.role): r.verdict for r in out}
    # The proof says the gate's N d is the same in both cases (true: the gate scores all N experts either way); it
    # offers that as the reason the formulas may leave it out, which is false for the ratio's limit (a proof step,
    # refuted); that the formulas leave it out is a derived note.
    assert got == {(thm2.PART_GATE, "stated", "proof step"): "confirmed",
                   (thm2.PART_GATE_OMITTED, "derived", "proof step"): "confirmed",
                   (thm2.PART_ATTENTION, "stated", "proof step"): "confirmed",
                   (thm2.PART_SAVINGS, "stated", "proof step"): "confirmed",
                   (thm2.PART_GATE_FLOOR, "derived", "statement"): "confirmed",
                   (thm2.PART_GATE_LIMIT, "stated", "proof step"): "refuted",
                   (thm2.PART_UNITS, "stated", "statement"): "confirmed"}
    # The gate's floor by hand: d = 2, h = 3, K = 1, N = 10^9: (4 + 6 + 9 + 2N)/(4 + 6 + 9N + 2N) -> 2/11.
    n = 10**9
    assert abs((4 + 6 + 9 + 2 * n) / (4 + 6 + 9 * n + 2 * n) - 2 / 11) < 1e-8
    slips = {s.id: s for s in thm2.slips_gate(out)}
    assert set(slips) == {"thm2.gate_term_missing", "thm2.count_vs_compute"}
    missing = slips["thm2.gate_term_missing"]
    # A false justification of the ratio's limit: a false intermediate step, resting first on the refuted step.
    assert missing.slip_class == "false intermediate step"
    assert [k.part for k in missing.entries] == [thm2.PART_GATE_LIMIT, thm2.PART_GATE_OMITTED, thm2.PART_GATE_FLOOR]
    assert not any(k.is_statement for k in missing.entries)
    # Its effect, by hand (plain fractions, not the tool's functions): at N = 10^6, d = 1024, h = 4096, K = 2,
    # with the gate: (d^2 + dh + K h^2 + N d)/(d^2 + dh + N h^2 + N d) against K/N; without it (the printed formulas)
    # (N - K) d (d + h) / (K (N h^2 + d^2 + d h)).
    d, h, N = 1024, 4096, 10**6

    def with_gate(K):
        return (Fraction(d * d + d * h + K * h * h + N * d, d * d + d * h + N * h * h + N * d) - Fraction(K, N)) \
            / Fraction(K, N)

    def printed(K):
        return Fraction((N - K) * d * (d + h), K * (N * h * h + d * d + d * h))

    assert 30 < with_gate(2) < 31 and 0.15 < printed(2) < 0.16  # the "about 30" at K = 2
    assert f"{float(with_gate(2)):.3g}" in missing.effect and f"{float(printed(2)):.3g}" in missing.effect
    assert f"{float(with_gate(2) - printed(2)):.3g}" in missing.effect
    assert f"{float(with_gate(1) - printed(1)):.3g}" in missing.effect
    # Few experts: d = 4096, h = 16384, N = 64, K = 2: the gate's share is small.
    d, h, N = 4096, 16384, 64
    assert f"{float(with_gate(2) - printed(2)):.2g}" in missing.effect and float(with_gate(2) - printed(2)) < 1e-3
    # It undercuts Theorem 2 (a proof step), it does not break its statement on the printed formulas.
    from moecl_verify.reports import consequence
    ranked = consequence.consequence(missing, PACK)
    assert ranked.breaks == () and [i.key for i in ranked.undercuts] == ["thm2"]


def test_thm2_gate_limit_by_hand():
    # d = 2, h = 3, N = 10, K = 1: with the gate (4 + 6 + 9 + 20)/(4 + 6 + 90 + 20) = 39/120 = 13/40; K/N = 1/10, so
    # the relative error is 13/4 - 1 = 9/4.
    assert thm2.gate_ratio_at(2, 3, 10, 1) == Fraction(13, 40)
    rel = thm2.gate_relative_error()
    assert rel.subs({thm2.d: 2, thm2.h: 3, thm2.N: 10, thm2.K: 1}) == sp.Rational(9, 4)
    # As N -> oo the ratio tends to d/(d + h^2) (the N d and N h^2 terms dominate): 2/11 here, so the relative error
    # against K/N = 1/N grows like N (2/11): unbounded.
    assert sp.limit(rel, thm2.N, sp.oo) == sp.oo
    big = rel.subs({thm2.d: 2, thm2.h: 3, thm2.N: 10**9, thm2.K: 1})
    assert float(big) == pytest.approx(10**9 * 2 / 11 - 1, rel=1e-6)
    entry = next(r for r in thm2.measure_gate(context_for(PACK, "smoke", 0)) if r.key.part == thm2.PART_GATE_LIMIT)
    assert "d/(d + h**2)" in entry.evidence and entry.config["table"][0] == [1024, 4096, 10**6, 2]


# ---------------------------------------------------------------------------------------------- Theorem 3


def test_thm3_verdicts():
    out = thm3.measure(context_for(PACK, "smoke", 0))
    got = {(r.key.part, r.key.reading, r.form, r.key.role): r.verdict for r in out}
    # The reconstructed formulas were built from the prose they would be checked against: their entries are derived
    # (consistency checks), never confirmed statements of the chapter. The statement's own entries are the missing
    # formula (not checkable) and fbar = K/N as the mean load (a real check).
    assert got == {
        (thm3.PART_STATEMENT, None, "stated", "statement"): "not_checkable",
        (thm3.PART_MEAN, None, "derived", "statement"): "confirmed",
        (thm3.PART_RANGE, "population variance", "derived", "statement"): "confirmed",
        (thm3.PART_DECREASING, "relative", "derived", "statement"): "confirmed",
        (thm3.PART_DECREASING, "hyperbolic", "derived", "statement"): "confirmed",
        (thm3.PART_POSITIVE, "relative", "derived", "statement"): "not_checkable",
        (thm3.PART_POSITIVE, "hyperbolic", "derived", "statement"): "confirmed",
        (thm3.PART_BOTTLENECK, None, "stated", "proof step"): "refuted",
    }
    # The definition check is derived: the theorem's only statement entry is the missing formula, so the line is
    # not checkable, never "partly confirmed" on a definition.
    assert [r.key.part for r in out if r.key.is_statement] == [thm3.PART_STATEMENT]
    assert PART_MEAN_LABEL in thm3.PART_MEAN
    from moecl_verify.reports.headline import NOT_CHECKABLE, summarize
    assert summarize(out) == NOT_CHECKABLE
    assert [s.id for s in thm3.slips(out)] == ["thm3.variance_vs_bottleneck"]
    # The positivity condition of the relative reading: beta < K/(N - K) = 2/62 at N = 64, K = 2.
    positive = _by_part(out)[(thm3.PART_POSITIVE, "relative")]
    assert f"{2 / 62:.4g}" in positive.evidence


def test_thm3_frequencies_and_variance_by_hand():
    # N = 3, K = 2, two tokens routed to {0, 1} and {0, 2}: f = (1, 1/2, 1/2), sum 2 = K.
    f = thm3.frequencies(np.array([[0, 1], [0, 2]]), 3)
    assert f == [Fraction(1), Fraction(1, 2), Fraction(1, 2)]
    # mean 2/3; deviations 1/3, -1/6, -1/6; Var = (1/9 + 1/36 + 1/36)/3 = (6/36)/3 = 1/18.
    assert thm3.variance(f) == Fraction(1, 18)
    # The largest variance at N = 8, K = 2: K(N - K)/N^2 = 12/64 = 3/16, from two experts taking every token.
    assert thm3.variance([Fraction(1)] * 2 + [Fraction(0)] * 6) == Fraction(3, 16)


def test_thm3_bottleneck_counterexample_by_hand():
    a, b, va, vb = thm3.bottleneck_counterexample(*thm3.BOTTLENECK_SHAPE)
    # Whatever pair the search returns must be a counterexample, checked here by hand arithmetic.
    assert sum(a) == sum(b) == 2 and va < vb and max(a) > max(b)
    assert (a, b) == ((Fraction(5, 6), Fraction(2, 3), Fraction(1, 3), Fraction(1, 6)),
                      (Fraction(2, 3), Fraction(2, 3), Fraction(2, 3), Fraction(0)))
    # mean 1/2: deviations (1/3, 1/6, -1/6, -1/3) -> Var = (1/9 + 1/36 + 1/36 + 1/9)/4 = 5/72;
    # (1/6, 1/6, 1/6, -1/2) -> Var = (3/36 + 1/4)/4 = 1/12.
    assert va == Fraction(5, 72) and vb == Fraction(1, 12)


def test_thm3_mean_entry_can_fail(monkeypatch):
    # A token that reached only one of its K = 2 experts (dropped by a capacity limit) is not a top-K routing:
    # sum_i f_i = 1 != K there, and the entry says so.
    monkeypatch.setattr(thm3, "random_routings",
                        lambda seed, cases: [(3, 2, np.array([[0, 1], [0, 2]])), (3, 2, np.array([[0]]))])
    out = {r.key.part: r.verdict for r in thm3.measure(context_for(PACK, "smoke", 0))}
    assert out[thm3.PART_MEAN] == "refuted"


# ---------------------------------------------------------------------------------------------- Theorem 1


def test_thm1_verdicts_and_slip_causes():
    out = thm1.measure(context_for(PACK, "smoke", 0))
    got = {(r.key.part, r.key.reading, r.form, r.key.role): r.verdict for r in out}
    # Two readings of the statement, each its own entry: literally, uniformly on R^d (refuted exactly), and on
    # compact domains (not checkable: without content).
    assert got == {
        (thm1.PART_UNIFORM, thm1.READING_LITERAL, "stated", "statement"): "refuted",
        (thm1.PART_COMPACT, thm1.READING_COMPACT, "stated", "statement"): "not_checkable",
        (thm1.PART_COUNT, None, "derived", "statement"): "confirmed",
        (thm1.PART_TABLE, None, "derived", "statement"): "confirmed",
        (thm1.PART_STEP1, None, "stated", "proof step"): "not_checkable",
        (thm1.PART_STEP2, "argmax (top-1)", "stated", "proof step"): "confirmed",
        (thm1.PART_TOP2_SETS, "top-2", "derived", "proof step"): "confirmed",
        (thm1.PART_STEP4, "top-K, K < N", "stated", "proof step"): "refuted",
        (thm1.PART_STEP4, "dense, K = N", "stated", "proof step"): "confirmed",
        (thm1.PART_STEP5, None, "stated", "proof step"): "refuted",
    }
    assert [r.key.part for r in out if r.key.is_statement] == [thm1.PART_UNIFORM, thm1.PART_COMPACT]
    compact = next(r for r in out if r.key.part == thm1.PART_COMPACT)
    assert compact.evidence.startswith("without content on compact sets")
    from moecl_verify.reports.headline import DEPENDS, summarize
    assert summarize(out) == DEPENDS
    # both readings are recorded as interpretations
    ids = {i.id for i in thm1.INTERPRETATIONS}
    assert {"thm1.approximation.literal", "thm1.approximation.compact"} <= ids
    slips = {s.id: s for s in thm1.slips(out)}
    assert set(slips) == {"thm1.uniform_on_Rd", "thm1.missing_quantifiers", "thm1.count_ignores_N",
                          "thm1.soft_switching"}
    assert {i: s.slip_class for i, s in slips.items()} == {
        "thm1.uniform_on_Rd": "false statement",
        "thm1.missing_quantifiers": "unstated assumption",
        "thm1.count_ignores_N": "inconsistency between sections",
        "thm1.soft_switching": "unstated assumption"}
    assert slips["thm1.count_ignores_N"].causes == ("thm1.missing_quantifiers",)
    assert slips["thm1.missing_quantifiers"].causes == ()
    # The literal reading's slip rests on the refuted statement entry; the compact reading's on the count and the
    # not-checkable entry.
    assert [(k.part, k.reading) for k in slips["thm1.uniform_on_Rd"].entries] == [
        (thm1.PART_UNIFORM, thm1.READING_LITERAL)]
    # (not the not-checkable compact entry: resting on the count alone, the slip undercuts the theorem and breaks
    # no reading of it)
    assert [k.part for k in slips["thm1.missing_quantifiers"].entries] == [thm1.PART_COUNT]
    from moecl_verify.reports import consequence
    assert consequence.consequence(slips["thm1.missing_quantifiers"], PACK).breaks == ()
    assert [i.key for i in consequence.consequence(slips["thm1.uniform_on_Rd"], PACK).breaks] == ["thm1"]
    assert "read literally on R^d" in slips["thm1.uniform_on_Rd"].summary


def test_thm1_literal_reading_by_hand():
    # A concrete layer: N = 2 experts of one unit, K = 1, gate logits (x, -x); expert 1 = 2 ReLU(x) + 1, expert 2 =
    # ReLU(-x) - 1. Its envelope: A = max(|1| + 2*0, |-1| + 1*0) = 1, B = max(2*1, 1*1) = 2. At epsilon = 3,
    # s = sqrt(A + epsilon) = 2 and x* = B + s + 1 = 5: the layer routes x = 5 to expert 1, F(5) = 11, and
    # 25 - 11 = 14 = epsilon + B (s + 1) + 2 s + 1 = 3 + 6 + 4 + 1 > epsilon.
    params = {"wg": np.array([1.0, -1.0]), "bg": np.zeros(2), "w": np.array([[1.0], [-1.0]]),
              "b": np.zeros((2, 1)), "v": np.array([[2.0], [1.0]]), "c": np.array([1.0, -1.0]), "K": 1}
    assert thm1.moe_output(np.array([5.0]), params)[0] == pytest.approx(11.0)
    assert 25 - 11 == 3 + 2 * 3 + 2 * 2 + 1 == 14
    x_star, excess, ok = thm1.escape_witness()
    assert ok
    A_, B_, e_ = sp.Symbol("A", nonnegative=True), sp.Symbol("B", nonnegative=True), sp.Symbol("epsilon", positive=True)
    assert x_star.subs({A_: 1, B_: 2, e_: 3}) == 5
    # the argument at a second layer, numerically: any envelope (A, B), epsilon -> x* leaves the envelope by > eps
    for a_env, b_env, eps in ((0.0, 0.0, 1e-3), (8.787, 8.101, 0.5), (100.0, 3.0, 10.0)):
        xs = b_env + math.sqrt(a_env + eps) + 1
        assert xs * xs - a_env - b_env * xs > eps


def test_thm1_literal_entry_needs_the_envelope(monkeypatch):
    # If a layer left its linear envelope, the argument's premise would be wrong for the code: no verdict.
    monkeypatch.setattr(thm1, "growth_check", lambda seed: {"A": 1.0, "B": 1.0, "inside": False, "points": 1,
                                                            "gap_at": {}})
    out = thm1.measure(context_for(PACK, "smoke", 0))
    assert next(r for r in out if r.key.part == thm1.PART_UNIFORM).verdict == "inconclusive"


def test_thm1_count_by_hand():
    # One expert R^d -> h ReLU units -> R^h: d h + h in, h h + h out; the gate: N d + N. At N = 3, d = 2, h = 5:
    # 3 (10 + 5 + 25 + 5) + 3 (2 + 1) = 135 + 9 = 144 = 3 * 6 * 8 = N (h + 1)(d + h + 1).
    assert thm1.layer_count().subs({thm1.N: 3, thm1.d: 2, thm1.h: 5}) == 144 == 3 * 6 * 8
    # Degree 2 in h whatever d: the count is O(h^2), within O(h^{d+1}) for every d >= 1.
    assert sp.degree(sp.expand(thm1.layer_count()), thm1.h) == 2


def test_thm1_relu_net_by_hand():
    # h = 2 units on [-1, 1]: pieces [-1, 0], [0, 1] (ell = 1), secant slopes -1 and 1; the net is
    # 7/8 - ReLU(x + 1) + 2 ReLU(x): at 0 it is 7/8 - 1 = -1/8 (error 1/8), at 1 it is 7/8 - 2 + 2 = 7/8 (error
    # 1/8), at -1/2 it is 7/8 - 1/2 = 3/8 (error 1/4 - 3/8 = -1/8): the error equioscillates at ell^2/8 = 1/8.
    t, units, bias = thm1.relu_net_pieces(2, Fraction(1))
    assert t == [-1, 0, 1] and units == [(-1, -1), (2, 0)] and bias == Fraction(7, 8)
    for xv, err in ((0, Fraction(1, 8)), (1, Fraction(1, 8)), (Fraction(-1, 2), Fraction(-1, 8))):
        assert xv * xv - thm1.relu_net(units, bias, Fraction(xv)) == err
    # L^2/(2 h^2): h = 4, L = 10 -> 100/32 = 25/8; h = 16, L = 1 -> 1/512.
    assert thm1.sup_error_exact(4, Fraction(10)) == Fraction(25, 8)
    assert thm1.sup_error_exact(16, Fraction(1)) == Fraction(1, 512)


def test_thm1_moe_output_by_hand():
    # N = 2 experts of one unit, K = 1: gate logits (x, -x); expert 1 = ReLU(x) + 0, expert 2 = 3 ReLU(-x) + 1.
    params = {"wg": np.array([1.0, -1.0]), "bg": np.zeros(2), "w": np.array([[1.0], [-1.0]]),
              "b": np.zeros((2, 1)), "v": np.array([[1.0], [3.0]]), "c": np.array([0.0, 1.0]), "K": 1}
    out = thm1.moe_output(np.array([2.0, -2.0]), params)
    # x = 2 routes to expert 1 (weight renormalized to 1): 2; x = -2 to expert 2: 3 * 2 + 1 = 7.
    assert np.allclose(out, [2.0, 7.0])
    growth = thm1.growth_check(0)
    assert growth["inside"] and growth["gap_at"][1e6] > 1e11


def test_thm1_step2_witness_by_hand():
    # At x = (0, -1/2): z = (-3*0 + 2*(-1/2) + 0, -2*0 + 0*(-1/2) + 2, 3*0 + 3*(-1/2) + 1, -2*0 - 3*(-1/2) - 3)
    #                     = (-1, 2, -1/2, -3/2): the two largest are experts 2 and 3 (indices 1, 2); the largest alone 2.
    point = (Fraction(0), Fraction(-1, 2))
    assert thm1.top_k_set(point, 2) == (1, 2) and thm1.top_k_set(point, 1) == (1,)
    # At x = 0 the logits are the biases (0, 2, 1, -3): top-2 = indices 1, 2.
    assert thm1.top_k_set((Fraction(0), Fraction(0)), 2) == (1, 2)
    # z_0 = z_1 on the line x = (x0, 0): -3 x0 = -2 x0 + 2 at x0 = -2, where z = (6, 6, -5, 1): the tie is inside
    # the top-2 (a region), but across the top-1 cut (a boundary point: None).
    assert thm1.top_k_set((Fraction(-2), Fraction(0)), 2) == (0, 1)
    assert thm1.top_k_set((Fraction(-2), Fraction(0)), 1) is None
    assert len(thm1.REGION_WITNESSES) == 6 > 4


def test_thm1_step2_convexity_check_can_fail(monkeypatch):
    # Regions by a ring (outside or inside |x|^2 = 25) are not convex: (-6, 0) and (6, 0) lie outside, their
    # midpoint 0 inside; the midpoint check must see such pairs.
    def ring(point, k):
        return (0,) if point[0] ** 2 + point[1] ** 2 > 25 else (1,)

    monkeypatch.setattr(thm1, "top_k_set", ring)
    bad, checked = thm1.convexity_violations(0, 1, 50)
    assert checked == 100 and bad > 0
    entry = next(r for r in thm1.step2_entries(0, 50) if r.key.reading == "argmax (top-1)")
    assert entry.verdict == "refuted"


def test_thm1_step4_limits_by_hand():
    entries = {r.key.reading: r for r in thm1.step4_entries()}
    # Renormalized top-1: the chosen expert's weight is 1, so F jumps from -1 to 1; without renormalization it is
    # the gate probability e^0/(e^0 + e^0) = 1/2 on either side: -1/2 to 1/2.  Dense: tanh, continuous.
    assert "1 as x -> 0+ and -1 as x -> 0-" in entries["top-K, K < N"].evidence
    assert "1/2 as x -> 0+ and -1/2 as x -> 0-" in entries["top-K, K < N"].evidence
    assert entries["dense, K = N"].verdict == "confirmed"


def test_theorems_through_the_runner():
    res = runner.run(["thm1.*", "thm2.*", "thm3.*"], budget="smoke", seed=0, pack="moe-chapter",
                     reuse_claims=False)
    ids = {r.id for r in res.results}
    assert ids == {"thm1.expressivity", "thm2.ratio", "thm2.gate_parameters", "thm3.capacity"}
    assert all(r.evidence_type == "exact" for r in res.results)
    assert {s.id for s in res.slips} == {"thm1.uniform_on_Rd", "thm1.missing_quantifiers", "thm1.count_ignores_N",
                                         "thm1.soft_switching",
                                         "thm2.expert_dimensions", "thm2.gate_term_missing", "thm2.count_vs_compute",
                                         "thm3.variance_vs_bottleneck"}
    # thm1: 10 entries (the statement under two readings, 2 derived notes, steps 1, 2 (and its top-2 note), 4 (two
    # readings), the count against step 5); thm2.ratio 5; thm2.gate_parameters 7; thm3.capacity 8.
    assert math.isclose(len(res.results), 10 + 5 + 7 + 8)
