import numpy as np
import pytest

from moecl_verify.numeric.draws import SingleExpertDraws, draw_single_expert
from moecl_verify.numeric.pool import make_pool


@pytest.fixture
def pool():
    return make_pool(np.random.default_rng(0), N=4, d=5, sigma0=1.0, signal_scale=2.0)


@pytest.mark.parametrize("features", ["gaussian", "definition1"])
def test_shapes_dtypes_reproducible(pool, features):
    a = draw_single_expert(np.random.default_rng(1), pool, R=3, T=7, s=2, features=features)
    b = draw_single_expert(np.random.default_rng(1), pool, R=3, T=7, s=2, features=features)
    assert a.tasks.shape == (3, 7) and a.tasks.dtype == np.int64
    assert a.X.shape == (3, 7, 5, 2) and a.X.dtype == np.float64
    assert a.tasks.min() >= 0 and a.tasks.max() < pool.N
    np.testing.assert_array_equal(a.tasks, b.tasks)
    np.testing.assert_array_equal(a.X, b.X)


def test_definition1_structure(pool):
    C, sigma_t, s = 0.5, 0.01, 3
    draws = draw_single_expert(
        np.random.default_rng(2), pool, R=4, T=50, s=s, features="definition1", sigma_t=sigma_t, beta_max=C
    )
    for r in range(draws.R):
        for j in range(draws.T):
            X = draws.X[r, j]
            v = pool.V[draws.tasks[r, j]]
            # Exactly one column is parallel to v with coefficient in (0, C].
            betas = [X[:, k] @ v / (v @ v) for k in range(s)]
            hits = [k for k in range(s) if np.allclose(X[:, k], betas[k] * v, rtol=1e-12, atol=0)]
            assert len(hits) == 1
            assert 0 < betas[hits[0]] <= C


def test_definition1_positions_cover_all_columns(pool):
    draws = draw_single_expert(np.random.default_rng(3), pool, R=2, T=200, s=3, features="definition1")
    v = pool.V[draws.tasks]  # (R, T, d)
    beta = np.einsum("rtds,rtd->rts", draws.X, v) / np.einsum("rtd,rtd->rt", v, v)[..., None]
    resid = np.linalg.norm(draws.X - beta[:, :, None, :] * v[..., None], axis=2)
    positions = np.argmin(resid, axis=2)
    assert set(np.unique(positions)) == {0, 1, 2}


def test_tasks_drawn_before_features(pool):
    # Fixed draw order: the task sequence does not depend on the feature model.
    a = draw_single_expert(np.random.default_rng(4), pool, R=2, T=9, s=2, features="gaussian")
    b = draw_single_expert(np.random.default_rng(4), pool, R=2, T=9, s=2, features="definition1")
    np.testing.assert_array_equal(a.tasks, b.tasks)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(features="iid"), "features"),
        (dict(s=0), "s"),
        (dict(s=5), "s"),
        (dict(R=0), "R"),
        (dict(T=0), "T"),
        (dict(sigma_t=-0.1), "sigma_t"),
        (dict(beta_max=0.0), "beta_max"),
    ],
)
def test_validation(pool, kwargs, name):
    args = dict(R=1, T=1, s=2) | kwargs
    with pytest.raises(ValueError, match=name):
        draw_single_expert(np.random.default_rng(0), pool, **args)


def test_draws_shape_check():
    with pytest.raises(ValueError):
        SingleExpertDraws(tasks=np.zeros((2, 3), dtype=np.int64), X=np.zeros((2, 4, 5, 1)))
