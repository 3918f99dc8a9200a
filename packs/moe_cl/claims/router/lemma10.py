"""Lemma 10 (Appendix E): the softmax gap against the output gap.

Lemma 10 (statement).  With delta_Theta = |h_m(X_t, theta^(m)_t) - h_m'(X_t, theta^(m)_t)| (line ~433):
at any round t, if delta_Theta is close to 0, |pi_m(X_t, Theta_t) - pi_m'(X_t, Theta_t)| = O(delta_Theta);
otherwise |pi_m - pi_m'| = Omega(delta_Theta).
Proof (E.4): |pi_m - pi_m'| = pi_m' |exp(h_m - h_m' - pi_m') - 1| "by solving eq. (2)"; for small delta a
Taylor expansion gives ~ pi_m' |h_m - h_m'| = O(delta) "because pi_m <= 1"; otherwise
|pi_m - pi_m'| > pi_m' |h_m - h_m'| = Omega(delta).

Readings.  The definition of delta_Theta evaluates both outputs at theta^(m); read as h_m' at theta^(m')
(the proof uses h_m' at theta^(m')).  "Omega(delta) otherwise" has two readings, each its own entry:
* uniform ("statement.Omega (uniform)"): there is c > 0 with |pi_m - pi_m'| >= c delta whenever delta is bounded
  away from 0, uniformly over all gates (any gate outputs) and inputs;
* regime ("statement.Omega (regime)"): in the regime the paper works in, every gate output tending to 0
  (|h| = O(sigma0^k), as Lemma 6's theta = O(sigma0^0.5) gives in Algorithm 1's exploration, or simply h -> 0),
  |pi_m - pi_m'| / delta is bounded below by a positive constant along every such path.

What eq. (2) gives (sympy): pi_m - pi_m' = pi_m' (e^{h_m - h_m'} - 1) = (pi_m + pi_m') tanh((h_m - h_m')/2).
Hence |pi_m - pi_m'| <= tanh(delta/2) <= delta/2 for every delta (the O part holds globally), while the
ratio |pi_m - pi_m'| / delta tends to 0 both as delta grows (saturation) and as a third expert's output
grows (pi_m + pi_m' -> 0): the Omega part fails under the uniform reading.  When every output tends to 0
(:mod:`theory.softmax_gap`): for ||h||_inf <= r, tanh(r) / (r (2 + (M-2) e^{2r})) <= |pi_m - pi_m'| / delta
<= 1 / (2 + (M-2) e^{-2r}), both sides -> 1/M, so the ratio -> 1/M along every path with h -> 0 and the Omega
part holds under the regime reading (with a constant depending on M only).  The proof's identity has a
spurious "- pi_m'" in the exponent, and its lower bound pi_m' delta holds only when h_m > h_m'.

How it is checked: sympy identities and limits, exact counterexamples, a numeric spot check (recorded in the
evidence text; no verdict rests on it).  Every entry is exact (``exact_result``).
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from moecl_verify.checks.context import Context
from moecl_verify.checks.model import ClaimResult, Interpretation, Slip, exact_result, keys_of
from moecl_verify.checks.registry import Claim, register
from moecl_verify.numeric.gate import softmax
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.theory import softmax_gap

L10_SOURCE = "Appendix E, Lemma 10 and its proof (E.4)"

INTERPRETATIONS = (
    Interpretation(
        id="lemma10.delta_definition",
        location="Appendix E, definition of delta_Theta before Lemma 10",
        issue="delta_Theta = |h_m(X_t, theta^(m)_t) - h_m'(X_t, theta^(m)_t)| evaluates both outputs at theta^(m).",
        choice="h_m' at theta^(m'), as the proof of Lemma 10 uses it.",
    ),
    Interpretation(
        id="lemma10.omega_reading",
        location="Appendix E, Lemma 10",
        issue="'Omega(delta_Theta) otherwise' leaves the range of delta and the dependence of the constant open.",
        choice="Uniform reading (entry 'statement.Omega (uniform)'): a constant c > 0, uniform over all gates (any "
        "gate outputs) and inputs, with |pi_m - pi_m'| >= c delta whenever delta is bounded away from 0.",
        option="reading=uniform",
    ),
    Interpretation(
        id="lemma10.omega_regime",
        location="Appendix E, Lemma 10 and its use in E.8 (gate outputs O(sigma0^k) during exploration)",
        issue="The lemma is used where every gate output is small (theta = O(sigma0^0.5), Lemma 6), not for "
        "arbitrary gates; read there, 'Omega(delta_Theta)' is a statement about the ratio as h -> 0.",
        choice="Regime reading (entry 'statement.Omega (regime)'): |pi_m - pi_m'| / delta is bounded below by a "
        "positive constant (depending on M only) along every path with ||h||_inf -> 0.",
        option="reading=regime",
    ),
)


# ---------------------------------------------------------------------------------------------- checks

a_, b_, rest_ = sp.symbols("h_m h_mp Z_rest", real=True)
delta_ = sp.symbols("delta", positive=True)


def _softmax_pair(rest=None):
    """pi_m, pi_m' for outputs a, b and the other experts' sum of exponentials ``rest`` (>= 0)."""
    rest = sp.Symbol("Z_rest", positive=True) if rest is None else rest
    Z = sp.exp(a_) + sp.exp(b_) + rest
    return sp.exp(a_) / Z, sp.exp(b_) / Z, rest


def tanh_identity_holds() -> bool:
    """pi_m - pi_m' = (pi_m + pi_m') tanh((h_m - h_m')/2), and = pi_m' (e^{h_m - h_m'} - 1), identically."""
    pm, pmp, _ = _softmax_pair()
    lhs = pm - pmp
    t1 = sp.simplify((lhs - (pm + pmp) * sp.tanh((a_ - b_) / 2)).rewrite(sp.exp)) == 0
    t2 = sp.simplify(lhs - pmp * (sp.exp(a_ - b_) - 1)) == 0
    return bool(t1 and t2)


def printed_identity_difference() -> sp.Expr:
    """(pi_m - pi_m') - pi_m' (exp(h_m - h_m' - pi_m') - 1) at M = 2, h = (1, 0): nonzero."""
    pm, pmp, rest = _softmax_pair(sp.Integer(0))
    expr = (pm - pmp) - pmp * (sp.exp(a_ - b_ - pmp) - 1)
    return sp.nsimplify(expr.subs({a_: 1, b_: 0}), rational=False)


def o_part_holds() -> bool:
    """tanh(x/2) <= x/2 for x >= 0: g(x) = x/2 - tanh(x/2) has g(0) = 0 and g'(x) = tanh(x/2)^2 / 2 >= 0."""
    x = sp.Symbol("x", nonnegative=True)
    g = x / 2 - sp.tanh(x / 2)
    return bool(g.subs(x, 0) == 0 and sp.simplify(sp.diff(g, x) - sp.tanh(x / 2) ** 2 / 2) == 0)


def omega_limits() -> tuple[sp.Expr, sp.Expr]:
    """lim_{delta->oo} tanh(delta/2)/delta (M = 2) and lim_{L->oo} |pi_1 - pi_0| at h = (0, 1, L) (M = 3)."""
    sat = sp.limit(sp.tanh(delta_ / 2) / delta_, delta_, sp.oo)
    L = sp.Symbol("L", positive=True)
    gap = (sp.E - 1) / (1 + sp.E + sp.exp(L))
    return sat, sp.limit(gap, L, sp.oo)


def taylor_first_order() -> sp.Expr:
    """Series of e^delta - 1 at 0: delta + O(delta^2) (the proof's first-order step)."""
    return sp.series(sp.exp(delta_) - 1, delta_, 0, 2).removeO()


def lower_step_orientation() -> tuple[bool, bool]:
    """(e^d - 1 > d for d > 0, 1 - e^{-d} < d for d > 0): the printed pi_m' delta lower bound needs h_m > h_m'."""
    up = sp.series(sp.exp(delta_) - 1 - delta_, delta_, 0, 4).removeO()
    up_ok = all(c > 0 for c in sp.Poly(up, delta_).coeffs())  # every Taylor coefficient of e^d - 1 - d is positive
    down = delta_ - (1 - sp.exp(-delta_))  # > 0: derivative 1 - e^{-d} > 0 and value 0 at d = 0
    down_ok = down.subs(delta_, 0) == 0 and sp.simplify(sp.diff(down, delta_) - (1 - sp.exp(-delta_))) == 0
    return bool(up_ok), bool(down_ok)


def _numeric_spot(seed: int, n: int = 2000) -> tuple[float, float]:
    """Random gates (M = 2..6, output scales 0.1, 1, 5): max |pi_m - pi_m'| / delta (<= 1/2) and its min (-> 0)."""
    rng = generator_for(seed, "lemma10", "spot")
    hi, lo = 0.0, np.inf
    per = n // 15
    for M in range(2, 7):
        for scale in (0.1, 1.0, 5.0):
            h = rng.normal(scale=scale, size=(per, M))
            pi = softmax(h)
            d = np.abs(h[:, 0] - h[:, 1])  # experts 0 and 1: the outputs are exchangeable
            keep = d > 1e-12
            r = np.abs(pi[:, 0] - pi[:, 1])[keep] / d[keep]
            hi, lo = max(hi, float(r.max())), min(lo, float(r.min()))
    return hi, lo


OMEGA_UNIFORM = "statement.Omega (uniform)"
OMEGA_REGIME = "statement.Omega (regime)"
REGIME_M = (2, 3, 4, 5, 6)  # directional limits computed exactly for these M


def regime_facts() -> dict:
    """The exact facts behind the regime reading (:mod:`theory.softmax_gap`), as sympy objects."""
    lo, hi = softmax_gap.ratio_bounds()
    return {
        "mass_bounds": softmax_gap.pair_mass_monotone(),
        "tanh_ratio_decreasing": softmax_gap.tanh_ratio_decreasing(),
        "lower_decreasing": softmax_gap.lower_bound_decreasing(),
        "limits": softmax_gap.regime_limits(),
        "sigma0_path": softmax_gap.sigma0_path_limit(),
        "directional": {m: softmax_gap.directional_limit(m) for m in REGIME_M},
        "lower": lo,
        "upper": hi,
        "lower_at_1": sp.simplify(lo.subs(softmax_gap.r, 1)),
    }


def regime_decided(facts: dict) -> bool:
    """Every step of the squeeze holds and both bounds, the sigma0 path and each directional limit give 1/M."""
    inv = 1 / softmax_gap.M
    return bool(facts["mass_bounds"] and facts["tanh_ratio_decreasing"] and facts["lower_decreasing"]
                and all(sp.simplify(x - inv) == 0 for x in facts["limits"])
                and sp.simplify(facts["sigma0_path"] - inv) == 0
                and all(sp.simplify(v - sp.Rational(1, m)) == 0 for m, v in facts["directional"].items()))


def _regime_spot(seed: int, n: int = 400) -> list[tuple[float, float, float, float, float]]:
    """Random gates with ||h||_inf <= r (M = 5): (r, min ratio, max ratio, L_5(r), U_5(r)); a record, not a verdict."""
    rng = generator_for(seed, "lemma10", "regime_spot")
    lo_f = sp.lambdify(softmax_gap.r, softmax_gap.ratio_bounds(5)[0])
    hi_f = sp.lambdify(softmax_gap.r, softmax_gap.ratio_bounds(5)[1])
    out = []
    for rad in (1.0, 0.1, 0.01):
        h = rng.uniform(-rad, rad, size=(n, 5))
        pi = softmax(h)
        ratio = np.abs(pi[:, 0] - pi[:, 1]) / np.abs(h[:, 0] - h[:, 1])
        out.append((rad, float(ratio.min()), float(ratio.max()), float(lo_f(rad)), float(hi_f(rad))))
    return out


def _l10(part: str, verdict: str, evidence: str, formula: str, form: str = "stated", **config) -> ClaimResult:
    return exact_result("lemma10", L10_SOURCE, "bound", part, verdict, evidence, formula, form=form, **config)


def measure_lemma10(ctx: Context) -> list[ClaimResult]:
    ident = tanh_identity_holds()
    o_ok = o_part_holds()
    hi, lo = _numeric_spot(ctx.seed)
    sat, third = omega_limits()
    printed = printed_identity_difference()
    series = taylor_first_order()
    up_ok, down_ok = lower_step_orientation()
    facts = regime_facts()
    spot = _regime_spot(ctx.seed)
    e = math.e
    ce_sat = [(d, math.tanh(d / 2) / d) for d in (1.0, 10.0, 100.0)]
    ce_third = (e - 1) / (1 + e + math.exp(10))
    # h = (0, 1): m' the larger output: |pi_0 - pi_1| = tanh(1/2) < pi_1 * 1 = e / (1 + e)
    orient_ce = (math.tanh(0.5), e / (1 + e))
    out = [
        _l10("statement.O", "confirmed" if ident and o_ok and hi <= 0.5 + 1e-12 else "refuted",
             f"sympy: pi_m - pi_m' = (pi_m + pi_m') tanh((h_m - h_m')/2) identically ({ident}); tanh(x/2) <= x/2 for "
             f"x >= 0 ({o_ok}); so |pi_m - pi_m'| <= tanh(delta/2) <= delta/2 for every delta, not only near 0. "
             f"Numeric spot check (1995 random gates, M = 2..6, output scales 0.1, 1, 5): max |pi_m - pi_m'|/delta = {hi:.4f} <= 1/2",
             r"|\pi_m-\pi_{m'}| = O(\delta_\Theta)\ (\delta_\Theta \to 0)"),
        _l10(OMEGA_UNIFORM, "refuted" if sat == 0 and third == 0 else "inconclusive",
             "uniform reading (any gate outputs): "
             f"no constant c > 0 gives |pi_m - pi_m'| >= c delta away from 0: (i) saturation, M = 2: |pi_m - pi_m'| / "
             f"delta = tanh(delta/2)/delta -> {sat} (sympy limit; "
             + ", ".join(f"delta = {d:g}: {r:.3g}" for d, r in ce_sat)
             + f"); (ii) a dominant third expert, M = 3, h = (0, 1, L): |pi_1 - pi_0| = (e - 1)/(1 + e + e^L) -> {third} "
             f"with delta = 1 fixed (L = 10: {ce_third:.3g}). What holds: |pi_m - pi_m'| = (pi_m + pi_m') tanh(delta/2), "
             f"which is Theta(delta) only while delta = O(1) and pi_m + pi_m' is bounded below. Random gates: min ratio "
             f"{lo:.2e}. (E.8 uses this part with delta = O(sigma0^0.5), an upper bound, to conclude an Omega(sigma0^0.5) "
             "softmax gap.) The regime reading (all outputs -> 0) is the separate entry 'statement.Omega (regime)'.",
             r"|\pi_m-\pi_{m'}| = \Omega(\delta_\Theta)\ \text{otherwise}", reading="uniform"),
        _l10(OMEGA_REGIME, "confirmed" if regime_decided(facts) else "inconclusive",
             "regime reading (every gate output -> 0): for every gate with ||h||_inf <= r and every pair with "
             f"delta > 0, {facts['lower']} <= |pi_m - pi_m'| / delta <= {facts['upper']} (sympy: pi_m + pi_m' = "
             f"A/(A + B) is monotone in A and B, bounds at the corners: {facts['mass_bounds']}; tanh(y)/y decreasing "
             f"with limit 1 at 0: {facts['tanh_ratio_decreasing']}; lower bound decreasing in r: "
             f"{facts['lower_decreasing']}). Limits as r -> 0+: {facts['limits'][0]} and {facts['limits'][1]}, so the "
             "ratio tends to 1/M along every path with h -> 0 (squeeze), and it is >= "
             f"{facts['lower_at_1']} > 0 once ||h||_inf <= 1; with ||h||_inf = K sigma0^k (any K, k > 0) the lower "
             f"bound tends to {facts['sigma0_path']} as sigma0 -> 0. Directional limits h = t v, t -> 0 (symbolic v): "
             + ", ".join(f"M = {m}: {v}" for m, v in facts["directional"].items())
             + ". Numeric record (M = 5, 400 random gates per radius, no verdict rests on it): "
             + "; ".join(f"r = {rad:g}: ratio in [{a:.4f}, {b:.4f}] within [{lo:.4f}, {hi:.4f}]"
                         for rad, a, b, lo, hi in spot)
             + ". So |pi_m - pi_m'| = Theta(delta) with constant -> 1/M in this regime (which also forces delta -> 0, "
             "so 'otherwise' in the sense of delta away from 0 does not arise). E.8 still needs a lower bound on "
             "delta to conclude an Omega(sigma0^0.5) softmax gap; its delta = O(sigma0^0.5) is an upper bound.",
             r"|\pi_m-\pi_{m'}| = \Omega(\delta_\Theta)\ (\|h\|_\infty \to 0)", reading="regime"),
        _l10("proof.identity", "refuted" if printed != 0 and ident else "inconclusive",
             f"the printed pi_m' |exp(h_m - h_m' - pi_m') - 1| differs from pi_m - pi_m': at M = 2, h = (1, 0) the "
             f"difference is {sp.N(printed, 6)}; sympy confirms pi_m - pi_m' = pi_m' (e^{{h_m - h_m'}} - 1) without the "
             "'- pi_m'' in the exponent",
             r"|\pi_m-\pi_{m'}| = \pi_{m'}|\exp(h_m-h_{m'}-\pi_{m'})-1|", role="proof step"),
        _l10("proof.taylor", "confirmed" if sp.simplify(series - delta_) == 0 else "refuted",
             f"sympy: e^delta - 1 = {series} + O(delta^2), so pi_m' (e^delta - 1) ~ pi_m' delta <= delta to first order",
             r"|\pi_m-\pi_{m'}| \approx \pi_{m'}|h_m-h_{m'}|", role="proof step"),
        _l10("proof.lower_bound", "refuted" if up_ok and down_ok else "inconclusive",
             f"|pi_m - pi_m'| = pi_m' (e^delta - 1) > pi_m' delta when h_m > h_m' (all Taylor coefficients of "
             f"e^d - 1 - d positive: {up_ok}), but = pi_m' (1 - e^-delta) < pi_m' delta when h_m < h_m' "
             f"(d - (1 - e^-d) increasing from 0: {down_ok}); counterexample M = 2, h = (0, 1), m = 0, m' = 1: "
             f"|pi_0 - pi_1| = tanh(1/2) = {orient_ce[0]:.4f} < pi_1 delta = e/(1 + e) = {orient_ce[1]:.4f}. With the "
             "orientation h_m > h_m' the step holds, but pi_m' delta = Omega(delta) would still need pi_m' bounded "
             "below",
             r"|\pi_m-\pi_{m'}| > \pi_{m'}|h_m-h_{m'}| = \Omega(\delta_\Theta)", role="proof step"),
        _l10("derived.tanh", "confirmed" if ident else "refuted",
             f"sympy: pi_m - pi_m' = (pi_m + pi_m') tanh((h_m - h_m')/2) identically ({ident}); hence "
             "|pi_m - pi_m'| <= min(1, delta/2) and |pi_m - pi_m'| >= (pi_m + pi_m') tanh(delta/2)",
             r"\pi_m-\pi_{m'} = (\pi_m+\pi_{m'})\tanh\big((h_m-h_{m'})/2\big)", form="derived"),
    ]
    return out


def slips_lemma10(results: list[ClaimResult]) -> list[Slip]:
    by = {r.key.part: r for r in results}
    out = []
    om = by.get(OMEGA_UNIFORM)
    if om is not None and om.verdict == "refuted":
        out.append(Slip(
            id="lemma10.omega_part",
            entries=keys_of(om),
            location="Appendix E, Lemma 10 ('otherwise Omega(delta_Theta)') and its proof E.4",
            slip_class="false statement",
            stated="|pi_m - pi_m'| = Omega(delta_Theta) when delta_Theta is not close to 0",
            holds="|pi_m - pi_m'| = (pi_m + pi_m') tanh(delta_Theta / 2) <= min(1, delta_Theta / 2): bounded by 1 "
            "while delta grows, and arbitrarily small when another expert dominates; a lower bound needs pi_m + pi_m' "
            "bounded below and delta = O(1) (as when every gate output tends to 0: then the ratio tends to 1/M, "
            "the regime reading, which holds)",
            evidence=om.evidence,
        ))
    pi_ = by.get("proof.identity")
    if pi_ is not None and pi_.verdict == "refuted":
        out.append(Slip(
            id="lemma10.identity",
            strength="transcription",
            entries=keys_of(pi_),
            location="Appendix E, proof of Lemma 10 (E.4), first display",
            slip_class="transcription",
            stated="|pi_m - pi_m'| = pi_m' |exp(h_m - h_m' - pi_m') - 1|",
            holds="|pi_m - pi_m'| = pi_m' |exp(h_m - h_m') - 1|",
            evidence=pi_.evidence,
        ))
    lb = by.get("proof.lower_bound")
    if lb is not None and lb.verdict == "refuted":
        out.append(Slip(
            id="lemma10.lower_bound_orientation",
            entries=keys_of(lb),
            location="Appendix E, proof of Lemma 10 (E.4), last display",
            slip_class="unstated assumption",
            stated="|pi_m - pi_m'| > pi_m' |h_m - h_m'|",
            holds="only when h_m > h_m'; for h_m < h_m', |pi_m - pi_m'| = pi_m' (1 - e^-delta) < pi_m' delta",
            evidence=lb.evidence,
        ))
    return out


register(__name__, Claim(
    id="lemma10",
    source=L10_SOURCE,
    kind="bound",
    statement=r"|\pi_m-\pi_{m'}| = O(\delta_\Theta)\ (\delta_\Theta\to 0),\ \Omega(\delta_\Theta)\ \text{otherwise}",
    preconditions=("softmax of eq. (2)",),
    measure=measure_lemma10,
    slips=slips_lemma10,
    interpretations=INTERPRETATIONS,
    summary="The softmax gap between two experts against their output gap.",
    notes="Decided by sympy identities and limits (pi_m - pi_m' = (pi_m + pi_m') tanh(delta/2)) with exact "
    "counterexamples; numeric spot checks are recorded in the evidence text; proof steps are separate entries. "
    "The Omega part has two readings, side by side: refuted under the uniform reading (any gate outputs: the "
    "ratio |pi_m - pi_m'|/delta -> 0 by saturation or a dominant third expert), confirmed under the regime reading "
    "(every gate output -> 0, as in exploration: the ratio -> 1/M along every path, theory/softmax_gap.py). The "
    "uniform reading decides the statement as printed ('otherwise', delta away from 0, which the regime excludes) "
    "and carries the slip lemma10.omega_part; the regime reading decides whether the lemma's use in E.8 (small "
    "gate outputs) is sound, and there it holds with constant 1/M.",
))
