"""The batch form with the routing matrix (chapter 1.5, "前向传播的完整推导", "批处理视角的矩阵形式").

Text (the chapter):

    设批次大小为 B，序列长度为 T。定义路由矩阵 R ∈ R^{BT×N}，其中：[missing]
    则MoE层的输出可写为：[missing]
    其中 E(X) 为所有专家对所有输入的并行计算结果，⊙ 表示逐元素乘法。

    (Let the batch size be B and the sequence length T. Define the routing matrix R ∈ R^{BT×N}, where:
    [missing]. Then the MoE layer's output can be written as: [missing], where E(X) is the result of all
    experts computed in parallel on all inputs, and ⊙ denotes element-wise multiplication.)

Readings.  R_{t,i} = g̃_i(x_t), the unified weights of "稠密MoE与稀疏MoE的统一表示" (GShard's combine weights,
Lepikhin et al. 2020).  "All experts on all inputs" makes E(X) an array of BT × N × h numbers
(E(X)[t, i, :] = E_i(x_t)).  The output formula itself is missing; two readings of the prose around it:

* *row-wise weighting*: Y = Σ_i R[:, i] ⊙ E_i(X), each column of R scaling the rows of one expert's BT × h
  output (R broadcast along h, then a sum over the experts);
* *the prose read literally*: one element-wise product of R and E(X), as the description says ("R ⊙ E(X)" is
  the tool's rendering of that description, not a formula of the chapter's).

Checks (exact).  Under the row-wise reading the batch form equals the per-token form y_t = Σ_i g̃_i(x_t) E_i(x_t):
an entrywise sympy identity at BT = 2, N = 3, h = 2, and rational top-K weights on ``ctx.sizes.cases`` random
shapes (Fractions, seeded).  Read literally, the description fits no shapes without broadcasting and a sum over
the experts: R has BT·N entries and E(X) BT·N·h, so equal shapes need h = 1, and even then the product is BT × N
and still needs a sum over the experts to be the layer's BT × h output.  The verdict therefore depends on the
reading; the slip is one of notation and rests on the description, not on a formula.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from moecl_verify.checks.model import Interpretation, Slip, exact_result, keys_of
from moecl_verify.checks.registry import Claim, register
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.packs.moe_chapter.model import sparse_weights

SOURCE = "Chapter 1.5, 批处理视角的矩阵形式 (routing matrix R and the output with E(X) and ⊙)"
CLAIM = "batch.routing_matrix"
ROW_WISE = "row-wise: Y = sum_i R[:, i] ⊙ E_i(X)"
LITERAL = "the prose read literally: one element-wise product of R and E(X)"
SYMBOLIC_SHAPE = (2, 3, 2)  # (BT, N, h) of the symbolic identity

INTERPRETATIONS = (
    Interpretation(
        id="batch.routing_matrix",
        location="Chapter 1.5, 批处理视角的矩阵形式: the display after 'R ∈ R^{BT×N}，其中：'",
        issue="The definition of R's entries is missing.",
        choice="R_{t,i} = g̃_i(x_t), the unified weights (zero outside TopK for the sparse version); GShard's "
        "combine weights (Lepikhin et al. 2020).",
    ),
    Interpretation(
        id="batch.output",
        location="Chapter 1.5, 批处理视角的矩阵形式: the display after 'MoE层的输出可写为：'",
        issue="The output formula is missing; the prose says it combines R and E(X) ('all experts on all inputs') "
        "with ⊙, element-wise multiplication.",
        choice="Checked under two readings: row-wise weighting Y = Σ_i R[:, i] ⊙ E_i(X) (R broadcast along h, "
        "summed over experts), and the prose read literally, one element-wise product of R and E(X) ∈ "
        "R^{BT×N×h} (the tool's rendering of the description, not a formula of the chapter's).",
    ),
)


def per_token(R, E) -> list:
    """y_t = sum_i R[t][i] E[t][i] (lists of exact numbers; E[t][i] a list of h entries)."""
    h = len(E[0][0])
    return [[sum((R[t][i] * E[t][i][k] for i in range(len(R[t]))), start=0 * R[t][0]) for k in range(h)]
            for t in range(len(R))]


def row_wise(R, E) -> list:
    """Y = sum_i R[:, i] ⊙ E_i(X): column i of R, repeated along h, times expert i's BT x h block, summed."""
    BT, N, h = len(R), len(R[0]), len(E[0][0])
    Y = [[0 * R[0][0] for _ in range(h)] for _ in range(BT)]
    for i in range(N):
        column = [[R[t][i]] * h for t in range(BT)]  # the broadcast the reading needs
        block = [E[t][i] for t in range(BT)]
        for t in range(BT):
            for k in range(h):
                Y[t][k] += column[t][k] * block[t][k]
    return Y


def symbolic_identity(BT: int, N: int, h: int) -> bool:
    R = [[sp.Symbol(f"r{t}_{i}") for i in range(N)] for t in range(BT)]
    E = [[[sp.Symbol(f"e{t}_{i}_{k}") for k in range(h)] for i in range(N)] for t in range(BT)]
    return all(sp.expand(a - b) == 0 for ra, rb in zip(row_wise(R, E), per_token(R, E)) for a, b in zip(ra, rb))


def random_cases(seed: int, cases: int) -> tuple[int, int, dict | None]:
    """(cases checked, cases equal, the first differing case) on random shapes: BT in 1..6, N in 2..5, K in
    1..N, h in 1..4, rational gate probabilities (positive integers normalised), normalised top-K weights, and
    integer expert outputs."""
    rng = generator_for(seed, "moe-chapter", CLAIM, "cases")
    equal, first_bad = 0, None
    for case in range(cases):
        BT, N, h = int(rng.integers(1, 7)), int(rng.integers(2, 6)), int(rng.integers(1, 5))
        K = int(rng.integers(1, N + 1))
        gates = [[Fraction(int(v), int(sum(row))) for v in row] for row in rng.integers(1, 20, size=(BT, N))]
        R = [list(sparse_weights(g, K, True)) for g in gates]
        E = [[[Fraction(int(v)) for v in rng.integers(-9, 10, size=h)] for _ in range(N)] for _ in range(BT)]
        if row_wise(R, E) == per_token(R, E):
            equal += 1
        elif first_bad is None:
            first_bad = {"case": case, "BT": BT, "N": N, "K": K, "h": h}
    return cases, equal, first_bad


def literal_shapes(BT: int, N: int, h: int) -> tuple[tuple, tuple, tuple]:
    """(shape of R, shape of E(X), shape of the layer's output)."""
    return (BT, N), (BT, N, h), (BT, h)


def _entries(shape: tuple) -> int:
    out = 1
    for n in shape:
        out *= n
    return out


def measure(ctx) -> list:
    shape = SYMBOLIC_SHAPE
    symbolic = symbolic_identity(*shape)
    total, equal, bad = random_cases(ctx.seed, int(ctx.sizes.cases))
    out = [exact_result(
        CLAIM, SOURCE, "symbolic identity", "the batch form equals the per-token form",
        "confirmed" if symbolic and equal == total else "refuted",
        f"sympy, symbolic R and E(X) at (BT, N, h) = {shape}: sum_i R[:, i] ⊙ E_i(X) - (sum_i R[t, i] E_i(x_t))_t "
        f"expands to 0: {symbolic} (an entrywise identity, so it holds at every shape); exact rational check on "
        f"{total} random cases (BT 1..6, N 2..5, K 1..N, h 1..4, R = normalised top-K weights): {equal} equal"
        + (f"; first difference {bad}" if bad else ""),
        r"Y = \sum_i R_{:,i} \odot E_i(X) \in \mathbb{R}^{BT\times h},\ Y_t = \sum_i \tilde g_i(x_t) E_i(x_t)",
        reading=ROW_WISE, cases=total)]
    # The literal element-wise product: it needs as many entries on both sides; smallest shapes first.
    smallest = next(s for s in ((1, 2, h) for h in range(1, 5)) if _entries(literal_shapes(*s)[0])
                    != _entries(literal_shapes(*s)[1]))
    r_shape, e_shape, y_shape = literal_shapes(*smallest)
    h1 = literal_shapes(1, 2, 1)
    out.append(exact_result(
        CLAIM, SOURCE, "symbolic identity", "the text's description (R is BT × N, E(X) all experts on all inputs, "
        "⊙ element-wise) fits the output's shapes without broadcasting or a sum over experts",
        "refuted" if _entries(r_shape) != _entries(e_shape) else "confirmed",
        f"the output formula is missing; this checks the description around it. Shapes: R is BT x N and E(X) "
        f"('all experts on all inputs') holds BT x N x h numbers. Smallest case BT = "
        f"{smallest[0]}, N = {smallest[1]}, h = {smallest[2]}: R {r_shape} has {_entries(r_shape)} entries, E(X) "
        f"{e_shape} has {_entries(e_shape)}: an element-wise product needs equal shapes, so BT N = BT N h, i.e. "
        f"h = 1; and at h = 1 the product still has shape BT x N = {h1[0]} while the output has BT x h = "
        f"{h1[2]}, so a sum over the N experts is needed too. The description fits no shapes without "
        "broadcasting and a sum over experts; with them it is the row-wise reading (R's column i broadcast along "
        "h, times E_i(X), summed over i), which is exact",
        r"R \in \mathbb{R}^{BT\times N},\ E(X) \in \mathbb{R}^{BT\times N\times h}:\ "
        r"R \odot E(X)\ \text{undefined for}\ h > 1", reading=LITERAL, smallest=list(smallest)))
    return out


def slips(results) -> list:
    literal = [r for r in results if r.key.reading == LITERAL and r.verdict == "refuted"]
    if not literal:
        return []
    row = [r for r in results if r.key.reading == ROW_WISE]
    return [Slip(
        id="batch.routing_matrix.hadamard_shapes",
        strength="reading", strength_note="the output formula, missing from the text, read from its description",
        entries=keys_of(literal, row),
        location="Chapter 1.5, 批处理视角的矩阵形式 (the prose after the missing output formula)",
        slip_class="notation",
        stated="E(X) 为所有专家对所有输入的并行计算结果，⊙ 表示逐元素乘法 (E(X) is all experts computed on all "
        "inputs, ⊙ element-wise multiplication), combined with R ∈ R^{BT×N} in the missing output formula",
        holds="this rests on the description, not on a formula (the output formula is missing): R (BT × N) and "
        "E(X) (BT × N × h) have no element-wise product unless h = 1, and even then the product is BT × N, not the "
        "BT × h output; the description fits the shapes only with R broadcast along h and a sum over the experts, "
        "Y = Σ_i R[:, i] ⊙ E_i(X), which equals the per-token output exactly",
        evidence=" | ".join(r.evidence for r in literal + row),
        effect="a notation matter: the missing formula may well have had the broadcast and the sum; under the "
        "row-wise reading the batch form is exact",
        summary="the text's description (R is BT × N, E(X) all experts on all inputs, ⊙ element-wise) fits no "
        "shapes without broadcasting and a sum over experts; with them the batch form is exact (the output formula "
        "itself is missing)",
    )]


register(__name__, Claim(
    id=CLAIM, source=SOURCE, kind="symbolic identity",
    statement=r"R \in \mathbb{R}^{BT\times N},\ R_{t,i} = \tilde g_i(x_t)\ \text{(reading)},\ Y = [\text{missing}]\ "
    r"\text{(E(X) 为所有专家对所有输入的并行计算结果，⊙ 表示逐元素乘法)}",
    preconditions=("R_{t,i} = g̃_i(x_t) (reading)", "E(X)[t, i, :] = E_i(x_t) ∈ R^h"),
    measure=measure, slips=slips, interpretations=INTERPRETATIONS,
    summary="The batch form with the routing matrix equals the per-token output.",
    notes="Exact: a sympy entrywise identity and rational random cases under the row-wise reading; a shape "
    "argument on the prose read literally (the output formula is missing).",
))
