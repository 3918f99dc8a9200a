"""Algorithm 1 engine: batched = reference, M = 1 = single expert, invariants."""

import numpy as np
import pytest

from moecl_verify.numeric.draws import SingleExpertDraws
from moecl_verify.numeric.moe import MoEConfig, draw_moe, run_moe_batched, run_moe_reference, simulate_moe
from moecl_verify.numeric.pool import make_clustered_pool, make_pool
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.numeric.single_expert import run_batched

FIELDS = ("chosen", "model_error", "forgetting", "generalization", "loads", "expert_sets", "freeze_round", "theta", "w",
          "theta_max")


def _pool(N=4, d=6, clustered=False, seed=0):
    rng = generator_for(seed, "test-moe-pool")
    if clustered:
        return make_clustered_pool(rng, N=N, K=2, d=d, sigma0=0.4, signal_scale=2.5)
    return make_pool(rng, N=N, d=d, sigma0=0.4, signal_scale=2.5)


CONFIGS = [
    ("M>N", False, MoEConfig(M=6, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.1)),
    ("M<N clustered", True, MoEConfig(M=3, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.3)),
    ("no termination", False, MoEConfig(M=5, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.1, termination=False)),
    ("after-update flags, non-sticky", False, MoEConfig(M=4, eta=0.5, alpha=0.5, lam=0.3, Gamma=2.0, flag_timing="after_update", sticky_marks=False)),
    ("printed Lemma 4 factor", False, MoEConfig(M=4, eta=0.3, alpha=0.5, lam=0.3, Gamma=0.1, aux_factor="t")),
    ("oracle router", False, MoEConfig(M=4, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.1, router="oracle", oracle_sets=((0,), (1,), (2, 3), (3,)))),
    ("recorded rounds", False, MoEConfig(M=3, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.2, record_rounds=True)),
]


@pytest.mark.parametrize("name, clustered, cfg", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_batched_equals_reference(name, clustered, cfg):
    pool = _pool(N=5 if clustered else 4, clustered=clustered)
    draws = draw_moe(generator_for(1, name), pool, R=6, T=45, s=3, M=cfg.M)
    fast, slow = run_moe_batched(pool, draws, cfg), run_moe_reference(pool, draws, cfg)
    for field in FIELDS:
        np.testing.assert_allclose(getattr(fast, field), getattr(slow, field), rtol=1e-10, atol=1e-12, err_msg=field)
    for key in fast.rounds:
        np.testing.assert_allclose(fast.rounds[key], slow.rounds[key], rtol=1e-10, atol=1e-12, err_msg=key)


def test_termination_actually_happens_in_the_tested_configs():
    # Guard against a vacuous comparison: the first config must freeze some replicates.
    name, clustered, cfg = CONFIGS[0]
    pool = _pool()
    draws = draw_moe(generator_for(1, name), pool, R=6, T=45, s=3, M=cfg.M)
    assert (run_moe_batched(pool, draws, cfg).freeze_round > 0).any()


@pytest.mark.parametrize("features", ["definition1", "gaussian"])
def test_one_expert_equals_single_expert_engine(features):
    pool = _pool()
    draws = draw_moe(generator_for(2, features), pool, R=5, T=30, s=3, M=1, features=features)
    moe = run_moe_batched(pool, draws, MoEConfig(M=1, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.1))
    single = run_batched(pool, SingleExpertDraws(draws.tasks, draws.X))
    for field in ("model_error", "forgetting", "generalization"):
        np.testing.assert_allclose(getattr(moe, field), getattr(single, field), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(moe.w[:, 0], single.final_w, rtol=1e-12, atol=1e-14)


def test_loads_sum_to_t_and_routed_expert_interpolates():
    pool = _pool()
    cfg = MoEConfig(M=5, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.1, record_rounds=True)
    draws = draw_moe(generator_for(3, "interp"), pool, R=4, T=12, s=3, M=5)
    run = run_moe_batched(pool, draws, cfg)
    np.testing.assert_array_equal(run.rounds["loads"].sum(axis=2), np.broadcast_to(np.arange(1, 13), (4, 12)))
    for T in range(1, 13):
        short = run_moe_batched(pool, draws_prefix(draws, T), cfg)
        for r in range(4):
            m = short.chosen[r, -1]
            X = draws.X[r, T - 1]
            np.testing.assert_allclose(X.T @ short.w[r, m], X.T @ pool.W[draws.tasks[r, T - 1]], rtol=1e-9, atol=1e-12)


def draws_prefix(draws, T):
    return type(draws)(draws.tasks[:, :T], draws.X[:, :T], draws.noise[:, :T])


def test_frozen_gate_never_changes_again():
    pool = _pool()
    cfg = MoEConfig(M=6, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.1)
    draws = draw_moe(generator_for(4, "freeze"), pool, R=8, T=120, s=3, M=6)
    full = run_moe_batched(pool, draws, cfg)
    frozen = full.freeze_round > 0
    assert frozen.sum() >= 4
    cut = int(full.freeze_round[frozen].max())
    early = run_moe_batched(pool, draws_prefix(draws, cut), cfg)
    np.testing.assert_array_equal(early.theta[frozen], full.theta[frozen])


def test_no_termination_never_freezes_and_T1_default():
    cfg = MoEConfig(M=10, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.1, termination=False)
    assert cfg.exploration_rounds == 20
    pool = _pool()
    run = simulate_moe(pool, cfg, R=3, T=40, s=3, seed=0, key=("nt",))
    assert (run.freeze_round == 0).all()


def test_simulate_moe_is_reproducible_and_chunk_invariant_in_shape():
    pool = _pool()
    cfg = MoEConfig(M=3, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.1)
    a = simulate_moe(pool, cfg, R=7, T=20, s=3, seed=5, key=("k",), chunk_size=3)
    b = simulate_moe(pool, cfg, R=7, T=20, s=3, seed=5, key=("k",), chunk_size=3)
    np.testing.assert_array_equal(a.generalization, b.generalization)
    assert a.generalization.shape == (7, 20)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(M=0), "M"),
        (dict(eta=0.0), "eta"),
        (dict(lam=-1.0), "lambda"),
        (dict(Gamma=-0.1), "Gamma"),
        (dict(alpha=float("nan")), "alpha"),
        (dict(flag_timing="sometimes"), "flag_timing"),
        (dict(router="oracle"), "oracle_sets"),
    ],
)
def test_config_validation_names_the_parameter(kwargs, name):
    base = dict(M=3, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.1)
    base.update(kwargs)
    with pytest.raises(ValueError, match=name):
        MoEConfig(**base)


def test_a_runs_arrays_store_routing_records_as_int16_and_restore_them():
    """The cache layout (MoERun.to_arrays) stores tasks, choices and sets as int16 where they fit; from_arrays
    gives back int64 with the same values, and a value beyond int16 keeps its array int64."""
    from moecl_verify.numeric.moe import MoERun

    cfg = MoEConfig(M=3, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.2, record_rounds=True)
    run = simulate_moe(_pool(), cfg, R=7, T=9, s=2, seed=3, key=("compact",))
    arrays = run.to_arrays()
    assert arrays["tasks"].dtype == arrays["chosen"].dtype == arrays["rounds.sets"].dtype == np.int16
    assert arrays["forgetting"].dtype == np.float64
    back = MoERun.from_arrays(arrays)
    for name in ("tasks", "chosen", "expert_sets", "freeze_round", "loads", "generalization", "theta"):
        assert getattr(back, name).dtype == getattr(run, name).dtype
        np.testing.assert_array_equal(getattr(back, name), getattr(run, name))
    for name, value in run.rounds.items():
        assert back.rounds[name].dtype == value.dtype
        np.testing.assert_array_equal(back.rounds[name], value)
    wide = dict(arrays, freeze_round=np.full(7, 40_000, dtype=np.int64))
    assert MoERun(**{**{k: getattr(back, k) for k in ("tasks", "chosen", "model_error", "forgetting",
                                                          "generalization", "loads", "expert_sets", "theta", "w",
                                                          "theta_max")}, "freeze_round": wide["freeze_round"]},
                  rounds={}).to_arrays()["freeze_round"].dtype == np.int64
