"""How far apart the gate's experts can drift, from the update rule alone (sympy; Proposition 2).

Proposition 2 says that when the gate keeps training, at ``t1 = ceil(M / (eta sigma0^0.25))`` the gap
``|h_m - h_m'|`` between experts of different expert sets is Theta(sigma0^0.75).  This module bounds every
gap from above using nothing but the gate update (eq. 9) and the gradient derived from eq. (6)-(8)
(:mod:`theory.gate`), under Algorithm 1's scalings; a Theta needs a matching lower bound, so an upper
bound that is o(sigma0^0.75) rules the Theta out.

Model and assumptions (each a reading of Section 3 / Algorithm 1, stated where it is used):

* A1 (Algorithm 1): ``eta = alpha = c sigma0^(1/2)`` with a hidden constant ``c > 0`` fixed as sigma0 -> 0;
  the gate starts at ``theta_0 = 0`` and ``theta_{t+1} = theta_t - eta grad L_task(Theta_t)`` (eq. 9) at
  every round (no termination).
* A2 (Section 3.2): ground truths ``w_n = sigma0 z_n`` for a fixed base pool z_n (``zeta = max_n ||z_n||_2``),
  signals ``v_n = w_n / sigma0 = z_n`` (``v_inf = max_n ||z_n||_inf``).
* A3 (eq. 6-8, :mod:`theory.gate`): the gradient is
  ``grad_k = pi_{m_t} (Delta_t + alpha M f_t c(t)) (1{k = m_t} - pi_k) xbar_t`` with
  ``Delta_t = ||w_t^(m_t) - w_{t-1}^(m_t)||^2``, ``f_t = f_t^(m_t) = counts / t`` in ``[0, 1]`` (eq. 7's
  routing fraction, counts including round t), and ``c(t) = 1/t`` as derived from eq. 7 (the default) or
  ``c(t) = t`` as printed in the proof of Lemma 4.
* A4 (eq. 5): the routed expert moves to the point nearest its model on ``{w : X_t^T w = X_t^T w_{n_t}}``;
  expert models start at 0.
* A5: ``X_inf`` bounds ``max_{t <= T} ||xbar_t||_inf`` (``xbar_t = sum_i X_{t,i}``).  With Definition 1's
  Gaussian noise columns ``X_inf`` is not bounded almost surely but is ``O(sqrt(log t1))`` with high
  probability; :func:`ratio_limit` accepts an ``X_inf`` that grows like ``sqrt(log(1/sigma0))``.

Steps (each a function below):

1. :func:`pair_factor_bound`: ``|pi_c ((1{m=c} - pi_m) - (1{m'=c} - pi_m'))| <= 1/2`` for any softmax pi,
   so ``||grad_m - grad_m'||_1 <= (1/2) (Delta_t + alpha M f_t c(t)) ||xbar_t||_1`` and
   ``||xbar_t||_1 <= d X_inf`` (:func:`per_round_bound`).
2. :func:`delta_sum_bound`: eq. 5 gives ``w_new = (I - P) w_old + P w_n`` (P the orthogonal projector onto
   span(X_t)), so ``||w_old||^2 - ||w_new||^2 = ||P w_old||^2 - ||P w_n||^2`` and
   ``Delta = ||P w_old - P w_n||^2 <= 2 (||P w_old||^2 - ||P w_n||^2) + 4 ||P w_n||^2``; summed over the
   rounds of each expert (models start at 0) this telescopes to
   ``sum_{t <= T} Delta_t <= 4 sum_t ||P_t w_{n_t}||^2 <= 4 T sigma0^2 zeta^2``.  The constant 4 is attained
   in the limit (two tasks w and -w, X_t spanning w: Delta = 4 ||w||^2 every round after the first).
   A per-round bound by a constant times max_n ||w_n|| does not hold in general: eq. 5 only gives
   ``||w_t - w_{n_t}|| <= ||w_{t-1} - w_{n_t}||`` for the round's own task, and
   ``||w_t||^2 = ||(I - P) w_{t-1}||^2 + ||P w_{n_t}||^2`` can grow round after round.
3. :func:`aux_sum`: ``sum_{t=1}^T f_t c(t) <= sum_{t=1}^T c(t)``, = H_T <= 1 + log T for c(t) = 1/t and
   T (T + 1) / 2 for c(t) = t.
4. :func:`theta_gap_bound`: theta_0 = 0, so
   ``||theta_m,T - theta_m',T||_1 <= (eta / 2) d X_inf (4 T sigma0^2 zeta^2 + alpha M S_c(T))``.
5. :func:`gap_bound_at_t1`: ``|h_m(v_n) - h_m'(v_n)| <= ||theta_m - theta_m'||_1 ||v_n||_inf`` at
   ``T = t1 <= M / (c sigma0^(3/4)) + 1`` (the bound increases with T).  The same bound times
   ``X_inf / v_inf`` holds for the gap on the round's data, ``|(theta_m - theta_m')^T xbar_t|``, so it does not
   depend on which data the gap is measured on, nor on how expert sets are formed.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

AUX_FACTORS = ("1/t", "t", "1")  # "1": no factor at all, a mutation the tests use

sigma0 = sp.Symbol("sigma0", positive=True)
c = sp.Symbol("c", positive=True)  # the hidden constant of eta = alpha = c sigma0^(1/2)
M = sp.Symbol("M", integer=True, positive=True)
d = sp.Symbol("d", integer=True, positive=True)
t = sp.Symbol("t", integer=True, positive=True)
T = sp.Symbol("T", integer=True, positive=True)
X_inf = sp.Symbol("X_inf", positive=True)  # max_t ||xbar_t||_inf (A5)
zeta = sp.Symbol("zeta", positive=True)  # max_n ||z_n||_2, w_n = sigma0 z_n (A2)
v_inf = sp.Symbol("v_inf", positive=True)  # max_n ||v_n||_inf = max_n ||z_n||_inf (A2)
Delta = sp.Symbol("Delta", nonnegative=True)
p, q = sp.symbols("p q", nonnegative=True)  # softmax entries

eta = c * sp.sqrt(sigma0)
alpha = c * sp.sqrt(sigma0)


def aux_weight(t_, aux_factor: str = "1/t") -> sp.Expr:
    """c(t) of the auxiliary gradient (A3): 1/t derived from eq. 7, t as printed in Lemma 4's proof, 1 (mutation)."""
    if aux_factor not in AUX_FACTORS:
        raise ValueError(f"aux_factor must be one of {AUX_FACTORS}, got {aux_factor!r}")
    return {"1/t": 1 / t_, "t": t_, "1": sp.Integer(1)}[aux_factor]


@lru_cache(maxsize=None)
def pair_factor_bound() -> sp.Rational:
    """max over softmax vectors of ``pi_c |(1{m=c} - pi_m) - (1{m'=c} - pi_m')|`` (step 1), = 1/2.

    Two cases (m' = c is the first with m, m' swapped): m = c gives ``p (1 - p + q)`` with p = pi_c,
    q = pi_m', p + q <= 1, at most ``2 p (1 - p) <= 1/2``; m, m' != c gives ``p |q - q'|`` with
    q + q' <= 1 - p, at most ``p (1 - p) <= 1/4``.  Maximized by sympy over the simplex."""
    routed = p * (1 - p + q)  # increasing in q, so q = 1 - p on the simplex's face
    case1 = sp.maximum(routed.subs(q, 1 - p), p, sp.Interval(0, 1))
    case2 = sp.maximum(p * (1 - p), p, sp.Interval(0, 1))  # |q - q'| <= 1 - p
    return sp.Max(case1, case2)


def per_round_bound(aux_factor: str = "1/t", t_=t) -> sp.Expr:
    """Bound on ``||grad_m,t - grad_m',t||_1`` (steps 1 and A3): (1/2) (Delta_t + alpha M c(t)) d X_inf, f_t <= 1."""
    return pair_factor_bound() * (Delta + alpha * M * aux_weight(t_, aux_factor)) * d * X_inf


def delta_sum_bound(T_=T) -> sp.Expr:
    """``sum_{t <= T} Delta_t <= 4 T sigma0^2 zeta^2`` (step 2, eq. 5 telescoped per expert)."""
    return 4 * T_ * sigma0**2 * zeta**2


@lru_cache(maxsize=None)
def aux_sum(aux_factor: str = "1/t", upper: bool = True) -> sp.Expr:
    """``sum_{t=1}^T c(t)`` in T (step 3): sympy's sum (harmonic(T) for 1/t); with ``upper`` the harmonic
    number is replaced by its bound H_T <= 1 + log T, which is what the limits below need."""
    exact = sp.summation(aux_weight(t, aux_factor), (t, 1, T))
    if upper and aux_factor == "1/t":
        return 1 + sp.log(T)
    return sp.factor(exact)


def theta_gap_bound(aux_factor: str = "1/t", T_=T, upper: bool = True) -> sp.Expr:
    """Bound on ``||theta_m,T - theta_m',T||_1`` (step 4): eta times the summed per-round bounds, theta_0 = 0."""
    aux = aux_sum(aux_factor, upper).subs(T, T_)
    return sp.expand(eta * pair_factor_bound() * d * X_inf * (delta_sum_bound(T_) + alpha * M * aux))


def t1_upper() -> sp.Expr:
    """``t1 = ceil(M / (eta sigma0^0.25)) <= M / (c sigma0^(3/4)) + 1``."""
    return M / (c * sigma0 ** sp.Rational(3, 4)) + 1


def gap_bound_at_t1(aux_factor: str = "1/t") -> sp.Expr:
    """Bound on ``|h_m(v_n) - h_m'(v_n)|`` at t1 for every pair m, m' and task n (step 5)."""
    return theta_gap_bound(aux_factor, t1_upper(), upper=True) * v_inf


def leading_exponent(expr: sp.Expr) -> sp.Expr:
    """a = lim_{sigma0 -> 0+} log(expr) / log(sigma0): expr = sigma0^(a + o(1)); a log factor does not move a."""
    return sp.limit(sp.log(expr) / sp.log(sigma0), sigma0, 0, "+")


def log_power(expr: sp.Expr, a: sp.Expr) -> sp.Expr:
    """b with expr / sigma0^a = log(1/sigma0)^(b + o(1)): the log factor beside the leading power, stated
    rather than dropped (b = 1 for the 1/t reading's sigma0 log(1/sigma0))."""
    rest = sp.expand_log(sp.log(sp.expand(expr / sigma0**a)), force=True)
    return sp.limit(rest / sp.log(sp.log(1 / sigma0)), sigma0, 0, "+")


def ratio_limit(expr: sp.Expr, k=sp.Rational(3, 4), x_growth: sp.Expr | None = None) -> sp.Expr:
    """lim_{sigma0 -> 0+} expr / sigma0^k; with ``x_growth``, X_inf is replaced by it first (e.g.
    ``K sqrt(log(1/sigma0))``, the high-probability growth of max ||xbar_t||_inf over t1 Gaussian rounds)."""
    if x_growth is not None:
        expr = expr.subs(X_inf, x_growth)
    return sp.limit(expr / sigma0**k, sigma0, 0, "+")


@lru_cache(maxsize=None)
def summary(aux_factor: str = "1/t") -> dict:
    """The bound at t1 and what it says against Theta(sigma0^0.75): exponent, log power, limits."""
    bound = gap_bound_at_t1(aux_factor)
    a = leading_exponent(bound)
    K = sp.Symbol("K", positive=True)
    return {
        "bound": bound,
        "exponent": a,
        "log_power": log_power(bound, a),
        "ratio_limit": ratio_limit(bound),
        "ratio_limit_growing_xbar": ratio_limit(bound, x_growth=K * sp.sqrt(sp.log(1 / sigma0))),
    }


def evaluate(aux_factor: str, *, sigma0_: float, c_: float, M_: int, d_: int, T_: int, X_inf_: float,
             zeta_: float, v_inf_: float | None = None, exact_sum: bool = True) -> float:
    """The bound at a finite horizon T with realized constants: ``||theta_m - theta_m'||_1`` at round T when
    ``v_inf_`` is None, else the gap bound ``|h_m(v) - h_m'(v)|``.  ``exact_sum`` uses H_T itself."""
    expr = theta_gap_bound(aux_factor, T, upper=not exact_sum)
    if v_inf_ is not None:
        expr = expr * v_inf
    values = {sigma0: sigma0_, c: c_, M: M_, d: d_, T: T_, X_inf: X_inf_, zeta: zeta_, v_inf: v_inf_ or 1.0}
    return float(expr.subs(values).evalf())
