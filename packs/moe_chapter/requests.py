"""Requests to the authors of the MoE chapter (``Pack.requests``), each from a slip the run established."""

from __future__ import annotations

from moecl_verify.checks.requests import Request, request


def _gate_limit():
    """Theorem 2's ratio with the gate's N d kept in both counts, and its limit as N grows, as sympy derives it
    from the counts of :mod:`moecl_verify.packs.moe_chapter.claims.thm2`."""
    import sympy as sp

    from moecl_verify.packs.moe_chapter.claims.thm2 import P_DENSE, P_SPARSE, L, N, d

    ratio = sp.simplify((P_SPARSE + L * N * d) / (P_DENSE + L * N * d))
    return sp.Eq(sp.Limit(ratio, N, sp.oo), sp.limit(ratio, N, sp.oo))


def _tied_limit():
    """The softmax gate's weight of one of two tied largest logits as tau -> 0+, as sympy evaluates it: the tied
    logits share the mass (1/2 each), so the limit is not one-hot."""
    import sympy as sp

    tau, z = sp.symbols("tau z", positive=True)
    weight = sp.exp(z / tau) / (sp.exp(z / tau) + sp.exp(z / tau))
    return sp.Eq(sp.Limit(sp.Symbol("g_1"), tau, 0, "+"), sp.limit(weight, tau, 0, "+"))


def requests(run) -> list[Request]:
    held = {s.id for s in run.slips}
    out = []

    def ask(action, text, evidence, changes="", statement=None):
        evidence = tuple(e for e in evidence if e in held)
        if evidence:
            out.append(request(action, text, evidence, statement, changes=changes))

    ask("restate", "Restate Theorem 1 with its domain, accuracy and rate: read on R^d it is false (a layer of ReLU "
        "experts grows at most linearly), and on a compact set without an accuracy its count O(h^(d+1)) "
        "constrains nothing.", ("thm1.uniform_on_Rd", "thm1.missing_quantifiers", "thm1.count_ignores_N"),
        "Theorem 1")
    ask("restate", "Keep the gate's N d in both counts of Theorem 2, or restate its limit: with it the ratio tends "
        "to d/(d + h^2) as N grows, not K/N.", ("thm2.gate_term_missing",), "Theorem 2", _gate_limit())
    ask("prove", "Give Theorem 3's capacity formula and prove that a larger load variance lowers it: the proof idea's "
        "link between variance and the busiest expert fails for some loads.", ("thm3.variance_vs_bottleneck",),
        "Theorem 3")
    ask("restate", "Say that the normalised top-1 weights give the gate no gradient from the task loss (the chosen "
        "expert's weight is 1), so 'a higher gate probability gives a larger update' needs K >= 2 or dense "
        "gates.", ("topk.normalised_k1.no_gate_gradient", "expert.update_scale.k1"), "Gradients")
    ask("restate", "Restrict 'tau -> 0 gives one-hot' to a unique largest logit: tied logits share the mass.",
        ("softmax.temperature.ties",), "Numerical stability", _tied_limit())
    return out


__all__ = ["requests"]
