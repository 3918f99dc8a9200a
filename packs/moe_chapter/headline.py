"""The chapter's results a reader wants judged in one line."""

from __future__ import annotations

from moecl_verify.checks.pack import HeadlineItem

ITEMS = (
    HeadlineItem("routing", "Gating and top-K routing", "G maps into the simplex; dense MoE is top-K with K = N",
                 ("gate", "topk", "batch"), "chapter"),
    HeadlineItem("gradients", "The gradients", "the auxiliary loss's, the gate's and the experts' gradients",
                 ("aux", "expert"), "chapter"),
    HeadlineItem("thm1", "Theorem 1 (expressivity)", "N ReLU experts approximate C^k functions with O(h^(d+1)) parameters",
                 ("thm1",), "chapter"),
    HeadlineItem("thm2", "Theorem 2 (compute ratio)", "P_sparse / P_dense tends to K/N when N >> K and h^2 >> d^2",
                 ("thm2",), "chapter"),
    HeadlineItem("thm3", "Theorem 3 (load balance and capacity)", "effective capacity falls with the load variance",
                 ("thm3",), "chapter"),
    HeadlineItem("stability", "Numerical stability", "softmax overflow, the max shift, temperature, clipping",
                 ("softmax", "clipping"), "chapter"),
)
