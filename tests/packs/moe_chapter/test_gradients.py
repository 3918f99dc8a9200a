"""The chapter's gradient claims (aux.gradient, expert.gradient, expert.update_scale): verdicts on tiny contexts,
the exact numbers against hand arithmetic, the finite-difference checks shown able to fail, and the sampled
proportion against an independent loop.

Hand arithmetic used below (two experts E_i(x) = a_i b_i x, g = (2/3, 1/3), x = 1, target 1,
(a_1, b_1) = (1/10, 1/10), (a_2, b_2) = (1, 1)): y = (2/3)(1/100) + (1/3)(1) = 17/50, dL/dy = y - 1 = -33/50;
the gradient of expert i is g_i (dL/dy) (b_i, a_i), so ||.||^2 = (2/3)^2 (33/50)^2 (2/100) = 121/31250 and
(1/3)^2 (33/50)^2 (2) = 121/1250, a norm ratio sqrt(1/25) = 1/5.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import sympy as sp

import moecl_verify.packs.moe_chapter.claims.aux_loss as aux
import moecl_verify.packs.moe_chapter.claims.expert as expert
from moecl_verify.checks import runner
from moecl_verify.checks.context import context_for
from moecl_verify.packs.moe_chapter import PACK, model

pytestmark = pytest.mark.claims


def _tiny(cases: int = 3, draws: int = 300):
    ctx = context_for(PACK, "smoke", 0)
    ctx.sizes = dataclasses.replace(ctx.sizes, cases=cases, draws=draws)
    return ctx


def _verdicts(results) -> dict:
    return {(r.key.form, r.key.part, r.key.reading, r.key.role): r.verdict for r in results}


# ---------------------------------------------------------------------------------------------- aux.gradient


def test_aux_gradient_entries():
    out = aux.measure_gradient(_tiny())
    assert _verdicts(out) == {
        ("stated", "dL_aux/dg_i(x_t) = alpha N f_i / BT", aux.SWITCH, "statement"): "confirmed",
        ("stated", "the indicator in f_i has gradient 0", None, "proof step"): "confirmed",
        ("stated", "softmax chain dg_i/dz_k = g_i (delta_ik - g_k)", "softmax gate", "statement"): "confirmed",
        ("stated", "to W_g and b_g: sum_t (dL/dz_t) x_t^T and sum_t dL/dz_t", aux.SWITCH, "statement"): "confirmed",
        ("derived", "normalised top-K weights are the softmax of the selected logits", None, "statement"): "confirmed",
        ("stated", "all parts combined: finite differences agree", aux.SWITCH, "statement"): "confirmed",
    }
    fd = next(r for r in out if r.key.part.startswith("all parts"))
    assert fd.config["cases"] == 3 and fd.config["worst_relative_error"] <= aux.FD_CONFIRM
    assert all(r.evidence_type == "exact" for r in out)


def test_symbolic_pieces_and_that_they_can_fail():
    assert aux.dl_dg() and aux.w_chain() and aux.softmax_jacobian(3)
    assert aux.restricted_softmax(3, (0, 1))
    # a wrong Jacobian is not accepted: g_i (delta_ik + g_k) differs from the derivative
    z = sp.symbols("z1:3", real=True)
    g = model.softmax_exact(z)
    assert not model.vanishes(sp.diff(g[0], z[0]) - g[0] * (1 + g[0]))
    assert model.vanishes(sp.diff(g[0], z[0]) - g[0] * (1 - g[0]))


def test_aux_finite_differences_catch_a_wrong_gradient(monkeypatch):
    right = aux.finite_differences(0, 3)
    assert right["worst"] <= aux.FD_CONFIRM and right["cases"] == 3
    # the auxiliary part with the factor alpha N / BT dropped to 1 / BT: no longer the loss's gradient
    original = model.aux_loss_logit_grad_np
    monkeypatch.setattr(model, "aux_loss_logit_grad_np",
                        lambda Z, K, alpha=1.0: original(Z, K, alpha) / (alpha * Z.shape[1]))
    assert aux.finite_differences(0, 3)["worst"] > aux.FD_REFUTE


# ---------------------------------------------------------------------------------------------- expert.gradient


def test_expert_gradient_entries():
    out = expert.measure_gradient(_tiny())
    assert set(_verdicts(out).values()) == {"confirmed"} and len(out) == 4
    assert {r.key.reading for r in out} == {expert.CHAIN}
    # g = (1/2, 1/3, 1/6), K = 2: (1/2, 1/3) / (5/6) = (3/5, 2/5), the third expert has weight 0
    weights, zero = expert.unselected_zero()
    assert weights == (sp.Rational(3, 5), sp.Rational(2, 5), 0) and zero


def test_expert_chain_by_hand_and_finite_differences_can_fail(monkeypatch):
    # one ReLU expert, one unit: U = [[2]], c = [-1], V = [[3]], x = [1], delta_e = [1/2]:
    # pre = 2 - 1 = 1 > 0, so dV = delta_e * 1 = 1/2, back = V^T delta_e = 3/2, dU = 3/2 * x = 3/2, dc = 3/2
    dU, dc, dV = expert._relu_expert_grads(np.array([[2.0]]), np.array([-1.0]), np.array([[3.0]]), np.array([1.0]),
                                           np.array([0.5]))
    assert (dU.item(), dc.item(), dV.item()) == (1.5, 1.5, 0.5)
    assert expert.finite_differences(0, 3)["worst"] <= expert.FD_CONFIRM
    # the gate weight applied twice: the finite differences see it
    original = expert._relu_expert_grads
    monkeypatch.setattr(expert, "_relu_expert_grads", lambda U, c, V, x, d: tuple(2 * a for a in original(U, c, V, x, d)))
    assert expert.finite_differences(0, 3)["worst"] > expert.FD_REFUTE


# ---------------------------------------------------------------------------------------------- expert.update_scale


def test_counterexamples_by_hand():
    fac = expert.factorised_counterexample()
    assert fac["y"] == sp.Rational(17, 50)
    assert fac["norms2"] == (sp.Rational(121, 31250), sp.Rational(121, 1250))
    assert fac["ratio"] == sp.Rational(1, 5)
    # ReLU: y = (1/3)(1) = 1/3, dL/dy = -2/3; expert 1's unit is off: 0; expert 2: du = dv = (1/3)(-2/3) = -2/9
    assert expert.relu_counterexample() == (0, 2 * sp.Rational(2, 9) ** 2)
    # K = 1, one gate softmax(W_g x + b_g) with W_g = (log(6)/2, 0), b_g = (log(27/2)/2, 0): the logit gap is
    # (log 6 + log 13.5)/2 = log(81)/2 = log 9 at x = 1 and (log 13.5 - log 6)/2 = log(9/4)/2 = log(3/2) at x = -1,
    # so g = (9/10, 1/10) and (3/5, 2/5): expert 1 is chosen on both tokens, with weight 1 on both
    assert expert.k1_gates() == ((sp.Rational(9, 10), sp.Rational(1, 10)), (sp.Rational(3, 5), sp.Rational(2, 5)))
    # x = 1, t = 1: L = (ab - 1)^2 / 2, dL/da = (1/4 - 1)(1/2) = -3/8; x = -1, t = -1: L = (1 - ab)^2 / 2 (the
    # same function), so the same gradient
    weights, grads = expert.k1_same_gradient()
    assert weights == (1, 1) and grads == ((-sp.Rational(3, 8), -sp.Rational(3, 8)),) * 2
    assert expert.identical_experts_ratio()


def _ordering_by_loop(seed: int, draws: int) -> int:
    """The sampled ordering recomputed one instance at a time, on the instances the claim draws
    (:func:`expert.ordering_draws`), with the per-expert gradients of :func:`expert._relu_expert_grads` (an
    independent path from the vectorised norms)."""
    drawn = expert.ordering_draws(seed, draws)
    Wt, U, c, V, x, t = drawn.Wt, drawn.U, drawn.c, drawn.V, drawn.x, drawn.t
    N = Wt.shape[1]
    count = 0
    for s in range(draws):
        y = sum(Wt[s, i] * (V[s, i] @ np.maximum(U[s, i] @ x[s] + c[s, i], 0.0)) for i in range(N))
        norms = []
        for i in range(N):
            grads = expert._relu_expert_grads(U[s, i], c[s, i], V[s, i], x[s], Wt[s, i] * (y - t[s]))
            norms.append(np.sqrt(sum(float((a ** 2).sum()) for a in grads)))
        high, low = np.argsort(-Wt[s], kind="stable")[:2]
        count += norms[high] > norms[low]
    return count


def test_sampled_ordering_matches_a_loop():
    successes, draws = expert.sampled_ordering(0, 200)
    assert draws == 200 and successes == _ordering_by_loop(0, 200)
    assert 0 < successes < draws  # neither always nor never


def test_ceteris_paribus_slope_by_hand():
    # ||g~ J^T delta||^2 = (g/(g + s))^2 q with q = ||J^T delta||^2; by hand, d/dg (g/(g + s))^2 = 2 g s/(g + s)^3.
    # Checked here by central differences on a fixed J, delta (numpy, independent of sympy), and the sign: positive
    # for s > 0 (K >= 2), zero for s = 0 (K = 1), and 2 g q for the dense gate (g~ = g).
    J = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, 1.0]])
    delta = np.array([0.7, -1.1])
    q = float(((J.T @ delta) ** 2).sum())
    step = 1e-6
    for g, s in ((0.3, 0.2), (0.6, 0.1), (0.5, 0.0)):
        def norm2(gv, s=s):
            return (gv / (gv + s)) ** 2 * q if gv + s > 0 else 0.0
        fd = (norm2(g + step) - norm2(g - step)) / (2 * step)
        assert fd == pytest.approx(2 * g * s * q / (g + s) ** 3, rel=1e-6, abs=1e-9)
        assert (fd > 0) == (s > 0)
    fd_dense = ((0.3 + step) ** 2 * q - (0.3 - step) ** 2 * q) / (2 * step)
    assert fd_dense == pytest.approx(2 * 0.3 * q, rel=1e-6)
    cp = expert.ceteris_paribus()
    assert cp["dense"] and cp["renormalised"] and cp["k1_zero"] and cp["proportional"]


def test_ceteris_paribus_entry_can_fail(monkeypatch):
    # A slope check that does not hold must not confirm the main entry.
    monkeypatch.setattr(expert, "ceteris_paribus", lambda: {
        "dense": True, "renormalised": False, "k1_zero": True, "proportional": True, "dense_slope": "",
        "renorm_slope": ""})
    out = expert.measure_scale(_tiny())
    main = next(r for r in out if r.key.part == expert.CETERIS_PART)
    assert main.verdict == "refuted"


def test_update_scale_run_and_slip(monkeypatch):
    small = dataclasses.replace(PACK.budgets["smoke"], draws=300)
    monkeypatch.setitem(PACK.budgets, "smoke", small)
    run = runner.run(["expert.update_scale"], budget="smoke", seed=0, pack=PACK, reuse_claims=False)
    verdicts = {(r.key.form, r.key.part, r.key.reading): r.verdict for r in run.results}
    # The main entry is the ceteris-paribus reading (confirmed, K >= 2 or dense); the literal reading, for all cases,
    # is its own entry (refuted); K = 1 normalised fails under both (no reading).
    assert verdicts == {
        ("stated", expert.CETERIS_PART, expert.CETERIS): "confirmed",
        ("stated", "between two experts: a higher gate probability gives a larger gradient", expert.LITERAL): "refuted",
        ("stated", "K = 1 normalised: a higher g_i gives a larger gradient", None): "refuted",
        ("derived", "random ReLU experts: the higher-weighted one always has the larger gradient",
         expert.LITERAL): "refuted",
    }
    assert all(r.evidence_type == "exact" for r in run.results if r.key.reading == expert.CETERIS)
    k1 = next(r for r in run.results if r.key.part == expert.K1_NORMALISED)
    assert "one expert compared with itself across two tokens" in k1.evidence
    # the K = 1 case holds under every reading, the literal one only between different experts: the line falls on
    # the former, and quotes it
    from moecl_verify.reports.headline import FALLS, decisive_entry, summarize
    assert summarize(run.results) == FALLS
    assert decisive_entry(run.results, ("expert",), PACK).key == k1.key
    # without the K = 1 entry the line would depend on the reading: refuted literally, confirmed ceteris paribus
    from moecl_verify.reports.headline import DEPENDS
    assert summarize([r for r in run.results if r.key.part != expert.K1_NORMALISED]) == DEPENDS
    sampled = next(r for r in run.results if r.evidence_type == "proportion")
    # the sampled proportion is the effect size of the literal reading, not a further refutation of the statement,
    # and it is decided by the run's error control
    assert not sampled.key.is_statement and sampled.key.reading == expert.LITERAL
    successes, draws = expert.sampled_ordering(0, 300)
    assert sampled.observed == successes / draws < 1 and sampled.false_fail_rate is not None
    slips = {s.id: s for s in run.slips}
    assert set(slips) == {"expert.update_scale.k1", "expert.update_scale.not_implied"}
    literal = slips["expert.update_scale.not_implied"]
    assert literal.slip_class == "unstated assumption"
    assert [k.part for k in literal.entries] == [expert.BETWEEN_EXPERTS, sampled.key.part]
    assert "same Jacobian and upstream gradient" in literal.holds and "read literally" in literal.summary
    assert f"{successes} of {draws}" in literal.effect
    k1_slip = slips["expert.update_scale.k1"]
    # the K = 1 failure follows from the normalised weights' definition at K = 1 (the routing claim's slip)
    assert k1_slip.causes == ("topk.normalised_k1.no_gate_gradient",)
    assert k1_slip.entries[0] == k1.key
