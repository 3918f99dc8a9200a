import numpy as np
from hypothesis import given, settings, strategies as st

from moecl_verify.numeric.expert import min_norm_update


def _problem(seed, d, s, batch=()):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal(batch + (d, s))
    w_prev = rng.standard_normal(batch + (d,)) * rng.uniform(0.1, 10)
    y = rng.standard_normal(batch + (s,)) * rng.uniform(0.1, 10)
    return w_prev, X, y


dims = st.integers(2, 12).flatmap(lambda d: st.tuples(st.just(d), st.integers(1, d - 1)))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), ds=dims)
def test_update_interpolates_and_is_closest(seed, ds):
    d, s = ds
    w_prev, X, y = _problem(seed, d, s)
    w = min_norm_update(w_prev, X, y)
    assert np.all(np.isfinite(w))

    # Interpolation: X^T w_t = y_t.
    scale = max(1.0, np.linalg.norm(y), np.linalg.norm(X, 2) * np.linalg.norm(w))
    assert np.linalg.norm(X.T @ w - y) <= 1e-8 * scale

    # The step lies in col(X): its residual after projecting onto col(X) vanishes.
    step = w - w_prev
    coef, *_ = np.linalg.lstsq(X, step, rcond=None)
    assert np.linalg.norm(step - X @ coef) <= 1e-8 * max(1.0, np.linalg.norm(step))

    # Moving within the solution set (null space of X^T) never gets closer to w_prev.
    rng = np.random.default_rng(seed ^ 0xABCDEF)
    q, _ = np.linalg.qr(X, mode="complete")
    null_basis = q[:, s:]
    best = np.sum(step**2)
    for _ in range(5):
        z = null_basis @ rng.standard_normal(d - s)
        assert np.sum((w + z - w_prev) ** 2) >= best - 1e-9 * max(1.0, best)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), ds=dims, batch=st.sampled_from([(1,), (3,), (2, 4)]))
def test_batched_matches_elementwise(seed, ds, batch):
    d, s = ds
    w_prev, X, y = _problem(seed, d, s, batch)
    w = min_norm_update(w_prev, X, y)
    assert w.shape == batch + (d,)
    for idx in np.ndindex(*batch):
        np.testing.assert_allclose(w[idx], min_norm_update(w_prev[idx], X[idx], y[idx]), rtol=1e-12, atol=1e-12)


def test_hand_case_single_column():
    # d = 3, s = 1: project onto span{x}; from w_prev = 0 it is (x.y / x.x) x.
    x = np.array([[1.0], [1.0], [0.0]])
    w = min_norm_update(np.zeros(3), x, np.array([4.0]))
    np.testing.assert_allclose(w, [2.0, 2.0, 0.0])
