"""Theorem 1 of the chapter (section "理论性质与证明", 定理1：MoE的表达能力): expressivity.

The chapter's text:

    定理：设每个专家 E_i 是具有 h 个隐藏单元的单隐层网络，激活函数为ReLU。则 N 个专家组成的MoE层能够以 O(h^{d+1})
    的参数量逼近 C^k(R^d) 上的任意 k 阶连续可微函数。
    证明思路：（1）利用通用逼近定理，单个专家可以逼近定义域子集上的函数；（2）门控网络将输入空间划分为 N 个区域；
    （3）在每个区域内，至少有一个专家负责逼近目标函数；（4）边界处的连续性由softmax门控的软切换保证；（5）随着
    N → ∞，逼近误差趋于零。∎

    (Theorem.  Let each expert E_i be a one-hidden-layer network with h hidden units and ReLU activation.  Then an
    MoE layer of N experts can approximate any k-times continuously differentiable function on C^k(R^d) with
    O(h^{d+1}) parameters.  Proof idea: (1) by the universal approximation theorem a single expert can approximate
    a function on a subset of the domain; (2) the gating network partitions the input space into N regions; (3) in
    each region at least one expert is responsible for approximating the target; (4) continuity at the boundaries
    is guaranteed by the softmax gate's soft switching; (5) as N -> oo the approximation error tends to zero.)

The chapter's definitions used here: E_i: R^d -> R^h, G(x) = softmax(W_g x + b_g) with W_g in R^{N x d}, and the
sparse MoE's renormalized top-K weights g~_i = g_i 1[i in TopK] / sum_{j in TopK} g_j (section "稀疏MoE的Top-K路由").

Readings.  The statement names no norm, domain, accuracy or limit, so it is checked under two readings, each its own
entry.  *Literally*, on R^d: every f in C^k(R^d) is approximated uniformly on all of R^d.  So read it is false, and
exactly so: every ReLU MoE layer F grows at most linearly (|F(x)| <= A + B|x|, A and B read off its weights, since
the gate's weights lie in [0, 1] and sum to at most 1), so for f(x) = x_1^2 (in C^k(R^d) for every k) the sup error
is infinite for every N, h and every choice of weights, whatever the parameter count.  *On compact sets* (the
standard topology of C^k(R^d), uniform convergence on compact sets, and the setting of universal approximation):
a known theorem, which names no accuracy and no rate, and whose count O(h^{d+1}) holds for every such layer
whatever its accuracy: restricted so, the statement says nothing the tool can refute (without content), and the
tool checks it only on examples (the best sup error of h units to x^2 on [-L, L]).  Target functions are scalar
(one output coordinate).  Derived notes: the layer's exact parameter count.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy as sp

from moecl_verify.checks.model import ClaimResult, Interpretation, Slip, exact_result, keys_of
from moecl_verify.checks.registry import Claim, register
from moecl_verify.numeric.seeding import generator_for

CLAIM = "thm1.expressivity"
SOURCE = "Chapter 1.5, 理论性质与证明, 定理1：MoE的表达能力 (Theorem 1, expressivity, and its proof idea)"
STATEMENT = r"\text{MoE of } N \text{ ReLU experts (width } h) \text{ approximates any } f \in C^k(\mathbb{R}^d) \text{ with } O(h^{d+1}) \text{ parameters}"
x, L, ell, a = sp.symbols("x L ell a", real=True)
A, B = sp.symbols("A B", positive=True)
N, d, h = sp.symbols("N d h", positive=True, integer=True)
# The numeric illustration: widths and half-widths of the interval [-L, L].
WIDTHS = (1, 4, 16)
HALF_WIDTHS = (1, 10, 100)
# The seeded MoE of the growth check: N experts of h units, top-K with renormalization, d = 1.
GROWTH_MOE = {"N": 4, "h": 8, "K": 2}

PART_UNIFORM = "statement, uniformly on all of R^d"
PART_COMPACT = "statement, on a compact domain"
PART_COUNT = "exact parameter count against O(h^{d+1})"
PART_TABLE = "best sup error of h ReLU units to x^2 on [-L, L]"
PART_STEP1 = "step 1: one expert approximates on a subset"
PART_STEP2 = "step 2: the gate partitions the input space into N regions"
PART_TOP2_SETS = "sets of chosen experts under top-2 routing"
PART_STEP4 = "step 4: continuity by soft switching"
PART_STEP5 = "the count O(h^{d+1}) against step 5 (N -> oo)"

READING_LITERAL = "literal: uniformly on R^d"
READING_COMPACT = "compact domain"

INTERPRETATIONS = (
    Interpretation(
        id="thm1.approximation.literal",
        location="Theorem 1, '逼近 C^k(R^d) 上的任意 k 阶连续可微函数'",
        issue="No accuracy, norm, domain or limit is stated; the text names the domain R^d.",
        choice="Reading 1 (literal): for every f in C^k(R^d) and every epsilon > 0 some layer of the stated class "
        "has sup_{x in R^d} |f(x) - F(x)| < epsilon. Decided exactly (entry 'statement, uniformly on all of R^d').",
    ),
    Interpretation(
        id="thm1.approximation.compact",
        location="Theorem 1, '逼近 C^k(R^d) 上的任意 k 阶连续可微函数'",
        issue="No accuracy, norm, domain or limit is stated.",
        choice="Reading 2 (compact sets): the same, uniformly on each compact subset of R^d (the standard topology "
        "of C^k(R^d) and the setting of universal approximation); so read, the statement names no accuracy or rate "
        "and its count bounds every layer whatever its accuracy (entry 'statement, on a compact domain').",
    ),
    Interpretation(
        id="thm1.experts",
        location="Theorem 1 and 'E_i: R^d -> R^h'",
        issue="The expert's output dimension.",
        choice="E_i: R^d -> R^h through h ReLU units (the chapter's definition); a scalar target is one output "
        "coordinate.",
    ),
)


# ---------------------------------------------------------------------------------------------- exact pieces


def chebyshev_line_error() -> tuple[sp.Expr, bool]:
    """The best uniform approximation of x^2 by a line on [a, a + ell]: the secant lowered by ell^2/8, whose error
    x^2 - p(x) equioscillates (+ell^2/8, -ell^2/8, +ell^2/8 at a, a + ell/2, a + ell), which by Chebyshev's
    alternation theorem (degree 1, three alternation points) makes it optimal with error ell^2/8."""
    p = (2 * a + ell) * x - a * (a + ell) - ell**2 / 8
    e = sp.expand(x**2 - p)
    values = [sp.simplify(e.subs(x, pt)) for pt in (a, a + ell / 2, a + ell)]
    target = ell**2 / 8
    ok = values == [target, -target, target]
    return target, ok


def relu_net_pieces(h_units: int, half: Fraction) -> tuple[list[Fraction], list[tuple[Fraction, Fraction]], Fraction]:
    """A one-hidden-layer ReLU net with ``h_units`` units equal on [-half, half] to the secant interpolant of x^2 on
    h_units equal pieces, lowered by ell^2/8: one unit ReLU(x + half) gives the first piece's slope, h_units - 1
    units ReLU(x - t_k) the slope changes.  Returns the breakpoints, the units (v, t) meaning v ReLU(x - t) (the
    first with t = -half), and the output bias."""
    ell = 2 * half / h_units
    t = [-half + k * ell for k in range(h_units + 1)]
    slopes = [t[k] + t[k + 1] for k in range(h_units)]  # secant slopes of x^2
    units = [(slopes[0], -half)] + [(slopes[k] - slopes[k - 1], t[k]) for k in range(1, h_units)]
    bias = half * half - ell * ell / 8
    return t, units, bias


def relu_net(units, bias, xv: Fraction) -> Fraction:
    return bias + sum((v * max(Fraction(0), xv - t) for v, t in units), Fraction(0))


def sup_error_exact(h_units: int, half: Fraction) -> Fraction:
    """sup over [-half, half] of |x^2 - net(x)| in exact fractions: the net is linear between breakpoints, so on
    each piece the error is x^2 minus a line, extreme at the piece's ends and at its vertex (half the slope)."""
    t, units, bias = relu_net_pieces(h_units, half)
    worst = Fraction(0)
    for k in range(h_units):
        left, right = t[k], t[k + 1]
        slope = relu_net(units, bias, right) - relu_net(units, bias, left)
        slope /= right - left
        candidates = [left, right] + ([slope / 2] if left < slope / 2 < right else [])
        worst = max(worst, *(abs(c * c - relu_net(units, bias, c)) for c in candidates))
    return worst


def moe_output(xs: np.ndarray, params: dict) -> np.ndarray:
    """A d = 1 MoE layer: N experts of h ReLU units (first output coordinate), softmax gate W_g x + b_g, top-K
    with the chapter's renormalization."""
    z = np.outer(xs, params["wg"]) + params["bg"]
    z = z - z.max(axis=1, keepdims=True)
    g = np.exp(z)
    g /= g.sum(axis=1, keepdims=True)
    top = np.argsort(-g, axis=1)[:, : params["K"]]
    mask = np.zeros_like(g)
    np.put_along_axis(mask, top, 1.0, axis=1)
    gt = g * mask
    gt /= gt.sum(axis=1, keepdims=True)
    hidden = np.maximum(0.0, xs[:, None, None] * params["w"][None] + params["b"][None])  # (X, N, h)
    experts = (hidden * params["v"][None]).sum(axis=2) + params["c"][None]
    return (gt * experts).sum(axis=1)


def growth_check(seed: int) -> dict:
    """A seeded MoE's output against its linear envelope A + B|x| (A, B read off its weights: the gate's weights
    lie in [0, 1] and sum to 1, each expert is at most |c| + sum_j |v_j| (|w_j| |x| + |b_j|))."""
    rng = generator_for(seed, "moe-chapter", CLAIM, "growth")
    n, width, k = GROWTH_MOE["N"], GROWTH_MOE["h"], GROWTH_MOE["K"]
    params = {"wg": rng.normal(size=n), "bg": rng.normal(size=n), "w": rng.normal(size=(n, width)),
              "b": rng.normal(size=(n, width)), "v": rng.normal(size=(n, width)), "c": rng.normal(size=n), "K": k}
    a_env = float(np.max(np.abs(params["c"]) + (np.abs(params["v"]) * np.abs(params["b"])).sum(axis=1)))
    b_env = float(np.max((np.abs(params["v"]) * np.abs(params["w"])).sum(axis=1)))
    xs = np.concatenate([-np.logspace(0, 6, 25), np.linspace(-1, 1, 41), np.logspace(0, 6, 25)])
    f = moe_output(xs, params)
    envelope = a_env + b_env * np.abs(xs)
    inside = bool(np.all(np.abs(f) <= envelope * (1 + 1e-12)))
    gap_at = {float(v): float(v * v - abs(fv)) for v, fv in zip(xs, f) if v in (1e2, 1e4, 1e6)}
    return {"A": a_env, "B": b_env, "inside": inside, "points": int(xs.size), "gap_at": gap_at}


def layer_count() -> sp.Expr:
    """The exact parameter count of the layer: N experts R^d -> h ReLU units -> R^h (d h + h weights and biases in,
    h h + h out) and the gate W_g, b_g (N d + N)."""
    return N * (d * h + h + h * h + h) + N * (d + 1)


# Step 2's example: N = 4 experts, d = 2, integer gate W_g, b_g, and one rational input per top-2 set of experts
# (found once by a search over a rational grid; every witness is rechecked exactly when the claim runs).
REGION_GATE = (((-3, 2), (-2, 0), (3, 3), (-2, -3)), (0, 2, 1, -3))
REGION_WITNESSES = {
    (0, 1): (Fraction(-10), Fraction(-3, 2)), (0, 2): (Fraction(-11, 2), Fraction(10)),
    (0, 3): (Fraction(-10), Fraction(-7, 2)), (1, 2): (Fraction(0), Fraction(-1, 2)),
    (1, 3): (Fraction(-10), Fraction(-10)), (2, 3): (Fraction(3, 2), Fraction(-2)),
}


def top_k_set(point, k: int) -> tuple[int, ...] | None:
    """The experts with the k largest logits W_g x + b_g at ``point`` in exact fractions; None at a tie across
    the cut (the point lies on a boundary)."""
    rows, bias = REGION_GATE
    z = [w0 * point[0] + w1 * point[1] + b for (w0, w1), b in zip(rows, bias)]
    order = sorted(range(len(z)), key=lambda i: (-z[i], i))
    if z[order[k - 1]] == z[order[k]]:
        return None
    return tuple(sorted(order[:k]))


def convexity_violations(seed: int, k: int, pairs: int) -> tuple[int, int]:
    """Seeded pairs of grid points (step 1/2 in [-10, 10]^2) with the same top-k set: how many have a midpoint
    whose top-k set differs (a tie at the midpoint counts as on the boundary, not a violation), of how many
    pairs.  The regions of affine logits are intersections of half-spaces, so none should."""
    rng = generator_for(seed, "moe-chapter", CLAIM, "regions", k)
    grid = [(Fraction(i, 2), Fraction(j, 2)) for i in range(-20, 21) for j in range(-20, 21)]
    cells: dict = {}
    for point in grid:
        cells.setdefault(top_k_set(point, k), []).append(point)
    cells.pop(None, None)
    bad = checked = 0
    for members in cells.values():
        for _ in range(pairs if len(members) > 1 else 0):
            i, j = rng.choice(len(members), size=2, replace=False)
            p, q = members[int(i)], members[int(j)]
            mid = ((p[0] + q[0]) / 2, (p[1] + q[1]) / 2)
            found = top_k_set(mid, k)
            checked += 1
            bad += found is not None and found != top_k_set(p, k)
    return bad, checked


def step2_entries(seed: int = 0, pairs: int = 20) -> list[ClaimResult]:
    n_experts = len(REGION_GATE[1])
    realized = {pair for pair, point in REGION_WITNESSES.items() if top_k_set(point, 2) == pair}
    top1 = {top_k_set(point, 1) for point in REGION_WITNESSES.values()} - {None}
    bad1, checked1 = convexity_violations(seed, 1, pairs)
    pairs_total = n_experts * (n_experts - 1) // 2
    return [
        _entry(PART_STEP2, "confirmed" if len(top1) <= n_experts and bad1 == 0 else "refuted",
               "the regions of the gate's argmax are the cells {x : z_i(x) >= z_j(x) for all j} of the affine logits "
               "z = W_g x + b_g: intersections of half-spaces, so convex, at most N of them, covering R^d (some may "
               "be empty), as the step says; whatever K, the expert with the largest gate value defines at most N "
               f"such regions. In the example: the argmax takes {len(top1)} values at the witnesses (at most N = "
               f"{n_experts}); {checked1} seeded pairs of grid points in a common cell, midpoints in exact fractions: "
               f"{bad1} midpoints leave the cell",
               r"\{x : \arg\max_j z_j(x) = i\},\ i = 1..N", role="proof step", reading="argmax (top-1)"),
        _entry(PART_TOP2_SETS, "confirmed" if len(realized) == pairs_total else "refuted",
               "a precision note, not a reading of the step: the sets of experts a top-2 gate selects can number "
               f"more than N. N = 4, d = 2, W_g = {[list(r) for r in REGION_GATE[0]]}, b_g = "
               f"{list(REGION_GATE[1])}: {len(realized)} distinct expert pairs, each at a rational input "
               "(exact fractions: "
               + ", ".join(f"experts {{{pair[0] + 1}, {pair[1] + 1}}} at ({p[0]}, {p[1]})"
                           for pair, p in sorted(REGION_WITNESSES.items()) if pair in realized)
               + f"), all C(4, 2) = {pairs_total} pairs; the step's N regions are the argmax cells, which this "
               "does not contradict",
               r"\#\{\mathrm{TopK}(G(x), 2) : x \in \mathbb{R}^2\} = \binom{4}{2} = 6",
               form="derived", role="proof step", reading="top-2"),
    ]


# ---------------------------------------------------------------------------------------------- entries


def _entry(part: str, verdict: str, evidence: str, formula: str, **kw) -> ClaimResult:
    return exact_result(CLAIM, SOURCE, kw.pop("kind", "qualitative"), part, verdict, evidence, formula, **kw)


def escape_witness() -> tuple[sp.Expr, sp.Expr, bool]:
    """The literal reading's exact counterexample, for every layer at once: any ReLU MoE layer satisfies
    |F(x)| <= A + B|x| (A, B >= 0 read off its weights), and at x* = B + sqrt(A + eps) + 1 the target x^2 exceeds
    that envelope by more than eps: x*^2 - A - B x* - eps = B (s + 1) + 2 s + 1 > 0 with s = sqrt(A + eps) > 0
    (sympy, with A = s^2 - eps).  Returns x*, the excess, and whether the identity and its sign hold."""
    s, eps = sp.symbols("s epsilon", positive=True)
    b = sp.Symbol("B", nonnegative=True)
    a_env = s**2 - eps  # A = s^2 - eps, i.e. s = sqrt(A + eps)
    x_star = b + s + 1
    excess = sp.expand(x_star**2 - a_env - b * x_star - eps)
    ok = sp.simplify(excess - (b * (s + 1) + 2 * s + 1)) == 0 and bool(excess.is_positive)
    return x_star.subs(s, sp.sqrt(sp.Symbol("A", nonnegative=True) + eps)), excess, ok


def measure(ctx) -> list[ClaimResult]:
    out = []
    growth = growth_check(ctx.seed)
    diverges = sp.limit(x**2 - A - B * x, x, sp.oo) == sp.oo
    x_star, excess, witness_ok = escape_witness()
    count = layer_count()
    degree = sp.degree(sp.expand(count), h)
    factored = sp.factor(count)
    # At fixed N the count is of degree 2 in h, so within O(h^{d+1}) for every d >= 1, whatever the weights.
    vacuous = degree == 2 and sp.simplify(count - N * (h + 1) * (d + h + 1)) == 0
    # The literal reading is decided by the exact argument alone; the seeded layer only illustrates the envelope,
    # and one outside it would mean the envelope's derivation (or the layer's code) is wrong: then no verdict.
    literal = ("refuted" if diverges and witness_ok and growth["inside"] else "inconclusive")
    out.append(_entry(
        PART_UNIFORM, literal,
        "exact, inside the premises, under the literal reading (uniform approximation on all of R^d, the domain "
        "the text names): take f(x) = x_1^2, in C^k(R^d) for every k. Every layer of the stated class (N experts, "
        "each c + sum_j v_j ReLU(w_j . x + b_j) on an output coordinate, a softmax gate, dense or top-K, "
        "renormalized or not) satisfies |F(x)| <= A + B |x| with A = max_i (|c_i| + sum_j |v_ij| |b_ij|) and B = "
        "max_i sum_j |v_ij| ||w_ij||, because |ReLU(t)| <= |t| and the gate's weights lie in [0, 1] and sum to at "
        f"most 1. For every epsilon > 0, at x = x* e_1 with x* = {sp.sstr(x_star)} the error is at least x*^2 - A - "
        f"B x* = epsilon + {sp.sstr(excess)} > epsilon (sympy, with s = sqrt(A + epsilon): {witness_ok}); and "
        f"x^2 - A - B x -> {'oo' if diverges else '?'} (sympy limit). So no layer of the class, for any N, h, "
        "weights or parameter count, is within any finite epsilon of f on R^d: the literal statement is false. "
        f"Illustration (not the proof): a seeded top-K layer (N = 4, h = 8, K = 2, renormalized) stays within its "
        f"envelope A + B|x| = {growth['A']:.4g} + {growth['B']:.4g} |x| at {growth['points']} points up to "
        f"|x| = 1e6 ({growth['inside']}), where x^2 - |F(x)| = {growth['gap_at'].get(1e6, float('nan')):.4g}",
        r"\sup_{x \in \mathbb{R}^d} |x_1^2 - F(x)| = \infty \text{ for every ReLU MoE layer } F",
        reading=READING_LITERAL,
        counterexample={"f": "x_1^2", "domain": "R^d, any d >= 1", "point": f"({sp.sstr(x_star)}) e_1",
                        "premises": ["f in C^k(R^d) for every k", "N experts of one hidden ReLU layer, h units",
                                     "softmax gate, dense or top-K, renormalized or not"]}))
    out.append(_entry(
        PART_COMPACT, "not_checkable",
        "without content on compact sets: read on compact domains (C^k(R^d) carries uniform convergence on compact "
        "sets, and universal approximation is stated there), the statement is a known theorem (universal "
        "approximation, e.g. Leshno, Lin, Pinkus and Schocken 1993) that names nothing the tool can refute: no "
        "accuracy epsilon and no rate, and the parameter count O(h^{d+1}) is in h, each expert's own width, which "
        f"the theorem fixes; the layer's exact count {sp.sstr(factored)} is O(h^2) at fixed N whatever the accuracy "
        f"(entry '{PART_COUNT}'), so the bound constrains nothing. The tool checks it only on examples (entry "
        f"'{PART_TABLE}'); a rate would need the accuracy, which the statement lacks, and the count omits N, which "
        "the proof sends to infinity (step 5)",
        STATEMENT, reading=READING_COMPACT))
    out.append(_entry(
        PART_COUNT, "confirmed" if vacuous else "refuted",
        f"the layer's exact count is {sp.sstr(factored)} (N experts R^d -> h ReLU units -> R^h, d h + h + h^2 + h "
        f"each, and the gate W_g, b_g, N d + N; sympy), of degree {degree} in h: at fixed N it is O(h^2), within "
        "O(h^{d+1}) for every d >= 1 and every choice of weights. So the stated count holds for every layer of "
        "this shape, accurate or not, and says nothing about approximation; nor does it grow with N",
        r"N(h+1)(d+h+1) = O(h^2) \subseteq O(h^{d+1})\ (N \text{ fixed})", form="derived", kind="bound"))
    # The numeric illustration: the best sup error of h units to x^2 on [-L, L], exact.
    line_error, cheb_ok = chebyshev_line_error()
    hv = sp.Symbol("h", positive=True)
    lower, upper = L**2 / (2 * (hv + 1) ** 2), L**2 / (2 * hv**2)
    rows, match = [], cheb_ok
    for width in WIDTHS:
        for half in HALF_WIDTHS:
            achieved = sup_error_exact(width, Fraction(half))
            up = Fraction(half * half, 2 * width * width)
            lo = Fraction(half * half, 2 * (width + 1) ** 2)
            match &= achieved == up and lo <= achieved
            rows.append(f"h = {width}, L = {half}: {lo} <= E <= {achieved}")
    grows = sp.limit(lower, L, sp.oo) == sp.oo
    out.append(_entry(
        PART_TABLE, "confirmed" if match and grows else "refuted",
        f"a line's best uniform error to x^2 on an interval of length ell is {line_error} (sympy: the error "
        f"equioscillates at the ends and the midpoint: {cheb_ok}); h ReLU units make at most h + 1 linear pieces on "
        "[-L, L], one of length >= 2L/(h + 1), so E_h(L) >= L^2/(2 (h + 1)^2); the net with one unit ReLU(x + L) and "
        "h - 1 kinks at the equal breakpoints, output bias L^2 - ell^2/8, attains L^2/(2 h^2) (exact fractions, "
        f"its sup error computed at every piece's ends and vertex). {'; '.join(rows)}. The lower bound tends to "
        f"{sp.limit(lower, L, sp.oo)} as L -> oo at every h: on growing domains a fixed width gives an unbounded "
        "error",
        r"\frac{L^2}{2(h+1)^2} \le \inf_{\text{h ReLU units}} \sup_{[-L,L]} |x^2 - F| \le \frac{L^2}{2h^2}",
        form="derived", kind="bound", widths=list(WIDTHS), half_widths=list(HALF_WIDTHS)))
    out.append(_entry(
        PART_STEP1, "not_checkable",
        "a cited theorem (universal approximation, e.g. Leshno, Lin, Pinkus and Schocken 1993: a one-hidden-layer "
        "network with a non-polynomial activation approximates continuous functions on compact sets as its width "
        "grows). The step names neither the compact subset nor a growing width; at a fixed width h the error on "
        "[-L, L] is at least L^2/(2 (h + 1)^2) for x^2 (entry on the best sup error), so with h fixed the accuracy "
        "has to come from shrinking the subset, as steps 2 and 5 do by letting N grow",
        r"\text{one expert approximates } f \text{ on a subset}", role="proof step"))
    out.extend(step2_entries(ctx.seed, max(2, ctx.sizes.cases // 4)))
    out.extend(step4_entries())
    # The count against step 5: the parameters of the proof's layers grow with N, the stated bound does not.
    ratio_limit = sp.limit(count / h ** (d + 1), N, sp.oo)
    out.append(_entry(
        PART_STEP5, "refuted" if ratio_limit == sp.oo else "confirmed",
        "what this entry refutes is the stated count against step 5, not step 5 itself (on a compact domain, "
        "letting N grow is a plausible way to drive the error to zero). The layers step 5 uses have the exact "
        f"count {sp.sstr(factored)}, linear in N; count / h^(d+1) -> {ratio_limit} as N -> oo at fixed d, h "
        "(sympy): the proof's layers do not have O(h^{d+1}) parameters with a constant free of N, as the "
        "theorem's count, which omits N, says",
        r"\lim_{N\to\infty} \frac{N(h+1)(d+h+1)}{h^{d+1}} = \infty", role="proof step", kind="bound"))
    return out


def step4_entries() -> list[ClaimResult]:
    """Step 4 at the smallest example: N = 2, d = 1, gate logits (x, -x), constant experts 1 and -1 (a ReLU net
    with only its output bias)."""
    g1 = sp.exp(x) / (sp.exp(x) + sp.exp(-x))
    g2 = 1 - g1
    # Top-1, renormalized: the chosen expert's weight is 1.
    renorm = (sp.Integer(1), sp.Integer(-1))
    # Top-1 without renormalization: the chosen expert's weight is its gate probability.
    raw = (g1.subs(x, x), -g2)
    jumps = {}
    for name, (right, left) in (("renormalized", renorm), ("not renormalized", raw)):
        r = sp.limit(right, x, 0, "+")
        lft = sp.limit(left, x, 0, "-")
        jumps[name] = (r, lft)
    dense = sp.simplify(g1 * 1 + g2 * (-1))
    dense_ok = sp.limit(dense, x, 0, "+") == sp.limit(dense, x, 0, "-") == dense.subs(x, 0)
    top_k = all(r != lft for r, lft in jumps.values())
    text = "; ".join(f"{name}: F -> {r} as x -> 0+ and {lft} as x -> 0-" for name, (r, lft) in jumps.items())
    return [
        _entry(PART_STEP4, "refuted" if top_k else "confirmed",
               "the chapter's sparse MoE routes by a hard top-K, so at a boundary the chosen expert switches "
               "discontinuously. Exact example (N = 2, K = 1, d = 1, gate logits (x, -x), constant experts E_1 = 1, "
               f"E_2 = -1; sympy one-sided limits): {text}. The output jumps at x = 0; softmax's soft switching "
               "holds only when every expert stays in the sum",
               r"F \text{ continuous at routing boundaries}", role="proof step", reading="top-K, K < N"),
        _entry(PART_STEP4, "confirmed" if dense_ok else "refuted",
               f"with K = N (dense) F = sum_i g_i E_i is a sum of products of continuous functions (softmax of an "
               f"affine map, ReLU nets), hence continuous; in the example F = {sp.sstr(dense)}, with equal one-sided "
               f"limits at 0 ({dense_ok})",
               r"F = \sum_i g_i E_i \text{ continuous}", role="proof step", reading="dense, K = N"),
    ]


def slips(results: list[ClaimResult]) -> list[Slip]:
    by = {(r.key.part, r.key.reading): r for r in results}
    uniform = by.get((PART_UNIFORM, READING_LITERAL))
    compact = by.get((PART_COMPACT, READING_COMPACT))
    count = by.get((PART_COUNT, None))
    step4 = by.get((PART_STEP4, "top-K, K < N"))
    step5 = by.get((PART_STEP5, None))
    out = []
    if uniform is not None and uniform.verdict == "refuted":
        out.append(Slip(
            id="thm1.uniform_on_Rd",
            entries=keys_of(uniform),
            location="Section 'Theoretical properties and proofs', Theorem 1 ('C^k(R^d) 上的任意 k 阶连续可微函数')",
            slip_class="false statement",
            stated="an MoE layer of N ReLU experts approximates any function in C^k(R^d)",
            holds="read literally, uniformly on R^d, false: every such layer grows at most linearly, so none is "
            "within any finite epsilon of f(x) = x_1^2 on R^d, for any N, h, weights or parameter count; on compact "
            "sets the approximation holds (universal approximation), the other reading, where the statement has no "
            "content the tool can refute (see thm1.missing_quantifiers)",
            evidence=uniform.evidence,
            effect="under that reading the error is not merely large but infinite: no layer of any size (any N, h, "
            "parameter count) reaches any finite accuracy on R^d",
            summary="Theorem 1, read literally on R^d, is false (exact, inside its premises): every layer of ReLU "
            "experts grows at most linearly, so none approximates f(x) = x_1^2 uniformly on R^d",
        ))
    if count is not None and count.verdict == "confirmed":
        out.append(Slip(
            id="thm1.missing_quantifiers",
            # The count is what decides it; the compact reading's entry is not checkable, so it is not listed as
            # evidence (a slip resting on it would read as breaking that reading).
            strength="reading", strength_note="C^k(R^d) read on compact domains, its standard topology",
            entries=keys_of(count),
            location="Section 'Theoretical properties and proofs', Theorem 1",
            slip_class="unstated assumption",
            stated="an MoE layer of N ReLU experts approximates any function in C^k(R^d) with O(h^{d+1}) parameters",
            holds="read on compact domains (the standard topology of C^k(R^d)), the statement names no accuracy and "
            "no rate, so its count bounds nothing: the layer's exact count N (h + 1)(d + h + 1) is O(h^2) at fixed N, "
            "within O(h^{d+1}) whatever the accuracy",
            evidence=count.evidence + (" | " + compact.evidence if compact is not None else ""),
            effect="under that reading nothing the tool can refute: the count holds for every layer, accurate or not "
            "(read literally on R^d the statement is false: thm1.uniform_on_Rd)",
            summary="Theorem 1, read on compact sets, names no accuracy or rate, so its count O(h^{d+1}) constrains "
            "nothing: every such layer has N (h + 1)(d + h + 1) = O(h^2) parameters at fixed N, however well or badly "
            "it approximates",
        ))
    if step5 is not None and step5.verdict == "refuted":
        out.append(Slip(
            id="thm1.count_ignores_N",
            entries=keys_of(step5, count),
            location="Theorem 1's count O(h^{d+1}) against its proof idea, step (5)",
            slip_class="inconsistency between sections",
            stated="O(h^{d+1}) parameters, a count free of N, while the proof idea lets N -> oo to drive the error "
            "to zero",
            holds="the layers step 5 uses have N (h + 1)(d + h + 1) parameters, unbounded in N: a count in the "
            "expert's width alone does not cover them",
            evidence=step5.evidence,
            causes=("thm1.missing_quantifiers",),
        ))
    if step4 is not None and step4.verdict == "refuted":
        out.append(Slip(
            id="thm1.soft_switching",
            entries=keys_of(step4),
            location="Theorem 1's proof idea, step (4)",
            slip_class="unstated assumption",
            stated="continuity at the boundaries is guaranteed by the softmax gate's soft switching",
            holds="true for dense gating (K = N), where every expert stays in the weighted sum, which the step "
            "assumes; under the chapter's own top-K routing (K < N) the output jumps where the chosen experts "
            "change: N = 2, K = 1, logits (x, -x), experts 1 and -1 give a jump of 2 at x = 0 (1 without "
            "renormalization)",
            evidence=step4.evidence,
            effect="the smallest example's output jumps by 2 at the routing boundary (by 1 without renormalization); "
            "the dense layer (K = N) is continuous",
            summary="Theorem 1's proof idea takes continuity at region boundaries from the softmax's soft switching, "
            "which covers dense gating only: with the chapter's top-K routing the layer's output jumps there",
        ))
    return out


register(__name__, Claim(
    id=CLAIM, source=SOURCE, kind="qualitative",
    statement=STATEMENT + "  (N 个专家组成的MoE层能够以 O(h^{d+1}) 的参数量逼近 C^k(R^d) 上的任意 k 阶连续可微函数: an "
    "MoE layer of N experts can approximate any k-times continuously differentiable function on C^k(R^d) with "
    "O(h^{d+1}) parameters)",
    preconditions=("each expert a one-hidden-layer ReLU network with h hidden units", "N experts, softmax gate"),
    measure=measure, slips=slips, interpretations=INTERPRETATIONS,
    summary="An MoE layer of ReLU experts approximates C^k functions with O(h^(d+1)) parameters.",
    notes="Two readings, each its own entry: read literally, uniformly on R^d, the statement is refuted exactly "
    "(no ReLU MoE approximates x_1^2 uniformly on R^d: a linear envelope of every layer and an explicit point where "
    "x^2 leaves it, sympy; a seeded MoE within its envelope as an illustration); read on compact domains it is not "
    "checkable (no accuracy, no rate: without content). Exact: the layer's parameter count (sympy), the best sup error of h ReLU units to x^2 on [-L, L] "
    "(Chebyshev by sympy, the attaining net in fractions), proof step (2) under the argmax (exact fractions), step "
    "(4) by sympy one-sided limits, and the count against step (5).",
))
