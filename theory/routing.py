"""Exact routing probabilities of the noisy top-1 router (eq. 1) and their sensitivity (Lemma 2).

Eq. (1) routes a task to ``m_t = argmax_m (h_m + r^(m))`` with ``r^(m)`` i.i.d.
Uniform[0, lambda].  Appendix B (Lemma 2) calls the routing probabilities

    p_m(h) = P(argmax_m' (h_m' + r^(m')) = m).

With ``x = h / lambda`` and ``V_m = r^(m) / lambda`` ~ Uniform[0, 1],

    p_m = int_0^1 prod_{j != m} F(u + x_m - x_j) du,     F(z) = min(1, max(0, z)),

an integral of a piecewise polynomial in u (degree <= M - 1) whose pieces are
cut at the points where some ``u + x_m - x_j`` crosses 0 or 1.  This module
integrates it piece by piece in exact arithmetic: rational inputs (int,
``fractions.Fraction``) give exact rational probabilities; float inputs give
floats by the same formula.  Ties have probability zero, so the argmax is a.s.
unique and sum_m p_m = 1.

Derived facts used by the Lemma 2 checks (checked exactly in the tests and in
``moecl_verify.packs.moe_cl.claims.router.lemma2``):

* dp_m/dh_j = -(1/lambda) int_0^1 1{0 <= u + x_m - x_j <= 1} prod_{k != m, j} F(u + x_m - x_k) du
  for j != m, and dp_m/dh_m = -sum_{j != m} dp_m/dh_j (p is invariant under a
  common shift of h).  Writing Y = max_{j != m}(x_j + V_j),
  dp_m/dh_m = (1/lambda) P(Y in [x_m, x_m + 1]) <= 1/lambda, with equality when
  all outputs are equal.
* Hence the l_inf -> l_inf operator norm of the Jacobian is max_m 2 dp_m/dh_m
  <= 2/lambda, and ||p - p_hat||_inf <= (2/lambda) ||h - h_hat||_inf with the
  constant 2/lambda sharp for every M >= 2 (approached by h = 0,
  h_hat = eps (1, -1, ..., -1) as eps -> 0).
* The proof of Lemma 2 couples the two routings through the same noise; the
  probability that the argmax differs is 1 - sum_m int_0^1 prod_{j != m}
  F(u + min(x_m - x_j, xh_m - xh_j)) du (expert m wins under both outputs).
"""

from __future__ import annotations

from fractions import Fraction
from numbers import Rational
from typing import Sequence

__all__ = [
    "as_exact",
    "integrate_piecewise",
    "jacobian",
    "lipschitz_lower_pair",
    "routing_probabilities",
    "switch_probability",
]


def as_exact(values: Sequence) -> tuple:
    """Rationals (int, Fraction, numbers.Rational) become Fractions; anything else becomes float."""
    if all(isinstance(v, Rational) and not isinstance(v, bool) for v in values):
        return tuple(Fraction(v) for v in values)
    return tuple(float(v) for v in values)


def _poly_mul(a: list, b: list) -> list:
    out = [0] * (len(a) + len(b) - 1)
    for i, ai in enumerate(a):
        for j, bj in enumerate(b):
            out[i + j] += ai * bj
    return out


def _poly_integral(coeffs: list, lo, hi):
    """int_lo^hi sum_k c_k u^k du, exactly for Fractions."""
    total = 0
    lo_pow, hi_pow = lo, hi
    for k, c in enumerate(coeffs):
        total += c * (hi_pow - lo_pow) / (k + 1)
        lo_pow, hi_pow = lo_pow * lo, hi_pow * hi
    return total


def integrate_piecewise(cdf_offsets: Sequence, pdf_offsets: Sequence = ()):
    """int_0^1 prod_a F(u + a) prod_b 1{0 <= u + b <= 1} du, exactly.

    ``cdf_offsets`` are the shifts ``a`` of the clipped uniform CDF factors,
    ``pdf_offsets`` the shifts ``b`` of the uniform density (indicator)
    factors.  Breakpoints: every ``-a``, ``1 - a`` (and the same for ``b``)
    inside (0, 1); on each piece every factor is 0, 1 or ``u + a``.
    """
    offsets = list(cdf_offsets) + list(pdf_offsets)
    zero = offsets[0] * 0 if offsets else 0
    points = {zero, zero + 1}
    for a in offsets:
        for p in (-a, 1 - a):
            if 0 < p < 1:
                points.add(p)
    cuts = sorted(points)
    total = zero
    for lo, hi in zip(cuts, cuts[1:]):
        mid = (lo + hi) / 2
        poly = [zero + 1]
        alive = True
        for a in cdf_offsets:
            z = mid + a
            if z <= 0:
                alive = False
                break
            if z < 1:
                poly = _poly_mul(poly, [a, zero + 1])
        if alive:
            for b in pdf_offsets:
                z = mid + b
                if not 0 < z < 1:
                    alive = False
                    break
        if alive:
            total += _poly_integral(poly, lo, hi)
    return total


def _scaled(h: Sequence, lam) -> tuple:
    values = as_exact(list(h) + [lam])
    lam_ = values[-1]
    if not lam_ > 0:
        raise ValueError(f"lambda must be > 0, got {lam!r}")
    if len(values) < 3:
        raise ValueError("routing needs at least two experts")
    return tuple(v / lam_ for v in values[:-1]), lam_


def routing_probabilities(h: Sequence, lam) -> tuple:
    """p_m = P(argmax_m' (h_m' + r_m') = m), r_m' i.i.d. Uniform[0, lam] (eq. 1); exact for rational input."""
    x, _ = _scaled(h, lam)
    M = len(x)
    return tuple(integrate_piecewise([x[m] - x[j] for j in range(M) if j != m]) for m in range(M))


def jacobian(h: Sequence, lam) -> tuple[tuple, ...]:
    """J[m][j] = dp_m / dh_j, exactly (see the module docstring)."""
    x, lam_ = _scaled(h, lam)
    M = len(x)
    rows = []
    for m in range(M):
        row = []
        for j in range(M):
            if j == m:
                row.append(None)
                continue
            others = [x[m] - x[k] for k in range(M) if k not in (m, j)]
            row.append(-integrate_piecewise(others, [x[m] - x[j]]) / lam_)
        row[m] = -sum(v for v in row if v is not None)
        rows.append(tuple(row))
    return tuple(rows)


def switch_probability(h: Sequence, h_hat: Sequence, lam) -> object:
    """P(argmax_m (h_m + r_m) != argmax_m (h_hat_m + r_m)) with the same noise r (Lemma 2's coupling)."""
    if len(h) != len(h_hat):
        raise ValueError("h and h_hat must have the same length")
    both, _ = _scaled(list(h) + list(h_hat), lam)
    M = len(h)
    x, xh = both[:M], both[M:]
    stay = sum(
        integrate_piecewise([min(x[m] - x[j], xh[m] - xh[j]) for j in range(M) if j != m]) for m in range(M)
    )
    return 1 - stay


def lipschitz_lower_pair(M: int, eps) -> tuple[tuple, tuple]:
    """h = 0 and h_hat = eps (1, -1, ..., -1): ||h - h_hat||_inf = eps and p_1 moves by ~ 2 eps / lambda."""
    eps = as_exact([eps])[0]
    zero = eps * 0
    return tuple(zero for _ in range(M)), tuple([eps] + [-eps] * (M - 1))
