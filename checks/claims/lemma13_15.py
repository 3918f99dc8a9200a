"""Lemmas 13, 14 and 15 (Appendix E.7, F.1, F.2): the router-learning phase, gate still training.

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

Lemma 14 (Appendix F).  For every t in {T1 + 1, ..., t1} and every m != m_t:
||grad_{theta^(m)_t} L_task - grad_{theta^(m_t)_t} L_task||_inf = O(sigma0).
Proof F.1 uses alpha M / t <= sigma0 for t in {T1 + 1, ..., t1}.

Lemma 15 (Appendix F, eq. 40).  For t in {T1 + 1, ..., t1} and any m in M_n,
m' in M_n', n != n' (M > N): pi_m(X_n, Theta_t) > pi_m'(X_n, Theta_t) and
pi_m'(X_n', Theta_t) > pi_m(X_n', Theta_t).  Proof F.2: by contradiction as in
E.8, using |pi_m(X_n, Theta_T1) - pi_m(X_n', Theta_T1)| = Omega(sigma0^0.5)
(Lemma 13) and |pi_m(X_n, Theta) - pi_m'(X_n, Theta)| = O(sigma0 eta^-0.5)
(eq. 38) throughout the phase.

Readings (interpretations below): X_n is the signal-only matrix [v_n, 0, ...,
0] of Lemma 1's proof (beta = 1), so pi_m(X_n, Theta) = softmax over experts
of theta_m^T v_n; Lemma 13's trailing "for all m in [M]" is read as the
premise's m in M_n (sets at Theta_{T1+1}), over the proof's range T1+2..t1
(the statement's T goes beyond what the proof covers); Lemma 15's sets are
those of eq. (11) at the round t itself.  No lemma states a probability; the
results they serve (Propositions 1 and 2) hold "with probability 1 - o(1)", so
the statements are checked as such events, per replicate over the whole phase.

How it is checked: the gate keeps training (no termination), Algorithm 1's
scalings with hidden constant c in {1, 0.5}, N = 3, M = 6, d = 10, s = 6,
v_n = w_n / sigma0, sigma0 in {0.4, 0.2, ..., 0.00625} (halving, 64x); for
sigma0 >= 0.025 these are the very runs of :mod:`checks.claims.prop2` at t1,
replayed per round by :mod:`numeric.phase_trace`.  Orderings: the fraction of
replicates in which they hold at every round of the phase and for every pair
(99% Wilson intervals, trend as sigma0 shrinks); asymptotic steps: fitted
exponents (:mod:`checks.scaling`); Lemma 14's proof step alpha M / t <=
sigma0: exact.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy as sp

from moecl_verify.checks.claims.prop2 import CONSTANTS
from moecl_verify.checks.claims.router_phase import (
    PROBABILITY_RULE,
    SWEEP,
    NO_TERMINATION,
    by_sigma0,
    probability_rows,
    config,
    phase,
    probability_entry,
    reconciled,
    scaling_entry,
    t1_round,
)
from moecl_verify.checks.context import Context
from moecl_verify.checks.model import ClaimResult, Interpretation, Slip, exact_result
from moecl_verify.checks.registry import Claim, register

SOURCE13 = "Appendix E, Lemma 13 (eq. 33) and proof E.7"
SOURCE14 = "Appendix F, Lemma 14 and proof F.1"
SOURCE15 = "Appendix F, Lemma 15 (eq. 40) and proof F.2"

SIGNAL_MATRIX, LEMMA13_READING, LEMMA15_SETS = (
    Interpretation(
        id="router_phase.signal_matrix",
        location="Lemmas 13 and 15 (X_n, X_n'); Lemma 1's proof (X~)",
        issue="'Feature matrices containing v_n' leaves the noise columns and beta_t open.",
        choice="The signal-only matrix X_n = [v_n, 0, ..., 0] of Lemma 1's proof with beta = 1: pi_m(X_n, Theta) = "
        "softmax over experts of theta_m^T v_n (Lemma 1: the noise columns move gate outputs by O(sigma0^1.5)).",
    ),
    Interpretation(
        id="lemma13.quantifier_and_range",
        location="Appendix E, Lemma 13 (eq. 33) and proof E.7",
        issue="The statement ends 'for all m in [M]' after assuming m in M_n, and states t in {T1+2, ..., T} while "
        "the proof reaches only t1.",
        choice="m ranges over M_n with M_n from eq. (11) at Theta_{T1+1}, every n' != n; rounds T1+2..t1 (the "
        "proof's range), gate still training; the event must hold at every round and for every such (m, n').",
    ),
    Interpretation(
        id="lemma15.sets",
        location="Appendix F, Lemma 15 (eq. 40)",
        issue="Whether M_n is taken at Theta_{T1+1} or at the round t.",
        choice="Eq. (11) at the round's gate Theta_t, for every t in {T1+1, ..., t1}; with the signal-only X_n, "
        "eq. (40) says that on every signal v_n each expert of M_n has a larger gate output than every expert "
        "outside M_n.",
    ),
)


# ----------------------------------------------------------------------------- entries


def _phases(ctx: Context, c: float) -> dict:
    return {s0: phase(ctx, s0, c) for s0 in SWEEP}


def _share_note(shares: dict[float, np.ndarray]) -> str:
    return "Mean share of rounds at which it holds: " + ", ".join(
        f"sigma0 = {s0:g}: {float(v.mean()):.3f}" for s0, v in shares.items()) + "."


def measure_lemma13(ctx: Context) -> list[ClaimResult]:
    out = []
    for c in CONSTANTS:
        ph = _phases(ctx, c)
        out.append(probability_entry(
            ctx, "lemma13", SOURCE13, "statement, t = T1+2..t1", c,
            probability_rows({s0: p.lemma13 for s0, p in ph.items()}),
            r"\pi_m(X_n, \Theta_t) > \pi_m(X_{n'}, \Theta_t),\ m \in \mathcal{M}_n(\Theta_{T_1+1}),\ n' \ne n,\ "
            r"t = T_1+2, \dots, t_1",
            "eq. (33) holds at every round T1+2..t1 for every expert m of M_n (sets at Theta_{T1+1}) and n' != n",
            note=_share_note({s0: p.lemma13_share for s0, p in ph.items()})))
        out.append(_scaling_or_sign(
            ctx, "lemma13", SOURCE13, "proof step (35): pi gap at T1 Omega(sigma0^0.5)", c, "Omega", 0.5,
            [p.pi_gap_T1 for p in ph.values()],
            r"\pi_m(X_n, \Theta_{T_1}) - \pi_m(X_{n'}, \Theta_{T_1}) = \Omega(\sigma_0^{0.5}),\ m \in \mathcal{M}_n",
            "mean over m in M_n (sets at Theta_T1) and n' != n of pi_m(X_n, Theta_T1) - pi_m(X_n', Theta_T1)"))
        out.append(scaling_entry(
            ctx, "lemma13", SOURCE13, "proof step: per-round signal step O(sigma0^1.5)", c, "O", 1.5,
            [p.signal_step for p in ph.values()],
            r"|\langle \theta^{(m)}_{t+1} - \theta^{(m)}_t, v_n \rangle| = O(\sigma_0^{1.5}),\ t \ge T_1 + 1",
            "largest per-round move of a gate output on a signal, over t = T1+1..t1, m, n"))
        out.append(scaling_entry(
            ctx, "lemma13", SOURCE13, "proof step: theta gap across sets at t1 O(sigma0 eta^-0.5)", c, "O", 0.75,
            [p.theta_gap_t1 for p in ph.values()],
            r"\|\theta^{(m)}_{t_1} - \theta^{(m')}_{t_1}\|_\infty = O(\sigma_0 \eta^{-0.5}) = O(\sigma_0^{0.75}),\ "
            r"m \in \mathcal{M}_n, m' \in \mathcal{M}_{n'}",
            "largest ||theta_m - theta_m'||_inf at Theta_t1 over experts in different eq. (11) sets"))
    return reconciled(out)


def _scaling_or_sign(ctx, claim_id, source, part, c, law, k, samples, formula, what) -> ClaimResult:
    """A scaling entry, or -- when a measured mean is not positive, so no power law fits -- a refutation of Omega."""
    means = [float(np.nanmean(s)) for s in samples]
    if all(m > 0 for m in means):
        return scaling_entry(ctx, claim_id, source, part, c, law, k, samples, formula, what)
    bad = ", ".join(f"sigma0 = {s0:g}: {m:.3g}" for s0, m in zip(SWEEP, means) if m <= 0)
    return exact_result(
        claim_id, source, "scaling", f"{part}, c = {c:g}", "refuted",
        f"{what}: the mean is not positive at {bad}, so it is not Omega(sigma0^{k}) (no positive lower bound).",
        formula, hidden_constant=c, measured=[{"sigma0": s0, "mean": m} for s0, m in zip(SWEEP, means)])


def measure_lemma14(ctx: Context) -> list[ClaimResult]:
    out = []
    for c in CONSTANTS:
        ph = _phases(ctx, c)
        out.append(scaling_entry(
            ctx, "lemma14", SOURCE14, "statement: gradient gap O(sigma0)", c, "O", 1.0,
            [p.grad_gap for p in ph.values()],
            r"\|\nabla_{\theta^{(m)}_t} L^t_{task} - \nabla_{\theta^{(m_t)}_t} L^t_{task}\|_\infty = O(\sigma_0),\ "
            r"t = T_1+1, \dots, t_1",
            "largest ||grad_m - grad_{m_t}||_inf over t = T1+1..t1 and m != m_t"))
    return reconciled(out) + [_aux_weight_entry()]


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
        r"\alpha M / t \le \sigma_0,\ t \in \{T_1+1, \dots, t_1\}",
    )


def measure_lemma15(ctx: Context) -> list[ClaimResult]:
    out = []
    for c in CONSTANTS:
        ph = _phases(ctx, c)
        out.append(probability_entry(
            ctx, "lemma15", SOURCE15, "statement, t = T1+1..t1", c,
            probability_rows({s0: p.lemma15 for s0, p in ph.items()}),
            r"\pi_m(X_n, \Theta_t) > \pi_{m'}(X_n, \Theta_t),\ m \in \mathcal{M}_n, m' \in \mathcal{M}_{n'},\ "
            r"t = T_1+1, \dots, t_1",
            "eq. (40) holds at every round T1+1..t1 for every n != n', m in M_n, m' in M_n' (sets at the round)",
            extra={"sets_at_T1_plus_1": by_sigma0({s0: float(p.lemma15_fixed_sets.mean()) for s0, p in ph.items()},
                                                  "probability")},
            note=_share_note({s0: p.lemma15_share for s0, p in ph.items()}) + " With the sets of Theta_{T1+1} "
            "instead (the other reading) it holds in a share of replicates of " + ", ".join(
                f"sigma0 = {s0:g}: {float(p.lemma15_fixed_sets.mean()):.3f}" for s0, p in ph.items()) + "."))
        out.append(scaling_entry(
            ctx, "lemma15", SOURCE15, "proof step (38): pi gap across sets O(sigma0 eta^-0.5)", c, "O", 0.75,
            [p.pi_gap_between for p in ph.values()],
            r"|\pi_m(X_n, \Theta_t) - \pi_{m'}(X_n, \Theta_t)| = O(\sigma_0\eta^{-0.5}),\ m \in \mathcal{M}_n, "
            r"m' \in \mathcal{M}_{n'}",
            "largest |pi_m(X_n) - pi_m'(X_n)| over t = T1+1..t1, n, m in M_n, m' outside M_n"))
    return reconciled(out)


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
    ("lemma14", "statement"): ("lemma14.gradient_gap", SOURCE14, "false statement",
                               "||grad_m L_task - grad_{m_t} L_task||_inf = O(sigma0) on T1+1..t1"),
    ("lemma15", "statement"): ("lemma15.ordering_fails", SOURCE15, "false statement",
                               "pi_m(X_n, Theta_t) > pi_m'(X_n, Theta_t) for m in M_n, m' in M_n', every round "
                               "T1+1..t1"),
    ("lemma15", "proof step (38)"): ("lemma15.eq38", SOURCE15, "wrong constant or exponent",
                                     "|pi_m(X_n) - pi_m'(X_n)| = O(sigma0 eta^-0.5) across sets in the phase"),
}


def _measured(r: ClaimResult) -> str:
    c = r.config["hidden_constant"]
    if r.kind == "scaling" and r.config.get("exponent_interval"):
        lo, hi = r.config["exponent_interval"]
        return f"c = {c:g}: fitted exponent {r.observed:.2f} (99% interval [{lo:.2f}, {hi:.2f}]) against {r.expected}"
    if r.kind == "probability":
        best = max(r.config["probabilities"], key=lambda row: row["probability"])
        return (f"c = {c:g}: probability {r.observed:.2f} at the smallest sigma0, at most {best['probability']:.2f} "
                f"(sigma0 = {best['sigma0']:g}) over the sweep")
    return f"c = {c:g}: {r.evidence}"


def slips(results: list[ClaimResult]) -> list[Slip]:
    """One slip per part refuted at every hidden constant (after reconciliation)."""
    out = []
    for (claim_id, prefix), (slip_id, location, klass, stated) in _SLIPS.items():
        hits = [r for r in results if r.id == claim_id and r.config["part"].startswith(prefix)]
        if hits and all(r.verdict == "refuted" for r in hits):
            out.append(Slip(id=slip_id, location=location, slip_class=klass, stated=stated,
                            holds="measured in the paper's setting, refuted at every hidden constant tried: "
                            + "; ".join(_measured(r) for r in hits),
                            evidence=" | ".join(r.evidence for r in hits)))
    return out


_NOTES = ("Gate still training (no termination), prop2's runs at t1 replayed per round; one entry per hidden constant "
          "c in {1, 0.5}; orderings as probabilities over replicates (99% Wilson), asymptotic steps as fitted "
          "exponents (99% bootstrap).")

register(Claim(
    id="lemma13", source=SOURCE13, kind="probability",
    statement=r"m \in \mathcal{M}_n \text{ at } T_1 + 1 \Rightarrow \pi_m(X_n, \Theta_t) > \pi_m(X_{n'}, \Theta_t),\ "
    r"t \in \{T_1+2, \dots, T\}",
    preconditions=("M > N", "n != n'", "gate keeps training", "Algorithm 1's scalings"),
    measure=measure_lemma13, slips=slips,
    interpretations=(SIGNAL_MATRIX, LEMMA13_READING, NO_TERMINATION, PROBABILITY_RULE),
    summary="An expert of M_n keeps preferring the signal v_n over any other signal during router learning.",
    notes=_NOTES,
))

register(Claim(
    id="lemma14", source=SOURCE14, kind="scaling",
    statement=r"\|\nabla_{\theta^{(m)}_t} L^t_{task} - \nabla_{\theta^{(m_t)}_t} L^t_{task}\|_\infty = O(\sigma_0),\ "
    r"t \in \{T_1+1, \dots, t_1\},\ m \ne m_t",
    preconditions=("gate keeps training", "Algorithm 1's scalings"),
    measure=measure_lemma14, slips=slips, interpretations=(NO_TERMINATION,),
    summary="During router learning, gate gradients of different experts differ by O(sigma0).",
    notes=_NOTES,
))

register(Claim(
    id="lemma15", source=SOURCE15, kind="probability",
    statement=r"\pi_m(X_n, \Theta_t) > \pi_{m'}(X_n, \Theta_t),\ "
    r"\pi_{m'}(X_{n'}, \Theta_t) > \pi_m(X_{n'}, \Theta_t),\ m \in \mathcal{M}_n, m' \in \mathcal{M}_{n'},\ "
    r"t \in \{T_1+1, \dots, t_1\}",
    preconditions=("M > N", "n != n'", "gate keeps training", "Algorithm 1's scalings"),
    measure=measure_lemma15, slips=slips,
    interpretations=(SIGNAL_MATRIX, LEMMA15_SETS, NO_TERMINATION, PROBABILITY_RULE),
    summary="During router learning, on every signal v_n the experts of M_n beat every expert outside M_n.",
    notes=_NOTES,
))
