"""Gradient clipping (section "数值稳定性分析", 梯度裁剪的必要性).

The chapter's text (the clipping formula is missing):

    由于Top-K路由的离散性，梯度可能出现突变。建议使用全局范数裁剪：[missing]  其中 c 通常取 1.0。

    (Because top-K routing is discrete, the gradient may change abruptly.  Global-norm clipping is recommended:
    [missing], where c is usually taken to be 1.0.)

Reading.  Global-norm clipping g <- g · min(1, c / ||g||), ||g|| the Euclidean norm of all parameters' gradients
stacked (Pascanu, Mikolov and Bengio 2013, "On the difficulty of training recurrent neural networks", section 3.2;
torch.nn.utils.clip_grad_norm_, which divides by ||g|| + 1e-6).  g = 0 is left unchanged.

The sentence gives top-K's abrupt gradient changes as the reason for clipping; what clipping does about them is
read as the natural "it bounds the step taken after a jump" (the chapter does not say clipping removes jumps).

Checks, all exact (sympy with exact square roots, fractions): the clipped norm is min(||g||, c), the direction is
kept, clipping is idempotent; an exact top-1 example whose gradient jumps across the routing boundary; every
clipped step has norm at most c, so the step after a jump is bounded; "c usually 1.0" is a statement about common
practice and is not checkable.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from moecl_verify.checks.model import ClaimResult, Interpretation, exact_result
from moecl_verify.checks.registry import Claim, register
from moecl_verify.numeric.seeding import generator_for

CLAIM = "clipping.global_norm"
SOURCE = "Chapter 1.5, 数值稳定性分析, 梯度裁剪的必要性 (the need for gradient clipping)"
THRESHOLDS = (sp.Rational(1, 2), sp.Integer(1), sp.Integer(3))

PART_NORM = "clipped norm, direction, idempotence"
PART_JUMP = "top-K routing makes the gradient jump"
PART_BOUNDED = "clipping bounds the step after a jump"
PART_C = "c is usually 1.0"

INTERPRETATIONS = (
    Interpretation(
        id="clipping.formula",
        location="Section 'Numerical stability analysis', the display after '全局范数裁剪'",
        issue="The clipping formula is missing.",
        choice="g <- g min(1, c/||g||) over all parameters' gradients stacked (Pascanu et al. 2013; "
        "torch.nn.utils.clip_grad_norm_ adds 1e-6 to the norm).",
    ),
    Interpretation(
        id="clipping.reason",
        location="Section 'Numerical stability analysis', '由于Top-K路由的离散性，梯度可能出现突变。建议使用全局范数裁剪'",
        issue="What clipping is said to do about an abrupt change is not stated.",
        choice="Clipping bounds the step taken after a jump (its natural reading: clipping caps the norm); the "
        "chapter does not say that clipping removes jumps.",
    ),
)


def clip(g, c):
    """g min(1, c/||g||) in sympy's exact algebraic numbers (the square root stays a surd); 0 stays 0."""
    size = norm(g)
    if size == 0:
        return tuple(g)
    factor = sp.Min(1, c / size)
    return tuple(v * factor for v in g)


def norm(g) -> sp.Expr:
    return sp.sqrt(sum(v**2 for v in g))


def seeded_vectors(seed: int, cases: int) -> list[tuple[sp.Integer, ...]]:
    """``cases`` integer vectors of dimension 1..6 with entries in [-5, 5] (some of norm below each threshold, most
    above)."""
    rng = generator_for(seed, "moe-chapter", CLAIM, "vectors")
    out = []
    for _ in range(cases):
        n = int(rng.integers(1, 7))
        out.append(tuple(sp.Integer(int(v)) for v in rng.integers(-5, 6, size=n)))
    return out


def symbolic_cases() -> bool:
    """The two cases of the definition, r = ||g|| > 0: r <= c leaves g; r > c (r = c + s, s > 0) scales by c/r,
    which has norm c, is positive, and a second clipping leaves it (its norm c gives factor 1)."""
    c, s = sp.symbols("c s", positive=True)
    r = c + s
    clipped_norm = r * (c / r)
    second_factor = c / clipped_norm
    return bool(sp.simplify(clipped_norm - c) == 0 and (c / r).is_positive and sp.simplify(second_factor - 1) == 0)


def top1_example() -> dict:
    """An exact top-1 MoE whose gradient jumps across the routing boundary.

    N = 2 experts, K = 1 with the chapter's renormalization, one input; the gate's logits are (theta, 0), so
    expert 1 is chosen for theta > 0 and expert 2 for theta < 0, with renormalized weight 1 either way.  The
    experts are constants w_1 = 1/2, w_2 = -1/2 (a ReLU net with only its output bias); loss (F - y)^2 / 2 with
    y = 0.  The gradient in (w_1, w_2) is (F - y) e_chosen: (1/2, 0) for theta > 0 and (0, -1/2) for theta < 0."""
    w = (Fraction(1, 2), Fraction(-1, 2))
    y = Fraction(0)
    right = (w[0] - y, Fraction(0))  # theta -> 0+: expert 1
    left = (Fraction(0), w[1] - y)   # theta -> 0-: expert 2
    return {"w": w, "right": right, "left": left}


def measure(ctx) -> list[ClaimResult]:
    out = []
    vectors = seeded_vectors(ctx.seed, ctx.sizes.cases)
    failures, checked = [], 0
    for g in vectors:
        for c in THRESHOLDS:
            cl = clip(g, c)
            n0, n1 = norm(g), norm(cl)
            checked += 1
            # Exact algebraic numbers in canonical form: equal values compare equal without simplification.
            ok = sp.expand(n1 - sp.Min(n0, c)) == 0
            # Direction: cl = lambda g with lambda > 0 (every nonzero coordinate gives the same ratio).
            ratios = {sp.expand(a / b) for a, b in zip(cl, g) if b != 0}
            ok &= len(ratios) <= 1 and all(rv > 0 for rv in ratios)
            ok &= all(sp.expand(a - b) == 0 for a, b in zip(clip(cl, c), cl))
            if not ok:
                failures.append((g, c))
    sym = symbolic_cases()
    verdict = "confirmed" if not failures and sym else "refuted"
    out.append(exact_result(
        CLAIM, SOURCE, "symbolic identity", PART_NORM, verdict,
        f"for ||g|| <= c the factor is 1; for ||g|| = c + s > c it is c/||g||, giving norm c, a positive multiple "
        f"of g, and a second clipping with factor c/c = 1 (sympy: {sym}). On {len(vectors)} seeded integer "
        f"vectors (dimension 1..6, entries in [-5, 5]) at c in {{1/2, 1, 3}}, in exact square roots: ||clip(g)|| = "
        f"min(||g||, c), clip(g) a positive multiple of g, clip(clip(g)) = clip(g) in {checked - len(failures)} of "
        f"{checked} cases. torch.nn.utils.clip_grad_norm_'s factor c/(||g|| + 1e-6) gives a norm slightly below "
        "c, c ||g|| / (||g|| + 1e-6)",
        r"g \leftarrow g \cdot \min\left(1, \frac{c}{\|g\|}\right),\ \|g'\| = \min(\|g\|, c)",
        reading="Pascanu et al. 2013"))
    ex = top1_example()
    right, left = ex["right"], ex["left"]
    jump2 = sum((a - b) ** 2 for a, b in zip(right, left))
    out.append(exact_result(
        CLAIM, SOURCE, "qualitative", PART_JUMP, "confirmed" if jump2 > 0 else "refuted",
        "exact top-1 example (N = 2, K = 1 renormalized, gate logits (theta, 0), constant experts w = (1/2, -1/2), "
        f"loss (F - 0)^2 / 2): the gradient in (w_1, w_2) is {tuple(str(v) for v in right)} for theta > 0 and "
        f"{tuple(str(v) for v in left)} for theta < 0; the one-sided limits at theta = 0 differ by a vector of "
        f"squared norm {jump2}: the gradient jumps where the routing switches, as the chapter says",
        r"\lim_{\theta\to0^+}\nabla_w \ell \ne \lim_{\theta\to0^-}\nabla_w \ell", role="proof step"))
    out.append(exact_result(
        CLAIM, SOURCE, "qualitative", PART_BOUNDED, "confirmed" if not failures and sym else "refuted",
        "every clipped gradient has norm min(||g||, c) <= c (first entry, exact), so across any jump the clipped "
        "step changes by at most 2c (triangle inequality) and never exceeds c in norm: clipping bounds the update "
        "taken after an abrupt change, whatever its size",
        r"\|\mathrm{clip}(g^+) - \mathrm{clip}(g^-)\| \le 2c", role="proof step", reading="bounds the step"))
    out.append(exact_result(
        CLAIM, SOURCE, "qualitative", PART_C, "not_checkable",
        "a statement about common practice (the thresholds that training recipes and library defaults use), which "
        "no computation checks: it is about what people choose, not about mathematics, and the chapter cites no "
        "source. Mathematically c sets the scale of the cap and depends on the loss's scale and the number of "
        "parameters stacked in ||g||",
        r"c = 1.0"))
    return out


register(__name__, Claim(
    id=CLAIM, source=SOURCE, kind="qualitative",
    statement="由于Top-K路由的离散性，梯度可能出现突变。建议使用全局范数裁剪，其中 c 通常取 1.0 (because top-K routing is "
    r"discrete the gradient may change abruptly; use global-norm clipping, c usually 1.0): "
    r"g \leftarrow g \min(1, c/\|g\|)",
    preconditions=("Euclidean norm over all parameters' gradients",),
    measure=measure, interpretations=INTERPRETATIONS,
    summary="Global-norm clipping against the gradient's jumps under top-K routing.",
    notes="Exact: the clipping map's properties on seeded integer vectors (sympy square roots) and case by case; an "
    "exact top-1 example of the gradient's jump; the bound on the clipped step; 'c usually 1.0' is a statement "
    "about common practice.",
))
