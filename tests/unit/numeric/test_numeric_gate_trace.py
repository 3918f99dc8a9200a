"""The gate trace replays Algorithm 1 exactly as numeric.moe runs it, and records consistent per-round state."""

import numpy as np
import pytest

from moecl_verify.numeric.chunks import chunk_sizes
from moecl_verify.numeric.gate_trace import GateTrace, run_gate_trace, signal_columns
from moecl_verify.numeric.moe import MoEConfig, draw_moe, draw_moe_chunk, run_moe_batched, simulate_moe
from moecl_verify.numeric.pool import make_pool
from moecl_verify.numeric.seeding import generator_for

POOL = make_pool(generator_for(0, "test-gate-trace-pool"), N=3, d=6, sigma0=0.4, signal_scale=2.5)
# Gamma and T chosen so that some replicates freeze inside the horizon and some do not.
CFG = MoEConfig(M=4, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.02, record_rounds=True)


@pytest.fixture(scope="module")
def pair():
    draws = draw_moe(generator_for(1, "trace"), POOL, R=8, T=16, s=3, M=CFG.M)
    # The trace replays the numpy engine (an observer); the compiled one agrees up to rounding only.
    return draws, run_moe_batched(POOL, draws, CFG, engine="numpy"), run_gate_trace(POOL, draws, CFG)


def test_trace_reproduces_the_engine(pair):
    draws, run, trace = pair
    assert (run.freeze_round > 0).any() and (run.freeze_round == 0).any()  # both regimes present
    np.testing.assert_array_equal(trace.chosen, run.chosen)
    np.testing.assert_array_equal(trace.freeze_round, run.freeze_round)
    np.testing.assert_array_equal(trace.theta[:, -1], run.theta)
    np.testing.assert_array_equal(trace.h, run.rounds["h"])
    np.testing.assert_array_equal(trace.counts, run.rounds["loads"])
    np.testing.assert_allclose(np.abs(trace.theta[:, 1:]).max(axis=(1, 2, 3)), run.theta_max, rtol=0, atol=0)


def test_recorded_gradient_parts_drive_the_updates(pair):
    draws, run, trace = pair
    R, T, M = trace.R, trace.T, CFG.M
    t = np.arange(1, T + 1)
    rows = np.arange(R)[:, None]
    # coef_aux = pi_{m_t} alpha M f_t^(m_t) / t with f from the counts (eq. 7), recomputed by hand.
    pi_chosen = np.take_along_axis(trace.pi, trace.chosen[..., None], axis=-1)[..., 0]
    f_chosen = trace.counts[rows, np.arange(T)[None, :], trace.chosen] / t
    np.testing.assert_allclose(trace.coef_aux, pi_chosen * CFG.alpha * M * f_chosen / t, rtol=1e-13)
    for j in range(T):
        step = trace.theta[:, j + 1] - trace.theta[:, j]
        expected = np.where(trace.applied[:, j, None, None], -CFG.eta * trace.gradient(j), 0.0)
        np.testing.assert_allclose(step, expected, rtol=1e-9, atol=1e-14)
    # The infinity norms factorize: compare with the norms of the full vectors.
    full = np.stack([np.abs(trace.gradient(j)).max(axis=-1) for j in range(T)], axis=1)
    np.testing.assert_allclose(trace.grad_inf("task"), full, rtol=1e-12)
    np.testing.assert_allclose(trace.grad_inf("loc") + trace.grad_inf("aux"), full, rtol=1e-12)


def test_updates_stop_after_the_freeze(pair):
    _, run, trace = pair
    for r in range(trace.R):
        fr = int(trace.freeze_round[r])
        if fr:
            assert trace.applied[r, : fr - 1].all() and not trace.applied[r, fr - 1:].any()
            assert np.array_equal(trace.theta[r, fr - 1], trace.theta[r, -1])
        else:
            assert trace.applied[r].all()


def test_signal_columns_on_a_manufactured_matrix():
    rng = np.random.default_rng(3)
    d, s = 5, 4
    v = rng.standard_normal((2, d))
    X = 0.1 * rng.standard_normal((2, d, s))
    X[0, :, 2] = 0.7 * v[0]
    X[1, :, 0] = 0.05 * v[1]
    pos, beta, noise = signal_columns(X, v)
    assert pos.tolist() == [2, 0]
    np.testing.assert_allclose(beta, [0.7, 0.05], rtol=1e-12)
    np.testing.assert_allclose(noise[0], X[0, :, [0, 1, 3]].sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(noise[1], X[1, :, 1:].sum(axis=1), rtol=1e-12)


def test_noise_sum_and_beta_match_definition1(pair):
    draws, _, trace = pair
    v = POOL.V[trace.tasks]
    np.testing.assert_allclose(trace.noise_sum + trace.beta[..., None] * v, trace.xbar, rtol=1e-12, atol=1e-12)
    assert (trace.beta > 0).all() and (trace.beta <= 1.0).all()


def test_traces_of_chunk_draws_are_simulate_moes_trajectories():
    cfg = MoEConfig(M=3, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.2)
    kw = dict(R=7, T=12, s=3, seed=5, key=("k", "x"), chunk_size=3)
    trace = GateTrace.concatenate([
        run_gate_trace(POOL, draw_moe_chunk(POOL, M=3, size=size, T=12, s=3, features="definition1", sigma_t=0.1,
                                            beta_max=1.0, seed=5, key=("k", "x"), index=i), cfg)
        for i, size in enumerate(chunk_sizes(7, 3))])
    run = simulate_moe(POOL, cfg, engine="numpy", **kw)  # the trace is the numpy engine's (an observer)
    np.testing.assert_array_equal(trace.chosen, run.chosen)
    np.testing.assert_array_equal(trace.theta[:, -1], run.theta)


def test_only_the_learned_router_is_traced():
    cfg = MoEConfig(M=3, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.2, router="oracle", oracle_sets=((0,), (1,), (2,)))
    draws = draw_moe(generator_for(2, "oracle"), POOL, R=2, T=3, s=3, M=3)
    with pytest.raises(ValueError, match="learned"):
        run_gate_trace(POOL, draws, cfg)


def test_recording_fewer_fields_changes_nothing_recorded(pair):
    """``factors=False`` (the router-phase claims' recording) keeps the same trajectory and per-round state."""
    draws, _, trace = pair
    slim = run_gate_trace(POOL, draws, CFG, factors=False)
    for name in ("tasks", "chosen", "theta", "h", "delta", "grad_gap", "applied", "freeze_round", "w"):
        np.testing.assert_array_equal(getattr(slim, name), getattr(trace, name))
    assert slim.T1 == trace.T1 == CFG.exploration_rounds
    assert all(getattr(slim, name) is None for name in ("pi", "xbar", "coef_loc", "coef_aux", "counts", "noise_sum",
                                                         "beta"))
    with pytest.raises(ValueError, match="factors"):
        slim.gradient(0)
