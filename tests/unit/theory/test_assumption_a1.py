"""Assumption A1 (E||P_t u||^2 = (s/d)||u||^2) under the two feature models, by Monte Carlo.

Checks theory.single_expert.definition1_projection_gain against the draws the
simulator really uses: gain s/d in every direction for Gaussian columns; gain 1
along v_{n_t} and (s-1)/(d-1) across it for Definition 1.
"""

import numpy as np

from moecl_verify.numeric.draws import draw_single_expert
from moecl_verify.numeric.pool import make_pool
from moecl_verify.theory.single_expert import definition1_projection_gain

D_, S_ = 8, 3


def _gains(features):
    rng = np.random.default_rng(11)
    pool = make_pool(rng, N=1, d=D_, sigma0=1.0)
    draws = draw_single_expert(rng, pool, R=20_000, T=1, s=S_, features=features)
    X = draws.X[:, 0]  # (R, d, s)
    P = X @ np.linalg.solve(np.swapaxes(X, -1, -2) @ X, np.swapaxes(X, -1, -2))
    v = pool.V[0] / np.linalg.norm(pool.V[0])
    u = np.zeros(D_)
    u[0] = 1.0
    u_perp = u - (u @ v) * v
    u_perp /= np.linalg.norm(u_perp)
    along = np.einsum("i,rij,j->r", v, P, v)
    across = np.einsum("i,rij,j->r", u_perp, P, u_perp)
    return along, across


def _close(sample, target, k=6):
    se = sample.std(ddof=1) / np.sqrt(sample.size)
    return abs(sample.mean() - target) < k * se + 1e-12


def test_gaussian_features_satisfy_a1():
    along, across = _gains("gaussian")
    assert _close(along, S_ / D_) and _close(across, S_ / D_)


def test_definition1_violates_a1_as_derived():
    along, across = _gains("definition1")
    gain_along, gain_across = definition1_projection_gain(D_, S_)
    assert np.allclose(along, float(gain_along))  # exactly 1: v is a column
    assert _close(across, float(gain_across))
    assert not _close(across, S_ / D_)
