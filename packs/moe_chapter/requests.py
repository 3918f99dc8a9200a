"""Requests to the authors of the MoE chapter (``Pack.requests``), each from a slip the run established."""

from __future__ import annotations

from moecl_verify.checks.requests import Request, request


def requests(run) -> list[Request]:
    held = {s.id for s in run.slips}
    out = []

    def ask(action, text, evidence, changes=""):
        evidence = tuple(e for e in evidence if e in held)
        if evidence:
            out.append(request(action, text, evidence, changes=changes))

    ask("restate", "Restate Theorem 1 with its domain, accuracy and rate: read on R^d it is false (a layer of ReLU "
        "experts grows at most linearly), and on a compact set without an accuracy its count O(h^(d+1)) "
        "constrains nothing.", ("thm1.uniform_on_Rd", "thm1.missing_quantifiers", "thm1.count_ignores_N"),
        "Theorem 1")
    ask("restate", "Keep the gate's N d in both counts of Theorem 2, or restate its limit: with it the ratio tends "
        "to d/(d + h^2) as N grows, not K/N.", ("thm2.gate_term_missing",), "Theorem 2")
    ask("prove", "Give Theorem 3's capacity formula and prove that a larger load variance lowers it: the proof idea's "
        "link between variance and the busiest expert fails for some loads.", ("thm3.variance_vs_bottleneck",),
        "Theorem 3")
    ask("restate", "Say that the normalised top-1 weights give the gate no gradient from the task loss (the chosen "
        "expert's weight is 1), so 'a higher gate probability gives a larger update' needs K >= 2 or dense "
        "gates.", ("topk.normalised_k1.no_gate_gradient", "expert.update_scale.k1"), "Gradients")
    ask("restate", "Restrict 'tau -> 0 gives one-hot' to a unique largest logit: tied logits share the mass.",
        ("softmax.temperature.ties",), "Numerical stability")
    return out


__all__ = ["requests"]
