"""Proposition 3 (Section 4; Appendix G): Algorithm 1 stops the gate, then routes uniformly within sets.

Proposition 3 (M > N version; full version in Appendix G, headed "Lemma 3
full version").  Under Algorithm 1 the MoE stops updating Theta_t from round
T2 = O(eta^-1 sigma0^-0.25 M).  Then for any task arrival n_t with t > T2 the
router chooses every expert m in M_{n_t} with the same probability
1/|M_{n_t}|.  The proof (G) uses, after termination: (1) for m in M_n,
m' in M_n', |h_m - h_m'| = Theta(sigma0^0.75), so no expert outside M_n is
ever chosen (the routing noise is only Theta(sigma0^1.25)); (2) for m, m' in
M_n, |h_m - h_m'| = O(Gamma) with Gamma = O(sigma0^1.25), "hence" P(m_t = m |
m in M_n) = 1/|M_n| because r ~ Uniform[0, lambda] with lambda = Theta(sigma0^1.25).

Expert sets, eq. (11): M_n = {m : n = argmax_j (theta_t^(m))^T v_j}.

How it is checked.  Algorithm 1 with its scalings (eta = alpha = c sigma0^0.5,
lambda = Gamma = c sigma0^1.25, T1 = ceil(M/eta), hidden constant c in
{1, 0.5}), N = 3, M = 6, d = 10, s = 6, v_n = w_n / sigma0, Definition 1
features, sigma0 in {0.4, 0.2, ..., 0.00625} (halving, 64x), T = T1 + 300; traced per
round (:mod:`numeric.gate_trace`; :mod:`packs.moe_cl.experiments.router_phase` holds the
shared runs, :mod:`packs.moe_cl.entries.router_phase` builds the evidence).

* prop3: (a) the freeze round T2 against O(sigma0^-0.75) (fitted exponent;
  the gate freezes a few rounds after T1, which makes the bound easy); (b) "no
  task routed outside M_{n_t} after T2" as a probability (the statement implies
  it: the probabilities 1/|M_{n_t}| over M_{n_t} sum to 1); (b) the routing
  counts within M_n after T2, per replicate a Pearson chi-square against 1/|M_n|
  summed over tasks (cells with expected count >= 5), p-value from scipy's
  chi-square tail (:func:`checks.stats.chi2_sf`); the event "this replicate's
  test does not reject at size CHI2_SIZE = 1%" as a probability (a true claim
  gives about 0.99, so the failure probability tends to the test's size, well
  below the rule's 0.05); the proof's two gap properties at the frozen gate as
  scaling entries (within-set gap O(sigma0^1.25), with its ratio to lambda;
  between-set gap Theta(sigma0^0.75)); and the proof's last step (equal
  probabilities from a gap O(lambda)) decided exactly in sympy; and step (G, 1) against the
  update rule's gate-gap bound (:mod:`packs.moe_cl.entries.derived_bounds`), exact: with T2 =
  O(eta^-1 sigma0^-0.25 M) as stated, every gap at the frozen gate is O(sigma0 log(1/sigma0)) under
  the reading c(t) = 1/t.

The probabilities are :class:`~checks.kinds.proportion.ProportionEvidence` with the "vanishing" rule, the fits
:class:`~checks.kinds.scaling.ScalingEvidence`, one entry per hidden constant; all are decided by the run's
error control (:mod:`checks.decide`), which also reconciles the two constants.  The chi-square's size
defines the per-replicate event; it is not the rate at which the entry is decided.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import sympy as sp

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments.gate_training import CONSTANTS
from moecl_verify.packs.moe_cl.experiments.router_phase import (
    PROBABILITY_RULE,
    SWEEP,
    algorithm1,
    by_sigma0,
    probability_rows,
)
from moecl_verify.packs.moe_cl.entries import derived_bounds
from moecl_verify.packs.moe_cl.entries.router_phase import (
    probability_entry,
    scaling_entry,
    share_range,
)
from moecl_verify.checks.kinds.scaling import ScalingEvidence
from moecl_verify.checks.model import ClaimResult, Interpretation, Slip, exact_result, keys_of
from moecl_verify.packs.moe_cl import texts
from moecl_verify.checks.registry import Claim, register
from moecl_verify.numeric.seeding import generator_for

SOURCE3 = "Section 4, Proposition 3; Appendix G ('Lemma 3 full version') and its proof"
# Size of each replicate's chi-square test of uniform routing: it defines the event 'this replicate's routing
# looks uniform' (probability about 1 - CHI2_SIZE under the claim); the entry is decided by the run's error control.
CHI2_SIZE = 0.01

TERMINATION, ROUTING_TEST = (
    Interpretation(
        id="prop3.termination",
        location="Proposition 3; Algorithm 1 lines 7-13",
        issue="T2 is the round Algorithm 1 stops the gate; the flag rule has options.",
        choice="The engine's defaults (sticky convergence marks, flags tested on the gate that routed the round): "
        "T2 = the round at which every expert has been within Gamma of a routed expert; Theta_t = Theta_T2 for "
        "t >= T2.",
    ),
    Interpretation(
        id="prop3.routing_test",
        location="Proposition 3 (1/|M_{n_t}|)",
        issue="Which sets, which rounds and which test for 'the same probability 1/|M_n|'.",
        choice="M_n by eq. (11) on the frozen gate; rounds t > T2; routing counts among M_n given the task landed in "
        "M_n (routing outside M_n is its own entry); per replicate Pearson's chi-square summed over tasks with "
        "|M_n| >= 2 and expected count >= 5 per expert; the event 'not rejected at 1%' as a 1 - o(1) probability.",
    ),
)


# ----------------------------------------------------------------------------- Proposition 3


def lower_choice_probability() -> sp.Expr:
    """P(the lower of two experts is routed) for gate gap g in [0, lambda] and r ~ Uniform[0, lambda] (eq. 1)."""
    g, lam, r1, r2 = sp.symbols("g lambda r1 r2", positive=True)
    # Expert 1 has h + g, expert 2 has h: expert 2 wins iff r2 > r1 + g, which needs r1 < lambda - g.
    inner = sp.integrate(1, (r2, r1 + g, lam))
    return sp.factor(sp.integrate(inner, (r1, 0, lam - g)) / lam**2)


def _uniform_step_entry() -> ClaimResult:
    g, lam = sp.symbols("g lambda", positive=True)
    prob = lower_choice_probability()
    at_gamma = sp.simplify(prob.subs(g, lam))  # Algorithm 1: Gamma and lambda are both c sigma0^1.25
    excess = sp.factor(prob - sp.Rational(1, 2))  # g (g - 2 lambda) / (2 lambda^2): zero on [0, lambda] only at g = 0
    spot = _spot_check(0.5)
    holds = sp.simplify(prob - sp.Rational(1, 2)) == 0
    return exact_result(
        "prop3", SOURCE3, "symbolic identity", "proof step: 1/|M_n| from a gap O(Gamma)",
        "confirmed" if holds else "refuted",
        f"sympy: two experts of M_n whose gate outputs differ by g in [0, lambda], noise r ~ Uniform[0, lambda]: "
        f"P(the lower one is routed) = {sp.sstr(prob)}, minus 1/2 = {sp.sstr(excess)}, zero on [0, lambda] only at "
        f"g = 0. "
        f"The proof has g = O(Gamma) with Gamma = O(sigma0^1.25) and lambda = Theta(sigma0^1.25): g/lambda is then "
        f"Theta(1) in general, not o(1); Algorithm 1 takes Gamma and lambda of the same order, and at g = Gamma = "
        f"lambda the probability is {sp.sstr(at_gamma)} (the lower expert is never routed). Equal probabilities "
        f"need within-set gaps o(lambda). Numeric spot check at g/lambda = 0.5: {spot:.4f} (formula "
        f"{float(prob.subs(g, lam / 2)):.4f}).",
        r"P(m_t = m \mid m \in \mathcal{M}_n) = 1/|\mathcal{M}_n| \text{ given } |h_m - h_{m'}| = O(\Gamma),\ "
        r"r \sim U[0, \lambda]",
        g_over_lambda_for_spot_check=0.5, role="proof step")


def _spot_check(ratio: float, draws: int = 200_000) -> float:
    """Monte Carlo of the lower expert's share at gap ratio * lambda (lambda = 1), fixed seed."""
    u = generator_for(0, "prop3", "spot").random((draws, 2))
    return float(np.mean(u[:, 1] > u[:, 0] + ratio))


def measure_prop3(ctx: Context) -> list:
    out = []
    for c in CONSTANTS:
        alg = {s0: algorithm1(ctx, s0, c) for s0 in SWEEP}
        fr = {s0: a.routing for s0, a in alg.items()}
        T2 = [f.T2[f.T2 > 0].astype(float) for f in fr.values()]
        freeze = {s0: {"T1": a.T1, "frozen_share": float((a.routing.T2 > 0).mean()),
                       "median_T2_minus_T1": float(np.median(a.routing.T2[a.routing.T2 > 0] - a.T1)),
                       "share_T2_eq_T1_plus_1": float((a.routing.T2 == a.T1 + 1).mean())}
                  for s0, a in alg.items()}
        desc = "; ".join(f"sigma0 = {s0:g}: T1 = {f['T1']}, median T2 - T1 = {f['median_T2_minus_T1']:g}, frozen at "
                         f"T1 + 1 in {f['share_T2_eq_T1_plus_1']:.0%}, frozen at all in {f['frozen_share']:.0%}"
                         for s0, f in freeze.items())
        out.append(scaling_entry(
            ctx, "prop3", SOURCE3, "(a) termination round T2", c, "O", -0.75, T2,
            r"T_2 = O(\eta^{-1}\sigma_0^{-0.25} M) = O(\sigma_0^{-0.75})", "freeze round T2 of Algorithm 1",
            extra={"freeze": by_sigma0(freeze, "")},
            note=f"Freeze rounds: {desc}. The gate freezes a few rounds after T1 = ceil(M/eta) = Theta(sigma0^-0.5), "
            "so T2 <= t1 and the O(sigma0^-0.75) bound holds trivially; the freeze comes before the router-learning "
            "phase in which Proposition 2 separates the expert sets."))
        shares = {s0: float(np.nanmean(f.outside_share)) for s0, f in fr.items()}
        out.append(probability_entry(
            ctx, "prop3", SOURCE3, "(b) every task routed inside M_n after T2", c,
            probability_rows({s0: ~f.any_outside[f.T2 > 0] for s0, f in fr.items()}),
            r"m_t \in \mathcal{M}_{n_t} \text{ for every } t > T_2",
            "no task is routed outside its eq. (11) set M_{n_t} after the gate froze (implied by the statement: the "
            "probabilities 1/|M_{n_t}| over M_{n_t} sum to 1)",
            extra={"outside": by_sigma0(shares, "mean_share_routed_outside")},
            note="Mean share of post-freeze rounds routed outside M_{n_t}: "
            + ", ".join(f"sigma0 = {s0:g}: {v:.2f}" for s0, v in shares.items()) + "."))
        tested = {s0: a.p_value[np.isfinite(a.p_value)] for s0, a in alg.items()}
        out.append(probability_entry(
            ctx, "prop3", SOURCE3, "(b) equal probability 1/|M_n| within M_n", c,
            probability_rows({s0: p > CHI2_SIZE for s0, p in tested.items()}),
            r"P(m_t = m \mid n_t = n, m_t \in \mathcal{M}_n) = 1/|\mathcal{M}_n|",
            "per replicate, the chi-square test of uniform routing within M_n after T2 is not rejected at 1% (a "
            "true claim gives about 0.99)", extra={"tested": by_sigma0({s0: int(p.size) for s0, p in tested.items()},
                                                     "replicates_with_a_testable_set")}))
        ratio = {s0: float(np.nanmedian(f.within_gap) / (c * s0**1.25)) for s0, f in fr.items()}
        out.append(_with_ratio_note(scaling_entry(
            ctx, "prop3", SOURCE3, "proof step (G, 2): within-set gap at T2 O(Gamma)", c, "O", 1.25,
            [f.within_gap for f in fr.values()],
            r"|h_m(v_n) - h_{m'}(v_n)| = O(\Gamma) = O(\sigma_0^{1.25}),\ m, m' \in \mathcal{M}_n",
            "mean within-set gate-output gap on the signals at the frozen gate",
            extra={"gap_over_lambda": by_sigma0(ratio, "median_within_gap_over_lambda")},
            note="Median within-set gap / lambda: " + ", ".join(f"sigma0 = {s0:g}: {v:.2f}" for s0, v in ratio.items())
            + "; equal routing probabilities need this ratio -> 0 (proof step entry).", role="proof step")))
        out.append(scaling_entry(
            ctx, "prop3", SOURCE3, "proof step (G, 1): between-set gap at T2 Theta(sigma0^0.75)", c, "Theta", 0.75,
            [f.between_gap for f in fr.values()],
            r"|h_m(v_n) - h_{m'}(v_n)| = \Theta(\sigma_0^{0.75}),\ m \in \mathcal{M}_n, m' \notin \mathcal{M}_n",
            "mean between-set gate-output gap on the signals at the frozen gate", role="proof step"))
    return out + [_uniform_step_entry(), update_bound_entry()]


def update_bound_entry() -> ClaimResult:
    """Step (G, 1) against the update rule's gate-gap bound (:mod:`packs.moe_cl.entries.derived_bounds`): with
    T2 = O(eta^-1 sigma0^-0.25 M) as the statement says, every gap at the frozen gate is O(sigma0 log(1/sigma0))
    under the reading c(t) = 1/t, which rules out Theta(sigma0^0.75).  Exact, no sampling."""
    use = derived_bounds.gate_gap_bound().use(derived_bounds.PROP3_CLAIM, derived_bounds.PROP3_PART)
    return derived_bounds.use_entry(
        use, SOURCE3, "scaling",
        r"|h_m(v_n) - h_{m'}(v_n)| \le B(T_2) \le B(C\,t_1) = O(\sigma_0\log(1/\sigma_0)) = o(\sigma_0^{0.75}),\ "
        r"m \in \mathcal{M}_n, m' \notin \mathcal{M}_n",
        r"Theta(sigma0^0.75) between sets at T2")


def _with_ratio_note(entry: ScalingEvidence) -> ScalingEvidence:
    """Add to the entry's note what the within-set gap's exponents say about the requirement of equal
    probabilities, gap = o(lambda), i.e. an exponent above lambda's 1.25: over the whole sweep (the fit's 99%
    bootstrap interval), and locally over the three smallest sigma0.  A remark only: the entry itself is the
    scaling law O(sigma0^1.25), decided by the run's error control."""
    lo, hi = entry.fit.low, entry.fit.high
    rows = sorted(entry.config["means"], key=lambda row: row["sigma0"])[:3]
    x, y = np.log([r["sigma0"] for r in rows]), np.log([r["mean"] for r in rows])
    local = float(np.polyfit(x, y, 1)[0])
    overall = ("lies above 1.25 (o(lambda) over the sweep)" if lo > 1.25 else
               "lies below 1.25 (the gap grows relative to lambda)" if hi < 1.25 else "contains 1.25")
    trend = "still falls" if local > 1.25 else "no longer falls (it levels off or grows)"
    return dataclasses.replace(entry, note=entry.note + f" Requirement of equal probabilities, gap = "
                               f"o(lambda): the exponent's 99% interval [{lo:.3f}, {hi:.3f}] {overall}; over the three "
                               f"smallest sigma0 the local exponent is {local:.2f}, so there gap / lambda {trend}.")


def prop3_slips(results: list[ClaimResult]) -> list[Slip]:
    out = []
    part = lambda r, p: r.key.part.startswith(p)  # noqa: E731
    outside = [r for r in results if part(r, "(b) every task routed inside")]
    between = [r for r in results if part(r, "proof step (G, 1)")]
    if outside and all(r.verdict == "refuted" for r in outside):
        gap = ("; the proof's property (1) fails at the frozen gate: " + " | ".join(r.evidence for r in between)
               if between and all(r.verdict == "refuted" for r in between) else "")
        out.append(Slip(
            id="prop3.routing_outside_sets",
            strength="reading", strength_note=texts.READING_TERMINATION,
            summary="After the gate freezes, a few rounds after exploration, tasks keep being routed outside their "
            "expert sets",
            entries=keys_of(outside),
            location="Section 4, Proposition 3; Appendix G (property 1 of the proof)",
            slip_class="false statement",
            stated="after T2 the router chooses each expert of M_{n_t} with probability 1/|M_{n_t}|; these "
            "probabilities sum to 1, so no task is routed outside M_{n_t} (the proof: between-set gaps are "
            "Theta(sigma0^0.75), far above the routing noise)",
            holds="Algorithm 1's gate freezes a few rounds after T1; after the freeze "
            f"{share_range(outside, 'outside', 'mean_share_routed_outside')} of the rounds route their task outside "
            "its expert set M_{n_t} of eq. (11) (over the sigma0 tried, with eta = alpha = sigma0^0.5 or half that), "
            "so the event 'no task outside M_{n_t}' has probability near 0",
            evidence=" | ".join(r.evidence for r in outside) + gap,
        ))
    uniform = [r for r in results if part(r, "(b) equal probability")]
    if uniform and all(r.verdict == "refuted" for r in uniform):
        out.append(Slip(
            id="prop3.non_uniform_within_sets",
            strength="reading", strength_note=texts.READING_TERMINATION,
            entries=keys_of(uniform),
            location="Section 4, Proposition 3; Appendix G",
            slip_class="false statement",
            stated="after T2 every expert of M_{n_t} is chosen with the same probability 1/|M_{n_t}|",
            holds="per replicate the routing counts within M_n after the freeze reject equal probabilities (chi-square "
            "at 1%) in a share of replicates that stays bounded away from 0 as sigma0 shrinks",
            evidence=" | ".join(r.evidence for r in uniform),
        ))
    use = derived_bounds.gate_gap_bound().use(derived_bounds.PROP3_CLAIM, derived_bounds.PROP3_PART)
    out += derived_bounds.use_slip(
        results, use, "prop3.between_set_gap_update_bound",
        "Appendix G, proof of 'Lemma 3' (Proposition 3), property (1): between-set gaps Theta(sigma0^0.75) after T2",
        "after termination at T2 = O(eta^-1 sigma0^-0.25 M), for m in M_n and m' in M_n' the gate-output gap "
        "|h_m - h_m'| is Theta(sigma0^0.75), far above the routing noise Theta(sigma0^1.25)",
        "the update rule's bound on every gate-output gap (Proposition 2's slip) applies at the frozen gate: the "
        "gate was updated in rounds <= T2 <= C t1 only, and the bound at C t1 is O(sigma0 log(1/sigma0)) = "
        "o(sigma0^0.75) for every fixed C, so the between-set gap at T2 is not Theta(sigma0^0.75) (reading c(t) = "
        "1/t of the auxiliary gradient)")
    step = [r for r in results if part(r, "proof step: 1/|M_n|")]
    if step and step[0].verdict == "refuted":
        out.append(Slip(
            id="prop3.equal_probability_step",
            entries=keys_of(step[:1]),
            location="Appendix G, proof of 'Lemma 3' (Proposition 3), the equation P(m_t = m | m in M_n) = 1/|M_n|",
            slip_class="false intermediate step",
            stated="P(m_t = m | m in M_n) = 1/|M_n| because r = Theta(sigma0^1.25) and the within-set gaps are "
            "O(sigma0^1.25) (= O(Gamma))",
            holds="with a gap g <= lambda between two experts, P(lower routed) = (lambda - g)^2 / (2 lambda^2), equal "
            "to 1/2 only at g = 0; a gap O(Gamma) with Gamma of lambda's order gives unequal probabilities (0 at "
            "g = lambda); equality needs gaps o(lambda). (Whether the measured within-set gaps are o(lambda), and how "
            "far the routing within sets is from uniform at the sigma0 tried, are the entries 'proof step (G, 2)' and "
            "'(b) equal probability' of prop3.)",
            evidence=step[0].evidence,
        ))
    return out


register(__name__, Claim(
    id="prop3", source=SOURCE3, kind="probability",
    statement=r"T_2 = O(\eta^{-1}\sigma_0^{-0.25}M);\ t > T_2:\ P(m_t = m) = 1/|\mathcal{M}_{n_t}|\ \forall m \in "
    r"\mathcal{M}_{n_t}",
    preconditions=("M > N", "Algorithm 1 with early termination",
                   "Gamma = O(sigma0^1.25), lambda = Theta(sigma0^1.25)"),
    measure=measure_prop3, slips=prop3_slips, interpretations=(PROBABILITY_RULE, TERMINATION, ROUTING_TEST),
    summary="The gate stops by T2 = O(M / (eta sigma0^0.25)); then routing is uniform within the task's expert set.",
    notes="Freeze-round exponent (scaling); routing after the freeze as probabilities per sigma0 (outside the set; "
    "chi-square of uniformity within it); the proof's gap properties at the frozen gate (scaling) and its "
    "equal-probability step (sympy).",
    shares=("router_phase",),
))
