"""Lemma 13 (Appendix E.7): the router-learning phase, gate still training.

Notation: X_n, X_n' are feature matrices carrying the signals v_n, v_n';
pi_m(X, Theta) is the softmax of eq. (2); M_n the expert sets of eq. (11);
t1 = ceil(eta^-1 sigma0^-0.25 M).

Lemma 13 (Appendix E, eq. 33).  If n != n' (M > N) and expert m is in M_n at
the start of the router-learning phase t = T1 + 1, then for every round
t in {T1 + 2, ..., T}: pi_m(X_n, Theta_t) > pi_m(X_n', Theta_t), "for all m in
[M]".  Proof E.7: from eq. (35), pi_m(X_n, Theta_T1) - pi_m(X_n', Theta_T1) =
Omega(sigma0^0.5) for m in M_n; by Lemma 5 each round moves
<theta^(m)_{t+1} - theta^(m)_t, v_n> by O(sigma0^1.5); so for m in M_n,
m' in M_n', ||theta^(m)_t1 - theta^(m')_t1||_inf <= O(sigma0 eta^-0.5) +
O(eta^-1 sigma0^-0.25) O(sigma0^1.5) = O(sigma0 eta^-0.5); "hence" eq. (33) for
t in {T1 + 2, ..., t1}.

Readings (interpretations below): X_n is the signal-only matrix [v_n, 0, ...,
0] of Lemma 1's proof (beta = 1), so pi_m(X_n, Theta) = softmax over experts
of theta_m^T v_n; Lemma 13's trailing "for all m in [M]" is read as the
premise's m in M_n (sets at Theta_{T1+1}), over the proof's range T1+2..t1
(the statement's T goes beyond what the proof covers).  The lemma states no
probability; the results it serves (Propositions 1 and 2) hold "with
probability 1 - o(1)", so the statement is checked as such an event, per
replicate over the whole phase.

How it is checked (shared with Lemmas 14 and 15): the gate keeps training (no
termination), Algorithm 1's scalings with hidden constant c in {1, 0.5}, N = 3,
M = 6, d = 10, s = 6, v_n = w_n / sigma0, sigma0 in {0.4, 0.2, ..., 0.00625}
(halving, 64x); for sigma0 >= 0.025 these are the very runs of
:mod:`packs.moe_cl.claims.router.prop2` at t1 (:mod:`packs.moe_cl.experiments.gate_training`),
replayed per round by :mod:`numeric.gate_trace`
(:mod:`packs.moe_cl.experiments.router_phase`).  The ordering: the fraction of
replicates in which it holds at every round of the phase and for every pair,
per sigma0 (:class:`~checks.kinds.proportion.ProportionEvidence` with the "vanishing" rule: 1 - o(1) as sigma0
shrinks); the proof's asymptotic steps: fitted exponents (:class:`~checks.kinds.scaling.ScalingEvidence`).
Beside the measurements, eq. (35) is decided exactly against the update rule's gate-gap bound
(:mod:`packs.moe_cl.entries.derived_bounds`; reading c(t) = 1/t): T1 <= t1, and a softmax gap of one
expert on two inputs is at most half the largest gate-output gap, so it is o(sigma0^0.5).
Where a measured mean of eq. (35)'s gap is not positive, no power law fits, and the step is instead the
criterion "the mean gap is positive at every sigma0" (a :class:`~checks.kinds.mean.Measurement` with
``rule="positive"``), since Omega(sigma0^0.5) needs a positive lower bound.  Every entry is decided by
the run's error control (:mod:`checks.decide`), which also reconciles the entries of the two hidden
constants.
"""

from __future__ import annotations

import numpy as np

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments.gate_training import BASE, CONSTANTS
from moecl_verify.packs.moe_cl.experiments.router_phase import (
    NO_TERMINATION,
    PHASE_NOTES,
    PROBABILITY_RULE,
    SIGNAL_MATRIX,
    SWEEP,
    phases,
    probability_rows,
)
from moecl_verify.packs.moe_cl.entries import derived_bounds
from moecl_verify.packs.moe_cl.entries.router_phase import (
    probability_entry,
    refuted_part_slips,
    scaling_entry,
    share_note,
)
from moecl_verify.checks import stats
from moecl_verify.checks.model import ClaimResult, Interpretation, Slip, exact_result
from moecl_verify.checks.kinds.mean import HorizonTest, Measurement
from moecl_verify.checks.registry import Claim, register

SOURCE13 = "Appendix E, Lemma 13 (eq. 33) and proof E.7"

LEMMA13_READING = Interpretation(
    id="lemma13.quantifier_and_range",
    location="Appendix E, Lemma 13 (eq. 33) and proof E.7",
    issue="The statement ends 'for all m in [M]' after assuming m in M_n, and states t in {T1+2, ..., T} while "
    "the proof reaches only t1.",
    choice="m ranges over M_n with M_n from eq. (11) at Theta_{T1+1}, every n' != n; rounds T1+2..t1 (the "
    "proof's range), gate still training; the event must hold at every round and for every such (m, n').",
)


# ----------------------------------------------------------------------------- entries


def lemma13_holds(margin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eq. (33) from its per-round margins (:func:`numeric.gate_trace.eq33_margin`, rounds T1+2..T, sets at
    Theta_{T1+1}): (holds at every round, share of rounds at which it holds) per replicate; no round in range
    counts as holding."""
    if margin.shape[1] == 0:
        return np.ones(margin.shape[0], dtype=bool), np.ones(margin.shape[0])
    ok = margin > 0
    return ok.all(axis=1), ok.mean(axis=1)


def measure_lemma13(ctx: Context) -> list:
    out = []
    for c in CONSTANTS:
        ph = phases(ctx, c)
        holds = {s0: lemma13_holds(p.eq33_margin) for s0, p in ph.items()}
        out.append(probability_entry(
            ctx, "lemma13", SOURCE13, "statement, t = T1+2..t1", c,
            probability_rows({s0: every for s0, (every, _) in holds.items()}),
            r"\pi_m(X_n, \Theta_t) > \pi_m(X_{n'}, \Theta_t),\ m \in \mathcal{M}_n(\Theta_{T_1+1}),\ n' \ne n,\ "
            r"t = T_1+2, \dots, t_1",
            "eq. (33) holds at every round T1+2..t1 for every expert m of M_n (sets at Theta_{T1+1}) and n' != n",
            note=share_note({s0: share for s0, (_, share) in holds.items()})))
        out.append(_scaling_or_sign(
            ctx, "lemma13", SOURCE13, "proof step (35): pi gap at T1 Omega(sigma0^0.5)", c, "Omega", 0.5,
            [p.pi_gap_T1 for p in ph.values()],
            r"\pi_m(X_n, \Theta_{T_1}) - \pi_m(X_{n'}, \Theta_{T_1}) = \Omega(\sigma_0^{0.5}),\ m \in \mathcal{M}_n",
            "mean over m in M_n (sets at Theta_T1) and n' != n of pi_m(X_n, Theta_T1) - pi_m(X_n', Theta_T1)",
            role="proof step"))
        out.append(scaling_entry(
            ctx, "lemma13", SOURCE13, "proof step: per-round signal step O(sigma0^1.5)", c, "O", 1.5,
            [p.signal_step for p in ph.values()],
            r"|\langle \theta^{(m)}_{t+1} - \theta^{(m)}_t, v_n \rangle| = O(\sigma_0^{1.5}),\ t \ge T_1 + 1",
            "largest per-round move of a gate output on a signal, over t = T1+1..t1, m, n", role="proof step"))
        out.append(scaling_entry(
            ctx, "lemma13", SOURCE13, "proof step: theta gap across sets at t1 O(sigma0 eta^-0.5)", c, "O", 0.75,
            [p.theta_gap_t1 for p in ph.values()],
            r"\|\theta^{(m)}_{t_1} - \theta^{(m')}_{t_1}\|_\infty = O(\sigma_0 \eta^{-0.5}) = O(\sigma_0^{0.75}),\ "
            r"m \in \mathcal{M}_n, m' \in \mathcal{M}_{n'}",
            "largest ||theta_m - theta_m'||_inf at Theta_t1 over experts in different eq. (11) sets", role="proof step"))
    return out + [update_bound_entry()]


def update_bound_entry() -> ClaimResult:
    """Eq. (35)'s Omega(sigma0^0.5) softmax gap against the update rule's gate-gap bound
    (:mod:`packs.moe_cl.entries.derived_bounds`): T1 <= t1, and a softmax gap of one expert on two inputs is at
    most half the largest gate-output gap, so it is O(sigma0 log(1/sigma0)) = o(sigma0^0.5) under the reading
    c(t) = 1/t.  Exact, no sampling."""
    use = derived_bounds.gate_gap_bound().use(derived_bounds.LEMMA13_CLAIM, derived_bounds.LEMMA13_PART)
    return derived_bounds.use_entry(
        use, SOURCE13, "scaling",
        r"|\pi_m(X_n, \Theta_t) - \pi_m(X_{n'}, \Theta_t)| \le B(t_1)/2 = O(\sigma_0\log(1/\sigma_0)) = "
        r"o(\sigma_0^{0.5}),\ t \le t_1",
        r"Omega(sigma0^0.5) at T1 (eq. 35), carried to every t >= T1 + 1 by proof E.7")


def _scaling_or_sign(ctx, claim_id, source, part, c, law, k, samples, formula, what, role="statement"):
    """A scaling entry's evidence, or -- when a measured mean is not positive, so no power law fits -- the
    criterion "the mean is positive at every sigma0" (Omega needs a positive lower bound), as a
    :class:`Measurement` with ``rule="positive"``: refuted by the run's error control only where a mean is
    significantly negative."""
    means = [float(np.nanmean(s)) for s in samples]
    if all(m > 0 for m in means):
        return scaling_entry(ctx, claim_id, source, part, c, law, k, samples, formula, what, role=role)
    clean = [np.asarray(s, dtype=float)[np.isfinite(s)] for s in samples]
    config = {"features": BASE["features"], "part": part, "role": role, **BASE, "hidden_constant": c,
              "seed": ctx.seed, "measured": [{"sigma0": s0, "mean": m} for s0, m in zip(SWEEP, means)]}
    if any(x.size < 2 for x in clean):
        return exact_result(
            claim_id, source, "scaling", config.pop("part"), "inconclusive",
            f"{what}: the mean is not positive at some sigma0, and a sigma0 has fewer than 2 measured replicates, "
            "so the sign cannot be tested.", formula, **{key: v for key, v in config.items() if key != "features"})
    return Measurement(
        claim_id=claim_id, source=source, kind="scaling", form="stated", config=config,
        tests=tuple(HorizonTest(f"sigma0={s0:g}", stats.mean_test(x, 0.0)) for s0, x in zip(SWEEP, clean)),
        scale=1.0, rule="positive", horizon_name="case",
        formula=f"{what} > 0 at every sigma0 (Omega(sigma0^{k}) needs a positive lower bound; no power law fits "
        "a mean that is not positive)")


# ----------------------------------------------------------------------------- slips

_SLIPS = {
    ("lemma13", "statement"): ("lemma13.ordering_fails", SOURCE13, "false statement",
                               "pi_m(X_n, Theta_t) > pi_m(X_n', Theta_t) for m in M_n (sets at T1+1), every round of "
                               "the router-learning phase"),
    ("lemma13", "proof step (35)"): ("lemma13.eq35_gap_exponent", "Appendix E, eq. (35) as used in proof E.7 (and E.8)",
                                     "wrong constant or exponent",
                                     "pi_m(X_n, Theta_T1) - pi_m(X_n', Theta_T1) = Omega(sigma0^0.5) for m in M_n "
                                     "(E.8 derives this Omega from an O() bound on |h_m(X_n) - h_m(X_n')|)"),
    ("lemma13", "proof step: per-round"): ("lemma13.signal_step", SOURCE13, "wrong constant or exponent",
                                           "<theta_{t+1} - theta_t, v_n> = O(sigma0^1.5) per round after T1"),
    ("lemma13", "proof step: theta gap"): ("lemma13.theta_gap", SOURCE13, "wrong constant or exponent",
                                           "||theta_m(t1) - theta_m'(t1)||_inf = O(sigma0 eta^-0.5) across sets"),
}


def slips(results: list[ClaimResult]) -> list[Slip]:
    """One slip per part refuted at every hidden constant (after reconciliation)."""
    use = derived_bounds.gate_gap_bound().use(derived_bounds.LEMMA13_CLAIM, derived_bounds.LEMMA13_PART)
    return refuted_part_slips(results, _SLIPS) + derived_bounds.use_slip(
        results, use, "lemma13.eq35_update_bound", "Appendix E, eq. (35) as used in proof E.7 (and E.8)",
        "pi_m(X_n, Theta_T1) - pi_m(X_n', Theta_T1) = Omega(sigma0^0.5) for m in M_n, and (proof E.7) the same "
        "for every t >= T1 + 1",
        "the update rule's bound on every gate-output gap (Proposition 2's slip) covers the router-learning phase "
        "(T1 <= t1), and a softmax gap of one expert on two inputs is at most half the largest gate-output gap, so "
        "the gap is O(sigma0 log(1/sigma0)) = o(sigma0^0.5) (reading c(t) = 1/t of the auxiliary gradient)")


register(__name__, Claim(
    id="lemma13", source=SOURCE13, kind="probability",
    statement=r"m \in \mathcal{M}_n \text{ at } T_1 + 1 \Rightarrow \pi_m(X_n, \Theta_t) > \pi_m(X_{n'}, \Theta_t),\ "
    r"t \in \{T_1+2, \dots, T\}",
    preconditions=("M > N", "n != n'", "gate keeps training", "Algorithm 1's scalings"),
    measure=measure_lemma13, slips=slips,
    interpretations=(SIGNAL_MATRIX, LEMMA13_READING, NO_TERMINATION, PROBABILITY_RULE),
    summary="An expert of M_n keeps preferring the signal v_n over any other signal during router learning.",
    notes=PHASE_NOTES,
    shares=("router_phase",),
))
