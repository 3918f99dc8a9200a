"""Lemma 10 (Appendix E) when every gate output tends to 0: the softmax gap is Theta(output gap), ratio -> 1/M.

Setting.  M >= 2 experts with gate outputs h_1..h_M and pi = softmax(h) (eq. 2).  For a pair m != m' with
delta = |h_m - h_m'| > 0, the identity pi_m - pi_m' = (pi_m + pi_m') tanh((h_m - h_m')/2) gives

    R(h) = |pi_m - pi_m'| / delta = (pi_m + pi_m') * tanh(delta/2) / delta.

Lemma 10's "Omega(delta_Theta)" read in the regime the paper works in (all gate outputs tend to 0, e.g.
|h| = O(sigma0^k) as in Algorithm 1's exploration, where theta = O(sigma0^0.5) by Lemma 6) asks whether R is
bounded below by a positive constant along every path with ||h||_inf -> 0.  Derived here (sympy):

* pi_m + pi_m' = A / (A + B) with A = e^{h_m} + e^{h_m'} in [2e^{-r}, 2e^{r}] and B = the other experts' sum in
  [(M-2)e^{-r}, (M-2)e^{r}] when ||h||_inf <= r; A/(A+B) increases in A and decreases in B, so
  2 / (2 + (M-2) e^{2r}) <= pi_m + pi_m' <= 2 / (2 + (M-2) e^{-2r})    (:func:`pair_mass_bounds`);
* g(y) = tanh(y)/y decreases on y > 0 (g'(y) = (2y - sinh 2y) / (2 y^2 cosh^2 y) and sinh z >= z) with
  g(0+) = 1, and delta <= 2r, so g(r)/2 <= tanh(delta/2)/delta <= 1/2    (:func:`tanh_ratio_decreasing`);
* hence, for every gate with ||h||_inf <= r and every pair with delta > 0,
  L_M(r) = tanh(r) / (r (2 + (M-2) e^{2r}))  <=  R(h)  <=  1 / (2 + (M-2) e^{-2r}) = U_M(r)   (:func:`ratio_bounds`),
  both sides tend to 1/M as r -> 0 (sympy limits, symbolic M), and L_M decreases in r.

So along every path with ||h||_inf -> 0 the ratio tends to 1/M (squeeze), and R >= L_M(1) = tanh(1)/(2 + (M-2)e^2)
> 0 as soon as ||h||_inf <= 1: |pi_m - pi_m'| = Omega(delta) (indeed Theta(delta)) in that regime, with a constant
depending on M only.  Directional limits h = t v, t -> 0, are computed as an independent check
(:func:`directional_limit`).  Pure sympy; no sampling.
"""

from __future__ import annotations

import sympy as sp

M = sp.Symbol("M", integer=True, positive=True)  # number of experts, M >= 2
r = sp.Symbol("r", positive=True)  # radius: ||h||_inf <= r
_y = sp.Symbol("y", positive=True)
_z = sp.Symbol("z", nonnegative=True)
_A, _B = sp.symbols("A B", positive=True)


def pair_mass_bounds(m=M, radius=r) -> tuple[sp.Expr, sp.Expr]:
    """(min, max) of pi_m + pi_m' over ||h||_inf <= radius: 2/(2 + (M-2)e^{2r}), 2/(2 + (M-2)e^{-2r})."""
    return 2 / (2 + (m - 2) * sp.exp(2 * radius)), 2 / (2 + (m - 2) * sp.exp(-2 * radius))


def pair_mass_monotone() -> bool:
    """A/(A+B) has d/dA = B/(A+B)^2 >= 0 and d/dB = -A/(A+B)^2 <= 0, and its values at the corners
    (A, B) = (2e^{-r}, (M-2)e^{r}) and (2e^{r}, (M-2)e^{-r}) are :func:`pair_mass_bounds`."""
    f = _A / (_A + _B)
    d_a = sp.simplify(sp.diff(f, _A) - _B / (_A + _B) ** 2) == 0
    d_b = sp.simplify(sp.diff(f, _B) + _A / (_A + _B) ** 2) == 0
    lo, hi = pair_mass_bounds()
    c_lo = sp.simplify(f.subs({_A: 2 * sp.exp(-r), _B: (M - 2) * sp.exp(r)}) - lo) == 0
    c_hi = sp.simplify(f.subs({_A: 2 * sp.exp(r), _B: (M - 2) * sp.exp(-r)}) - hi) == 0
    return bool(d_a and d_b and c_lo and c_hi)


def tanh_ratio_decreasing() -> bool:
    """g(y) = tanh(y)/y: g'(y) = (2y - sinh 2y)/(2 y^2 cosh^2 y) identically; sinh z - z vanishes at 0 with
    derivative cosh z - 1 = 2 sinh^2(z/2) >= 0, so g' <= 0; and g(0+) = 1 (so tanh y <= y)."""
    g = sp.tanh(_y) / _y
    deriv = sp.simplify((sp.diff(g, _y) - (2 * _y - sp.sinh(2 * _y)) / (2 * _y ** 2 * sp.cosh(_y) ** 2))
                        .rewrite(sp.exp)) == 0
    h = sp.sinh(_z) - _z
    sinh_ok = h.subs(_z, 0) == 0 and sp.simplify((sp.diff(h, _z) - 2 * sp.sinh(_z / 2) ** 2).rewrite(sp.exp)) == 0
    return bool(deriv and sinh_ok and sp.limit(g, _y, 0, "+") == 1)


def ratio_bounds(m=M, radius=r) -> tuple[sp.Expr, sp.Expr]:
    """(L_M(r), U_M(r)): bounds on |pi_m - pi_m'| / delta over every gate with ||h||_inf <= r and delta > 0."""
    lo, hi = pair_mass_bounds(m, radius)
    return lo * sp.tanh(radius) / (2 * radius), hi / 2


def lower_bound_decreasing() -> bool:
    """L_M(r) is a product of two positive factors decreasing in r (the mass bound, for M >= 2, and g(r)/2)."""
    lo, _ = pair_mass_bounds()
    d_mass = sp.simplify(sp.diff(lo, r) + 4 * (M - 2) * sp.exp(2 * r) / (2 + (M - 2) * sp.exp(2 * r)) ** 2) == 0
    return bool(d_mass and tanh_ratio_decreasing())


def regime_limits() -> tuple[sp.Expr, sp.Expr]:
    """lim_{r -> 0+} of (L_M(r), U_M(r)), symbolic M: both 1/M."""
    lo, hi = ratio_bounds()
    return sp.simplify(sp.limit(lo, r, 0, "+")), sp.simplify(sp.limit(hi, r, 0, "+"))


def sigma0_path_limit() -> sp.Expr:
    """lim_{sigma0 -> 0+} L_M(K sigma0^k) for symbolic K, k > 0 (outputs O(sigma0^k), as in exploration): 1/M."""
    K, k, s0 = sp.symbols("K k sigma0", positive=True)
    lo, _ = ratio_bounds()
    return sp.simplify(sp.limit(lo.subs(r, K * s0 ** k), s0, 0, "+"))


def directional_limit(m: int) -> sp.Expr:
    """lim_{t -> 0+} (pi_0 - pi_1) / (h_0 - h_1) at h = t v, v = (v_0, ..., v_{m-1}) symbolic real, v_0 != v_1."""
    t = sp.Symbol("t", positive=True)
    v = sp.symbols(f"v0:{m}", real=True)
    Z = sum(sp.exp(t * vi) for vi in v)
    ratio = (sp.exp(t * v[0]) - sp.exp(t * v[1])) / Z / (t * (v[0] - v[1]))
    return sp.simplify(sp.limit(ratio, t, 0, "+"))


__all__ = [
    "M",
    "directional_limit",
    "lower_bound_decreasing",
    "pair_mass_bounds",
    "pair_mass_monotone",
    "r",
    "ratio_bounds",
    "regime_limits",
    "sigma0_path_limit",
    "tanh_ratio_decreasing",
]
