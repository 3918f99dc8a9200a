"""Theorem 3 of the chapter (section "理论性质与证明", 定理3：负载均衡与模型容量的权衡): load balance and capacity.

The chapter's text (the capacity formula is missing):

    定理：设负载不均衡度为 σ² = Var(f_1, …, f_N)，则有效模型容量（以有效FLOPS衡量的等效稠密模型大小）满足：[missing]
    其中 β > 0 是一个与硬件并行度相关的常数，f̄ = K/N 是理想均匀分布。
    证明思路：当负载不均衡时，最繁忙的专家成为瓶颈，导致GPU利用率下降。σ² 越大，等待时间越长，等效可用容量越低。
    形式化证明需要排队论的分析框架。∎

    (Theorem.  Let the load imbalance be σ² = Var(f_1, ..., f_N); then the effective model capacity (the equivalent
    dense model size measured in effective FLOPS) satisfies [missing], where β > 0 is a constant depending on the
    hardware's parallelism and f̄ = K/N is the ideal uniform distribution.  Proof idea: under imbalance the busiest
    expert becomes the bottleneck and GPU utilisation falls; the larger σ², the longer the waiting, the lower the
    usable capacity.  A formal proof needs a queueing-theory framework.)

f_i is the chapter's routing frequency (section "损失函数"): f_i = (1/BT) Σ_t 1[i ∈ TopK(G(x_t), K)].

Readings.  σ² is the population variance (1/N) Σ (f_i − f̄)².  The capacity formula is reconstructed in two forms
from the prose (it names β > 0 and f̄, and says capacity falls as σ² grows): ``relative`` C_eff = C (1 − β σ²/f̄²)
and ``hyperbolic`` C_eff = C / (1 + β σ²), C the dense capacity.  Neither is the chapter's, and both were built
from the very prose they would be checked against, so "decreasing in σ²" under them is a consistency check of the
reconstruction (derived entries), not a confirmation of the chapter; the theorem as such is not checkable.  What
is checked against the chapter: f̄ = K/N is the mean load (a derived check of the definitions, which confirms the
definition, not the theorem), and the proof idea's link between σ² and the busiest expert.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import sympy as sp

from moecl_verify.checks.model import ClaimResult, Interpretation, Slip, exact_result, keys_of
from moecl_verify.checks.registry import Claim, register
from moecl_verify.numeric.seeding import generator_for

CLAIM = "thm3.capacity"
SOURCE = "Chapter 1.5, 理论性质与证明, 定理3：负载均衡与模型容量的权衡 (Theorem 3, load balance and capacity, and its proof idea)"
N, K, C, beta, sigma2 = sp.symbols("N K C beta sigma2", positive=True)
FBAR = K / N
READINGS = {
    "relative": C * (1 - beta * sigma2 / FBAR**2),
    "hyperbolic": C / (1 + beta * sigma2),
}
SIGMA2_MAX = K * (N - K) / N**2
# The load vectors of the bottleneck counterexample: N experts, K per token, BT tokens (frequencies in 1/BT).
BOTTLENECK_SHAPE = (4, 2, 6)

PART_STATEMENT = "capacity formula as stated"
PART_MEAN = "definition check, not the theorem: fbar = K/N is the mean of f_i"
PART_RANGE = "range of sigma2 under top-K routing"
PART_DECREASING = "capacity decreases in sigma2"
PART_POSITIVE = "capacity positive over the range of sigma2"
PART_BOTTLENECK = "sigma2 orders the busiest expert's load"

INTERPRETATIONS = (
    Interpretation(
        id="thm3.formula",
        location="Theorem 3, the display after 'satisfies'",
        issue="The capacity formula is missing; only beta > 0 and fbar = K/N survive.",
        choice="Two reconstructions, relative C (1 - beta sigma2 / fbar^2) and hyperbolic C / (1 + beta sigma2), "
        "each checked for consistency with the prose it was built from (derived entries, not a check of the "
        "chapter); the theorem itself is not checkable.",
    ),
    Interpretation(
        id="thm3.variance",
        location="Theorem 3, sigma2 = Var(f_1, ..., f_N)",
        issue="Population or sample variance.",
        choice="Population variance (1/N) sum (f_i - fbar)^2, the variance of the load vector as a distribution.",
    ),
)


def _entry(part: str, verdict: str, evidence: str, formula: str, **kw) -> ClaimResult:
    return exact_result(CLAIM, SOURCE, "bound", part, verdict, evidence, formula, **kw)


def frequencies(routes: np.ndarray, n_experts: int) -> list[Fraction]:
    """f_i = (1/BT) #{t : i in TopK(x_t)} in exact fractions, from a (BT, K) array of distinct expert indices."""
    counts = np.bincount(routes.ravel(), minlength=n_experts)
    return [Fraction(int(c), routes.shape[0]) for c in counts]


def variance(f) -> Fraction:
    mean = sum(f, Fraction(0)) / len(f)
    return sum(((x - mean) ** 2 for x in f), Fraction(0)) / len(f)


def random_routings(seed: int, cases: int) -> list[tuple[int, int, np.ndarray]]:
    """``cases`` top-K routings (N, K, routes) with N in 2..16, 1 <= K <= N, BT in 1..50 tokens: each token picks K
    distinct experts, as a top-K of any gate does; skewed toward a few experts so that loads are unequal."""
    rng = generator_for(seed, "moe-chapter", CLAIM, "routings")
    out = []
    for _ in range(cases):
        n = int(rng.integers(2, 17))
        k = int(rng.integers(1, n + 1))
        bt = int(rng.integers(1, 51))
        weights = rng.dirichlet(np.full(n, 0.3))
        routes = np.array([rng.choice(n, size=k, replace=False, p=weights) for _ in range(bt)])
        out.append((n, k, routes))
    return out


def bottleneck_counterexample(n: int, k: int, bt: int):
    """The first pair (a, b) of load vectors of ``n`` experts with frequencies in multiples of 1/bt, each in
    [0, 1] and summing to k, with Var(a) < Var(b) but max(a) > max(b); smallest Var(b) - Var(a) first, then the
    lexicographic order.  None when no pair exists."""
    grid = [Fraction(j, bt) for j in range(bt + 1)]
    vectors = sorted({tuple(sorted(v, reverse=True)) for v in itertools.product(grid, repeat=n) if sum(v) == k})
    stats = [(v, variance(v), max(v)) for v in vectors]
    best = None
    for (a, va, ma), (b, vb, mb) in itertools.product(stats, stats):
        if va < vb and ma > mb:
            key = (vb - va, a, b)
            if best is None or key < best[0]:
                best = (key, a, b, va, vb)
    return None if best is None else best[1:]


def _fr(v) -> str:
    return "(" + ", ".join(str(x) for x in v) + ")"


def measure(ctx) -> list[ClaimResult]:
    out = [_entry(
        PART_STATEMENT, "not_checkable",
        "not checkable as a theorem: the capacity formula is missing from the text, beta is only 'a constant "
        "depending on the hardware's parallelism' (no value, no definition), 'effective capacity' is defined only "
        "in words, and the proof is a sketch that defers to 'a queueing-theory framework' it does not give. The "
        "parts that can be checked are separate entries: the definitions behind fbar and sigma2, and the proof "
        "idea's link between sigma2 and the busiest expert; two reconstructions of the formula are checked for "
        "consistency with the prose they were built from (derived entries)",
        r"C_{\mathrm{eff}}(\sigma^2) = \text{[missing]}")]
    # fbar = K/N is the mean of the f_i: every token contributes K indicators, so sum_i f_i = K exactly.
    routings = random_routings(ctx.seed, ctx.sizes.cases)
    bad = [(n, k) for n, k, routes in routings if sum(frequencies(routes, n), Fraction(0)) != k]
    # A check of the definitions the theorem uses, not of the theorem: a derived entry, so that a definition
    # confirmed never reads as the theorem (partly) confirmed.
    out.append(_entry(
        PART_MEAN, "confirmed" if not bad else "refuted",
        "a check of the theorem's definitions, not of the theorem (whose formula is missing): sum_i f_i = (1/BT) sum_t sum_i 1[i in TopK(x_t)] = (1/BT) sum_t K = K, so the mean of the f_i is K/N = fbar "
        f"exactly; in exact fractions on {len(routings)} seeded random top-K routings (N in 2..16, K in 1..N, BT in "
        f"1..50): sum_i f_i = K in {len(routings) - len(bad)} of {len(routings)}",
        r"\frac1N\sum_i f_i = \frac{K}{N} = \bar f", form="derived", routings=len(routings)))
    # The range of sigma2: f_i <= 1 gives f_i^2 <= f_i, so Var <= K/N - (K/N)^2, attained by K experts at 1.
    nv, kv = 8, 2
    extremal = [Fraction(1)] * kv + [Fraction(0)] * (nv - kv)
    attained = variance(extremal) == Fraction(kv * (nv - kv), nv * nv)
    within = all(variance(frequencies(routes, n)) <= Fraction(k * (n - k), n * n) for n, k, routes in routings)
    identity = sp.simplify(FBAR - FBAR**2 - SIGMA2_MAX) == 0
    out.append(_entry(
        PART_RANGE, "confirmed" if attained and within and identity else "refuted",
        "Var(f) = (1/N) sum f_i^2 - (K/N)^2 <= (1/N) sum f_i - (K/N)^2 = K/N - K^2/N^2 = K(N - K)/N^2 (since "
        f"0 <= f_i <= 1, f_i^2 <= f_i; sympy: {identity}), attained when K experts take every token: at N = {nv}, "
        f"K = {kv}, f = {_fr(extremal)} has Var = {variance(extremal)} = K(N - K)/N^2 ({attained}); every seeded "
        f"routing lies in [0, K(N - K)/N^2] ({within}). So sigma2 / fbar^2 ranges over [0, (N - K)/K]",
        r"0 \le \sigma^2 \le \frac{K(N-K)}{N^2}", form="derived", reading="population variance"))
    # Consistency of each reconstruction with the prose it was built from (derived: not a check of the chapter).
    for name, cap in READINGS.items():
        slope = sp.simplify(sp.diff(cap, sigma2))
        decreasing = bool(slope.is_negative)
        out.append(_entry(
            PART_DECREASING, "confirmed" if decreasing else "refuted",
            f"a consistency check of the reconstruction, not a confirmation of the chapter (the formula was built "
            f"from the prose it is checked against): reading C_eff = {sp.sstr(cap)}: d C_eff / d sigma2 = "
            f"{sp.sstr(slope)} < 0 for C, beta > 0 (sympy: {decreasing}), consistent with the proof idea's 'the "
            "larger sigma2, the lower the usable capacity'",
            sp.latex(cap), form="derived", reading=name))
        at_max = sp.factor(sp.simplify(cap.subs(sigma2, SIGMA2_MAX)))
        if name == "relative":
            beta_max = sp.solve(sp.Eq(at_max, 0), beta)[0]
            # Printed as K/(N - K) where that is the root sympy found (sympy prints -K/(K - N)).
            shown = "K/(N - K)" if sp.simplify(beta_max - K / (N - K)) == 0 else sp.sstr(beta_max)
            out.append(_entry(
                PART_POSITIVE, "not_checkable",
                f"reading C_eff = {sp.sstr(cap)}: at the largest sigma2 = K(N - K)/N^2 it is C (1 - beta (N - K)/K) "
                f"(sympy: {sp.sstr(at_max)}), "
                f"positive only if beta < {shown} ({float(beta_max.subs({N: 64, K: 2})):.4g} at N = 64, "
                "K = 2): whether the capacity stays positive over the whole range depends on beta, which the chapter "
                "does not give (a property of the reconstruction, not of the chapter)",
                sp.latex(cap) + r" > 0\ ?", form="derived", reading=name))
        else:
            # sigma2 is a positive symbol; sigma2 = 0 is checked on its own.
            positive = bool(cap.is_positive) and bool(cap.subs(sigma2, 0).is_positive)
            out.append(_entry(
                PART_POSITIVE, "confirmed" if positive else "refuted",
                f"reading C_eff = {sp.sstr(cap)}: positive for every sigma2 >= 0 and beta > 0 (sympy: {positive}); "
                f"at the largest sigma2 = K(N - K)/N^2 it is {sp.sstr(at_max)} (a property of the reconstruction, "
                "not of the chapter)",
                sp.latex(cap) + r" > 0", form="derived", reading=name))
    # The proof idea: the busiest expert is the bottleneck; a larger sigma2 means a longer wait.
    n, k, bt = BOTTLENECK_SHAPE
    found = bottleneck_counterexample(n, k, bt)
    if found is not None:
        a, b, va, vb = found
        evidence = (
            f"the bottleneck the proof names is the busiest expert's load max_i f_i, which sigma2 does not order: at "
            f"N = {n}, K = {k}, BT = {bt} tokens, f = {_fr(a)} has Var = {va} < Var = {vb} of f' = {_fr(b)}, yet its "
            f"busiest expert carries {max(a)} > {max(b)} of the tokens (exact fractions; the first such pair by "
            "the gap in variance). A capacity decreasing in sigma2 alone ranks f above f', the bottleneck argument "
            "ranks f' above f"
        )
        out.append(_entry(PART_BOTTLENECK, "refuted", evidence,
                          r"\sigma^2(f) < \sigma^2(f') \Rightarrow \max_i f_i \le \max_i f'_i\ ?",
                          role="proof step", counterexample={"f": [str(x) for x in a], "f_prime": [str(x) for x in b]}))
    else:  # pragma: no cover - the grid has pairs (the test pins one)
        out.append(_entry(PART_BOTTLENECK, "inconclusive", "no pair on the grid", "", role="proof step"))
    return out


def slips(results: list[ClaimResult]) -> list[Slip]:
    by = {r.key.part: r for r in results}
    step = by.get(PART_BOTTLENECK)
    if step is None or step.verdict != "refuted":
        return []
    return [Slip(
        id="thm3.variance_vs_bottleneck",
        entries=keys_of(step),
        location="Theorem 3, proof idea ('最繁忙的专家成为瓶颈 … σ² 越大，等待时间越长')",
        slip_class="false intermediate step",
        stated="the busiest expert is the bottleneck, so the larger sigma2, the longer the wait",
        holds="the busiest expert's load max_i f_i is not a function of sigma2, nor ordered by it: "
        + step.evidence.split(": at ", 1)[-1].split(". A capacity")[0],
        evidence=step.evidence,
        effect="the direction of the theorem survives on average, but no formula in sigma2 alone can be the "
        "bottleneck capacity the proof idea describes",
        summary="Theorem 3's proof idea equates a larger load variance with a busier bottleneck expert, which "
        "fails for some load vectors",
    )]


register(__name__, Claim(
    id=CLAIM, source=SOURCE, kind="bound",
    statement=r"C_{\mathrm{eff}}(\sigma^2),\ \sigma^2 = \mathrm{Var}(f_1,\dots,f_N),\ \beta > 0,\ \bar f = K/N"
    "  (有效模型容量满足 [公式缺失]，其中 β > 0 是一个与硬件并行度相关的常数，f̄ = K/N 是理想均匀分布: the effective "
    "capacity satisfies [formula missing], beta > 0 a hardware constant, fbar = K/N the ideal uniform load)",
    preconditions=("top-K routing: each token picks K distinct experts", "f_i the routing frequency of section "
                   "'loss function'"),
    measure=measure, slips=slips, interpretations=INTERPRETATIONS,
    summary="Load imbalance lowers the effective capacity.",
    notes="The formula is missing and the proof is a sketch: the theorem is not checkable. Checked: fbar = K/N is "
    "the mean load (exact fractions on seeded routings), the exact range of sigma2, and the proof idea's link "
    "between variance and the busiest expert (an exact counterexample on a grid of load vectors); monotonicity and "
    "positivity under two reconstructions are derived consistency checks of the reconstructions.",
))
