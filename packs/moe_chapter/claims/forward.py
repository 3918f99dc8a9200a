"""The L-layer forward recursion (chapter 1.5, "前向传播的完整推导", "多层MoE网络的递推").

Text (the chapter):

    考虑一个 L 层的MoE Transformer模型，第 l 层（1 ≤ l ≤ L）的计算过程如下：
    步骤1：多头注意力 [missing]  步骤2：残差连接与层归一化 [missing]
    步骤3：MoE前馈网络 [missing]  步骤4：残差连接与层归一化 [missing]

    (Consider an L-layer MoE Transformer; layer l (1 ≤ l ≤ L) computes: step 1, multi-head attention [missing];
    step 2, residual connection and layer normalisation [missing]; step 3, the MoE feed-forward network
    [missing]; step 4, residual connection and layer normalisation [missing].)

Every formula of the recursion is missing and the prose names only the four steps, so there is no statement to
check: the entry says so rather than check a recursion of its own making (the MoE step itself is the unified
form of ``topk``, and its batch form is ``batch.routing_matrix``).
"""

from __future__ import annotations

from moecl_verify.checks.model import exact_result
from moecl_verify.checks.registry import Claim, register

SOURCE = "Chapter 1.5, 多层MoE网络的递推 (steps 1-4 of layer l)"
CLAIM = "forward.recursion"


def measure(ctx) -> list:
    return [exact_result(
        CLAIM, SOURCE, "qualitative", "the layer recursion, steps 1-4", "not_checkable",
        "not checkable: the four displays of the recursion are missing and the prose only names the steps "
        "(multi-head attention; residual connection and layer normalisation; the MoE feed-forward network; residual "
        "connection and layer normalisation), with no order of normalisation (pre- or post-LN), no shapes and no "
        "equation; any recursion written here would be the tool's, not the chapter's. The MoE step is checked as "
        "the unified form (topk claims) and in batch form (batch.routing_matrix)",
        r"h^{(l)} = \text{LN}(\cdot + \text{MoE}(\text{LN}(\cdot + \text{MHA}(h^{(l-1)}))))\ ?")]


register(__name__, Claim(
    id=CLAIM, source=SOURCE, kind="qualitative",
    statement=r"\text{第 l 层: 多头注意力, 残差连接与层归一化, MoE前馈网络, 残差连接与层归一化 (layer l: attention, "
    r"residual + norm, MoE FFN, residual + norm)}",
    preconditions=("1 ≤ l ≤ L",),
    measure=measure,
    summary="The L-layer forward recursion: its formulas are missing.",
    notes="Not checkable: only the names of the four steps survive.",
))
