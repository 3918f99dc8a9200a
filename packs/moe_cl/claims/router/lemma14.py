"""Lemma 14 (Appendix F.1): gate gradients of different experts during the router-learning phase.

Notation: L_task the task loss of eq. (3), (6), (7); m_t the routed expert;
t1 = ceil(eta^-1 sigma0^-0.25 M).

Lemma 14 (Appendix F).  For every t in {T1 + 1, ..., t1} and every m != m_t:
||grad_{theta^(m)_t} L_task - grad_{theta^(m_t)_t} L_task||_inf = O(sigma0).
Proof F.1 uses alpha M / t <= sigma0 for t in {T1 + 1, ..., t1}.

How it is checked: the gate keeps training (no termination), Algorithm 1's
scalings with hidden constant c in {1, 0.5}, N = 3, M = 6, d = 10, s = 6,
v_n = w_n / sigma0, sigma0 in {0.4, 0.2, ..., 0.00625} (halving, 64x); for
sigma0 >= 0.025 these are the very runs of :mod:`packs.moe_cl.claims.router.prop2` at
t1 (:mod:`packs.moe_cl.experiments.gate_training`), replayed per round by
:mod:`numeric.gate_trace` (:mod:`packs.moe_cl.experiments.router_phase`, shared with
Lemmas 13 and 15).  The statement: fitted exponent of the largest gradient gap
over the phase (:class:`~checks.kinds.scaling.ScalingEvidence`, one entry per hidden constant, decided by
the run's error control in :mod:`checks.decide`, which also reconciles the two constants); the proof
step alpha M / t <= sigma0: exact.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments.gate_training import CONSTANTS
from moecl_verify.packs.moe_cl.experiments.router_phase import (
    NO_TERMINATION,
    PHASE_NOTES,
    SWEEP,
    config,
    phases,
    t1_round,
)
from moecl_verify.packs.moe_cl.entries.router_phase import (
    refuted_part_slips,
    scaling_entry,
)
from moecl_verify.checks.model import ClaimResult, Slip, exact_result
from moecl_verify.checks.registry import Claim, register

SOURCE14 = "Appendix F, Lemma 14 and proof F.1"


# ----------------------------------------------------------------------------- entries


def measure_lemma14(ctx: Context) -> list:
    out = []
    for c in CONSTANTS:
        ph = phases(ctx, c)
        out.append(scaling_entry(
            ctx, "lemma14", SOURCE14, "statement: gradient gap O(sigma0)", c, "O", 1.0,
            [p.grad_gap for p in ph.values()],
            r"\|\nabla_{\theta^{(m)}_t} L^t_{task} - \nabla_{\theta^{(m_t)}_t} L^t_{task}\|_\infty = O(\sigma_0),\ "
            r"t = T_1+1, \dots, t_1",
            "largest ||grad_m - grad_{m_t}||_inf over t = T1+1..t1 and m != m_t"))
    return out + [_aux_weight_entry()]


def _aux_weight_entry() -> ClaimResult:
    """F.1's step alpha M / t <= sigma0 for t in T1+1..t1: exact, symbolically and at every configuration run."""
    c_a, c_e, s0, M = sp.symbols("c_alpha c_eta sigma0 M", positive=True)
    eta, alpha = c_e * sp.sqrt(s0), c_a * sp.sqrt(s0)
    bound = sp.simplify(alpha * M / (M / eta))  # t > T1 >= M / eta
    worst = []
    for c in CONSTANTS:
        for x in SWEEP:
            cfg = config(x, c, termination=False)
            T1 = cfg.exploration_rounds
            # alpha M / t is largest at t = T1 + 1; as a fraction of sigma0, exactly in rationals of the floats.
            ratio = Fraction(cfg.alpha) * cfg.M / (T1 + 1) / Fraction(x)
            worst.append((ratio, c, x, T1, t1_round(x, c)))
    top = max(worst)
    holds = top[0] <= 1
    return exact_result(
        "lemma14", SOURCE14, "bound", "proof step: alpha M / t <= sigma0 on T1+1..t1",
        "confirmed" if holds else "refuted",
        f"sympy: for t > T1 >= M/eta, alpha M / t < alpha eta = {sp.sstr(bound)}, so alpha M / t <= sigma0 whenever "
        f"c_alpha c_eta <= 1 (an unstated condition on the hidden constants; the O(sigma0) conclusion does not need "
        f"it). At every configuration run (c in {list(CONSTANTS)}, sigma0 in {list(SWEEP)}) the largest alpha M / t "
        f"over the phase divided by sigma0 is {float(top[0]):.3f} (c = {top[1]:g}, sigma0 = {top[2]:g}, T1 = "
        f"{top[3]}, t1 = {top[4]}).",
        r"\alpha M / t \le \sigma_0,\ t \in \{T_1+1, \dots, t_1\}", role="proof step")


# ----------------------------------------------------------------------------- slips

_SLIPS = {
    ("lemma14", "statement"): ("lemma14.gradient_gap", SOURCE14, "false statement",
                               "||grad_m L_task - grad_{m_t} L_task||_inf = O(sigma0) on T1+1..t1"),
}


def slips(results: list[ClaimResult]) -> list[Slip]:
    """One slip per part refuted at every hidden constant (after reconciliation)."""
    return refuted_part_slips(results, _SLIPS)


register(__name__, Claim(
    id="lemma14", source=SOURCE14, kind="scaling",
    statement=r"\|\nabla_{\theta^{(m)}_t} L^t_{task} - \nabla_{\theta^{(m_t)}_t} L^t_{task}\|_\infty = O(\sigma_0),\ "
    r"t \in \{T_1+1, \dots, t_1\},\ m \ne m_t",
    preconditions=("gate keeps training", "Algorithm 1's scalings"),
    measure=measure_lemma14, slips=slips, interpretations=(NO_TERMINATION,),
    summary="During router learning, gate gradients of different experts differ by O(sigma0).",
    notes=PHASE_NOTES,
    shares=("router_phase",),
))
