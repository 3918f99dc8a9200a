"""The experts' gradient and what the chapter reads off it (chapter 1.5, "对专家网络的梯度").

Text (the chapter):

    对于被选中的专家 i ∈ TopK(G(x_t), K)：[missing]
    这表明：门控概率越高的专家，其接收的梯度信号越强，从而更新幅度越大。
    (For a selected expert i ∈ TopK(G(x_t), K): [missing]. This shows that an expert with a higher gate
    probability receives a stronger gradient signal and therefore a larger update.)

Reading.  The missing formula is the chain rule through y = Σ_i g̃_i(x) E_i(x; θ_i):
∂L/∂θ_i = g̃_i(x) · (∂E_i/∂θ_i)^T ∂L/∂y, with g̃ the unified weights (claim topk.dense_special_case) and g̃
independent of θ_i (the gate has its own parameters); "update" is the plain gradient step −η ∂L/∂θ_i.

Checks.  ``expert.gradient``: sympy on linear experts (two losses) and on one-hidden-layer tanh experts; an
unselected expert's gradient is 0; central differences on one-hidden-layer ReLU experts (seeded float64
instances, a deterministic computation decided with stated tolerances).  ``expert.update_scale``: the norm is
g̃_i · ||J_i^T ∂L/∂y||.  Its main entry judges the sentence under the ceteris-paribus reading the chapter's "这表明"
draws from the formula (raise g_i, hold J_i, ∂L/∂y and the other chosen experts' probabilities): by the sign of the
derivative of the squared norm in g_i (sympy), positive for a dense gate and for the normalised top-K at K >= 2.
The literal reading, for all cases, is its own entry: an exact minimal counterexample between two experts (two
factorised linear experts; also a ReLU expert whose unit is off).  The normalised K = 1 case compares one expert
across two tokens and fails under both readings, since every selected expert has weight 1 whatever g.
Derived, as the effect size of the literal reading's failure (not a further refutation): the proportion of
random instances in which the higher-weighted of two selected ReLU experts receives the larger gradient.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from moecl_verify.checks.kinds.proportion import ProportionEvidence, ProportionRow
from moecl_verify.checks.model import Interpretation, Slip, exact_result, keys_of
from moecl_verify.checks.registry import Claim, register
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.packs.moe_chapter import model
from moecl_verify.packs.moe_chapter.model import softmax_exact, sparse_weights, vanishes

SOURCE = "Chapter 1.5, 对专家网络的梯度"
GRAD, SCALE = "expert.gradient", "expert.update_scale"
CHAIN = "dL/dtheta_i = g~_i (dE_i/dtheta_i)^T dL/dy"
# The parts of the two statement entries of expert.update_scale.
BETWEEN_EXPERTS = "between two experts: a higher gate probability gives a larger gradient"
K1_NORMALISED = "K = 1 normalised: a higher g_i gives a larger gradient"
# The sentence's two readings.  Ceteris paribus, the reading '这表明' draws from the formula: raise the expert's gate
# probability g_i and hold the formula's other factors (its Jacobian J_i and the upstream gradient dL/dy; under
# top-K, the set of chosen experts and their other gate probabilities) fixed.  Literally: for all cases, between
# any two experts.  The K = 1 entry holds under both: it compares one expert with itself.
CETERIS = "ceteris paribus: g_i raised, the formula's other factors held"
LITERAL = "literal: for all cases, between any two experts"
CETERIS_PART = "K >= 2 or dense: a higher g_i gives a larger gradient and update"
FD_STEP = 1e-6
FD_CONFIRM = 1e-6  # relative to the gradient's largest entry (float64, central differences)
FD_REFUTE = 1e-2
FD_FLOOR = 1e-4  # the error's scale is at least this fraction of the loss (the rounding of central differences)
# The minimal counterexample: two factorised linear experts E_i(x) = a_i b_i x, K = N = 2, g = (2/3, 1/3),
# x = 1, target 1; expert 1 has small parameters (1/10, 1/10), expert 2 (1, 1).
GATES = (sp.Rational(2, 3), sp.Rational(1, 3))
PARAMS = ((sp.Rational(1, 10), sp.Rational(1, 10)), (sp.Integer(1), sp.Integer(1)))
# A ReLU expert whose unit is off: E_i(x) = v_i max(0, u_i x), u_1 = -1 (off at x = 1), u_2 = 1; v = 1.
RELU_PARAMS = ((sp.Integer(-1), sp.Integer(1)), (sp.Integer(1), sp.Integer(1)))
# K = 1, normalised: the same expert on two tokens with different gate probabilities.  The gate sees the token
# too, so the tokens differ: x = 1 with target 1 and x = -1 with target -1, through one gate G(x) = softmax(W_g x +
# b_g) with W_g = (log(6)/2, 0) and b_g = (log(27/2)/2, 0): logit gaps log 9 and log(3/2), so g = (9/10, 1/10) and
# (3/5, 2/5); the expert a b x (a = b = 1/2) has the same gradient on both when its weight is the same.
K1_TOKENS = ((sp.Integer(1), sp.Integer(1)), (sp.Integer(-1), sp.Integer(-1)))  # (x, target)
K1_GATE_W = (sp.log(6) / 2, sp.Integer(0))
K1_GATE_B = (sp.log(sp.Rational(27, 2)) / 2, sp.Integer(0))
K1_GATES = ((sp.Rational(9, 10), sp.Rational(1, 10)), (sp.Rational(3, 5), sp.Rational(2, 5)))
# The sampled check: two of four one-hidden-layer ReLU experts selected (normalised), d = 4, 8 units, h = 4.
SAMPLED = {"N": 4, "K": 2, "d": 4, "units": 8, "h": 4}

INTERPRETATIONS = (
    Interpretation(
        id="expert.gradient",
        location="Chapter 1.5, 对专家网络的梯度: the display after '对于被选中的专家 i ∈ TopK(G(x_t), K)：'",
        issue="The expert's gradient formula is missing.",
        choice="∂L/∂θ_i = g̃_i(x) · (∂E_i/∂θ_i)^T ∂L/∂y, the chain rule through y = Σ_i g̃_i(x) E_i(x; θ_i), with g̃ "
        "not depending on θ_i; 'update' is the gradient step −η ∂L/∂θ_i (plain SGD).",
    ),
)


INTERPRETATIONS_SCALE = INTERPRETATIONS + (
    Interpretation(
        id="expert.update_scale.readings",
        location="Chapter 1.5, 对专家网络的梯度: '这表明：门控概率越高的专家，其接收的梯度信号越强，从而更新幅度越大'",
        issue="The sentence draws a comparison from the formula without saying what is held fixed.",
        choice="Two readings, each its own entry: ceteris paribus (raise g_i, hold the formula's other factors J_i "
        "and dL/dy, and under top-K the chosen set and the other chosen experts' probabilities), the reading "
        "'这表明' draws; and literally, for all cases, between any two experts.",
    ),
)


# ---------------------------------------------------------------------------------------------- expert.gradient


def linear_chain(loss: str) -> bool:
    """Two linear experts A_i (2 x 2), weights w_i: dL/dA_i == w_i (dL/dy) x^T (sympy) for ``loss`` 'squared'
    (1/2 ||y - t||^2) or 'cross-entropy' (log sum_k e^{y_k} - y_1)."""
    d = h = 2
    w = sp.symbols("w1:3", positive=True)
    x = sp.symbols(f"x1:{d + 1}", real=True)
    t = sp.symbols(f"t1:{h + 1}", real=True)
    A = [sp.Matrix(h, d, lambda k, j, i=i: sp.Symbol(f"a{i}_{k}{j}", real=True)) for i in range(2)]
    y = sum((w[i] * A[i] * sp.Matrix(x) for i in range(2)), sp.zeros(h, 1))
    ys = sp.symbols(f"y1:{h + 1}", real=True)
    if loss == "squared":
        L_of_y = sum((ys[k] - t[k]) ** 2 for k in range(h)) / 2
    else:
        L_of_y = sp.log(sum(sp.exp(v) for v in ys)) - ys[0]
    at = dict(zip(ys, list(y)))
    L = L_of_y.subs(at)
    dldy = [sp.diff(L_of_y, v).subs(at) for v in ys]
    return all(sp.simplify(sp.diff(L, A[i][k, j]) - w[i] * dldy[k] * x[j]) == 0
               for i in range(2) for k in range(h) for j in range(d))


def hidden_layer_chain() -> bool:
    """Two one-hidden-layer experts E_i(x) = V_i tanh(U_i x + c_i) (d = 2, 2 units, h = 2), squared loss:
    dL/dtheta_i == w_i J_i^T dL/dy for every parameter, with J_i^T delta computed as d(delta . E_i)/dtheta_i."""
    d = m = h = 2
    w = sp.symbols("w1:3", positive=True)
    x = sp.Matrix(sp.symbols(f"x1:{d + 1}", real=True))
    t = sp.Matrix(sp.symbols(f"t1:{h + 1}", real=True))
    delta = sp.Matrix(sp.symbols(f"delta1:{h + 1}", real=True))
    experts, params = [], []
    for i in range(2):
        U = sp.Matrix(m, d, lambda k, j, i=i: sp.Symbol(f"u{i}_{k}{j}", real=True))
        c = sp.Matrix(m, 1, lambda k, _, i=i: sp.Symbol(f"c{i}_{k}", real=True))
        V = sp.Matrix(h, m, lambda k, j, i=i: sp.Symbol(f"v{i}_{k}{j}", real=True))
        experts.append(V * (U * x + c).applyfunc(sp.tanh))
        params.append(list(U) + list(c) + list(V))
    y = w[0] * experts[0] + w[1] * experts[1]
    L = ((y - t).T * (y - t))[0, 0] / 2
    upstream = dict(zip(delta, list(y - t)))  # dL/dy for the squared loss
    for i in range(2):
        contracted = (delta.T * experts[i])[0, 0]
        for p in params[i]:
            if not vanishes(sp.diff(L, p) - w[i] * sp.diff(contracted, p).subs(upstream)):
                return False
    return True


def unselected_zero() -> tuple[tuple, bool]:
    """g = (1/2, 1/3, 1/6), K = 2, normalised: the third expert's weight is 0, so its gradient
    dL/dA_3 = g~_3 (dL/dy) x^T is 0 (sympy, linear experts, scalar case)."""
    g = (sp.Rational(1, 2), sp.Rational(1, 3), sp.Rational(1, 6))
    w = sparse_weights(g, 2, True)
    a = sp.symbols("a1:4", real=True)
    x, t = sp.Integer(1), sp.Integer(2)
    y = sum(w[i] * a[i] * x for i in range(3))
    L = (y - t) ** 2 / 2
    return w, sp.diff(L, a[2]) == 0 and sp.diff(L, a[0]) != 0


def _relu_expert_grads(U, c, V, x, delta_e):
    """Gradients of delta_e . (V relu(U x + c)) in U, c, V (one expert, one token; delta_e = g~_i dL/dy)."""
    pre = U @ x + c
    on = pre > 0
    hidden = np.where(on, pre, 0.0)
    back = (V.T @ delta_e) * on
    return np.outer(back, x), back, np.outer(delta_e, hidden)


def _relu_loss(experts, weights, x, t):
    y = sum(wi * (V @ np.maximum(U @ x + c, 0.0)) for wi, (U, c, V) in zip(weights, experts))
    return 0.5 * float(((y - t) ** 2).sum()), y


def finite_differences(seed: int, cases: int) -> dict:
    """Central differences of 1/2 ||y - t||^2 in every parameter of every selected ReLU expert (normalised
    top-K, random gates) against g~_i J_i^T (y - t); coordinates whose step flips a unit are skipped."""
    rng = generator_for(seed, "moe-chapter", GRAD, "finite differences")
    worst, skipped, coords = 0.0, 0, 0
    for _ in range(cases):
        N, d, m, h = int(rng.integers(2, 6)), int(rng.integers(1, 5)), int(rng.integers(1, 6)), int(rng.integers(1, 4))
        K = int(rng.integers(1, N + 1))
        weights = model.sparse_weights_np(model.softmax(rng.normal(size=N)), K, True)[0]
        experts = [(rng.normal(size=(m, d)), rng.normal(size=m), rng.normal(size=(h, m))) for _ in range(N)]
        x, t = rng.normal(size=d), rng.normal(size=h)
        loss0, y = _relu_loss(experts, weights, x, t)
        for i in np.nonzero(weights)[0]:
            U, c, V = experts[i]
            analytic = _relu_expert_grads(U, c, V, x, weights[i] * (y - t))
            masks = (U @ x + c) > 0
            for which, array in enumerate((U, c, V)):
                for index in np.ndindex(array.shape):
                    values = []
                    for sign in (1, -1):
                        moved = [a.copy() for a in (U, c, V)]
                        moved[which][index] += sign * FD_STEP
                        trial = list(experts)
                        trial[i] = tuple(moved)
                        same = np.array_equal((moved[0] @ x + moved[1]) > 0, masks)
                        values.append(_relu_loss(trial, weights, x, t)[0] if same else None)
                    coords += 1
                    if None in values:
                        skipped += 1
                        continue
                    estimate = (values[0] - values[1]) / (2 * FD_STEP)
                    # Relative to the gradient's largest entry, floored at FD_FLOOR times the loss: central
                    # differences round off in proportion to the loss.
                    scale = max(max(float(np.abs(a).max()) for a in analytic), FD_FLOOR * loss0)
                    worst = max(worst, abs(estimate - analytic[which][index]) / scale)
    return {"cases": cases, "coordinates": coords, "skipped": skipped, "worst": worst}


def measure_gradient(ctx) -> list:
    out = []
    losses = {loss: linear_chain(loss) for loss in ("squared", "cross-entropy")}
    out.append(exact_result(
        GRAD, SOURCE, "symbolic identity", "linear experts: dL/dA_i = g~_i (dL/dy) x^T",
        "confirmed" if all(losses.values()) else "refuted",
        "sympy, two linear experts E_i(x) = A_i x (2 x 2), symbolic weights g~_i, input and target: dL/dA_i - "
        "g~_i (dL/dy) x^T simplifies to 0 for " + ", ".join(f"the {k} loss: {v}" for k, v in losses.items()),
        r"\frac{\partial L}{\partial A_i} = \tilde g_i\, \frac{\partial L}{\partial y}\, x^\top", reading=CHAIN))
    hidden = hidden_layer_chain()
    out.append(exact_result(
        GRAD, SOURCE, "symbolic identity", "one-hidden-layer experts: dL/dtheta_i = g~_i J_i^T dL/dy",
        "confirmed" if hidden else "refuted",
        "sympy, two experts E_i(x) = V_i tanh(U_i x + c_i) (d = 2, 2 units, h = 2), squared loss: for every entry "
        "of U_i, c_i, V_i, dL/dtheta - g~_i d(delta . E_i)/dtheta at delta = dL/dy simplifies to 0: " + str(hidden),
        r"\frac{\partial L}{\partial \theta_i} = \tilde g_i\, J_i^\top \frac{\partial L}{\partial y}", reading=CHAIN))
    w, zero = unselected_zero()
    out.append(exact_result(
        GRAD, SOURCE, "symbolic identity", "an expert outside TopK receives no gradient",
        "confirmed" if zero else "refuted",
        f"exact: g = (1/2, 1/3, 1/6), K = 2, normalised weights g~ = ({', '.join(map(str, w))}); with scalar linear "
        f"experts and the squared loss, dL/da_3 = 0 while dL/da_1 != 0: {zero}",
        r"i\notin\mathrm{TopK} \Rightarrow \partial L/\partial\theta_i = 0", reading=CHAIN))
    fd = finite_differences(ctx.seed, int(ctx.sizes.cases))
    verdict = "confirmed" if fd["worst"] <= FD_CONFIRM else "refuted" if fd["worst"] > FD_REFUTE else "inconclusive"
    out.append(exact_result(
        GRAD, SOURCE, "symbolic identity", "finite differences agree (ReLU experts)", verdict,
        f"deterministic float64 computation (not a sample): {fd['cases']} seeded random instances (N 2..5, K 1..N, "
        f"d 1..4, 1..5 ReLU units, h 1..3, normalised top-K, squared loss); central differences with step "
        f"{FD_STEP:g} in every parameter of every selected expert ({fd['coordinates']} coordinates, {fd['skipped']} "
        f"skipped because the step switched a unit) against g~_i J_i^T (y - t): largest error relative to the "
        f"gradient's largest entry (at least {FD_FLOOR:g} times the loss) {fd['worst']:.2e} (agreement up to "
        f"{FD_CONFIRM:g}, "
        f"disagreement beyond {FD_REFUTE:g})",
        r"\tilde g_i J_i^\top (y - t)\ \text{vs central differences}", reading=CHAIN, cases=fd["cases"],
        worst_relative_error=fd["worst"], skipped=fd["skipped"]))
    return out


# ---------------------------------------------------------------------------------------------- expert.update_scale


def factorised_counterexample() -> dict:
    """Squared gradient norms of two factorised linear experts E_i = a_i b_i x at GATES, PARAMS, x = 1, t = 1."""
    a = sp.symbols("a1:3", real=True)
    b = sp.symbols("b1:3", real=True)
    x, t = sp.Integer(1), sp.Integer(1)
    y = sum(GATES[i] * a[i] * b[i] * x for i in range(2))
    L = (y - t) ** 2 / 2
    at = {a[0]: PARAMS[0][0], b[0]: PARAMS[0][1], a[1]: PARAMS[1][0], b[1]: PARAMS[1][1]}
    norms = tuple(sp.nsimplify(sp.diff(L, a[i]).subs(at) ** 2 + sp.diff(L, b[i]).subs(at) ** 2) for i in range(2))
    return {"y": sp.nsimplify(y.subs(at)), "norms2": norms, "ratio": sp.sqrt(norms[0] / norms[1])}


def relu_counterexample() -> tuple:
    """Squared gradient norms of two ReLU experts E_i = v_i max(0, u_i x) at GATES, RELU_PARAMS, x = 1, t = 1 (the
    derivative of max(0, s) is 1[s > 0], exact away from s = 0)."""
    x, t = sp.Integer(1), sp.Integer(1)
    y = sum(GATES[i] * v * sp.Max(0, u * x) for i, (u, v) in enumerate(RELU_PARAMS))
    delta = y - t
    out = []
    for i, (u, v) in enumerate(RELU_PARAMS):
        on = 1 if u * x > 0 else 0
        du = GATES[i] * delta * v * x * on
        dv = GATES[i] * delta * sp.Max(0, u * x)
        out.append(du ** 2 + dv ** 2)
    return tuple(out)


def k1_gates() -> tuple:
    """The gate's probabilities at the two tokens of K1_TOKENS, exactly (sympy)."""
    return tuple(tuple(sp.nsimplify(sp.simplify(v)) for v in softmax_exact(
        [w * x + b for w, b in zip(K1_GATE_W, K1_GATE_B)])) for x, _ in K1_TOKENS)


def k1_same_gradient() -> tuple:
    """K = 1, normalised: the weights of expert 1 on the two tokens of K1_TOKENS (gate probabilities 9/10 and
    3/5, expert 1 chosen on both) and its gradient in (a, b) on each (E_1(x) = a b x at a = b = 1/2; squared loss)."""
    weights = tuple(sparse_weights(g, 1, True)[0] for g in k1_gates())
    a, b = sp.symbols("a b", real=True)
    grads = []
    for w, (x, t) in zip(weights, K1_TOKENS):
        L = (w * a * b * x - t) ** 2 / 2
        at = {a: sp.Rational(1, 2), b: sp.Rational(1, 2)}
        grads.append((sp.diff(L, a).subs(at), sp.diff(L, b).subs(at)))
    return weights, tuple(grads)


def identical_experts_ratio() -> bool:
    """Two identical experts (shared parameters theta, Jacobian J) on one token: ||grad_1|| / ||grad_2|| ==
    w_1 / w_2 (sympy, symbolic upstream and Jacobian)."""
    w = sp.symbols("w1:3", positive=True)
    J = sp.Matrix(2, 3, lambda i, j: sp.Symbol(f"J{i}{j}", real=True))
    delta = sp.Matrix(sp.symbols("d1:3", real=True))
    grads = [w[i] * J.T * delta for i in range(2)]
    norm2 = [(g.T * g)[0, 0] for g in grads]
    return sp.simplify(norm2[0] * w[1] ** 2 - norm2[1] * w[0] ** 2) == 0


def ceteris_paribus() -> dict:
    """The sentence under its ceteris-paribus reading, by the sign of a derivative (sympy): the squared norm of
    dL/dtheta_i = g~_i J_i^T delta with J_i (2 x 3) and delta symbolic, as a function of g_i with the rest held.

    Dense (g~_i = g_i): d/dg_i ||.||^2 = 2 g_i ||J^T delta||^2.  Normalised top-K with the chosen set held and
    s = sum of the other chosen experts' g_j (s > 0 at K >= 2, s = 0 at K = 1): g~_i = g_i / (g_i + s) and
    d/dg_i ||.||^2 = 2 g_i s ||J^T delta||^2 / (g_i + s)^3.  The update -eta dL/dtheta_i (eta > 0) scales the
    same way."""
    g = sp.Symbol("g", positive=True)
    s_ = sp.Symbol("s", nonnegative=True)
    J = sp.Matrix(2, 3, lambda i, j: sp.Symbol(f"J{i}{j}", real=True))
    delta = sp.Matrix(sp.symbols("d1:3", real=True))
    back = J.T * delta
    q = (back.T * back)[0, 0]  # ||J^T delta||^2 >= 0

    def slope(weight):
        norm2 = ((weight * back).T * (weight * back))[0, 0]
        return sp.diff(norm2, g)

    dense = slope(g)
    renorm = slope(g / (g + s_))
    dense_ok = sp.simplify(dense - 2 * g * q) == 0
    renorm_ok = sp.simplify(renorm - 2 * g * s_ * q / (g + s_) ** 3) == 0
    # The sign: with q > 0 (J^T delta != 0, else the expert gets no gradient at all) the slope is positive for the
    # dense gate and for s > 0, and 0 at s = 0 (K = 1).
    qp, sp_pos = sp.Symbol("qp", positive=True), sp.Symbol("sp", positive=True)
    dense_pos = bool((2 * g * qp).is_positive)
    renorm_pos = bool((2 * g * sp_pos * qp / (g + sp_pos) ** 3).is_positive)
    k1_zero = sp.simplify((2 * g * s_ * q / (g + s_) ** 3).subs(s_, 0)) == 0
    return {"dense": dense_ok and dense_pos, "renormalised": renorm_ok and renorm_pos, "k1_zero": k1_zero,
            "proportional": identical_experts_ratio(), "dense_slope": "2 g_i ||J_i^T dL/dy||^2",
            "renorm_slope": "2 g_i s ||J_i^T dL/dy||^2 / (g_i + s)^3"}


@dataclass(frozen=True, eq=False)
class OrderingDraws:
    """The sampled ordering's instances: the normalised top-K weights ``Wt`` (draws, N) of random logits, four
    one-hidden-layer ReLU experts (``U`` (draws, N, m, d), ``c`` (draws, N, m), ``V`` (draws, N, h, m), weights
    scaled by 1/sqrt(fan-in)), an input ``x`` (draws, d) and a target ``t`` (draws, h)."""

    Wt: np.ndarray
    U: np.ndarray
    c: np.ndarray
    V: np.ndarray
    x: np.ndarray
    t: np.ndarray


def ordering_draws(seed: int, draws: int) -> OrderingDraws:
    """The instances of :func:`sampled_ordering`, from ``generator_for(seed, "moe-chapter", SCALE, "ordering")`` in
    a fixed order (logits, U, c, V, x, t)."""
    rng = generator_for(seed, "moe-chapter", SCALE, "ordering")
    N, K, d, m, h = (SAMPLED[k] for k in ("N", "K", "d", "units", "h"))
    G = model.softmax(rng.normal(size=(draws, N)))
    Wt = model.sparse_weights_np(G, K, True)
    U = rng.normal(size=(draws, N, m, d)) / np.sqrt(d)
    c = rng.normal(size=(draws, N, m)) * 0.1
    V = rng.normal(size=(draws, N, h, m)) / np.sqrt(m)
    x, t = rng.normal(size=(draws, d)), rng.normal(size=(draws, h))
    return OrderingDraws(Wt, U, c, V, x, t)


def sampled_ordering(seed: int, draws: int) -> tuple[int, int]:
    """(instances where the higher-weighted of the two selected experts has the larger gradient norm, draws),
    over the instances of :func:`ordering_draws`."""
    drawn = ordering_draws(seed, draws)
    Wt, U, c, V, x, t = drawn.Wt, drawn.U, drawn.c, drawn.V, drawn.x, drawn.t
    pre = np.einsum("snmd,sd->snm", U, x) + c
    hidden = np.maximum(pre, 0.0)
    y = np.einsum("sn,snhm,snm->sh", Wt, V, hidden)
    delta = y - t
    back = np.einsum("snhm,sh->snm", V, delta) * (pre > 0)  # V_i^T (dL/dy), masked by the active units
    # ||J_i^T dL/dy||^2 over U_i, c_i and V_i; the gradient's norm is g~_i times its square root
    jt_norm2 = ((back ** 2).sum(axis=2) * ((x ** 2).sum(axis=1, keepdims=True) + 1.0)
                + (delta ** 2).sum(axis=1, keepdims=True) * (hidden ** 2).sum(axis=2))
    norms = Wt * np.sqrt(jt_norm2)
    order = np.argsort(-Wt, axis=1, kind="stable")
    high, low = order[:, 0], order[:, 1]
    rows = np.arange(draws)
    return int((norms[rows, high] > norms[rows, low]).sum()), draws


def measure_scale(ctx) -> list:
    out = []
    cp = ceteris_paribus()
    holds = cp["dense"] and cp["renormalised"] and cp["proportional"]
    out.append(exact_result(
        SCALE, SOURCE, "qualitative", CETERIS_PART,
        "confirmed" if holds else "refuted",
        "exact, under the ceteris-paribus reading the sentence draws from the formula dL/dtheta_i = g~_i J_i^T dL/dy "
        "(raise the expert's gate probability g_i, hold its Jacobian J_i and the upstream gradient dL/dy, and under "
        "top-K the chosen set and the other chosen experts' g_j): the norm is g~_i ||J_i^T dL/dy||, and by sympy "
        f"(symbolic J (2 x 3), dL/dy and g) its square has slope {cp['dense_slope']} > 0 in g_i for the dense gate "
        f"(g~_i = g_i: {cp['dense']}) and {cp['renorm_slope']} > 0 for the normalised top-K weights g~_i = "
        f"g_i / (g_i + s), s > 0 the other chosen experts' sum, i.e. K >= 2 ({cp['renormalised']}); between two "
        "experts with the same J and dL/dy the norms are in the ratio of their weights (sympy: "
        f"{cp['proportional']}). So a higher gate probability gives a strictly larger gradient, and the step "
        "-eta dL/dtheta_i (eta > 0) a larger update, wherever J_i^T dL/dy != 0 (else the expert gets no gradient "
        f"at all). At K = 1 normalised the slope is 0 (s = 0: {cp['k1_zero']}): the entry '{K1_NORMALISED}'",
        r"\frac{\partial}{\partial g_i}\,\big\|\tilde g_i J_i^\top \tfrac{\partial L}{\partial y}\big\|^2 "
        r"= \frac{2 g_i s\,\|J_i^\top \partial L/\partial y\|^2}{(g_i + s)^3} > 0\ (s > 0)",
        reading=CETERIS))
    fac = factorised_counterexample()
    relu = relu_counterexample()
    smaller = fac["norms2"][0] < fac["norms2"][1]
    out.append(exact_result(
        SCALE, SOURCE, "qualitative", BETWEEN_EXPERTS,
        "refuted" if smaller else "confirmed",
        f"exact counterexample to the sentence read literally (for all cases, here two different experts on one "
        f"token): two experts E_i(x) = a_i b_i x, K = N = 2, g = g~ = ({GATES[0]}, {GATES[1]}), x = 1, "
        f"target 1, (a_1, b_1) = ({PARAMS[0][0]}, {PARAMS[0][1]}), (a_2, b_2) = ({PARAMS[1][0]}, {PARAMS[1][1]}): "
        f"y = {fac['y']}, ||dL/dtheta_1||^2 = {fac['norms2'][0]} < ||dL/dtheta_2||^2 = {fac['norms2'][1]} "
        f"(norm ratio {fac['ratio']}): the expert with the higher gate probability receives the smaller gradient, "
        "because its Jacobian (b_1 x, a_1 x) is smaller. With ReLU experts E_i = v_i max(0, u_i x), (u, v) = "
        f"{tuple(tuple(int(v) for v in p) for p in RELU_PARAMS)}, same gates: squared norms {relu[0]} and {relu[1]} "
        "(expert 1's unit is off). The sentence holds between experts with the same Jacobian and upstream "
        f"gradient, its ceteris-paribus reading (the entry '{CETERIS_PART}')",
        r"\tilde g_i > \tilde g_j \Rightarrow \|\partial L/\partial\theta_i\| > \|\partial L/\partial\theta_j\|",
        reading=LITERAL, gates=[str(v) for v in GATES]))
    weights, grads = k1_same_gradient()
    gates = k1_gates()
    same = (grads[0] == grads[1] and weights[0] == weights[1] and gates == K1_GATES
            and all(g[0] > g[1] for g in gates))
    out.append(exact_result(
        SCALE, SOURCE, "qualitative", K1_NORMALISED,
        "refuted" if same else "confirmed",
        "exact counterexample under every reading, the ceteris-paribus one included (one expert compared with "
        "itself across two tokens), under the chapter's normalised top-K weights at K = 1: expert 1, E_1(x) = a b x at a = b = 1/2, on x = 1 (target 1) and x = -1 (target -1), "
        "where its Jacobian and the upstream gradient differ only in sign; one gate G(x) = softmax(W_g x + b_g), "
        f"W_g = (log(6)/2, 0), b_g = (log(27/2)/2, 0), gives g = {_vec(gates[0])} and {_vec(gates[1])}, so expert 1 "
        f"is chosen on both with g_1 = {gates[0][0]} and {gates[1][0]}, yet g~_1 = {weights[0]} and {weights[1]}; "
        f"its gradients in (a, b) are {_vec(grads[0])} and {_vec(grads[1])}: equal. Every selected expert gets "
        "weight 1 at K = 1, so a higher gate probability gives it no larger gradient",
        r"K = 1:\ \tilde g_{i^*} = 1\ \text{whatever}\ g_{i^*}"))
    successes, draws = sampled_ordering(ctx.seed, int(ctx.sizes.draws))
    out.append(ProportionEvidence(
        claim_id=SCALE, source=SOURCE, kind="probability", form="derived",
        config={"features": "-", "part": "random ReLU experts: the higher-weighted one always has the larger "
                "gradient", "reading": LITERAL,
                **SAMPLED, "draws": draws, "seed": ctx.seed},
        formula=r"P(\|\partial L/\partial\theta_{i}\| > \|\partial L/\partial\theta_{j}\| \mid \tilde g_i > "
        r"\tilde g_j) = 1",
        what="the higher-weighted of the two selected experts received the larger gradient norm",
        rows=(ProportionRow(None, successes, draws),), claim="at_least", bound=1.0, unit="random instances",
        note="The size of the literal reading's failure, against 'always' (the sentence read for all cases, "
        "between any two experts): derived, since the exact counterexample already settles that reading; the "
        "ceteris-paribus reading is decided exactly, by the sign of a derivative."))
    return out


def _vec(values) -> str:
    return "(" + ", ".join(sp.sstr(v) for v in values) + ")"


def slips_scale(results) -> list:
    literal = [r for r in results if r.key.part == BETWEEN_EXPERTS and r.verdict == "refuted"]
    k1 = [r for r in results if r.key.part == K1_NORMALISED and r.verdict == "refuted"]
    ceteris = [r for r in results if r.key.part == CETERIS_PART]
    sampled = [r for r in results if r.evidence_type == "proportion"]
    out = []
    if k1:
        out.append(Slip(
            id="expert.update_scale.k1",
            entries=keys_of(k1, ceteris),
            location="Chapter 1.5, 对专家网络的梯度 ('这表明：…'), at K = 1 with the normalised weights",
            slip_class="inconsistency between sections",
            stated="这表明：门控概率越高的专家，其接收的梯度信号越强，从而更新幅度越大 (this shows that an expert with a "
            "higher gate probability receives a stronger gradient signal, hence a larger update)",
            holds="under the chapter's normalised weights at K = 1 the chosen expert's weight is 1 whatever its gate "
            "probability, so its gradient does not grow with it, under every reading of the sentence; with K >= 2 "
            "(or a dense gate) the sentence holds exactly under its ceteris-paribus reading",
            evidence=" | ".join(r.evidence for r in k1 + ceteris),
            causes=("topk.normalised_k1.no_gate_gradient",),
            effect="at K = 1, one of the two values the chapter calls usual, a higher gate probability changes the "
            "chosen expert's gradient not at all; at K >= 2 the gradient's norm grows strictly with it, the other "
            "factors held",
            summary="at K = 1 with the chapter's normalised weights a higher gate probability gives the chosen "
            "expert no larger gradient (its weight is 1 whatever g_i), under every reading; at K >= 2 the sentence "
            "holds exactly, ceteris paribus",
        ))
    if literal:
        effect = ""
        rows = sampled[0].config.get("probabilities") if sampled else None
        if rows:
            row = rows[0]
            effect = (f"under the literal reading only: between different experts the inference often holds, the "
                      f"higher-weighted of two selected random ReLU experts got the larger gradient in "
                      f"{row['successes']} of {row['trials']} instances")
        out.append(Slip(
            id="expert.update_scale.not_implied",
            entries=keys_of(literal, sampled),
            location="Chapter 1.5, 对专家网络的梯度 ('这表明：…'), read for all cases",
            slip_class="unstated assumption",
            stated="这表明：门控概率越高的专家，其接收的梯度信号越强，从而更新幅度越大 (this shows that an expert with a "
            "higher gate probability receives a stronger gradient signal, hence a larger update)",
            holds="read literally, for all cases, false: ∂L/∂θ_i = g̃_i J_i^T ∂L/∂y has norm g̃_i ||J_i^T ∂L/∂y||, "
            "so between experts whose Jacobians differ the higher-weighted one can receive the smaller gradient; "
            "the sentence holds ceteris paribus (the same Jacobian and upstream gradient), the reading '这表明' "
            "draws, which the chapter does not state",
            evidence=" | ".join(r.evidence for r in literal),
            effect=effect,
            summary="read literally, for all cases, the sentence is false (exact: with g = (2/3, 1/3) and experts "
            "a_i b_i x, (a, b) = (1/10, 1/10) and (1, 1), the higher-weighted expert's gradient is 1/5 of the "
            "other's); it holds under the ceteris-paribus reading it draws, the same Jacobian and upstream gradient",
        ))
    return out


register(__name__, Claim(
    id=GRAD, source=SOURCE, kind="symbolic identity",
    statement=r"i\in\mathrm{TopK}(G(x_t),K):\ \frac{\partial L}{\partial\theta_i} = \tilde g_i(x_t)\,"
    r"\Big(\frac{\partial E_i}{\partial\theta_i}\Big)^{\!\top} \frac{\partial L}{\partial y}\ \text{(reading of the "
    r"missing formula for the selected expert, 被选中的专家)}",
    preconditions=("y = Σ_i g̃_i(x) E_i(x; θ_i)", "g̃ does not depend on θ_i"),
    measure=measure_gradient, interpretations=INTERPRETATIONS,
    summary="A selected expert's gradient is its weight times its own backpropagated gradient.",
    notes="Sympy on linear (two losses) and tanh one-hidden-layer experts; central differences on ReLU experts are "
    "a deterministic float64 computation decided with stated tolerances.",
))
register(__name__, Claim(
    id=SCALE, source=SOURCE, kind="qualitative",
    statement=r"\text{门控概率越高的专家，其接收的梯度信号越强，从而更新幅度越大 (a higher gate probability gives "
    r"a stronger gradient and a larger update)}",
    preconditions=("∂L/∂θ_i = g̃_i J_i^T ∂L/∂y (reading)", "update = −η ∂L/∂θ_i"),
    measure=measure_scale, slips=slips_scale, interpretations=INTERPRETATIONS_SCALE,
    summary="Whether a higher gate probability means a larger gradient for the expert.",
    notes="Two readings: ceteris paribus (the formula's other factors held), decided exactly by the sign of the "
    "derivative of the gradient's norm in g_i (sympy; positive for a dense gate and K >= 2), and literally, for all "
    "cases (exact counterexamples between factorised linear and ReLU experts, and, derived, how often it holds "
    "between random ReLU experts, decided under the run's error control); at the normalised K = 1 an exact "
    "counterexample (one expert on two tokens) under both.",
))
