import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from moecl_verify.numeric.draws import SingleExpertDraws, draw_single_expert
from moecl_verify.numeric.pool import TaskPool, make_pool
from moecl_verify.numeric.single_expert import run_batched, run_reference, simulate_single_expert

FIELDS = ("tasks", "model_error", "forgetting", "generalization", "final_w")


def assert_runs_close(a, b, rtol=1e-10, atol=1e-12):
    for name in FIELDS:
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=rtol, atol=atol, err_msg=name)


def assert_runs_equal(a, b):
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize("features", ["gaussian", "definition1"])
@pytest.mark.parametrize(
    "N,d,s,R,T,seed",
    [(1, 2, 1, 2, 5, 0), (3, 4, 2, 3, 20, 1), (6, 10, 6, 4, 40, 2), (5, 8, 7, 2, 30, 3)],
)
def test_batched_matches_reference(features, N, d, s, R, T, seed):
    rng = np.random.default_rng(seed)
    pool = make_pool(rng, N=N, d=d, sigma0=1.0)
    draws = draw_single_expert(rng, pool, R=R, T=T, s=s, features=features)
    batched, reference = run_batched(pool, draws), run_reference(pool, draws)
    assert_runs_close(batched, reference)
    assert np.all(np.isnan(batched.forgetting[:, 0]))


def _hand_case():
    # Pool: w_1 = e1, w_2 = e2 in R^3; tasks (0-based) 0, 1, 0; s = 1.
    W = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]])[None, :, :, None]
    draws = SingleExpertDraws(tasks=np.array([[0, 1, 0]]), X=X)
    return TaskPool(W, W), draws


@pytest.mark.parametrize("engine", [run_batched, run_reference])
def test_hand_checked_trajectory(engine):
    # w_1 = proj of e1 on span{e1} = (1, 0, 0):          E_1(w_1) = 0
    # w_2 = w_1 + (0,1,1)/2 * (1 - 0) = (1, .5, .5):       E_2(w_2) = 1.5, E_1(w_2) = 0.5
    # w_3 = w_2 + e3 * (0 - .5) = (1, .5, 0):             E_1(w_3) = E_3(w_3) = .25, E_2(w_3) = 1.25
    pool, draws = _hand_case()
    run = engine(pool, draws)
    np.testing.assert_allclose(run.model_error[0], [0.0, 1.5, 0.25], atol=1e-15)
    assert np.isnan(run.forgetting[0, 0])
    np.testing.assert_allclose(run.forgetting[0, 1:], [0.5 - 0.0, ((0.25 - 0.0) + (1.25 - 1.5)) / 2], atol=1e-15)
    np.testing.assert_allclose(run.generalization[0], [0.0, (0.5 + 1.5) / 2, (0.25 + 1.25 + 0.25) / 3], atol=1e-15)
    np.testing.assert_allclose(run.final_w[0], [1.0, 0.5, 0.0], atol=1e-15)
    step = run.at(2)
    assert step["task"][0] == 1 and step["forgetting"][0] == pytest.approx(0.5)
    with pytest.raises(ValueError):
        run.at(0)
    with pytest.raises(ValueError):
        run.at(4)


def test_first_update_is_projection_and_G1_equals_E1():
    rng = np.random.default_rng(11)
    pool = make_pool(rng, N=3, d=6, sigma0=1.0)
    draws = draw_single_expert(rng, pool, R=5, T=2, s=3, features="definition1")
    run = run_batched(pool, draws)
    for r in range(draws.R):
        X1, truth = draws.X[r, 0], pool.W[draws.tasks[r, 0]]
        projection = X1 @ np.linalg.lstsq(X1, truth, rcond=None)[0]
        w1 = run_batched(pool, SingleExpertDraws(draws.tasks[r : r + 1, :1], draws.X[r : r + 1, :1])).final_w[0]
        np.testing.assert_allclose(w1, projection, rtol=1e-10, atol=1e-12)
        assert run.model_error[r, 0] == pytest.approx(np.sum((projection - truth) ** 2), rel=1e-10, abs=1e-14)
    np.testing.assert_array_equal(run.generalization[:, 0], run.model_error[:, 0])


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    N=st.integers(1, 5),
    ds=st.integers(2, 8).flatmap(lambda d: st.tuples(st.just(d), st.integers(1, d - 1))),
    T=st.integers(1, 15),
    features=st.sampled_from(["gaussian", "definition1"]),
)
def test_each_update_interpolates_and_outputs_finite(seed, N, ds, T, features):
    d, s = ds
    rng = np.random.default_rng(seed)
    pool = make_pool(rng, N=N, d=d, sigma0=1.0)
    draws = draw_single_expert(rng, pool, R=2, T=T, s=s, features=features)
    for t in range(1, T + 1):
        prefix = SingleExpertDraws(draws.tasks[:, :t], draws.X[:, :t])
        w_t = run_batched(pool, prefix).final_w
        X_t, y_t = draws.X[:, t - 1], np.einsum("rds,rd->rs", draws.X[:, t - 1], pool.W[draws.tasks[:, t - 1]])
        resid = np.einsum("rds,rd->rs", X_t, w_t) - y_t
        scale = np.maximum(1.0, np.linalg.norm(y_t, axis=1))
        assert np.all(np.linalg.norm(resid, axis=1) <= 1e-8 * scale)
    run = run_batched(pool, draws)
    for name in ("model_error", "generalization", "final_w"):
        assert np.all(np.isfinite(getattr(run, name)))
    assert np.all(np.isfinite(run.forgetting[:, 1:]))
    assert np.all(run.model_error >= 0) and np.all(run.generalization >= 0)


@pytest.fixture
def small_pool():
    return make_pool(np.random.default_rng(3), N=4, d=6, sigma0=1.0)


def test_simulate_deterministic_and_progress_independent(small_pool):
    kwargs = dict(R=7, T=12, s=3, features="definition1", seed=5, key=("exp", 1), chunk_size=3)
    first = simulate_single_expert(small_pool, **kwargs)
    second = simulate_single_expert(small_pool, **kwargs)
    calls = []
    third = simulate_single_expert(small_pool, **kwargs, progress=lambda done, total: calls.append((done, total)))
    assert_runs_equal(first, second)
    assert_runs_equal(first, third)
    assert calls == [(3, 7), (6, 7), (7, 7)]
    assert first.tasks.shape == (7, 12) and first.final_w.shape == (7, 6)


def test_simulate_chunks_use_documented_streams(small_pool):
    """Rebuild each chunk's draws from the streams the docstring of numeric.streams names, round-major."""
    from moecl_verify.numeric.draws import SingleExpertDraws
    from moecl_verify.numeric.seeding import generator_for

    run = simulate_single_expert(small_pool, R=5, T=6, s=2, seed=9, key=("a",), chunk_size=2)
    sizes = [2, 2, 1]
    start = 0
    for i, size in enumerate(sizes):
        u = generator_for(9, "a", "chunk", i, "tasks").random((6, size))
        tasks = np.floor(u * small_pool.N).astype(np.int64).T
        X = generator_for(9, "a", "chunk", i, "features").standard_normal((6, size, small_pool.d, 2)).swapaxes(0, 1)
        expected = run_reference(small_pool, SingleExpertDraws(tasks=tasks, X=X))
        np.testing.assert_array_equal(run.tasks[start : start + size], tasks)
        np.testing.assert_allclose(run.model_error[start : start + size], expected.model_error, rtol=1e-9)
        start += size


def test_simulate_key_and_seed_matter(small_pool):
    base = simulate_single_expert(small_pool, R=2, T=5, s=2, seed=1)
    assert not np.array_equal(base.model_error, simulate_single_expert(small_pool, R=2, T=5, s=2, seed=2).model_error)
    assert not np.array_equal(
        base.model_error, simulate_single_expert(small_pool, R=2, T=5, s=2, seed=1, key=("x",)).model_error
    )


@pytest.mark.parametrize("kwargs,name", [(dict(R=0), "R"), (dict(chunk_size=0), "chunk_size"), (dict(key="ab"), "key")])
def test_simulate_validation(small_pool, kwargs, name):
    args = dict(R=2, T=3, s=2) | kwargs
    with pytest.raises(ValueError, match=name):
        simulate_single_expert(small_pool, **args)


def test_mismatched_pool_rejected(small_pool):
    other = make_pool(np.random.default_rng(0), N=4, d=5, sigma0=1.0)
    draws = draw_single_expert(np.random.default_rng(0), other, R=1, T=2, s=2)
    with pytest.raises(ValueError, match="d"):
        run_batched(small_pool, draws)
