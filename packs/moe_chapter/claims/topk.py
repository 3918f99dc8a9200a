"""Top-K routing and the unified dense/sparse form (chapter 1.5, "稀疏MoE的Top-K路由", "稠密MoE与稀疏MoE的统一表示").

Text (the chapter):

    在稀疏MoE中，对每个token x_t，我们仅选择门控概率最高的 K 个专家（通常 K=1 或 K=2）：[missing]
    输出为加权和：[missing]
    (In a sparse MoE, for each token x_t we select only the K experts with the highest gate probabilities
    (usually K = 1 or K = 2): [missing]. The output is the weighted sum: [missing].)

    稠密MoE可以表示为 K = N 的特例。二者可以统一表示为：[missing]
    其中 g̃_i(x_t) = g_i(x_t)（稠密）或 g̃_i(x_t) = g_i(x_t) · 1[i ∈ TopK(G(x_t), K)] · 1/Σ_{j∈TopK} g_j(x_t)
    （带归一化的稀疏版本）。
    (Dense MoE can be represented as the special case K = N. The two can be written in one form: [missing],
    where g̃_i(x_t) = g_i(x_t) (dense) or g̃_i(x_t) = g_i(x_t) · 1[i ∈ TopK(G(x_t), K)] · 1/Σ_{j∈TopK} g_j(x_t)
    (the sparse version with normalisation).)

Readings.  The missing unified form is y(x_t) = Σ_i g̃_i(x_t) E_i(x_t) (Shazeer et al. 2017, eq. 1; the
chapter's "输出为加权和"); the gate is G = softmax(W_g x + b_g) (claim gate.simplex); ties in TopK are broken
toward the lower index (the chapter does not say; no verdict here depends on it).

Checks (exact, sympy).  ``topk.dense_special_case``: with K = N the normaliser Σ_{j∈TopK} g_j is Σ_j g_j = 1,
so the normalised weights are the dense ones; so are the unnormalised weights g_i · 1[i ∈ TopK]; for K < N the
three forms differ.  ``topk.normalised_k1``: the statement is the definition itself, checked as such: the
normalised weights are nonnegative, 0 outside TopK and sum to 1 (sympy, symbolic logits).  Derived from it, a
consequence the chapter leaves unremarked: with K = 1 the normalised weight of the selected expert is g_i / g_i = 1
for every input, so the output does not depend on the gate's values and the task loss sends the gate no
gradient (∂y/∂z = 0 wherever the top-1 choice is unique); with K = 2 the normalised weights are the softmax of
the two selected logits and do pass a gradient; Switch Transformer's unnormalised weight g_i (K = 1) passes one
too.  The chapter does not claim that the task loss reaches the gate at K = 1, so none of these decides its
definition; the slip is the clash with its later sentence (对专家网络的梯度) that an expert with a higher gate
probability receives a stronger gradient, which normalised top-1 weights cannot give.
"""

from __future__ import annotations

import sympy as sp

from moecl_verify.checks.model import Interpretation, Slip, exact_result, keys_of
from moecl_verify.checks.registry import Claim, register
from moecl_verify.packs.moe_chapter.model import softmax_exact, sparse_weights, top_k

SOURCE = "Chapter 1.5, 稀疏MoE的Top-K路由 and 稠密MoE与稀疏MoE的统一表示"
DENSE = "topk.dense_special_case"
K1 = "topk.normalised_k1"
SIZES = (2, 3, 4)
NORMALISED = "normalised (the chapter's)"
UNNORMALISED = "unnormalised g_i (Switch Transformer)"
# The minimal example: two experts, logits (log 2, 0), so g = (2/3, 1/3) exactly.
K1_LOGITS = (sp.log(2), sp.Integer(0))
# K = 2 of three experts with rational gates (1/2, 1/3, 1/6) (logits log of them).
K2_GATES = (sp.Rational(1, 2), sp.Rational(1, 3), sp.Rational(1, 6))

INTERPRETATIONS = (
    Interpretation(
        id="topk.unified_form",
        location="Chapter 1.5, 稠密MoE与稀疏MoE的统一表示: the display after '二者可以统一表示为：'",
        issue="The unified output formula is missing; only the two definitions of g̃ survive.",
        choice="y(x_t) = Σ_i g̃_i(x_t) E_i(x_t), the weighted sum the chapter names ('输出为加权和'; Shazeer et al. "
        "2017, eq. 1), with G = softmax(W_g x + b_g).",
    ),
    Interpretation(
        id="topk.ties",
        location="Chapter 1.5, 稀疏MoE的Top-K路由",
        issue="TopK(G(x), K) is not defined when gate probabilities tie at the K-th place.",
        choice="Ties go to the lower expert index; the dense special case (K = N) and every exact example here "
        "are tie-free or independent of the rule.",
    ),
)


def dense_equalities(N: int) -> tuple[bool, bool, bool]:
    """(normaliser == 1, normalised g~ == g, unnormalised g~ == g) at K = N for real symbolic logits; with K = N
    every expert is selected whatever the order, so the selection is passed explicitly."""
    z = sp.symbols(f"z1:{N + 1}", real=True)
    g = softmax_exact(z)
    everyone = tuple(range(N))
    normaliser = sp.simplify(sp.Add(*g) - 1) == 0
    normalised = all(sp.simplify(a - b) == 0 for a, b in zip(sparse_weights(g, N, True, everyone), g))
    unnormalised = all(sp.simplify(a - b) == 0 for a, b in zip(sparse_weights(g, N, False, everyone), g))
    return normaliser, normalised, unnormalised


def order_preserved(N: int) -> bool:
    """g_i / g_j = e^{z_i - z_j}: the softmax keeps the logits' order, so TopK of G(x) is TopK of the logits."""
    z = sp.symbols(f"z1:{N + 1}", real=True)
    g = softmax_exact(z)
    return all(sp.simplify(g[i] / g[j] - sp.exp(z[i] - z[j])) == 0 for i in range(N) for j in range(N))


def forms_below_n() -> dict:
    """The three weight vectors at K = 2 < N = 3 for g = (1/2, 1/3, 1/6)."""
    g = K2_GATES
    return {"dense": g, "normalised": sparse_weights(g, 2, True), "unnormalised": sparse_weights(g, 2, False)}


def output_gradient(N: int, K: int, normalise: bool, logits) -> tuple:
    """d y / d z_k at the given exact logits, y = sum_i g~_i(z) e_i for symbolic expert outputs e_i, the
    selection fixed at the top-K of ``logits`` (the derivative where the selection is locally constant)."""
    z = sp.symbols(f"z1:{N + 1}", real=True)
    e = sp.symbols(f"e1:{N + 1}", real=True)
    g = softmax_exact(z)
    at = dict(zip(z, logits))
    selected = top_k([sp.nsimplify(v) for v in softmax_exact(logits)], K)
    w = sparse_weights(g, K, normalise, selected)
    y = sp.Add(*[wi * ei for wi, ei in zip(w, e)])
    return tuple(sp.simplify(sp.diff(y, zk).subs(at)) for zk in z), tuple(sp.simplify(v.subs(at)) for v in w)


def weight_gradient(N: int, K: int, normalise: bool, logits) -> tuple:
    """d g~_1 / d z_k at ``logits`` (exact), the selection fixed as in :func:`output_gradient`."""
    z = sp.symbols(f"z1:{N + 1}", real=True)
    g = softmax_exact(z)
    selected = top_k([sp.nsimplify(v) for v in softmax_exact(logits)], K)
    w = sparse_weights(g, K, normalise, selected)
    at = dict(zip(z, logits))
    return tuple(sp.simplify(sp.diff(w[0], zk).subs(at)) for zk in z)


def k1_region_constant(N: int) -> bool:
    """On the region where expert 1 is the top-1 choice, the normalised weights are (1, 0, ..., 0) identically
    (sympy, symbolic logits): g_1 / g_1 = 1."""
    z = sp.symbols(f"z1:{N + 1}", real=True)
    w = sparse_weights(softmax_exact(z), 1, True, (0,))
    return sp.simplify(w[0] - 1) == 0 and all(v == 0 for v in w[1:])


def measure_dense(ctx) -> list:
    checks = {N: dense_equalities(N) for N in SIZES}
    norm_ok = all(a and b for a, b, _ in checks.values())
    unnorm_ok = all(c for _, _, c in checks.values())
    formula = r"K = N:\ \tilde g_i = g_i \cdot 1[i\in\mathrm{TopK}] \cdot \frac{1}{\sum_{j\in\mathrm{TopK}} g_j} = g_i"
    out = [exact_result(
        DENSE, SOURCE, "symbolic identity", "K = N: the normalised sparse weights are the dense ones",
        "confirmed" if norm_ok else "refuted",
        "sympy, real symbolic logits: with K = N every expert is in TopK, the normaliser sum_j g_j - 1 simplifies "
        "to 0 and g~_i - g_i to 0: " + "; ".join(f"N = {N}: normaliser = 1: {a}, g~ = g: {b}"
                                                  for N, (a, b, _) in checks.items()),
        formula, reading=NORMALISED)]
    out.append(exact_result(
        DENSE, SOURCE, "symbolic identity", "K = N: the unnormalised sparse weights are the dense ones",
        "confirmed" if unnorm_ok else "refuted",
        "sympy: with K = N the indicator is 1 for every expert, so g_i 1[i in TopK] = g_i: "
        + "; ".join(f"N = {N}: {c}" for N, (_, _, c) in checks.items())
        + ". So the special case holds for both sparse versions",
        r"K = N:\ g_i \cdot 1[i\in\mathrm{TopK}] = g_i", reading=UNNORMALISED))
    forms = forms_below_n()
    order = all(order_preserved(N) for N in SIZES)
    differ = len({tuple(v) for v in forms.values()}) == 3
    out.append(exact_result(
        DENSE, SOURCE, "symbolic identity", "K < N: the three forms differ; TopK of G is TopK of the logits",
        "confirmed" if differ and order else "refuted",
        "exact, N = 3, K = 2, g = (1/2, 1/3, 1/6): dense " + _vec(forms["dense"]) + ", normalised "
        + _vec(forms["normalised"]) + " (sums to 1), unnormalised " + _vec(forms["unnormalised"])
        + f" (sums to {sp.Add(*forms['unnormalised'])}): all three differ ({differ}), so K = N is the only case "
        f"where the unified form is the dense one. g_i / g_j = e^(z_i - z_j) (sympy, N = 2..4: {order}): the "
        "experts with the highest gate probabilities are those with the highest logits",
        r"K < N:\ \tilde g^{\mathrm{norm}} \ne \tilde g^{\mathrm{unnorm}} \ne g", form="derived"))
    return out


def weights_form_a_distribution(N: int, selected: tuple[int, ...]) -> bool:
    """The chapter's normalised weights for real symbolic logits and a fixed selection: every g~_i >= 0, g~_i = 0
    off the selection, and sum_i g~_i = 1 (sympy)."""
    z = sp.symbols(f"z1:{N + 1}", real=True)
    w = sparse_weights(softmax_exact(z), len(selected), True, selected)
    nonnegative = all(v == 0 or bool(v.is_positive) for v in w)
    zero_off = all(w[i] == 0 for i in range(N) if i not in selected)
    return nonnegative and zero_off and sp.simplify(sp.Add(*w) - 1) == 0


DISTRIBUTION_CASES = ((2, (0,)), (3, (1,)), (3, (0, 2)), (4, (1, 3)), (4, (0, 1, 3)))


def measure_k1(ctx) -> list:
    checks = {case: weights_form_a_distribution(*case) for case in DISTRIBUTION_CASES}
    out = [exact_result(
        K1, SOURCE, "symbolic identity", "the normalised weights are a distribution over the selected experts",
        "confirmed" if all(checks.values()) else "refuted",
        "sympy, real symbolic logits, the selection fixed: g~_i = g_i 1[i in TopK] / sum_{j in TopK} g_j is >= 0, "
        "0 off the selection, and the g~_i sum to 1: "
        + "; ".join(f"N = {N}, selected {tuple(i + 1 for i in sel)}: {v}" for (N, sel), v in checks.items()),
        r"\tilde g_i \ge 0,\ \tilde g_i = 0\ (i\notin\mathrm{TopK}),\ \sum_i \tilde g_i = 1")]
    grad1, weights1 = output_gradient(2, 1, True, K1_LOGITS)
    region = all(k1_region_constant(N) for N in SIZES)
    constant = all(v == 0 for v in grad1) and region
    out.append(exact_result(
        K1, SOURCE, "symbolic identity", "K = 1: the selected expert's weight is 1, so the task loss sends the gate "
        "no gradient through g~",
        "confirmed" if constant else "refuted",
        "exact (a consequence of the definition, which the chapter does not remark on): N = 2 experts, K = 1, "
        f"logits z = (log 2, 0), so g = (2/3, 1/3): the normalised weights are g~ = {_vec(weights1)} and dy/dz = "
        f"{_vec(grad1)} for any expert outputs e_1, e_2 (sympy, y = g~_1 e_1 + g~_2 e_2). In general (sympy, "
        f"N = 2..4, symbolic logits): where expert 1 is the top-1 choice, g~ = g_1 / g_1 = (1, 0, ..., 0) "
        f"identically ({region}), so y = E_1(x) whatever the gate's values and dL_task/dz = 0 wherever the top-1 "
        "choice is unique: with normalised weights and K = 1 the gate learns only through the auxiliary loss",
        r"K = 1:\ \tilde g_{i^*} = g_{i^*} / g_{i^*} = 1 \Rightarrow \partial y / \partial z = 0",
        form="derived", reading=NORMALISED))
    g2 = [sp.log(v) for v in K2_GATES]
    grad2 = weight_gradient(3, 2, True, g2)
    _, weights2 = output_gradient(3, 2, True, g2)
    out.append(exact_result(
        K1, SOURCE, "symbolic identity", "K = 2: the task loss reaches the gate through g~",
        "confirmed" if any(v != 0 for v in grad2) else "refuted",
        "exact: N = 3, K = 2, g = (1/2, 1/3, 1/6) (logits their logs): g~ = " + _vec(weights2) + ", and d g~_1 / dz = "
        + _vec(grad2) + " (g~_1 g~_2 and -g~_1 g~_2 on the two selected logits, 0 on the unselected one): the "
        "normalised weights of two experts are the softmax of their two logits, so a gradient flows",
        r"K = 2:\ \tilde g_1 = \frac{g_1}{g_1+g_2} = \sigma(z_1 - z_2)", form="derived", reading=NORMALISED))
    grad_s, weights_s = output_gradient(2, 1, False, K1_LOGITS)
    out.append(exact_result(
        K1, SOURCE, "symbolic identity", "K = 1: the task loss reaches the gate through g~",
        "confirmed" if any(v != 0 for v in grad_s) else "refuted",
        "exact: N = 2, K = 1, logits (log 2, 0), g = (2/3, 1/3), unnormalised weights g~ = " + _vec(weights_s)
        + f" (Switch Transformer's y = g_i E_i(x), a weight the chapter does not define): dy/dz = {_vec(grad_s)}, "
        "i.e. (g_1 g_2, -g_1 g_2) e_1: the gate receives the task loss's gradient",
        r"K = 1:\ y = g_{i^*} E_{i^*}(x),\ \partial g_{i^*} / \partial z_k = g_{i^*}(\delta_{i^*k} - g_k)",
        form="derived", reading=UNNORMALISED))
    return out


def slips_k1(results) -> list:
    k1 = [r for r in results if r.key.part.startswith("K = 1: the selected expert's weight is 1")
          and r.verdict == "confirmed"]
    if not k1:
        return []
    others = [r for r in results if r not in k1 and not r.key.is_statement]
    return [Slip(
        id="topk.normalised_k1.no_gate_gradient",
        entries=keys_of(k1, others),
        location="Chapter 1.5, 稠密MoE与稀疏MoE的统一表示 (the normalised sparse g̃, with 'usually K = 1 or K = 2' "
        "from 稀疏MoE的Top-K路由) against 对专家网络的梯度 ('这表明：门控概率越高的专家，其接收的梯度信号越强')",
        slip_class="inconsistency between sections",
        stated="g̃_i = g_i · 1[i ∈ TopK] / Σ_{j∈TopK} g_j (带归一化的稀疏版本), usually with K = 1 or K = 2; and later: "
        "门控概率越高的专家，其接收的梯度信号越强 (an expert with a higher gate probability receives a stronger "
        "gradient signal)",
        holds="with K = 1 the selected expert's normalised weight is g_i / g_i = 1 for every input: its gradient "
        "g̃_i J_i^T ∂L/∂y does not grow with its gate probability, contrary to the later sentence, and the output "
        "does not depend on the gate's values, so the task loss sends the gate no gradient (where the top-1 choice "
        "is unique) and the gate learns only through L_aux. The chapter remarks on neither. With K = 2 the "
        "normalised weights are the softmax of the two selected logits, and Switch Transformer's unnormalised "
        "weight g_i at K = 1 passes a gradient, so both sentences hold together there",
        evidence=" | ".join(r.evidence for r in k1 + others),
        effect="at K = 1, one of the two values the chapter calls usual, the gate's probability changes neither the "
        "chosen expert's gradient nor the output (at K = 2 the gradient grows with it); the definition itself is a "
        "valid distribution over the chosen experts",
        summary="with the chapter's normalised weights and K = 1 the chosen expert always has weight 1 (N = 2, "
        "g = (2/3, 1/3): g̃ = (1, 0), ∂y/∂z = (0, 0)), so the task loss sends the gate no gradient and a higher gate "
        "probability does not give that expert a stronger gradient, as the chapter's section on the experts' "
        "gradient says it does",
    )]


def _vec(values) -> str:
    return "(" + ", ".join(sp.sstr(sp.nsimplify(v)) for v in values) + ")"


register(__name__, Claim(
    id=DENSE, source=SOURCE, kind="symbolic identity",
    statement=r"\text{稠密MoE可以表示为 K = N 的特例 (dense MoE is the special case K = N)}:\ "
    r"\tilde g_i = g_i \cdot 1[i\in\mathrm{TopK}(G(x),K)] \cdot \frac{1}{\sum_{j\in\mathrm{TopK}} g_j} = g_i\ (K = N)",
    preconditions=("G = softmax(W_g x + b_g)", "1 ≤ K ≤ N"),
    measure=measure_dense, interpretations=INTERPRETATIONS,
    summary="With K = N the sparse weights (normalised or not) are the dense gate probabilities.",
    notes="Exact (sympy) for N = 2..4 with symbolic logits.",
))
register(__name__, Claim(
    id=K1, source=SOURCE, kind="symbolic identity",
    statement=r"\tilde g_i = g_i \cdot 1[i\in\mathrm{TopK}] / \sum_{j\in\mathrm{TopK}} g_j\ "
    r"\text{(带归一化的稀疏版本, the normalised sparse version)},\ \text{通常 K=1 或 K=2 (usually K = 1 or 2)}",
    preconditions=("G = softmax(W_g x + b_g)", "y = Σ_i g̃_i(x) E_i(x)", "the top-K choice unique"),
    measure=measure_k1, slips=slips_k1, interpretations=INTERPRETATIONS,
    summary="The normalised top-K weights are a distribution over the selected experts; at K = 1 they are constant, "
    "so the task loss sends the gate no gradient.",
    notes="Exact (sympy): the definition as a distribution (the statement), then derived consequences: derivatives "
    "of y = Σ g̃_i e_i in the logits with the selection fixed (the derivative wherever the top-K set is locally "
    "constant). At K = 1 the normalised weight of the chosen expert is 1, which the chapter's section on the "
    "experts' gradient does not allow for.",
))
