"""The chapter's results a reader wants judged in one line."""

from __future__ import annotations

from moecl_verify.checks.pack import HeadlineItem

ITEMS = (
    HeadlineItem("routing", "Gating and top-K routing",
                 "G maps into the simplex; dense MoE is top-K with K = N; the normalised top-K weights (K = 1 or 2); "
                 "the batch form with the routing matrix",
                 ("gate", "topk", "batch"), "chapter",
                 parts=(("G maps R^d into the simplex Δ^{N−1}", ("gate.simplex",)),
                        ("dense MoE is the special case K = N", ("topk.dense_special_case",)),
                        ("the normalised top-K weights, usually with K = 1 or 2", ("topk.normalised_k1",)),
                        ("the batch form Y from R and E(X) with ⊙", ("batch.routing_matrix",)))),
    HeadlineItem("gradients", "Gradients",
                 "the frequencies and probabilities of the auxiliary loss, the top-K selection's non-differentiability, "
                 "the gate's and the experts' gradients, and what a higher gate probability does",
                 ("aux", "expert"), "chapter",
                 parts=(("f_i and P_i: routing frequencies and mean gate probabilities", ("aux.frequencies",)),
                        ("top-K is a discrete choice (not differentiable)", ("aux.ste_needed",)),
                        ("the auxiliary loss's gradient through the softmax to W_g", ("aux.gradient",)),
                        ("a selected expert's gradient", ("expert.gradient",)),
                        ("a higher gate probability gives a stronger gradient and a larger update",
                         ("expert.update_scale",)))),
    HeadlineItem("thm1", "Theorem 1 (expressivity)", "N ReLU experts approximate C^k functions with O(h^(d+1)) parameters",
                 ("thm1",), "chapter"),
    HeadlineItem("thm2", "Theorem 2 (compute ratio)", "P_sparse / P_dense tends to K/N when N >> K and h^2 >> d^2",
                 ("thm2",), "chapter"),
    HeadlineItem("thm3", "Theorem 3 (load balance and capacity)", "effective capacity falls with the load variance",
                 ("thm3",), "chapter"),
    HeadlineItem("stability", "Numerical stability", "softmax overflow, the max shift, temperature, clipping",
                 ("softmax", "clipping"), "chapter",
                 parts=(("the softmax can overflow", ("softmax.overflow",)),
                        ("subtracting the maximum keeps the softmax and makes it stable", ("softmax.max_shift",)),
                        ("τ -> 0 gives one-hot, τ -> ∞ uniform", ("softmax.temperature",)),
                        ("global-norm clipping, c usually 1.0", ("clipping.global_norm",)))),
)

# The chapter's theorems, each a line of the per-statement status table.
STATEMENTS = tuple(item for item in ITEMS if item.key.startswith("thm"))
