"""Proposition 1 (Section 4; Appendix E): what Algorithm 1 does after exploration.

Proposition 1 (M > N version; full version in Appendix E, headed "Lemma 1
full version"; final proof E.8).  Under Algorithm 1, with probability at
least 1 - o(1), for any t > T1 with T1 = ceil(eta^-1 M), every expert
m in [M] stays in one expert set M_n and its model no longer changes:
w^(m)_{T1+1} = ... = w^(m)_T.

Expert sets, eq. (11): M_n = {m : n = argmax_j (theta_t^(m))^T v_j}.

How it is checked.  Algorithm 1 with its scalings (eta = alpha = c sigma0^0.5,
lambda = Gamma = c sigma0^1.25, T1 = ceil(M/eta), hidden constant c in
{1, 0.5}), N = 3, M = 6, d = 10, s = 6, v_n = w_n / sigma0, Definition 1
features, sigma0 in {0.4, 0.2, ..., 0.00625} (halving, 64x), T = T1 + 300; traced per
round (:mod:`numeric.gate_trace`; :mod:`packs.moe_cl.experiments.router_phase` holds the
shared runs, :mod:`packs.moe_cl.entries.router_phase` builds the evidence).

* prop1, probability entries ("1 - o(1)": probability per sigma0 and its trend
  as sigma0 shrinks, :class:`~checks.kinds.proportion.ProportionEvidence` with the
  "vanishing" rule, one entry per hidden constant, decided by the run's error
  control in :mod:`checks.decide`, which also reconciles the constants): (a) the
  eq. (11) set of every expert is the same at every Theta_t, t = T1+1..T; (a,
  routed reading) after T1 each expert is routed tasks of a single n only; (b)
  every expert's model is unchanged in rounds T1+2..T (a move of squared size
  <= 1e-20 times mean ||w_n||^2 counts as no move); and (a) in the proof's
  setting, the gate still training (no termination) over the router-learning
  phase T1+1..t1.
"""

from __future__ import annotations

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments.gate_training import CONSTANTS
from moecl_verify.packs.moe_cl.experiments.router_phase import (
    NO_TERMINATION,
    POST_T1,
    PROBABILITY_RULE,
    SWEEP,
    algorithm1,
    by_sigma0,
    phase,
    probability_rows,
)
from moecl_verify.packs.moe_cl.entries.router_phase import (
    probability_entry,
    share_range,
)
from moecl_verify.checks.model import ClaimResult, Interpretation, Slip, keys_of
from moecl_verify.checks.registry import Claim, register

SOURCE1 = "Section 4, Proposition 1; Appendix E ('Lemma 1 full version'), proof E.8"

SET_READING, UNCHANGED = (
    Interpretation(
        id="prop1.set_reading",
        location="Proposition 1; Appendix E",
        issue="'Each expert stays in one expert set M_n' can mean the eq. (11) set computed from theta_t, or the set "
        "of tasks the expert is actually routed.",
        choice="Main reading: the eq. (11) set of every expert is the same for every Theta_t, t = T1+1..T. The routed "
        "reading (after T1 each expert receives tasks of one n only) is reported as its own entry.",
    ),
    Interpretation(
        id="prop1.unchanged",
        location="Proposition 1, w_{T1+1} = ... = w_T",
        issue="Equality of floating-point expert models.",
        choice="A round's move of squared size <= 1e-20 mean ||w_n||^2 counts as no move (an exact fixed point of "
        "eq. (5) moves by less than 1e-28 of it in double precision); horizon T = T1 + 300.",
    ),
)


def measure_prop1(ctx: Context) -> list:
    out = []
    for c in CONSTANTS:
        alg = {s0: algorithm1(ctx, s0, c) for s0 in SWEEP}
        ph = {s0: phase(ctx, s0, c) for s0 in SWEEP}
        horizon = {"T": f"T1 + {POST_T1}", "replicates": int(alg[SWEEP[0]].stable.size)}
        moved = {s0: float(a.moved_share.mean()) for s0, a in alg.items()}
        moves = ", ".join(f"sigma0 = {s0:g}: {moved[s0]:.2f} (median squared move / mean ||w_n||^2 "
                          f"{a.median_relative_move:.2g})" for s0, a in alg.items())
        out += [
            probability_entry(
                ctx, "prop1", SOURCE1, "(a) eq. (11) sets fixed for t > T1, Algorithm 1", c,
                probability_rows({s0: a.stable for s0, a in alg.items()}),
                r"M_n(\Theta_t) \text{ the same for } t = T_1+1, \dots, T", "every expert's eq. (11) set is the same "
                "at every Theta_t, t = T1+1..T, under Algorithm 1 with termination", extra=horizon,
                note="With termination the gate freezes a few rounds after T1 (claim prop3), so this event only "
                "concerns the rounds up to the freeze."),
            probability_entry(
                ctx, "prop1", SOURCE1, "(a) routed reading: one task per expert after T1", c,
                probability_rows({s0: a.routed_single for s0, a in alg.items()}),
                r"\{n_t : m_t = m,\ t > T_1\} \text{ has one element for every } m",
                "after T1 each expert is routed tasks of a single n (Algorithm 1 with termination)",
                extra={**horizon, "reading": "routed"}),
            probability_entry(
                ctx, "prop1", SOURCE1, "(b) models unchanged after T1+1", c,
                probability_rows({s0: a.unchanged for s0, a in alg.items()}),
                r"\mathbf{w}^{(m)}_{T_1+1} = \cdots = \mathbf{w}^{(m)}_T \ \forall m",
                "no expert model moves in rounds T1+2..T (Algorithm 1 with termination)",
                extra={**horizon, "moves": by_sigma0(moved, "share_of_rounds_with_a_move")},
                note=f"Share of rounds T1+2..T in which the routed expert moved: {moves}. The proof (E.8) gets "
                "'unchanged' from Lemma 3, which is false: eq. (5) moves the routed expert by P_t (w_n - w_{t-1}) "
                "unless it already equals w_n (claim lemma3)."),
            probability_entry(
                ctx, "prop1", SOURCE1, "(a) sets fixed over T1+1..t1, gate still training", c,
                probability_rows({s0: p.stable for s0, p in ph.items()}),
                r"M_n(\Theta_t) \text{ the same for } t = T_1+1, \dots, t_1 \text{ (no termination)}",
                "every expert's eq. (11) set is the same at every Theta_t, t = T1+1..t1, with the gate still "
                "training (the router-learning phase the proof's Lemma 13 covers; prop2's runs)",
                extra={"T": "t1 = ceil(M / (eta sigma0^0.25))", "replicates": int(ph[SWEEP[0]].stable.size)}),
        ]
    return out


def prop1_slips(results: list[ClaimResult]) -> list[Slip]:
    moved = [r for r in results if r.key.part.startswith("(b)")]
    if not moved or any(r.verdict != "refuted" for r in moved):
        return []
    return [Slip(
        id="prop1.models_keep_moving",
        causes=("lemma3.expert_moves",),
        entries=keys_of(moved),
        location="Section 4, Proposition 1; Appendix E ('Lemma 1 full version'), proof E.8 (last step, via Lemma 3)",
        slip_class="false statement",
        stated="with probability 1 - o(1) every expert model stays unchanged after T1: w_{T1+1} = ... = w_T",
        holds="the routed expert moves by P_t (w_{n_t} - w_{t-1}) in every round where it is not already at w_{n_t}; "
        "an expert that learned more than one task during exploration keeps moving (toward the ground truth of the "
        f"tasks it now receives): it moved in {share_range(moved, 'moves', 'share_of_rounds_with_a_move')} of the "
        "rounds T1+2..T (over the sigma0 tried, with eta = alpha = sigma0^0.5 or half that), so the event has probability near 0 at every sigma0 tried",
        evidence=" | ".join(r.evidence for r in moved),
    )]


register(__name__, Claim(
    id="prop1", source=SOURCE1, kind="probability",
    statement=r"\Pr\big[\forall t > T_1:\ m \text{ stays in one } \mathcal{M}_n,\ \mathbf{w}^{(m)}_{T_1+1} = \cdots = "
    r"\mathbf{w}^{(m)}_T\big] \ge 1 - o(1)",
    preconditions=("M > N", "Algorithm 1 with its scalings", "T1 = ceil(M / eta)"),
    measure=measure_prop1, slips=prop1_slips,
    interpretations=(SET_READING, UNCHANGED, PROBABILITY_RULE, NO_TERMINATION),
    summary="After T1 every expert stays in one expert set and its model stops changing.",
    notes="Probabilities per sigma0 in [0.00625, 0.4] with 99% Wilson intervals, one entry per hidden constant c in "
    "{1, 0.5}; the trend rule is in the interpretation router_phase.probability_rule.",
    shares=("router_phase",),
))
