"""Lemma 4 (Appendix D): the task-loss gradients sum to zero over experts.

Statement.  For any round t >= 1, sum_m grad_{theta^(m)_t} L^t_task = 0.

Proof (Appendix D) as printed: grad L_loc through d pi_{m_t} / d theta_m, and

    grad_{theta_m} L_aux = alpha M sum_m' f^(m')_t dP^(m')_t / d theta_m
                         = alpha M t f^(m_t)_t d pi_{m_t} / d theta_m,

"because dP^(m_t)_t / d theta_m = (1/t) d pi_{m_t} / d theta_m".

Check (symbolic identities, decided by sympy, with a numeric spot check):
the statement; the proof's softmax derivative for L_loc; and the proof's
factor in the auxiliary gradient, against the gradient derived from eq. 7 in
:mod:`theory.gate`.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from moecl_verify.checks.context import Context
from moecl_verify.checks.model import ClaimResult, Slip, exact_result, keys_of
from moecl_verify.checks.registry import Claim, register
from moecl_verify.numeric.gate import gate_outputs, softmax, task_loss_gradient
from moecl_verify.theory import gate

SOURCE = "Appendix D, Lemma 4 and its proof"
CASES = ((2, 1, 0), (3, 2, 1), (4, 2, 3))  # (M, d, routed expert) for the sympy checks


def _symbolic(part: str, verdict: str, evidence: str, statement: str, role: str = "statement") -> ClaimResult:
    return exact_result("lemma4", SOURCE, "symbolic identity", part, verdict, evidence, statement, role=role,
                        cases_M_d_routed=[list(c) for c in CASES])


def _numeric_sum(seed: int = 0) -> float:
    """Largest |sum_k grad_k| over random instances of the engine's gradient."""
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(20):
        M, d = int(rng.integers(2, 8)), int(rng.integers(1, 6))
        theta, xbar = rng.normal(size=(1, M, d)), rng.normal(size=(1, d))
        pi = softmax(gate_outputs(theta, xbar))
        grad = task_loss_gradient(pi, rng.integers(0, M, size=1), rng.uniform(0, 3, 1), rng.uniform(0, 1, 1), 7, 0.5, xbar)
        worst = max(worst, float(np.abs(grad.sum(axis=1)).max()))
    return worst


def measure(ctx: Context) -> list[ClaimResult]:
    sums_vanish = all(gate.gradients_sum_to_zero(*c) for c in CASES)
    spot = _numeric_sum(ctx.seed)
    statement = _symbolic(
        "statement",
        "confirmed" if sums_vanish and spot < 1e-12 else "refuted",
        f"sympy: sum_k grad_theta_k (L_loc + L_aux) simplifies to 0 for (M, d, routed) in {list(CASES)}: "
        f"{sums_vanish}; numeric spot check on 20 random instances of the engine's gradient: max |sum| = {spot:.1e}. "
        "Reason: every gradient is c (1{k = m_t} - pi_k) xbar and sum_k (1{k = m_t} - pi_k) = 0.",
        r"\sum_{m=1}^M \nabla_{\theta^{(m)}_t} L^t_{task} = 0",
    )
    derived_ok = all(gate.derived_matches_closed_form(*c) for c in CASES)
    loc = _symbolic(
        "proof.loc_gradient",
        "confirmed" if derived_ok else "refuted",
        "sympy: d pi_{m_t} / d theta_{m_t} = pi_{m_t} (sum_{m' != m_t} pi_m') xbar and d pi_{m_t} / d theta_m = "
        f"-pi_{{m_t}} pi_m xbar, as printed, agree with the derivative of eq. (2): {derived_ok}",
        r"\partial\pi_{m_t}/\partial\theta^{(m)} = \pi_{m_t}(\mathbb{1}\{m=m_t\}-\pi_m)\sum_i X_{t,i}",
        role="proof step",
    )
    ratio = gate.lemma4_aux_factor_ratio()
    aux = _symbolic(
        "proof.aux_gradient",
        "refuted" if sp.simplify(ratio - 1) != 0 else "confirmed",
        f"sympy: (printed alpha M t f d pi/d theta) / (derived alpha M (f/t) d pi/d theta) = {sp.sstr(ratio)}, "
        "not 1 for t >= 2; the proof's own previous clause gives dP/d theta = (1/t) d pi/d theta. The lemma's "
        "statement survives (the factor multiplies a zero sum), but the printed gradient is t^2 times too large, "
        "and Lemma 5 silently uses alpha M / T_1, i.e. the derived 1/t.",
        r"\nabla_{\theta^{(m)}_t} L^t_{aux} = \alpha M\, t\, f^{(m_t)}_t\, \partial\pi_{m_t}/\partial\theta^{(m)}_t",
        role="proof step",
    )
    return [statement, loc, aux]


def slips(results: list[ClaimResult]) -> list[Slip]:
    aux = next((r for r in results if r.key.part == "proof.aux_gradient"), None)
    if aux is None or aux.verdict != "refuted":
        return []
    return [
        Slip(
            id="lemma4.aux_gradient_factor",
            strength="transcription",
            strength_note="the proof's previous clause gives 1/t (only the tau = t term of P_t depends on Theta_t)",
            entries=keys_of(aux),
            location="Appendix D, proof of Lemma 4 (gradient of L_aux)",
            slip_class="wrong constant or exponent",
            stated="grad_{theta_m} L_aux = alpha M t f_t^(m_t) d pi_{m_t} / d theta_m",
            holds="grad_{theta_m} L_aux = alpha M (f_t^(m_t) / t) d pi_{m_t} / d theta_m (only the tau = t term of "
            "P_t depends on Theta_t, with weight 1/t); the printed factor is t^2 too large",
            evidence=aux.evidence,
        )
    ]


register(__name__, 
    Claim(
        id="lemma4",
        source=SOURCE,
        kind="symbolic identity",
        statement=r"\sum_{m=1}^M \nabla_{\theta^{(m)}_t} L^t_{task} = 0 \quad (t \ge 1)",
        preconditions=("softmax gate of eq. (2)", "losses of eq. (3), (6), (7)"),
        measure=measure,
        slips=slips,
        summary="The gate's task-loss gradients sum to zero over experts.",
        notes="Decided by sympy on small (M, d) with a numeric spot check of the engine's gradient; the proof's "
        "steps are checked as separate entries.",
    )
)
