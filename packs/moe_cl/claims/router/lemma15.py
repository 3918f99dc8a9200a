"""Lemma 15 (Appendix F.2): expert sets keep their order on the signals during router learning.

Notation: X_n, X_n' are feature matrices carrying the signals v_n, v_n';
pi_m(X, Theta) is the softmax of eq. (2); M_n the expert sets of eq. (11);
t1 = ceil(eta^-1 sigma0^-0.25 M).

Lemma 15 (Appendix F, eq. 40).  For t in {T1 + 1, ..., t1} and any m in M_n,
m' in M_n', n != n' (M > N): pi_m(X_n, Theta_t) > pi_m'(X_n, Theta_t) and
pi_m'(X_n', Theta_t) > pi_m(X_n', Theta_t).  Proof F.2: by contradiction as in
E.8, using |pi_m(X_n, Theta_T1) - pi_m(X_n', Theta_T1)| = Omega(sigma0^0.5)
(Lemma 13) and |pi_m(X_n, Theta) - pi_m'(X_n, Theta)| = O(sigma0 eta^-0.5)
(eq. 38) throughout the phase.

Readings (interpretations below): X_n is the signal-only matrix [v_n, 0, ...,
0] of Lemma 1's proof (beta = 1), so pi_m(X_n, Theta) = softmax over experts
of theta_m^T v_n; Lemma 15's sets are those of eq. (11) at the round t itself.
The lemma states no probability; the results it serves (Propositions 1 and 2)
hold "with probability 1 - o(1)", so the statement is checked as such an event,
per replicate over the whole phase.

How it is checked: the gate keeps training (no termination), Algorithm 1's
scalings with hidden constant c in {1, 0.5}, N = 3, M = 6, d = 10, s = 6,
v_n = w_n / sigma0, sigma0 in {0.4, 0.2, ..., 0.00625} (halving, 64x); for
sigma0 >= 0.025 these are the very runs of :mod:`packs.moe_cl.claims.router.prop2` at
t1 (:mod:`packs.moe_cl.experiments.gate_training`), replayed per round by
:mod:`numeric.gate_trace` (:mod:`packs.moe_cl.experiments.router_phase`, shared with
Lemmas 13 and 14).  The ordering: the fraction of replicates in which it holds
at every round of the phase and for every pair, per sigma0
(:class:`~checks.kinds.proportion.ProportionEvidence`, "vanishing" rule: 1 - o(1) as sigma0 shrinks); the proof
step (38): fitted exponent (:class:`~checks.kinds.scaling.ScalingEvidence`).  One entry per hidden constant,
decided by the run's error control (:mod:`checks.decide`), which also reconciles the two constants.
"""

from __future__ import annotations

import numpy as np

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments.gate_training import CONSTANTS
from moecl_verify.packs.moe_cl.experiments.router_phase import (
    NO_TERMINATION,
    PHASE_NOTES,
    PROBABILITY_RULE,
    SIGNAL_MATRIX,
    by_sigma0,
    phases,
    probability_rows,
)
from moecl_verify.packs.moe_cl.entries.router_phase import (
    probability_entry,
    refuted_part_slips,
    scaling_entry,
    share_note,
)
from moecl_verify.checks.model import ClaimResult, Interpretation, Slip
from moecl_verify.checks.registry import Claim, register

SOURCE15 = "Appendix F, Lemma 15 (eq. 40) and proof F.2"

LEMMA15_SETS = Interpretation(
    id="lemma15.sets",
    location="Appendix F, Lemma 15 (eq. 40)",
    issue="Whether M_n is taken at Theta_{T1+1} or at the round t.",
    choice="Eq. (11) at the round's gate Theta_t, for every t in {T1+1, ..., t1}; with the signal-only X_n, "
    "eq. (40) says that on every signal v_n each expert of M_n has a larger gate output than every expert "
    "outside M_n.",
)


# ----------------------------------------------------------------------------- entries


def lemma15_holds(margin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eq. (40) from its per-round margins (:func:`numeric.gate_trace.eq40_margin`, rounds T1+1..T): (holds at
    every round, share of rounds at which it holds) per replicate."""
    ok = margin > 0
    return ok.all(axis=1), ok.mean(axis=1)


def measure_lemma15(ctx: Context) -> list:
    out = []
    for c in CONSTANTS:
        ph = phases(ctx, c)
        holds = {s0: lemma15_holds(p.eq40_margin) for s0, p in ph.items()}
        fixed = {s0: lemma15_holds(p.eq40_margin_fixed_sets)[0] for s0, p in ph.items()}
        out.append(probability_entry(
            ctx, "lemma15", SOURCE15, "statement, t = T1+1..t1", c,
            probability_rows({s0: every for s0, (every, _) in holds.items()}),
            r"\pi_m(X_n, \Theta_t) > \pi_{m'}(X_n, \Theta_t),\ m \in \mathcal{M}_n, m' \in \mathcal{M}_{n'},\ "
            r"t = T_1+1, \dots, t_1",
            "eq. (40) holds at every round T1+1..t1 for every n != n', m in M_n, m' in M_n' (sets at the round)",
            extra={"sets_at_T1_plus_1": by_sigma0({s0: float(f.mean()) for s0, f in fixed.items()},
                                                  "probability")},
            note=share_note({s0: share for s0, (_, share) in holds.items()}) + " With the sets of Theta_{T1+1} "
            "instead (the other reading) it holds in a share of replicates of " + ", ".join(
                f"sigma0 = {s0:g}: {float(f.mean()):.3f}" for s0, f in fixed.items()) + "."))
        out.append(scaling_entry(
            ctx, "lemma15", SOURCE15, "proof step (38): pi gap across sets O(sigma0 eta^-0.5)", c, "O", 0.75,
            [p.pi_gap_between for p in ph.values()],
            r"|\pi_m(X_n, \Theta_t) - \pi_{m'}(X_n, \Theta_t)| = O(\sigma_0\eta^{-0.5}),\ m \in \mathcal{M}_n, "
            r"m' \in \mathcal{M}_{n'}",
            "largest |pi_m(X_n) - pi_m'(X_n)| over t = T1+1..t1, n, m in M_n, m' outside M_n", role="proof step"))
    return out


# ----------------------------------------------------------------------------- slips

_SLIPS = {
    ("lemma15", "statement"): ("lemma15.ordering_fails", SOURCE15, "false statement",
                               "pi_m(X_n, Theta_t) > pi_m'(X_n, Theta_t) for m in M_n, m' in M_n', every round "
                               "T1+1..t1"),
    ("lemma15", "proof step (38)"): ("lemma15.eq38", SOURCE15, "wrong constant or exponent",
                                     "|pi_m(X_n) - pi_m'(X_n)| = O(sigma0 eta^-0.5) across sets in the phase"),
}


def slips(results: list[ClaimResult]) -> list[Slip]:
    """One slip per part refuted at every hidden constant (after reconciliation)."""
    return refuted_part_slips(results, _SLIPS)


register(__name__, Claim(
    id="lemma15", source=SOURCE15, kind="probability",
    statement=r"\pi_m(X_n, \Theta_t) > \pi_{m'}(X_n, \Theta_t),\ "
    r"\pi_{m'}(X_{n'}, \Theta_t) > \pi_m(X_{n'}, \Theta_t),\ m \in \mathcal{M}_n, m' \in \mathcal{M}_{n'},\ "
    r"t \in \{T_1+1, \dots, t_1\}",
    preconditions=("M > N", "n != n'", "gate keeps training", "Algorithm 1's scalings"),
    measure=measure_lemma15, slips=slips,
    interpretations=(SIGNAL_MATRIX, LEMMA15_SETS, NO_TERMINATION, PROBABILITY_RULE),
    summary="During router learning, on every signal v_n the experts of M_n beat every expert outside M_n.",
    notes=PHASE_NOTES,
    shares=("router_phase",),
))
