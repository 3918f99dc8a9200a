"""The auxiliary load-balancing loss and the gate's gradient (chapter 1.5, "反向传播的数学推导": "损失函数",
"对门控网络的梯度推导", "Softmax梯度的链式法则").

Text (the chapter):

    MoE模型的损失函数通常包含任务损失 L_task 和辅助负载均衡损失 L_aux：[missing]  其中辅助损失定义为：[missing]
    这里 f_i = (1/BT) Σ_{t=1}^{BT} 1[i ∈ TopK(G(x_t), K)] 是专家 i 的路由频率，P_i = (1/BT) Σ_{t=1}^{BT} g_i(x_t)
    是专家 i 的平均门控概率。
    (The loss usually contains a task loss L_task and an auxiliary load-balancing loss L_aux: [missing], where
    the auxiliary loss is defined as: [missing]. Here f_i = ... is expert i's routing frequency and P_i = ... is
    expert i's mean gate probability.)

    考虑损失对门控权重 W_g 的梯度。由于Top-K操作涉及离散选择（不可微），我们需要使用直通估计器（STE）：[missing]
    (Consider the loss's gradient in the gate weights W_g. Because the Top-K operation is a discrete choice (not
    differentiable), we need a straight-through estimator (STE): [missing])

    辅助损失对 g_i 的梯度为：[missing]  由于 f_i 的指示函数梯度为0（在STE下取前向值），简化为：[missing]
    (The auxiliary loss's gradient in g_i is: [missing]. Because the indicator in f_i has gradient 0 (under STE
    its forward value is taken), this simplifies to: [missing])

    最终，从门控值 g_i 到原始权重 W_g 的梯度经过softmax：[missing]  组合所有部分：[missing]
    (Finally, the gradient from the gate values g_i to the raw weights W_g goes through the softmax: [missing].
    Combining all parts: [missing])

Readings.  L = L_task + L_aux; L_aux = α N Σ_i f_i P_i, Switch Transformer's loss (Fedus et al. 2021, eq. 4,
where K = 1), which uses exactly the chapter's f_i and P_i; its variant with f'_i = N f_i / K (DeepSeekMoE, Dai
et al. 2024) where the verdict depends on it.  The missing gradients: ∂L_aux/∂g_i(x_t) = α N f_i / BT (f held at
its value), ∂g_i/∂z_k = g_i(δ_ik − g_k), ∂L/∂W_g = Σ_t (∂L/∂z_t) x_t^T, ∂L/∂b_g = Σ_t ∂L/∂z_t.

Checks.  ``aux.frequencies`` (exact): Σ_i P_i = 1 (sympy), Σ_i f_i = K (rational random cases), so balanced
routing is f_i = K/N; L_aux's value there is αK under Switch's form and α under the per-K form; and a derived
note: the balanced state is not L_aux's minimum.  ``aux.ste_needed`` (exact): top-K is piecewise constant in the
logits (the statement: confirmed); the step "so we need an STE" is checked as a proof step of the gradient
derivation: the gate has a nonzero gradient without any estimator (through P_i, and through g̃ in the output),
and what the chapter then does "under STE" (the indicator held at its forward value, its gradient taken as 0)
is the ordinary derivative, exact almost everywhere (a stop-gradient), not a straight-through estimator, which
would pass the gradient through the indicator as if it were the identity.  A misnomer, not a wrong formula.  ``aux.gradient``: each missing formula derived by sympy from
the loss, and the combined gradient (task + auxiliary) to W_g and b_g against central finite differences on
``ctx.sizes.cases`` seeded float64 instances.  The finite differences are a deterministic computation, not a
sample: the entry is exact with a stated tolerance, not a statistical test.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy as sp

from moecl_verify.checks.model import Interpretation, Slip, exact_result, keys_of
from moecl_verify.checks.registry import Claim, register
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.packs.moe_chapter import model
from moecl_verify.packs.moe_chapter.model import (aux_loss_per_k, aux_loss_switch, frequencies, mean_probabilities,
                                                  softmax_exact, sparse_weights, top_k, vanishes, weight_jacobian)

SOURCE_LOSS = "Chapter 1.5, 损失函数 (L_task, L_aux, f_i, P_i)"
SOURCE_GATE = "Chapter 1.5, 对门控网络的梯度推导 and Softmax梯度的链式法则"
FREQ, STE, GRAD = "aux.frequencies", "aux.ste_needed", "aux.gradient"
SWITCH = "Switch: alpha N sum_i f_i P_i"
PER_K = "per K: alpha sum_i (N f_i / K) P_i"
ALPHA = sp.Symbol("alpha", positive=True)
# Balanced routing, N = 4, K = 2, two tokens: gates whose top-2 sets are {1, 2} and {3, 4}.
BALANCED = ((sp.Rational(3, 10), sp.Rational(3, 10), sp.Rational(1, 5), sp.Rational(1, 5)),
            (sp.Rational(1, 5), sp.Rational(1, 5), sp.Rational(3, 10), sp.Rational(3, 10)))
BALANCED_K = 2
# An unbalanced routing with a smaller Switch loss: N = 3, K = 1, two tokens routed to experts 1 and 2 while
# expert 3 keeps a large probability (and is never chosen).
BELOW_BALANCED = ((sp.Rational(1, 2), sp.Rational(1, 10), sp.Rational(2, 5)),
                  (sp.Rational(1, 10), sp.Rational(1, 2), sp.Rational(2, 5)))
# The minimal example of a gradient without STE: one token, N = 2, K = 1, logits (log 2, 0), g = (2/3, 1/3).
MINIMAL_LOGITS = (sp.log(2), sp.Integer(0))
FD_STEP = 1e-6
FD_CONFIRM = 1e-5  # relative error up to which the analytic gradient agrees (float64, step 1e-6)
FD_REFUTE = 1e-2   # relative error beyond which the analytic gradient is wrong, not rounded
FD_FLOOR = 1e-4    # the error's scale is at least this fraction of the loss (the rounding of central differences)

INTERPRETATIONS = (
    Interpretation(
        id="aux.loss",
        location="Chapter 1.5, 损失函数: the displays after '辅助负载均衡损失 L_aux：' and '其中辅助损失定义为：'",
        issue="The total loss and L_aux's formula are missing; only f_i and P_i are defined.",
        choice="L = L_task + L_aux with L_aux = α N Σ_i f_i P_i (Fedus et al. 2021, Switch Transformer, eq. 4, where "
        "K = 1), the loss the chapter's f_i and P_i come from; where a verdict depends on it, also the per-K form "
        "α Σ_i (N f_i / K) P_i (DeepSeekMoE, Dai et al. 2024).",
    ),
    Interpretation(
        id="aux.gradients",
        location="Chapter 1.5, 对门控网络的梯度推导 and Softmax梯度的链式法则 (every display missing)",
        issue="The gradient formulas are missing; the prose names their steps (L_aux to g_i, the indicator's "
        "gradient 0, the softmax to W_g, all parts combined).",
        choice="∂L_aux/∂g_i(x_t) = α N f_i / BT with f at its value; ∂g_i/∂z_k = g_i(δ_ik − g_k); ∂L/∂W_g = "
        "Σ_t (∂L/∂z_t) x_t^T and ∂L/∂b_g = Σ_t ∂L/∂z_t; 'all parts' = L_task + L_aux with L_task = ½ Σ_t ||y_t − "
        "y*_t||² through the normalised top-K weights (linear experts in the numerical check).",
    ),
)


def _rational(x: Fraction) -> sp.Rational:
    return sp.Rational(x.numerator, x.denominator)


# ---------------------------------------------------------------------------------------------- aux.frequencies


def p_sums_to_one(BT: int = 2, N: int = 3) -> bool:
    """sum_i P_i == 1 for symbolic logits of BT tokens (sympy)."""
    gates = [softmax_exact(sp.symbols(f"z{t}_1:{N + 1}", real=True)) for t in range(BT)]
    return sp.simplify(sp.Add(*mean_probabilities(gates)) - 1) == 0


def f_sums_to_k(seed: int, cases: int) -> tuple[int, int, dict | None]:
    """(cases, cases with sum_i f_i == K, first other) over random rational gates: BT 1..8, N 2..6, K 1..N."""
    rng = generator_for(seed, "moe-chapter", FREQ, "cases")
    good, bad = 0, None
    for case in range(cases):
        BT, N = int(rng.integers(1, 9)), int(rng.integers(2, 7))
        K = int(rng.integers(1, N + 1))
        gates = [[Fraction(int(v), int(sum(row))) for v in row] for row in rng.integers(1, 20, size=(BT, N))]
        total = sum(frequencies(gates, K))
        if total == K:
            good += 1
        elif bad is None:
            bad = {"case": case, "BT": BT, "N": N, "K": K, "sum f": str(total)}
    return cases, good, bad


def loss_values(gates, K: int) -> dict:
    f = tuple(_rational(v) for v in frequencies(gates, K))
    P = mean_probabilities(gates)
    return {"f": f, "P": P, "switch": sp.simplify(aux_loss_switch(f, P, ALPHA)),
            "per_k": sp.simplify(aux_loss_per_k(f, P, K, ALPHA))}


def measure_frequencies(ctx) -> list:
    p_ok = p_sums_to_one()
    cases, good, bad = f_sums_to_k(ctx.seed, int(ctx.sizes.cases))
    out = [exact_result(
        FREQ, SOURCE_LOSS, "symbolic identity", "sum_i P_i = 1", "confirmed" if p_ok else "refuted",
        f"sympy, two tokens, N = 3, symbolic logits: sum_i P_i - 1 simplifies to 0: {p_ok}: the mean gate "
        "probabilities form a distribution over the experts",
        r"\sum_i P_i = \frac{1}{BT}\sum_t \sum_i g_i(x_t) = 1")]
    out.append(exact_result(
        FREQ, SOURCE_LOSS, "symbolic identity", "sum_i f_i = K, so balanced routing is f_i = K/N",
        "confirmed" if good == cases else "refuted",
        "sum_i f_i = (1/BT) sum_t |TopK(G(x_t), K)| = K: each token selects exactly K experts. Exact rational check "
        f"on {cases} random cases (BT 1..8, N 2..6, K 1..N): {good} with sum_i f_i = K"
        + (f"; first other {bad}" if bad else "")
        + ". So the frequencies sum to K, not 1 (for K >= 2 f is not a distribution), and the uniform state is "
        "f_i = K/N, which is Theorem 3's f_bar = K/N",
        r"\sum_i f_i = K,\ f_i = K/N\ \text{(uniform)}", cases=cases))
    balanced = loss_values(BALANCED, BALANCED_K)
    N = len(BALANCED[0])
    for reading, value, expected, formula in (
            (SWITCH, balanced["switch"], ALPHA * BALANCED_K, r"\alpha N \sum_i \frac{K}{N}\frac{1}{N} = \alpha K"),
            (PER_K, balanced["per_k"], ALPHA, r"\alpha \sum_i 1 \cdot \frac{1}{N} = \alpha")):
        out.append(exact_result(
            FREQ, SOURCE_LOSS, "symbolic identity", "L_aux at balanced routing",
            "confirmed" if sp.simplify(value - expected) == 0 else "refuted",
            f"exact: N = {N}, K = {BALANCED_K}, two tokens with gates {_rows(BALANCED)}: f = {_vec(balanced['f'])} "
            f"(= K/N each), P = {_vec(balanced['P'])} (= 1/N each), L_aux = {value}. In general at f_i = K/N, "
            f"P_i = 1/N: " + ("alpha N sum_i (K/N)(1/N) = alpha K, so the balanced value grows with K (alpha only "
                              "at Switch's K = 1)" if reading == SWITCH else
                              "alpha sum_i (N/K)(K/N)(1/N) = alpha, whatever K"),
            formula, form="derived", reading=reading))
    below = loss_values(BELOW_BALANCED, 1)
    balanced_value = ALPHA * 1  # K = 1 under Switch's form
    lower = bool(sp.simplify(below["switch"] - balanced_value).is_negative)
    out.append(exact_result(
        FREQ, SOURCE_LOSS, "symbolic identity", "the balanced state is not the minimum of L_aux",
        "confirmed" if lower else "refuted",
        f"exact: N = 3, K = 1, two tokens with gates {_rows(BELOW_BALANCED)} (softmax values at the logits' logs) are "
        f"routed to experts 1 and 2; f = {_vec(below['f'])}, P = {_vec(below['P'])}, L_aux = {below['switch']} < "
        f"{balanced_value}, the balanced value: an expert that is never chosen but keeps a large probability "
        "lowers alpha N sum_i f_i P_i below its balanced value. The chapter states no minimum; this qualifies "
        "what a 'load-balancing' loss of Switch's form guarantees",
        r"\exists\ \text{routing}: \alpha N\sum_i f_i P_i < \alpha K", form="derived", reading=SWITCH))
    return out


# ---------------------------------------------------------------------------------------------- aux.ste_needed


def indicator_jump() -> dict:
    """1[expert 1 in Top1(softmax(s, 0))] just below and above the tie s = 0, exactly."""
    at = {}
    for s in (sp.Rational(-1, 1000), sp.Rational(1, 1000)):
        g = [sp.nsimplify(v) for v in softmax_exact((s, sp.Integer(0)))]
        at[s] = int(0 in top_k(g, 1))
    return at


def order_only(N: int = 4) -> bool:
    """g_i - g_j has the sign of z_i - z_j (sympy: g_i / g_j = e^{z_i - z_j}), so TopK depends on the logits' order
    only: constant where the order of the top K + 1 is strict."""
    z = sp.symbols(f"z1:{N + 1}", real=True)
    g = softmax_exact(z)
    return all(sp.simplify(g[i] / g[j] - sp.exp(z[i] - z[j])) == 0 for i in range(N) for j in range(N) if i != j)


def aux_gradient_minimal() -> tuple:
    """dL_aux/dz at the minimal example (one token, N = 2, K = 1, logits (log 2, 0)), f held at its value."""
    z = sp.symbols("z1:3", real=True)
    g = softmax_exact(z)
    gates_at = [sp.nsimplify(v) for v in softmax_exact(MINIMAL_LOGITS)]
    f = tuple(_rational(v) for v in frequencies([gates_at], 1))
    L = aux_loss_switch(f, g, ALPHA)  # one token: P = g
    at = dict(zip(z, MINIMAL_LOGITS))
    return tuple(gates_at), f, tuple(sp.simplify(sp.diff(L, zk).subs(at)) for zk in z)


def measure_ste(ctx) -> list:
    jump = indicator_jump()
    order = order_only()
    out = [exact_result(
        STE, SOURCE_GATE, "symbolic identity", "top-K selection is discrete: piecewise constant in the logits",
        "confirmed" if order and list(jump.values()) == [0, 1] else "refuted",
        f"exact: g_i / g_j = e^(z_i - z_j) (sympy, N = 4: {order}), so TopK(G(x), K) depends only on the order of "
        "the logits and is constant on each region where that order is strict at the K-th place: its derivative "
        "is 0 almost everywhere and does not exist at ties. At N = 2, K = 1, logits (s, 0): 1[1 in Top1] = "
        + ", ".join(f"{v} at s = {s}" for s, v in jump.items()) + " (a jump at s = 0)",
        r"1[i\in\mathrm{TopK}(G(x),K)]\ \text{piecewise constant}")]
    gates, f, grad = aux_gradient_minimal()
    w2, jac2 = weight_jacobian([sp.log(v) for v in (sp.Rational(1, 2), sp.Rational(1, 3), sp.Rational(1, 6))], 2)
    w1, jac1 = weight_jacobian(MINIMAL_LOGITS, 1, normalise=False)
    nonzero = any(v != 0 for v in grad)
    out.append(exact_result(
        STE, SOURCE_GATE, "symbolic identity", "a straight-through estimator is needed for the gate's gradient",
        "refuted" if nonzero else "confirmed",
        f"exact counterexample, no estimator: one token, N = 2, K = 1, logits (log 2, 0), g = {_vec(gates)}, "
        f"f = {_vec(f)} held at its value (its exact derivative almost everywhere): L_aux = alpha N sum_i f_i P_i "
        f"has dL_aux/dz = {_vec(grad)} (sympy), nonzero: the gate learns through P_i, which is differentiable. "
        f"Through the output too: normalised K = 2 of g = (1/2, 1/3, 1/6) gives g~ = {_vec(w2)} and "
        f"d g~_1/dz = {_vec(jac2[0])}; Switch's unnormalised K = 1 at g = (2/3, 1/3) gives "
        f"d g~_1/dz = {_vec(jac1[0])}. Only the selection has no gradient, and nothing in the gradient needs one: "
        "Switch Transformer and GShard train the router without an STE. The chapter's own next step ('在STE下取前向值') "
        "takes the indicator at its forward value with gradient 0: the exact derivative almost everywhere (a "
        "stop-gradient), not a straight-through estimate, which would pass the gradient through the indicator as "
        "if it were the identity",
        r"\nabla_z L_{aux} \ne 0\ \text{without STE}", role="proof step"))
    return out


def slips_ste(results) -> list:
    # The slip rests on the proof step only: the statement entry (top-K is discrete) is confirmed and is no
    # evidence of a slip.
    needed = [r for r in results if r.key.part.startswith("a straight-through") and r.verdict == "refuted"]
    if not needed:
        return []
    return [Slip(
        id="aux.ste_needed.justification",
        entries=keys_of(needed),
        location="Chapter 1.5, 对门控网络的梯度推导 (first sentence) and the sentence after '辅助损失对 g_i 的梯度为'",
        slip_class="notation",
        stated="由于Top-K操作涉及离散选择（不可微），我们需要使用直通估计器（STE）(top-K is a discrete, "
        "non-differentiable choice, so we need a straight-through estimator); 由于 f_i 的指示函数梯度为0（在STE下"
        "取前向值）(the indicator in f_i has gradient 0, under STE taking its forward value)",
        holds="a misnomer: what the chapter does under the name STE (the indicator held at its forward value, its "
        "gradient taken as 0) is the ordinary derivative, exact almost everywhere because top-K is piecewise "
        "constant in the logits (a stop-gradient); a straight-through estimator would instead pass the gradient "
        "through the indicator as if it were the identity. No estimator is needed for the gate to get gradients: "
        "it gets them through g_i in P_i and through the weights g̃ in the output",
        evidence=" | ".join(r.evidence for r in needed),
        effect="none on the formulas that follow: they are the exact gradients almost everywhere; only the name "
        "of the procedure, and the claim that one is needed, are wrong",
        summary="what the chapter calls an STE (the indicator's gradient taken as 0) is the exact derivative almost "
        "everywhere, not a straight-through estimator, and the gate needs none: at N = 2, K = 1, g = (2/3, 1/3), "
        "∂L_aux/∂z = (4α/9, −4α/9) without one",
    )]


# ---------------------------------------------------------------------------------------------- aux.gradient


def dl_dg(BT: int = 2, N: int = 3) -> bool:
    """dL_aux/dg_{t,i} == alpha N f_i / BT, sympy, symbolic g and f."""
    g = [[sp.Symbol(f"g{t}_{i}") for i in range(N)] for t in range(BT)]
    f = sp.symbols(f"f1:{N + 1}")
    L = aux_loss_switch(f, mean_probabilities(g), ALPHA)
    return all(sp.simplify(sp.diff(L, g[t][i]) - ALPHA * N * f[i] / BT) == 0 for t in range(BT) for i in range(N))


def softmax_jacobian(N: int) -> bool:
    z = sp.symbols(f"z1:{N + 1}", real=True)
    g = softmax_exact(z)
    return all(sp.simplify(sp.diff(g[i], z[k]) - g[i] * ((1 if i == k else 0) - g[k])) == 0
               for i in range(N) for k in range(N))


def w_chain(BT: int = 2, N: int = 2, d: int = 2) -> bool:
    """dL_aux/dW_g and dL_aux/db_g by sympy from the loss, against sum_t (dL/dz_t) x_t^T and sum_t dL/dz_t with
    dL/dz_{t,k} = (alpha N / BT) g_{t,k} (f_k - sum_i f_i g_{t,i}); f symbolic, held at its value."""
    W = sp.Matrix(N, d, lambda i, j: sp.Symbol(f"w{i}{j}", real=True))
    b = sp.Matrix(N, 1, lambda i, j: sp.Symbol(f"b{i}", real=True))
    X = [sp.Matrix(d, 1, lambda j, _: sp.Symbol(f"x{t}_{j}", real=True)) for t in range(BT)]
    f = sp.symbols(f"f1:{N + 1}")
    gates = [softmax_exact(list(W * x + b)) for x in X]
    L = aux_loss_switch(f, mean_probabilities(gates), ALPHA)
    dz = [[ALPHA * N / BT * g[k] * (f[k] - sum(f[i] * g[i] for i in range(N))) for k in range(N)] for g in gates]
    ok_w = all(vanishes(sp.diff(L, W[k, j]) - sum(dz[t][k] * X[t][j] for t in range(BT)))
               for k in range(N) for j in range(d))
    ok_b = all(vanishes(sp.diff(L, b[k]) - sum(dz[t][k] for t in range(BT))) for k in range(N))
    return ok_w and ok_b


def restricted_softmax(N: int, selected: tuple[int, ...]) -> bool:
    """Normalised top-K weights are the softmax of the selected logits: d g~_i/d z_k = g~_i (delta_ik - g~_k) on
    the selection, 0 off it (sympy).  Written in u_k = e^{z_k} > 0, where d/dz_k = u_k d/du_k, so every side is a
    rational function and the comparison is a cancellation."""
    u = sp.symbols(f"u1:{N + 1}", positive=True)
    total = sp.Add(*u)
    w = sparse_weights([v / total for v in u], len(selected), True, selected)
    for i in range(N):
        for k in range(N):
            want = w[i] * ((1 if i == k else 0) - w[k]) if (i in selected and k in selected) else 0
            if sp.cancel(u[k] * sp.diff(w[i], u[k]) - want) != 0:
                return False
    return True


def _full_loss(W, b, X, A, Y, K, alpha):
    """L_task + L_aux (float64) and the top-K masks, for linear experts A (N, h, d) and targets Y (BT, h)."""
    Z = X @ W.T + b
    G = model.softmax(Z)
    mask = model.top_k_mask(G, K)
    Gt = model.sparse_weights_np(G, K, True)
    E = np.einsum("nhd,td->tnh", A, X)
    out = np.einsum("tn,tnh->th", Gt, E)
    task = 0.5 * float(((out - Y) ** 2).sum())
    return task + model.aux_loss_np(Z, K, alpha), mask


def _analytic(W, b, X, A, Y, K, alpha):
    """dL/dW_g and dL/db_g from the readings: task part through the normalised weights (a softmax over the
    selection), auxiliary part through P, both to z, then sum_t (dL/dz_t) x_t^T."""
    Z = X @ W.T + b
    G = model.softmax(Z)
    mask = model.top_k_mask(G, K)
    Gt = model.sparse_weights_np(G, K, True)
    E = np.einsum("nhd,td->tnh", A, X)
    delta = np.einsum("tn,tnh->th", Gt, E) - Y
    a = np.einsum("th,tnh->tn", delta, E)
    dz_task = np.where(mask, Gt * (a - (Gt * a).sum(axis=1, keepdims=True)), 0.0)
    dz = dz_task + model.aux_loss_logit_grad_np(Z, K, alpha)
    return dz.T @ X, dz.sum(axis=0)


def finite_differences(seed: int, cases: int) -> dict:
    """Central differences of L_task + L_aux in every entry of W_g and b_g against the analytic gradient, on
    random instances; a coordinate whose step changes a top-K set is skipped (the loss jumps there)."""
    rng = generator_for(seed, "moe-chapter", GRAD, "finite differences")
    worst, skipped, coords = 0.0, 0, 0
    for _ in range(cases):
        BT, N, d, h = int(rng.integers(2, 7)), int(rng.integers(2, 7)), int(rng.integers(2, 5)), int(rng.integers(1, 4))
        K = int(rng.integers(1, N + 1))
        alpha = float(rng.uniform(0.01, 1.0))
        W, b = rng.normal(size=(N, d)), rng.normal(size=N)
        X, A, Y = rng.normal(size=(BT, d)), rng.normal(size=(N, h, d)), rng.normal(size=(BT, h))
        dW, db = _analytic(W, b, X, A, Y, K, alpha)
        loss0, base = _full_loss(W, b, X, A, Y, K, alpha)
        numeric_w, numeric_b = np.full_like(dW, np.nan), np.full_like(db, np.nan)
        for index in [("W", i, j) for i in range(N) for j in range(d)] + [("b", i, 0) for i in range(N)]:
            values = []
            for sign in (1, -1):
                W2, b2 = W.copy(), b.copy()
                if index[0] == "W":
                    W2[index[1], index[2]] += sign * FD_STEP
                else:
                    b2[index[1]] += sign * FD_STEP
                loss, mask = _full_loss(W2, b2, X, A, Y, K, alpha)
                values.append(loss if np.array_equal(mask, base) else None)
            coords += 1
            if None in values:
                skipped += 1
                continue
            estimate = (values[0] - values[1]) / (2 * FD_STEP)
            if index[0] == "W":
                numeric_w[index[1], index[2]] = estimate
            else:
                numeric_b[index[1]] = estimate
        analytic = np.concatenate([dW.ravel(), db])
        numeric = np.concatenate([numeric_w.ravel(), numeric_b])
        kept = ~np.isnan(numeric)
        # Relative to the gradient's largest entry, floored at FD_FLOOR times the loss: central differences round
        # off in proportion to the loss (about 1e-16 |L| / step), and a gradient that vanishes exactly (K = 1 with
        # balanced frequencies) has no scale of its own.
        scale = max(float(np.abs(analytic).max()), FD_FLOOR * abs(loss0))
        if kept.any():
            worst = max(worst, float(np.abs(numeric[kept] - analytic[kept]).max()) / scale)
    return {"cases": cases, "coordinates": coords, "skipped": skipped, "worst": worst}


def measure_gradient(ctx) -> list:
    out = []
    ok = dl_dg()
    out.append(exact_result(
        GRAD, SOURCE_GATE, "symbolic identity", "dL_aux/dg_i(x_t) = alpha N f_i / BT",
        "confirmed" if ok else "refuted",
        f"sympy, from L_aux = alpha N sum_j f_j (1/BT) sum_t g_j(x_t), BT = 2, N = 3, symbolic g and f: "
        f"d L_aux / d g_i(x_t) - alpha N f_i / BT simplifies to 0 for every t, i: {ok}",
        r"\frac{\partial L_{aux}}{\partial g_i(x_t)} = \frac{\alpha N f_i}{BT}", reading=SWITCH))
    jump = indicator_jump()
    out.append(exact_result(
        GRAD, SOURCE_GATE, "symbolic identity", "the indicator in f_i has gradient 0",
        "confirmed" if order_only() and list(jump.values()) == [0, 1] else "refuted",
        "exact: 1[i in TopK(G(x), K)] depends only on the logits' order (g_i / g_j = e^(z_i - z_j), sympy), so "
        "its derivative is 0 wherever the order is strict at the K-th place (almost everywhere) and undefined at "
        "ties (at N = 2, K = 1, logits (s, 0): " + ", ".join(f"{v} at s = {s}" for s, v in jump.items())
        + "). Holding f at its value is therefore the exact derivative almost everywhere, not a straight-through "
        "estimate (which would replace the indicator's derivative by a surrogate)",
        r"\partial\, 1[i\in\mathrm{TopK}] / \partial z = 0\ \text{a.e.}", role="proof step"))
    jac = {N: softmax_jacobian(N) for N in (2, 3, 4)}
    out.append(exact_result(
        GRAD, SOURCE_GATE, "symbolic identity", "softmax chain dg_i/dz_k = g_i (delta_ik - g_k)",
        "confirmed" if all(jac.values()) else "refuted",
        "sympy, symbolic logits: d g_i / d z_k - g_i (delta_ik - g_k) simplifies to 0: "
        + ", ".join(f"N = {N}: {v}" for N, v in jac.items()),
        r"\frac{\partial g_i}{\partial z_k} = g_i(\delta_{ik} - g_k)", reading="softmax gate"))
    chain = w_chain()
    out.append(exact_result(
        GRAD, SOURCE_GATE, "symbolic identity", "to W_g and b_g: sum_t (dL/dz_t) x_t^T and sum_t dL/dz_t",
        "confirmed" if chain else "refuted",
        "sympy, BT = 2, N = 2, d = 2, symbolic W_g, b_g, x_t and f: dL_aux/dW_g and dL_aux/db_g computed from the "
        "loss equal sum_t (dL/dz_t) x_t^T and sum_t dL/dz_t with dL/dz_{t,k} = (alpha N / BT) g_{t,k} (f_k - "
        f"sum_i f_i g_{{t,i}}) (the chain through alpha N f_i / BT and the softmax): {chain}",
        r"\frac{\partial L}{\partial W_g} = \sum_t \frac{\partial L}{\partial z_t} x_t^\top", reading=SWITCH))
    restricted = {(N, sel): restricted_softmax(N, sel) for N, sel in ((3, (0, 1)), (4, (1, 3)), (4, (0, 2, 3)))}
    out.append(exact_result(
        GRAD, SOURCE_GATE, "symbolic identity", "normalised top-K weights are the softmax of the selected logits",
        "confirmed" if all(restricted.values()) else "refuted",
        "sympy, symbolic logits, selection fixed: d g~_i / d z_k = g~_i (delta_ik - g~_k) for i, k selected and 0 "
        "for k not selected: " + ", ".join(f"N = {N}, selected {tuple(i + 1 for i in sel)}: {v}"
                                           for (N, sel), v in restricted.items())
        + ". So through the normalised weights the task loss reaches only the selected logits, and at K = 1 none",
        r"\frac{\partial \tilde g_i}{\partial z_k} = \tilde g_i(\delta_{ik} - \tilde g_k)\,1[k\in\mathrm{TopK}]",
        form="derived"))
    fd = finite_differences(ctx.seed, int(ctx.sizes.cases))
    verdict = ("confirmed" if fd["worst"] <= FD_CONFIRM else "refuted" if fd["worst"] > FD_REFUTE
               else "inconclusive")
    out.append(exact_result(
        GRAD, SOURCE_GATE, "symbolic identity", "all parts combined: finite differences agree",
        verdict,
        f"deterministic float64 computation (not a sample): L = L_task + L_aux (linear experts, normalised "
        f"top-K, alpha in [0.01, 1]) on {fd['cases']} seeded random instances (BT 2..6, N 2..6, K 1..N, d 2..4, "
        f"h 1..3); central differences with step {FD_STEP:g} in every entry of W_g and b_g ({fd['coordinates']} "
        f"coordinates, {fd['skipped']} skipped because the step changed a top-K set) against the analytic "
        f"gradient sum_t (dL/dz_t) x_t^T: largest error relative to the gradient's largest entry (at least "
        f"{FD_FLOOR:g} times the loss) "
        f"{fd['worst']:.2e} (agreement up to {FD_CONFIRM:g}, disagreement beyond {FD_REFUTE:g})",
        r"\frac{\partial (L_{task}+L_{aux})}{\partial W_g}\ \text{vs central differences}",
        reading=SWITCH, cases=fd["cases"], worst_relative_error=fd["worst"], skipped=fd["skipped"]))
    return out


def _vec(values) -> str:
    return "(" + ", ".join(sp.sstr(v) for v in values) + ")"


def _rows(rows) -> str:
    return ", ".join(_vec(r) for r in rows)


register(__name__, Claim(
    id=FREQ, source=SOURCE_LOSS, kind="symbolic identity",
    statement=r"f_i = \frac{1}{BT}\sum_{t=1}^{BT} 1[i\in\mathrm{TopK}(G(x_t),K)]\ \text{(路由频率, routing frequency)},\ "
    r"P_i = \frac{1}{BT}\sum_{t=1}^{BT} g_i(x_t)\ \text{(平均门控概率, mean gate probability)}",
    preconditions=("G = softmax(W_g x + b_g)", "1 ≤ K ≤ N"),
    measure=measure_frequencies, interpretations=INTERPRETATIONS,
    summary="The frequencies sum to K and the mean probabilities to 1; L_aux's balanced value depends on K.",
    notes="Exact: sympy and rational random cases. L_aux's formula is missing; its value at balanced routing is "
    "checked under Switch's form (alpha K) and the per-K form (alpha).",
))
register(__name__, Claim(
    id=STE, source=SOURCE_GATE, kind="symbolic identity",
    statement=r"\text{由于Top-K操作涉及离散选择（不可微），我们需要使用直通估计器（STE）}\ "
    r"\text{(top-K is discrete, not differentiable, so a straight-through estimator is needed)}",
    preconditions=("G = softmax(W_g x + b_g)", "L = L_task + L_aux"),
    measure=measure_ste, slips=slips_ste, interpretations=INTERPRETATIONS,
    summary="Top-K is a discrete choice; the gate has gradients without a straight-through estimator, and what "
    "the chapter calls one is the exact derivative.",
    notes="Exact (sympy): the selection is piecewise constant (the statement); 'so an STE is needed' is a step of "
    "the gradient derivation (a proof step): the gate's gradient through P_i and through the weights is nonzero "
    "at a minimal example without any estimator.",
))
register(__name__, Claim(
    id=GRAD, source=SOURCE_GATE, kind="symbolic identity",
    statement=r"\frac{\partial L_{aux}}{\partial g_i} = \frac{\alpha N f_i}{BT}\ (\text{指示函数梯度为0, the "
    r"indicator's gradient is 0}),\ \frac{\partial g_i}{\partial z_k} = g_i(\delta_{ik}-g_k),\ "
    r"\frac{\partial L}{\partial W_g} = \sum_t \frac{\partial L}{\partial z_t} x_t^\top",
    preconditions=("L_aux = α N Σ_i f_i P_i (reading)", "the top-K sets locally constant (no tie at the K-th place)"),
    measure=measure_gradient, interpretations=INTERPRETATIONS,
    summary="The gate's gradient: L_aux to g_i, the softmax chain, to W_g, and all parts combined.",
    notes="Each missing formula is derived by sympy from the loss. The finite-difference entry is a deterministic "
    "float64 computation on seeded instances, decided with stated tolerances (no sampling, no error rate).",
))
