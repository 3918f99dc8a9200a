"""The chapter's routing claims (gate.simplex, topk.*, batch.routing_matrix, aux.frequencies, aux.ste_needed):
verdicts on tiny contexts, and the exact numbers behind them against values worked out by hand here.

Hand arithmetic used below: logits (log 2, 0) give g = (2/(2+1), 1/(2+1)) = (2/3, 1/3); the top-2 of
g = (1/2, 1/3, 1/6) normalised is (1/2, 1/3) / (5/6) = (3/5, 2/5); d g_1/d z_1 = g_1 g_2.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction as F

import numpy as np
import pytest
import sympy as sp

import moecl_verify.packs.moe_chapter.claims.aux_loss as aux
import moecl_verify.packs.moe_chapter.claims.batch as batch
import moecl_verify.packs.moe_chapter.claims.gate as gate
import moecl_verify.packs.moe_chapter.claims.topk as topk
from moecl_verify.checks.context import context_for
from moecl_verify.packs.moe_chapter import PACK, model

pytestmark = pytest.mark.claims
ALPHA = aux.ALPHA


def _tiny(cases: int = 4, draws: int = 200):
    ctx = context_for(PACK, "smoke", 0)
    ctx.sizes = dataclasses.replace(ctx.sizes, cases=cases, draws=draws)
    return ctx


def _verdicts(results) -> dict:
    return {(r.key.form, r.key.part, r.key.reading): r.verdict for r in results}


# ---------------------------------------------------------------------------------------------- the model


def test_exact_softmax_at_log_probabilities():
    assert model.softmax_exact((sp.log(2), sp.Integer(0))) == (sp.Rational(2, 3), sp.Rational(1, 3))
    p = (sp.Rational(1, 2), sp.Rational(1, 3), sp.Rational(1, 6))
    assert tuple(sp.simplify(v) for v in model.softmax_exact([sp.log(v) for v in p])) == p


def test_top_k_and_weights_by_hand():
    g = (F(1, 2), F(1, 3), F(1, 6))
    assert model.top_k(g, 2) == (0, 1)
    assert model.top_k((F(1, 3),) * 3, 2) == (0, 1)  # ties to the lower index
    assert model.sparse_weights(g, 2) == (F(3, 5), F(2, 5), 0)
    assert model.sparse_weights(g, 2, normalise=False) == (F(1, 2), F(1, 3), 0)
    assert model.sparse_weights(g, 3) == g  # K = N: the normaliser is 1
    with pytest.raises(ValueError):
        model.top_k(g, 4)


def test_numpy_weights_agree_with_the_exact_ones():
    rng = np.random.default_rng(7)
    for _ in range(50):
        N = int(rng.integers(2, 6))
        K = int(rng.integers(1, N + 1))
        counts = rng.integers(1, 30, size=N)
        exact = model.sparse_weights([F(int(c), int(counts.sum())) for c in counts], K)
        fast = model.sparse_weights_np(counts / counts.sum(), K)[0]
        assert np.allclose(fast, [float(v) for v in exact], rtol=0, atol=1e-15)


def test_aux_logit_gradient_by_hand():
    # one token, N = 2, K = 1, g = (2/3, 1/3), f = (1, 0): dL/dz_k = (alpha N / BT) g_k (f_k - sum_i f_i g_i)
    # = 2 * (2/3)(1 - 2/3), 2 * (1/3)(0 - 2/3) = (4/9, -4/9) at alpha = 1
    grad = model.aux_loss_logit_grad_np(np.array([[np.log(2.0), 0.0]]), 1, 1.0)
    assert np.allclose(grad, [[4 / 9, -4 / 9]], atol=1e-15)
    # L_aux = N sum_i f_i P_i = 2 * 2/3
    assert model.aux_loss_np(np.array([[np.log(2.0), 0.0]]), 1) == pytest.approx(4 / 3, abs=1e-15)


# ---------------------------------------------------------------------------------------------- gate.simplex


def test_gate_simplex_entries():
    out = gate.measure(_tiny())
    assert _verdicts(out) == {
        ("stated", "outputs are positive and sum to 1", "softmax gate"): "confirmed",
        ("stated", "dimensions: W_g x + b_g in R^N, the simplex is (N - 1)-dimensional", None): "confirmed",
        ("derived", "the image is the open simplex (never a vertex)", "softmax gate"): "confirmed",
    }
    assert gate.shapes(4) == ((4, 1), 3)
    # float64 reaches a vertex by underflow: e^-746 is below the smallest subnormal double (about 4.9e-324)
    assert "(0.0, 1.0)" in out[2].evidence
    assert all(r.evidence_type == "exact" and r.false_fail_rate is None for r in out)


def test_gate_checks_can_fail(monkeypatch):
    # the identities are checked, not asserted: an unnormalised gate e^z fails the sum, and the entry is refuted
    monkeypatch.setattr(gate, "softmax_exact", lambda z: tuple(sp.exp(v) for v in z))
    assert gate.positive_and_normalised(3) == (True, False)
    assert gate.measure(_tiny())[0].verdict == "refuted"


# ---------------------------------------------------------------------------------------------- topk


def test_dense_special_case_entries():
    out = topk.measure_dense(_tiny())
    assert set(_verdicts(out).values()) == {"confirmed"}
    assert {r.key.reading for r in out} == {topk.NORMALISED, topk.UNNORMALISED, None}
    assert topk.dense_equalities(3) == (True, True, True)
    forms = topk.forms_below_n()
    half, third, sixth = sp.Rational(1, 2), sp.Rational(1, 3), sp.Rational(1, 6)
    assert forms["normalised"] == (sp.Rational(3, 5), sp.Rational(2, 5), 0)
    assert forms["unnormalised"] == (half, third, 0) and forms["dense"] == (half, third, sixth)


def test_normalised_k1_entries_and_slip():
    out = topk.measure_k1(_tiny())
    # the chapter's statement is the definition, a distribution over the chosen experts; what happens to the gate's
    # gradient is derived from it, and does not decide it
    assert _verdicts(out) == {
        ("stated", "the normalised weights are a distribution over the selected experts", None): "confirmed",
        ("derived", "K = 1: the selected expert's weight is 1, so the task loss sends the gate no gradient through g~",
         topk.NORMALISED): "confirmed",
        ("derived", "K = 2: the task loss reaches the gate through g~", topk.NORMALISED): "confirmed",
        ("derived", "K = 1: the task loss reaches the gate through g~", topk.UNNORMALISED): "confirmed",
    }
    assert [r.key.role for r in out] == ["statement"] * 4
    assert [r.key.is_statement for r in out] == [True, False, False, False]
    grad, weights = topk.output_gradient(2, 1, True, topk.K1_LOGITS)
    assert weights == (1, 0) and grad == (0, 0)
    # unnormalised: y = g_1 e_1, dy/dz_1 = g_1 g_2 e_1 = (2/3)(1/3) e_1 = 2/9 e_1
    e1 = sp.Symbol("e1", real=True)
    grad_s, weights_s = topk.output_gradient(2, 1, False, topk.K1_LOGITS)
    assert weights_s == (sp.Rational(2, 3), 0)
    assert sp.simplify(grad_s[0] - sp.Rational(2, 9) * e1) == 0 and sp.simplify(grad_s[1] + sp.Rational(2, 9) * e1) == 0
    # K = 2 of (1/2, 1/3, 1/6): g~ = (3/5, 2/5), d g~_1 / dz = (g~_1 g~_2, -g~_1 g~_2, 0) = (6/25, -6/25, 0)
    assert topk.weight_gradient(3, 2, True, [sp.log(v) for v in topk.K2_GATES]) == (
        sp.Rational(6, 25), -sp.Rational(6, 25), 0)
    slips = topk.slips_k1(out)
    assert [s.id for s in slips] == ["topk.normalised_k1.no_gate_gradient"]
    slip = slips[0]
    assert slip.slip_class == "inconsistency between sections"
    # it names both places it sets against each other
    assert "稠密MoE与稀疏MoE的统一表示" in slip.location and "对专家网络的梯度" in slip.location
    k1 = next(r for r in out if r.key.form == "derived" and r.key.reading == topk.NORMALISED
              and r.key.part.startswith("K = 1"))
    assert slip.entries[0] == k1.key
    # it rests on derived entries only, so it leaves the definition standing
    assert not any(key.is_statement for key in slip.entries)
    from moecl_verify.reports.consequence import consequence
    ranked = consequence(slip, PACK)
    assert ranked.breaks == ()


def test_normalised_weights_are_a_distribution_and_the_check_can_fail(monkeypatch):
    # selected (1, 3) of four: g~ = (0, g_2, 0, g_4) / (g_2 + g_4), each >= 0, summing to 1
    assert topk.weights_form_a_distribution(4, (1, 3)) and topk.weights_form_a_distribution(2, (0,))
    # K = 1 of (2/3, 1/3): g~ = (2/3) / (2/3) = 1 on the chosen expert
    assert model.sparse_weights((F(2, 3), F(1, 3)), 1) == (1, 0)
    # without the normaliser the weights of a strict subset do not sum to 1: the check says so
    monkeypatch.setattr(topk, "sparse_weights",
                        lambda g, K, normalise=True, selected=None: model.sparse_weights(g, K, False, selected))
    assert not topk.weights_form_a_distribution(3, (0, 2))


def test_no_k1_slip_without_the_k1_consequence():
    out = [r for r in topk.measure_k1(_tiny()) if not r.key.part.startswith("K = 1: the selected")]
    assert topk.slips_k1(out) == []


# ---------------------------------------------------------------------------------------------- batch


def test_batch_forms_by_hand():
    # one token, two experts with weights (1/2, 1/2) and outputs (1, 2), (3, 4): y = (2, 3)
    R = [[F(1, 2), F(1, 2)]]
    E = [[[F(1), F(2)], [F(3), F(4)]]]
    assert batch.row_wise(R, E) == batch.per_token(R, E) == [[F(2), F(3)]]
    assert batch.symbolic_identity(2, 3, 2)


def test_batch_entries_and_slip():
    out = batch.measure(_tiny(cases=5))
    assert _verdicts(out) == {
        ("stated", "the batch form equals the per-token form", batch.ROW_WISE): "confirmed",
        ("stated", "the text's description (R is BT × N, E(X) all experts on all inputs, ⊙ element-wise) fits the "
         "output's shapes without broadcasting or a sum over experts", batch.LITERAL): "refuted",
    }
    literal = next(r for r in out if r.key.reading == batch.LITERAL)
    assert literal.config["smallest"] == [1, 2, 2]  # h = 2 is the first h with BT N != BT N h
    assert "formula is missing" in literal.evidence
    slips = batch.slips(out)
    assert [s.id for s in slips] == ["batch.routing_matrix.hadamard_shapes"] and slips[0].slip_class == "notation"
    assert "rests on the description, not on a formula" in slips[0].holds
    # refuted under one reading and confirmed under the other: the headline part depends on the reading
    from moecl_verify.reports.headline import DEPENDS, summarize
    assert summarize(out) == DEPENDS


def test_the_batch_check_catches_a_wrong_batch_form(monkeypatch):
    # without the sum over experts (only the first expert's block) the batch form differs from the per-token one
    monkeypatch.setattr(batch, "row_wise", lambda R, E: [[R[t][0] * v for v in E[t][0]] for t in range(len(R))])
    total, equal, bad = batch.random_cases(0, 10)
    assert total == 10 and equal < total and bad is not None


# ---------------------------------------------------------------------------------------------- aux.frequencies


def test_frequencies_by_hand():
    gates = [(F(1, 2), F(1, 10), F(2, 5)), (F(1, 10), F(1, 2), F(2, 5))]
    assert model.frequencies(gates, 1) == (F(1, 2), F(1, 2), F(0))
    assert model.mean_probabilities(gates) == (F(3, 10), F(3, 10), F(2, 5))
    # alpha N sum f P = 3 (1/2 * 3/10 + 1/2 * 3/10) = 9/10 < 1, the balanced value at K = 1
    values = aux.loss_values(aux.BELOW_BALANCED, 1)
    assert values["switch"] == sp.Rational(9, 10) * ALPHA
    # balanced, N = 4, K = 2: f = 1/2 each, P = 1/4 each: Switch 4 * 4 * (1/8) alpha = 2 alpha; per K alpha
    balanced = aux.loss_values(aux.BALANCED, 2)
    assert balanced["f"] == (sp.Rational(1, 2),) * 4 and balanced["P"] == (sp.Rational(1, 4),) * 4
    assert balanced["switch"] == 2 * ALPHA and balanced["per_k"] == ALPHA
    assert sum(model.frequencies([(F(1, 2), F(1, 4), F(1, 4))] * 3, 2)) == 2


def test_frequencies_entries():
    out = aux.measure_frequencies(_tiny(cases=6))
    assert _verdicts(out) == {
        ("stated", "sum_i P_i = 1", None): "confirmed",
        ("stated", "sum_i f_i = K, so balanced routing is f_i = K/N", None): "confirmed",
        ("derived", "L_aux at balanced routing", aux.SWITCH): "confirmed",
        ("derived", "L_aux at balanced routing", aux.PER_K): "confirmed",
        ("derived", "the balanced state is not the minimum of L_aux", aux.SWITCH): "confirmed",
    }
    assert aux.f_sums_to_k(0, 6)[:2] == (6, 6)


# ---------------------------------------------------------------------------------------------- aux.ste_needed


def test_ste_entries_and_slip():
    out = aux.measure_ste(_tiny())
    assert {(r.key.form, r.key.part, r.key.role): r.verdict for r in out} == {
        ("stated", "top-K selection is discrete: piecewise constant in the logits", "statement"): "confirmed",
        ("stated", "a straight-through estimator is needed for the gate's gradient", "proof step"): "refuted",
    }
    gates, f, grad = aux.aux_gradient_minimal()
    # one token: L = alpha * 2 * g_1 (f = (1, 0), P = g); dL/dz_1 = 2 alpha g_1 g_2 = 2 alpha (2/9) = 4 alpha / 9
    assert gates == (sp.Rational(2, 3), sp.Rational(1, 3)) and f == (1, 0)
    assert grad == (sp.Rational(4, 9) * ALPHA, -sp.Rational(4, 9) * ALPHA)
    assert aux.indicator_jump() == {sp.Rational(-1, 1000): 0, sp.Rational(1, 1000): 1}
    slips = aux.slips_ste(out)
    assert [s.id for s in slips] == ["aux.ste_needed.justification"]
    slip = slips[0]
    assert slip.slip_class == "notation" and slip.causes == ()
    # a misnomer: what the chapter does is the exact a.e. derivative; an STE would treat the indicator as the identity
    assert "misnomer" in slip.holds and "identity" in slip.holds and "almost everywhere" in slip.holds
    step = next(r for r in out if r.key.role == "proof step")
    assert slip.entries == (step.key,)
    # it rests on a proof step, so it undercuts the Gradients line without breaking it
    from moecl_verify.reports.consequence import consequence
    ranked = consequence(slip, PACK)
    assert ranked.breaks == () and [i.key for i in ranked.undercuts] == ["gradients"]


# ---------------------------------------------------------------------------------------------- forward


def test_the_layer_recursion_is_not_checkable_and_says_why():
    import moecl_verify.packs.moe_chapter.claims.forward as forward

    out = forward.measure(_tiny())
    assert [(r.verdict, r.key.part) for r in out] == [("not_checkable", "the layer recursion, steps 1-4")]
    assert "missing" in out[0].evidence
    assert PACK.order.index("forward") == PACK.order.index("topk") + 1  # the chapter states it after the routing
