"""The sigma0 sweeps' design: one base pool per pool index, common random numbers, a two-level bootstrap."""

import numpy as np
import pytest

from moecl_verify.packs.moe_cl import PACK
from moecl_verify.packs.moe_cl.experiments.sweep_design import replicate_key, replicates_per_pool, sweep_pool
from moecl_verify.checks.scaling import fit_exponent, fit_exponent_pools
from moecl_verify.numeric.moe import MoEConfig, simulate_moe
from moecl_verify.numeric.seeding import generator_for

SIGMA0 = [0.4, 0.2, 0.1, 0.05, 0.025]


def test_a_pool_is_one_base_pool_scaled_to_each_sigma0():
    a = sweep_pool("x", 1, N=3, d=5, sigma0=0.4)
    b = sweep_pool("x", 1, N=3, d=5, sigma0=0.025)
    np.testing.assert_allclose(a.W / 0.4, b.W / 0.025, rtol=1e-12)
    np.testing.assert_allclose(a.V, b.V, rtol=1e-12)
    other = sweep_pool("x", 2, N=3, d=5, sigma0=0.4)
    assert not np.allclose(a.W, other.W)


def test_replicates_are_shared_among_pools_and_keys_never_name_sigma0():
    standard, smoke = PACK.budgets["standard"], PACK.budgets["smoke"]
    assert replicates_per_pool(300, standard) * standard.sweep_pools >= 300
    assert replicates_per_pool(30, smoke) == -(-30 // smoke.sweep_pools)
    key = replicate_key("prop2", "0.5", pool=3)
    assert key == ("prop2", "0.5", "pool", 3)


def test_two_sigma0_of_a_sweep_replay_the_same_draws():
    """The routing noise, tasks and features of the first rounds agree at two sigma0 of one pool: with the oracle
    router (each task to a uniformly chosen expert of its set, by the routing noise) the routing decisions must
    then be identical."""
    runs = []
    for s0, T in ((0.4, 30), (0.1, 50)):
        pool = sweep_pool("t", 0, N=3, d=6, sigma0=s0)
        cfg = MoEConfig(M=4, eta=0.1, alpha=0.1, lam=0.1, Gamma=0.1, termination=False, router="oracle",
                        oracle_sets=((0, 1), (2,), (3,)))
        runs.append(simulate_moe(pool, cfg, R=7, T=T, s=3, seed=2, key=replicate_key("t", "1", pool=0),
                                 chunk_size=1000))
    np.testing.assert_array_equal(runs[0].tasks, runs[1].tasks[:, :30])
    np.testing.assert_array_equal(runs[0].chosen, runs[1].chosen[:, :30])
    # Model errors scale with sigma0^2 exactly (same draws, pool scaled by sigma0, a linear dynamics).
    np.testing.assert_allclose(runs[0].model_error / 0.4**2, runs[1].model_error[:, :30] / 0.1**2, rtol=1e-9)


def _paired(k_by_pool, R=40, noise=0.3, seed=0):
    """samples[p][j] = C_p sigma0_j^k_p (1 + noise e_r), with the replicate factor e_r common to every sigma0."""
    rng = np.random.default_rng(seed)
    out = []
    for k in k_by_pool:
        C = rng.uniform(0.5, 2.0)
        e = 1 + noise * rng.uniform(-1, 1, R)
        out.append([C * s0**k * e for s0 in SIGMA0])
    return out


def test_pooled_fit_recovers_the_exponent_and_pairing_shrinks_its_error():
    samples = _paired([1.5] * 4)
    fit = fit_exponent_pools(SIGMA0, samples, generator_for(0, "t"), resamples=500)
    assert fit.exponent == pytest.approx(1.5, abs=1e-9)  # a common factor per replicate cancels in every slope
    assert fit.stderr < 1e-9 and fit.pools == 4
    # The same numbers fitted as if unpaired (replicates resampled independently per sigma0) have a real spread.
    flat = [np.concatenate([pool[j] for pool in samples]) for j in range(len(SIGMA0))]
    unpaired = fit_exponent(SIGMA0, flat, generator_for(0, "t"), resamples=500)
    assert unpaired.stderr > 0.003


def test_pooled_fit_carries_the_spread_between_pools():
    """Pools whose exponents differ (1.2 .. 1.8) give an exponent whose s.e. reflects that spread; pools that agree
    do not."""
    spread = fit_exponent_pools(SIGMA0, _paired([1.2, 1.4, 1.6, 1.8]), generator_for(0, "t"), resamples=1000)
    agree = fit_exponent_pools(SIGMA0, _paired([1.5] * 4), generator_for(0, "t"), resamples=1000)
    assert spread.stderr > 0.05 > agree.stderr
    assert spread.low < 1.5 < spread.high


def test_pooled_fit_skips_undefined_replicates():
    samples = _paired([1.0] * 3)
    samples[0][2][:5] = np.nan
    fit = fit_exponent_pools(SIGMA0, samples, generator_for(0, "t"), resamples=200)
    assert np.isfinite(fit.exponent) and fit.replicates == 3 * 40 - 5


@pytest.mark.parametrize("bad, match", [([[np.ones(3)] * 5], "two pools"), ([[np.ones(3)] * 4] * 2, "one sample"),
                                        ([[np.ones(1)] * 5] * 2, ">= 2")])
def test_pooled_fit_refuses_bad_designs(bad, match):
    with pytest.raises(ValueError, match=match):
        fit_exponent_pools(SIGMA0, bad, generator_for(0, "t"))


def test_pooled_quantile_fit_is_the_quantile_over_every_pools_replicates():
    # y = sigma0^2 u with u uniform on (0, 1): the 0.9-quantile is 0.9 sigma0^2 up to sampling, exponent 2.
    rng = np.random.default_rng(3)
    u = [rng.random(400) for _ in range(3)]
    samples = [[s0**2 * pool_u for s0 in SIGMA0] for pool_u in u]
    fit = fit_exponent_pools(SIGMA0, samples, generator_for(0, "q"), resamples=300, quantile=0.9)
    assert fit.exponent == pytest.approx(2.0, abs=1e-9)  # every replicate scales alike: the slope is exact
    everything = np.concatenate(u)
    assert fit.means[0] == pytest.approx(SIGMA0[0] ** 2 * np.quantile(everything, 0.9))
    mean_fit = fit_exponent_pools(SIGMA0, samples, generator_for(0, "q"), resamples=300)
    assert mean_fit.means[0] == pytest.approx(SIGMA0[0] ** 2 * everything.mean())
