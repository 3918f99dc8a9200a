"""Draws streamed in blocks of rounds (numeric.streams): the properties the sweeps and engines rely on."""

import numpy as np
import pytest
from scipy import stats

from moecl_verify.numeric.draws import TaskSchedule
from moecl_verify.numeric.moe import MoEConfig, run_moe_batched, run_moe_reference
from moecl_verify.numeric.pool import make_pool
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.numeric.single_expert import run_batched, run_reference
from moecl_verify.numeric.streams import DrawStream


@pytest.fixture
def pool():
    return make_pool(generator_for(3, "streams", "pool"), N=4, d=6, sigma0=0.3, signal_scale=1 / 0.3)


def _stream(pool, **kw):
    base = dict(pool=pool, R=5, T=23, s=3, seed=4, key=("s",), features="definition1", M=3)
    return DrawStream(**{**base, **kw})


@pytest.mark.parametrize("features", ["definition1", "gaussian"])
def test_draws_do_not_depend_on_the_block_size(pool, features):
    whole = _stream(pool, features=features, block=100).materialize()
    for block in (1, 7, 23):
        part = _stream(pool, features=features, block=block).materialize()
        np.testing.assert_array_equal(part.tasks, whole.tasks)
        np.testing.assert_array_equal(part.X, whole.X)
        np.testing.assert_array_equal(part.noise, whole.noise)


def test_a_longer_horizon_replays_the_first_rounds(pool):
    short = _stream(pool, T=9, block=4).materialize()
    long = _stream(pool, T=40, block=16).materialize()
    np.testing.assert_array_equal(long.tasks[:, :9], short.tasks)
    np.testing.assert_array_equal(long.X[:, :9], short.X)
    np.testing.assert_array_equal(long.noise[:, :9], short.noise)


def test_kinds_do_not_shift_each_other(pool):
    """A task schedule changes the tasks (and so the signal columns) but not the noise columns or routing noise."""
    plain = _stream(pool).materialize()
    zipf = _stream(pool, task_probs=TaskSchedule.zipf(4, 2.0)).materialize()
    assert not np.array_equal(plain.tasks, zipf.tasks)
    np.testing.assert_array_equal(plain.noise, zipf.noise)
    gaussian = _stream(pool, features="gaussian").materialize()
    gaussian_zipf = _stream(pool, features="gaussian", task_probs=TaskSchedule.zipf(4, 2.0)).materialize()
    np.testing.assert_array_equal(gaussian.X, gaussian_zipf.X)


def test_definition1_has_one_signal_column_per_round(pool):
    draws = _stream(pool, sigma_t=0.0).materialize()
    nonzero = np.abs(draws.X).sum(axis=2) > 0  # (R, T, s): only the signal column survives sigma_t = 0
    assert (nonzero.sum(axis=-1) == 1).all()
    column = draws.X[nonzero.nonzero()[0], nonzero.nonzero()[1], :, nonzero.nonzero()[2]]
    V = pool.V[draws.tasks.ravel()]
    beta = np.einsum("kd,kd->k", column, V) / np.einsum("kd,kd->k", V, V)
    assert (beta > 0).all() and (beta <= 1.0).all()
    np.testing.assert_allclose(column, beta[:, None] * V, atol=1e-12)


@pytest.mark.parametrize("features", ["definition1", "gaussian", "gaussian_complement"])
def test_single_expert_streamed_equals_materialized_equals_reference(pool, features):
    stream = _stream(pool, features=features, M=None, block=5)
    streamed = run_batched(pool, stream)
    materialized = run_batched(pool, stream.materialize())
    reference = run_reference(pool, stream)
    np.testing.assert_array_equal(streamed.generalization, materialized.generalization)
    np.testing.assert_allclose(streamed.generalization, reference.generalization, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(streamed.final_w, reference.final_w, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(streamed.tasks, reference.tasks)


def test_moe_streamed_equals_materialized_equals_reference(pool):
    cfg = MoEConfig(M=3, eta=0.5, alpha=0.5, lam=0.1, Gamma=0.1)
    stream = _stream(pool, block=6)
    streamed = run_moe_batched(pool, stream, cfg)
    materialized = run_moe_batched(pool, stream.materialize(), cfg)
    reference = run_moe_reference(pool, stream, cfg)
    for name in ("chosen", "tasks"):
        np.testing.assert_array_equal(getattr(streamed, name), getattr(materialized, name))
        np.testing.assert_array_equal(getattr(streamed, name), getattr(reference, name))
    np.testing.assert_array_equal(streamed.theta, materialized.theta)
    np.testing.assert_allclose(streamed.generalization, reference.generalization, rtol=1e-8, atol=1e-10)


def test_complement_basis_gives_the_same_law():
    """gaussian_complement draws d - s normals per round instead of d s; the model error's law must not move.

    Two independent samples of E_t at t = 1 and t = 4 (d = 10, s = 6): a two-sample KS test.  A complement
    of the wrong dimension (s columns, i.e. span(X_t)^perp of dimension s) is told apart by the same test."""
    big = make_pool(generator_for(5, "complement", "pool"), N=3, d=10, sigma0=1.0)

    def errors(features, s, key):
        run = run_batched(big, DrawStream(pool=big, R=3000, T=4, s=s, seed=8, key=(key,), features=features))
        return run.model_error[:, 0], run.model_error[:, 3]

    gaussian = errors("gaussian", 6, "g")
    complement = errors("gaussian_complement", 6, "c")
    wrong = errors("gaussian_complement", 4, "w")  # complement of dimension 6: the law of s = 4 features
    for a, b, c in zip(gaussian, complement, wrong):
        assert stats.ks_2samp(a, b).pvalue > 1e-3
        assert stats.ks_2samp(a, c).pvalue < 1e-6


def test_complement_is_single_expert_only(pool):
    with pytest.raises(ValueError, match="gate"):
        _stream(pool, features="gaussian_complement", M=3)


@pytest.mark.parametrize("kw, match", [(dict(block=0), "block"), (dict(features="x"), "features"),
                                       (dict(T=0), "T"), (dict(key="abc"), "key")])
def test_bad_input_is_refused(pool, kw, match):
    with pytest.raises(ValueError, match=match):
        _stream(pool, **kw)
