"""The gate maps into the simplex (chapter 1.5, "MoE模型的形式化定义", "基础符号定义").

Text (the chapter):

    门控网络（Gating Network）定义为 G: R^d → Δ^{N−1}，其中 Δ^{N−1} 表示 N−1 维单纯形（概率分布），即：
    [display formula missing]  其中 W_g ∈ R^{N×d}，b_g ∈ R^N。

    (The gating network is defined as G: R^d → Δ^{N−1}, where Δ^{N−1} denotes the (N−1)-dimensional simplex
    (a probability distribution), i.e.: [missing], where W_g ∈ R^{N×d} and b_g ∈ R^N.)

and later ("数值稳定性分析"): 设 z_i = (W_g x + b_g)_i，则 g_i = e^{z_i} / Σ_j e^{z_j}。
(Let z_i = (W_g x + b_g)_i; then g_i = e^{z_i} / Σ_j e^{z_j}.)

Reading.  The missing display is G(x) = softmax(W_g x + b_g), the form the chapter itself states in its
numerical-stability section (and the standard softmax gate of Shazeer et al. 2017 without noise).

Checks (exact, sympy).  For N = 2..5 with real symbolic logits: every g_i is positive and the g_i sum to 1;
W_g x + b_g is in R^N and the probability simplex in R^N has dimension N − 1.  Derived: the image of the
softmax is exactly the *open* simplex (0 < g_i < 1 for N ≥ 2, and every interior point p is attained at
z = log p), so G never outputs a vertex (a one-hot vector); one-hot gates, as in the chapter's τ → 0 remark,
are limits.  That is a precision note on "Δ^{N−1}" (a codomain, which the statement allows), not a false
statement, so no slip is recorded; in float64 the stable softmax does reach a vertex through underflow, which
the entry reports.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from moecl_verify.checks.model import Interpretation, exact_result
from moecl_verify.checks.registry import Claim, register
from moecl_verify.packs.moe_chapter.model import softmax, softmax_exact

SOURCE = "Chapter 1.5, 基础符号定义 (the gating network G); g_i in 数值稳定性分析"
CLAIM = "gate.simplex"
SIZES = (2, 3, 4, 5)  # numbers of experts N checked symbolically
# A logit gap at which float64's exp underflows to 0 (e^-746 < the smallest subnormal, about e^-744.4).
UNDERFLOW_GAP = 746

INTERPRETATIONS = (
    Interpretation(
        id="gate.formula",
        location="Chapter 1.5, 基础符号定义: the display after 'N−1 维单纯形（概率分布），即：'",
        issue="The formula defining G is missing; only W_g ∈ R^{N×d} and b_g ∈ R^N survive.",
        choice="G(x) = softmax(W_g x + b_g), i.e. g_i = e^{z_i} / Σ_j e^{z_j} with z = W_g x + b_g, as the chapter "
        "itself states in 数值稳定性分析 (the standard softmax gate, Shazeer et al. 2017, without its noise).",
    ),
)


def positive_and_normalised(N: int) -> tuple[bool, bool]:
    """(every g_i > 0, sum_i g_i == 1) for real symbolic logits z_1..z_N, by sympy."""
    z = sp.symbols(f"z1:{N + 1}", real=True)
    g = softmax_exact(z)
    return all(bool(gi.is_positive) for gi in g), sp.simplify(sp.Add(*g) - 1) == 0


def shapes(N: int, d: int = 3) -> tuple[tuple[int, int], int]:
    """(shape of W_g x + b_g, dimension of the probability simplex in R^N = rank of e_i - e_1)."""
    W = sp.Matrix(N, d, lambda i, j: sp.Symbol(f"w{i}{j}"))
    x = sp.Matrix(d, 1, lambda i, j: sp.Symbol(f"x{i}"))
    b = sp.Matrix(N, 1, lambda i, j: sp.Symbol(f"b{i}"))
    eye = sp.eye(N)
    directions = sp.Matrix.hstack(*[eye[:, i] - eye[:, 0] for i in range(1, N)]) if N > 1 else sp.zeros(N, 1)
    return (W * x + b).shape, directions.rank()


def open_simplex(N: int) -> tuple[bool, bool]:
    """(every g_i < 1 for real logits, softmax(log p) == p for every interior p), by sympy: 1 - g_i is the sum
    of the other g_j, each positive; and e^{log p_i} / sum_j e^{log p_j} = p_i / 1."""
    z = sp.symbols(f"z1:{N + 1}", real=True)
    g = softmax_exact(z)
    below_one = all(sp.simplify(1 - g[i] - sum(g[j] for j in range(N) if j != i)) == 0 for i in range(N)) \
        and all(bool(gi.is_positive) for gi in g)
    p = list(sp.symbols(f"p1:{N}", positive=True))
    p.append(1 - sp.Add(*p))
    # log p_N is real only for sum of the others < 1; the identity e^{log p} = p holds for any nonzero p.
    attained = all(sp.simplify(gi - pi) == 0 for gi, pi in zip(softmax_exact([sp.log(v) for v in p]), p))
    return below_one, attained


def measure(ctx) -> list:
    checks = {N: positive_and_normalised(N) for N in SIZES}
    holds = all(pos and one for pos, one in checks.values())
    out = [exact_result(
        CLAIM, SOURCE, "symbolic identity", "outputs are positive and sum to 1",
        "confirmed" if holds else "refuted",
        "sympy, real symbolic logits z (G(x) = softmax(z), z = W_g x + b_g): "
        + "; ".join(f"N = {N}: every g_i > 0: {pos}, sum_i g_i - 1 simplifies to 0: {one}"
                    for N, (pos, one) in checks.items()),
        r"g_i = \frac{e^{z_i}}{\sum_j e^{z_j}} > 0,\ \sum_i g_i = 1", reading="softmax gate")]

    dims = {N: shapes(N) for N in SIZES}
    dims_ok = all(shape == (N, 1) and rank == N - 1 for N, (shape, rank) in dims.items())
    out.append(exact_result(
        CLAIM, SOURCE, "symbolic identity", "dimensions: W_g x + b_g in R^N, the simplex is (N - 1)-dimensional",
        "confirmed" if dims_ok else "refuted",
        "sympy: W_g (N x 3) x + b_g has shape; the simplex's directions e_i - e_1 have rank: "
        + "; ".join(f"N = {N}: {shape}, rank {rank}" for N, (shape, rank) in dims.items()),
        r"W_g x + b_g \in \mathbb{R}^N,\ \dim \Delta^{N-1} = N-1"))

    interior = {N: open_simplex(N) for N in SIZES}
    interior_ok = all(a and b for a, b in interior.values())
    underflow = softmax(np.array([0.0, float(UNDERFLOW_GAP)]))
    out.append(exact_result(
        CLAIM, SOURCE, "symbolic identity", "the image is the open simplex (never a vertex)",
        "confirmed" if interior_ok else "refuted",
        "sympy: 1 - g_i equals the sum of the other g_j, each positive, so 0 < g_i < 1 for N >= 2; and "
        "softmax(log p) = p for every p with positive entries summing to 1: "
        + "; ".join(f"N = {N}: g_i < 1: {a}, interior attained: {b}" for N, (a, b) in interior.items())
        + ". So the softmax maps R^N onto the open simplex, G(R^d) lies inside it, and a one-hot gate is only a "
        "limit (the chapter's tau -> 0). "
        f"In float64 the stable softmax of logits (0, {UNDERFLOW_GAP}) is exactly ({float(underflow[0])!r}, "
        f"{float(underflow[1])!r}): a vertex reached through underflow, not by the exact map. This refines the "
        "statement (Delta^{N-1} is a codomain) and refutes nothing",
        r"G(\mathbb{R}^d) \subseteq \operatorname{int}\Delta^{N-1}", form="derived", reading="softmax gate"))
    return out


register(__name__, Claim(
    id=CLAIM, source=SOURCE, kind="symbolic identity",
    statement=r"G: \mathbb{R}^d \to \Delta^{N-1},\ G(x) = \operatorname{softmax}(W_g x + b_g)\ "
    r"\text{(门控网络 G 映射到 N−1 维单纯形（概率分布）; the gate maps into the (N−1)-simplex)}",
    preconditions=("W_g ∈ R^{N×d}, b_g ∈ R^N", "N ≥ 2"),
    measure=measure, interpretations=INTERPRETATIONS,
    summary="The gate's outputs are probability distributions over the N experts.",
    notes="Exact (sympy) for N = 2..5. The softmax's image is the open simplex: no gate output is one-hot, which "
    "is a precision note on the codomain, not a slip.",
))
