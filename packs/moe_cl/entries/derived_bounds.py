"""The gate-gap bound from the update rule, declared once, and the statements it decides.

The bound (:mod:`theory.gate_growth`): with the gate updated by eq. (9), the gradient derived from eq. (6)-(8)
and the experts by eq. (5), under Algorithm 1's scalings eta = alpha = c sigma0^0.5, every gate-output gap
satisfies, at any round T,

    |h_m(v_n) - h_m'(v_n)| <= B(T) = ||v_n||_inf (eta/2) d X_inf (4 T sigma0^2 zeta^2 + alpha M (1 + log T)),

which at T = t1 is O(sigma0 log(1/sigma0)) when the auxiliary factor is c(t) = 1/t (derived from eq. 7), and
O(sigma0^-0.5), deciding nothing, with the factor t printed in Lemma 4's proof.  Proposition 2's module made it
one exact entry of ``prop2.t1``; the same bound decides two more statements, each through a derivation of why
it applies there (:class:`checks.derived.Use`):

* Proposition 3's proof step (G, 1), between-set gap Theta(sigma0^0.75) at T2.  The paper (Section 4): "under
  Algorithm 1, the MoE terminates updating Theta_t from round T2 = O(eta^-1 sigma0^-0.25 M)", and
  Proposition 2: "at round t1 = ceil(eta^-1 sigma0^-0.25 M)".  So T2 <= C t1 for an unknown constant C; the
  bound at C t1 is still o(sigma0^0.75) for every fixed C, and a gate frozen at T2 was updated in rounds <= T2
  only.  Whether T2 <= t1 is not needed (and not derivable: C is unknown).
* Lemma 13's proof step (eq. 35), pi_m(X_n, Theta_T1) - pi_m(X_n', Theta_T1) = Omega(sigma0^0.5), which its
  proof E.7 carries to every round t >= T1 + 1.  The paper: "T1 = ceil(eta^-1 M) is the length of the
  exploration phase" (Lemma 5) and the router-learning phase is "t in {T1 + 1, ..., t1}" (Lemmas 14, 15); so
  T1 <= t1 (sigma0^-0.25 >= 1 for sigma0 <= 1).  The quantity is a softmax-probability gap of one expert on
  two inputs, not a gate-output gap: it is at most half the largest gate-output gap (the softmax's gradient in
  the gaps has l1 norm pi_m (1 - pi_m) <= 1/4, and each input's gaps lie in [-B, B]).

Every step is a sympy check; the entries' verdicts follow from :attr:`checks.derived.Use.verdict`.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from moecl_verify.checks.derived import DerivedBound, Use
from moecl_verify.checks.model import ClaimResult, Slip, exact_result, keys_of
from moecl_verify.packs.moe_cl import texts
from moecl_verify.theory import gate_growth as gg

BOUND_ID = "gate_gap_update_bound"
READING = "aux_factor=1/t"
# prop2.t1's entries, one per reading of the auxiliary factor (the 1/t one is the bound's use there).
BOUND_PART = "between sets at t1, bound from the update rule (aux factor {factor})"
SLIP_ID = "prop2.between_set_gap_update_bound"

PROP2_CLAIM, PROP2_PART = "prop2.t1", BOUND_PART.format(factor="1/t")
PROP3_CLAIM, PROP3_PART = "prop3", "update-rule bound: between-set gap at T2 (proof step (G, 1))"
LEMMA13_CLAIM, LEMMA13_PART = "lemma13", "update-rule bound: pi gap at T1 (proof step (35))"

_BOUND_STEPS = (
    "Upper bound from the update rule alone, for every pair m, m' and task n, whatever the expert sets "
    "(theory/gate_growth.py): (1) by the gradient derived from eq. (6)-(8), grad_m - grad_m' = pi_{{m_t}} "
    "(Delta_t + alpha M f_t c(t)) [(1{{m = m_t}} - pi_m) - (1{{m' = m_t}} - pi_m')] xbar_t, and pi_{{m_t}} |[...]| "
    "<= 1/2 for every softmax (sympy over the simplex), so ||grad_m - grad_m'||_1 <= (1/2) (Delta_t + alpha M "
    "c(t)) d X_inf with f_t = counts / t <= 1 (eq. 7) and X_inf >= max_t ||xbar_t||_inf; (2) eq. (5) projects "
    "the routed model onto {{w : X_t^T w = X_t^T w_(n_t)}}: w_t = (I - P) w_(t-1) + P w_(n_t), so Delta_t <= "
    "2 (||w_(t-1)||^2 - ||w_t||^2) + 4 ||P w_(n_t)||^2, which telescopes per expert from w = 0 to sum_(t <= T) "
    "Delta_t <= 4 T sigma0^2 zeta^2 (w_n = sigma0 z_n, zeta = max_n ||z_n||; the 4 is attained in the limit by "
    "two tasks w and -w; a per-round bound by a constant times max_n ||w_n|| does not follow from eq. (5)); "
    "(3) sum_(t <= T) c(t) = {aux_sum}; (4) theta_0 = 0 and eq. (9): ||theta_m - theta_m'||_1 <= (eta / 2) d "
    "X_inf (4 T sigma0^2 zeta^2 + alpha M sum_(t <= T) c(t)); (5) |h_m(v_n) - h_m'(v_n)| <= ||theta_m - "
    "theta_m'||_1 ||v_n||_inf, at T = t1 <= M / (c sigma0^0.75) + 1 (the bound grows with T). With eta = alpha "
    "= c sigma0^0.5 the bound at t1 is {bound} (v_inf = max_n ||v_n||_inf). sympy: leading exponent {a} in "
    "sigma0 with a log(1/sigma0)^{b} factor; bound / sigma0^0.75 -> {lim} as sigma0 -> 0 for fixed c > 0, M, "
    "d, pool and X_inf, and -> {lim_x} when X_inf grows like sqrt(log(1/sigma0)) (the high-probability size of "
    "max_t ||xbar_t||_inf over t1 rounds of Definition 1's Gaussian noise columns)."
)

_AUX_SUM_TEXT = {"1/t": "H_T <= 1 + log T", "t": "T (T + 1) / 2"}
_FORMULA = {
    "1/t": (r"|h_m(v_n)-h_{m'}(v_n)| \le \|v_n\|_\infty\,\frac{\eta}{2}\,d\,X_\infty\left(4t_1\sigma_0^2"
            r"\zeta^2+\alpha M(1+\log t_1)\right) = O(\sigma_0\log(1/\sigma_0)) = o(\sigma_0^{0.75})"),
    "t": (r"|h_m(v_n)-h_{m'}(v_n)| \le \|v_n\|_\infty\,\frac{\eta}{2}\,d\,X_\infty\left(4t_1\sigma_0^2"
          r"\zeta^2+\alpha M\frac{t_1(t_1+1)}{2}\right) = O(\sigma_0^{-0.5})"),
}
_READING_TEXT = {
    "1/t": ("Reading: c(t) = 1/t, the factor derived from eq. (7) (Algorithm 1 as simulated); the "
            "factor t printed in Lemma 4's proof is the other entry."),
    "t": "Reading: c(t) = t, the factor printed in the proof of Lemma 4 (Appendix D).",
}
ASSUMPTIONS = ("eta = alpha = c sigma0^0.5 (Algorithm 1)", "theta_0 = 0, gate updated every round (eq. 9)",
               "w_n = sigma0 z_n, v_n = z_n", "f_t = counts / t (eq. 7)",
               "X_inf >= max_t ||xbar_t||_inf", "expert models start at 0 (eq. 5)")


def bound_text(factor: str) -> dict:
    """The bound at t1 under one reading of c(t): its sympy summary, the steps' text, the formula and reading
    (what Proposition 2's entries print)."""
    s = gg.summary(factor)
    steps = _BOUND_STEPS.format(aux_sum=_AUX_SUM_TEXT[factor], bound=s["bound"], a=s["exponent"], b=s["log_power"],
                                lim=s["ratio_limit"], lim_x=s["ratio_limit_growing_xbar"])
    return {"summary": s, "steps": steps, "formula": _FORMULA[factor], "reading": _READING_TEXT[factor],
            "decides": s["ratio_limit"] == 0 and s["ratio_limit_growing_xbar"] == 0}


# --------------------------------------------------------------------- the checks


_K = sp.Symbol("K", positive=True)  # X_inf = K sqrt(log(1/sigma0)) in the growing reading
_C = sp.Symbol("C", positive=True)  # the unknown constant of T2 = O(eta^-1 sigma0^-0.25 M)


def _growing(expr: sp.Expr, k) -> tuple[sp.Expr, sp.Expr]:
    """lim expr / sigma0^k for fixed X_inf and for X_inf growing like sqrt(log(1/sigma0))."""
    return gg.ratio_limit(expr, k), gg.ratio_limit(expr, k, x_growth=_K * sp.sqrt(sp.log(1 / gg.sigma0)))


def _at(T_) -> sp.Expr:
    """B(T): the bound on every |h_m(v_n) - h_m'(v_n)| after T rounds (c(t) = 1/t, H_T <= 1 + log T)."""
    return gg.theta_gap_bound("1/t", T_, upper=True) * gg.v_inf


def _delta_step() -> bool:
    """eq. (5): ||w_old||^2 - ||w_new||^2 = ||P w_old||^2 - ||P w_n||^2 for w_new = (I - P) w_old + P w_n with P
    a rank-one orthogonal projector in the plane (the identity is Pythagoras), and ||a - b||^2 <= 2 ||a||^2 +
    2 ||b||^2 per coordinate ((a + b)^2 >= 0)."""
    phi, a1, a2, b1, b2 = sp.symbols("phi a1 a2 b1 b2", real=True)
    u = sp.Matrix([sp.cos(phi), sp.sin(phi)])
    P = u * u.T
    old, target = sp.Matrix([a1, a2]), sp.Matrix([b1, b2])
    new = (sp.eye(2) - P) * old + P * target
    sq = lambda v: (v.T * v)[0]  # noqa: E731
    pythagoras = sp.simplify(sq(old) - sq(new) - (sq(P * old) - sq(P * target))) == 0
    a, b = sp.symbols("a b", real=True)
    square = sp.factor(2 * a**2 + 2 * b**2 - (a - b) ** 2) == (a + b) ** 2
    return bool(pythagoras and square)


def _harmonic_step() -> bool:
    """sum_{t <= T} 1/t = H_T, and H_T <= 1 + log T: H_T - log T is non-increasing because
    log(1 + x) - x/(1 + x) is 0 at 0 with derivative x/(1 + x)^2 >= 0 (x = 1/T)."""
    x = sp.Symbol("x", nonnegative=True)
    f = sp.log(1 + x) - x / (1 + x)
    exact = sp.simplify(gg.aux_sum("1/t", upper=False) - sp.harmonic(gg.T)) == 0
    return bool(exact and f.subs(x, 0) == 0 and sp.simplify(sp.diff(f, x) - x / (1 + x) ** 2) == 0)


def _same_gap_identity() -> bool:
    """A gate-output gap written per expert, theta_m^T v - theta_m'^T v, is (theta_m - theta_m')^T v, the
    quantity the bound controls (d = 3, symbolic)."""
    tm, tn, v = (sp.Matrix(sp.symbols(f"{p}1:4", real=True)) for p in ("a", "b", "v"))
    return sp.expand((tm.T * v)[0] - (tn.T * v)[0] - ((tm - tn).T * v)[0]) == 0


def _softmax_gradient() -> tuple[bool, sp.Expr]:
    """pi_m = 1 / (1 + e^{g_k} + R) with g_k = h_k - h_m and R the other experts' terms: d pi_m / d g_k =
    -pi_m pi_k, so the gradient's l1 norm is pi_m (1 - pi_m), at most 1/4 over [0, 1]."""
    g, R, p = sp.Symbol("g_k", real=True), sp.Symbol("R", positive=True), sp.Symbol("p", real=True)
    pi_m, pi_k = 1 / (1 + sp.exp(g) + R), sp.exp(g) / (1 + sp.exp(g) + R)
    ok = sp.simplify(sp.diff(pi_m, g) + pi_m * pi_k) == 0
    return bool(ok), sp.maximum(p * (1 - p), p, sp.Interval(0, 1))


@lru_cache(maxsize=None)
def gate_gap_bound() -> DerivedBound:
    """The bound under c(t) = 1/t, with its three uses (Proposition 2 at t1, Proposition 3's step (G, 1),
    Lemma 13's step (35)); every step a sympy check."""
    text = bound_text("1/t")
    s = text["summary"]
    sigma0, T = gg.sigma0, gg.T
    dB = sp.diff(_at(T), T)
    grows = bool(dB.is_positive)
    written = gg.eta * sp.Rational(1, 2) * gg.d * gg.X_inf * (4 * T * sigma0**2 * gg.zeta**2
                                                               + gg.alpha * gg.M * (1 + sp.log(T)))
    steps = (
        ("(1) for every softmax and every routed expert, pi_c |(1{m = c} - pi_m) - (1{m' = c} - pi_m')| <= 1/2 "
         "(maximum over the simplex)", gg.pair_factor_bound() == sp.Rational(1, 2)),
        ("(2) eq. (5) is an orthogonal projection step, so ||w_old||^2 - ||w_new||^2 = ||P w_old||^2 - ||P w_n||^2 "
         "and Delta <= 2 (||P w_old||^2 - ||P w_n||^2) + 4 ||P w_n||^2, telescoping to sum_(t <= T) Delta_t <= "
         "4 T sigma0^2 zeta^2", _delta_step()),
        ("(3) sum_(t <= T) 1/t = H_T <= 1 + log T", _harmonic_step()),
        ("(4) theta_0 = 0 and eq. (9): ||theta_m - theta_m'||_1 <= (eta/2) d X_inf (4 T sigma0^2 zeta^2 + alpha M "
         "(1 + log T))", sp.simplify(gg.theta_gap_bound("1/t", T, upper=True) - written) == 0),
        ("(5) B(T) is increasing in T (dB/dT > 0), so a bound at a later round covers every earlier one",
         grows),
        (f"(6) at T = t1 <= M / (c sigma0^0.75) + 1, B(t1) has leading exponent {s['exponent']} in sigma0 with a "
         f"factor log(1/sigma0)^{s['log_power']}: B(t1) = O(sigma0 log(1/sigma0))",
         s["exponent"] == 1 and s["log_power"] == 1),
        ("(7) B(t1) / sigma0^0.75 -> 0 as sigma0 -> 0, for fixed X_inf and for X_inf ~ sqrt(log(1/sigma0))",
         s["ratio_limit"] == 0 and s["ratio_limit_growing_xbar"] == 0),
    )
    statement = ("Under Algorithm 1's scalings eta = alpha = c sigma0^0.5, with the gate updated by eq. (9) from "
                 "theta_0 = 0, every gate-output gap after T rounds satisfies |h_m(v_n) - h_m'(v_n)| <= B(T) = "
                 "||v_n||_inf (eta/2) d X_inf (4 T sigma0^2 zeta^2 + alpha M (1 + log T)), increasing in T; for "
                 "T <= C t1 with any fixed C > 0, B(T) = O(sigma0 log(1/sigma0)).")
    return DerivedBound(
        id=BOUND_ID, statement=statement, assumptions=ASSUMPTIONS,
        reading="c(t) = 1/t of the auxiliary gradient, derived from eq. (7) (with the factor t printed in Lemma "
        "4's proof the bound is O(sigma0^-0.5) and decides nothing)",
        steps=steps, uses=(_prop2_use(), _prop3_use(dB), _lemma13_use(dB)),
        source="eq. (5)-(9), Algorithm 1; theory/gate_growth.py")


def _prop2_use() -> Use:
    sigma0, c, M = gg.sigma0, gg.c, gg.M
    lim = _growing(_at(gg.t1_upper()), sp.Rational(3, 4))
    return Use(
        bound_id=BOUND_ID, claim_id=PROP2_CLAIM, part=PROP2_PART, relation="contradicts", reading=READING,
        why=(
            ("window: Proposition 2's round is t1 = ceil(eta^-1 sigma0^-0.25 M) <= M / (c sigma0^0.75) + 1, the "
             "bound's horizon", sp.simplify(M / (gg.eta * sigma0 ** sp.Rational(1, 4)) - (gg.t1_upper() - 1)) == 0),
            ("quantity: the claimed |h_m - h_m'| for m, m' in different sets is a gate-output gap "
             "(theta_m - theta_m')^T v_n, bounded for every pair", _same_gap_identity()),
            ("order: B(t1) / sigma0^0.75 -> 0 (fixed X_inf; X_inf ~ sqrt(log(1/sigma0))), so no lower bound "
             "c' sigma0^0.75 holds", lim == (0, 0)),
        ),
        conclusion="The between-set gap at t1 is o(sigma0^0.75), not Theta(sigma0^0.75).")


def _prop3_use(dB: sp.Expr) -> Use:
    at_C = _at(_C * gg.t1_upper())
    lim = _growing(at_C, sp.Rational(3, 4))
    return Use(
        bound_id=BOUND_ID, claim_id=PROP3_CLAIM, part=PROP3_PART, relation="contradicts", reading=READING,
        why=(
            ("window: Proposition 3 states T2 = O(eta^-1 sigma0^-0.25 M), so T2 <= C (M / (c sigma0^0.75) + 1) = "
             "C t1_upper for some constant C > 0 and small sigma0; whether C <= 1 (T2 <= t1) is not stated and not "
             "needed", sp.simplify(gg.t1_upper() - (gg.M / (gg.eta * gg.sigma0 ** sp.Rational(1, 4)) + 1)) == 0),
            ("termination: Algorithm 1 freezes Theta_t from T2 on, so the frozen gate was updated in rounds <= T2 "
             "only; each round adds a non-negative term, and B is increasing in T, so B(C t1_upper) bounds every "
             "gap at the frozen gate", bool(dB.is_positive)),
            ("routing: the pair factor 1/2 is a maximum over every softmax and routed expert, so the routing "
             "noise r ~ U[0, lambda] and the threshold Gamma of Algorithm 1 do not enter",
             gg.pair_factor_bound() == sp.Rational(1, 2)),
            ("quantity: step (G, 1)'s |h_m - h_m'| for m in M_n, m' in M_n' is a gate-output gap (theta_m - "
             "theta_m')^T v_n, bounded for every pair", _same_gap_identity()),
            ("order: B(C t1_upper) / sigma0^0.75 -> 0 for every fixed C > 0 (symbolic C; fixed X_inf and X_inf ~ "
             "sqrt(log(1/sigma0)))", lim == (0, 0)),
        ),
        conclusion="If T2 = O(eta^-1 sigma0^-0.25 M) as Proposition 3 states, the between-set gap at the frozen "
        "gate is O(sigma0 log(1/sigma0)) = o(sigma0^0.75), so step (G, 1)'s Theta(sigma0^0.75) fails (and if T2 "
        "were not of that order, the statement's own T2 bound would fail instead).")


def _lemma13_use(dB: sp.Expr) -> Use:
    sigma0 = gg.sigma0
    window = sp.solve_univariate_inequality(sigma0 ** sp.Rational(-1, 4) >= 1, sigma0, relational=False)
    ratio = sp.simplify((gg.M / (gg.eta * sigma0 ** sp.Rational(1, 4))) / (gg.M / gg.eta))
    grad_ok, lipschitz = _softmax_gradient()
    half = lipschitz * 2 * _at(gg.t1_upper())  # |pi_m(X_n) - pi_m(X_n')| <= (1/4) (2 B)
    lim = _growing(half, sp.Rational(1, 2))
    return Use(
        bound_id=BOUND_ID, claim_id=LEMMA13_CLAIM, part=LEMMA13_PART, relation="contradicts", reading=READING,
        why=(
            (f"window: T1 = ceil(eta^-1 M) (Lemma 5) and t1 = ceil(eta^-1 sigma0^-0.25 M) (Proposition 2): their "
             f"arguments' ratio is sigma0^(-1/4), >= 1 exactly for sigma0 in (0, 1], and ceil is monotone, so T1 <= t1 "
             "and the router-learning phase T1 + 1..t1 (Lemmas 14, 15) lies in T <= t1",
             ratio == sigma0 ** sp.Rational(-1, 4) and window == sp.Interval(0, 1, left_open=True)),
            ("monotone: B is increasing in T, so B(t1_upper) bounds every gate-output gap at every round T <= t1",
             bool(dB.is_positive)),
            ("quantity: pi_m(X, Theta) = 1 / (1 + sum_(k != m) e^(g_k)) with g_k = h_k(X) - h_m(X); d pi_m / d g_k "
             f"= -pi_m pi_k, so the gradient's l1 norm is pi_m (1 - pi_m) <= {lipschitz}; each input's gaps lie in "
             "[-B, B], so ||g(X_n) - g(X_n')||_inf <= 2 B and |pi_m(X_n) - pi_m(X_n')| <= B / 2 (mean value "
             "theorem; X_n the signal-only matrix as read for Lemma 13, otherwise B times X_inf / v_inf)",
             grad_ok and lipschitz == sp.Rational(1, 4)),
            ("order: (B(t1_upper) / 2) / sigma0^0.5 -> 0 (fixed X_inf; X_inf ~ sqrt(log(1/sigma0)))",
             lim == (0, 0)),
        ),
        conclusion="The softmax gap pi_m(X_n, Theta_t) - pi_m(X_n', Theta_t) is O(sigma0 log(1/sigma0)) = "
        "o(sigma0^0.5) at T1 and at every round of the router-learning phase, so eq. (35)'s Omega(sigma0^0.5) "
        "fails.")


def bounds() -> tuple[DerivedBound, ...]:
    """The pack's derived bounds (``Pack.derived_bounds``)."""
    return (gate_gap_bound(),)


# --------------------------------------------------------------------- entries and slips of the uses


def use_entry(use: Use, source: str, kind: str, formula: str, claimed: str) -> ClaimResult:
    """One exact entry (form "derived", role "proof step") deciding ``use.part`` of ``use.claim_id``."""
    bound = gate_gap_bound()
    verdict = bound.verdict(use)
    return exact_result(use.claim_id, source + " (bound from eq. (5)-(9))", kind, use.part, verdict,
                        bound.evidence(use), formula, form="derived", role="proof step", reading=use.reading,
                        derived_bound=bound.id, relation=use.relation, applicability_checked=use.checked,
                        claimed=claimed, hidden_constants="any fixed c > 0", assumptions=list(bound.assumptions))


def use_slip(results: list[ClaimResult], use: Use, slip_id: str, location: str, stated: str, holds: str) -> list[Slip]:
    """A slip when the use's entry is refuted; it follows from Proposition 2's update-bound slip."""
    entry = next((r for r in results if r.id == use.claim_id and r.key.part == use.part), None)
    if entry is None or entry.verdict != "refuted":
        return []
    return [Slip(id=slip_id, entries=keys_of(entry), location=location, slip_class="false intermediate step",
                 strength="reading", strength_note=texts.READING_FACTOR,
                 stated=stated, holds=holds, evidence=entry.evidence, causes=(SLIP_ID,))]
