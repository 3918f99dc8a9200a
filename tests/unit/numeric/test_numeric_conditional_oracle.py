"""The conditional expectation oracle (eq. 42 given the routing)."""

import itertools

import numpy as np

from moecl_verify.numeric.conditional_oracle import conditional_errors
from moecl_verify.numeric.moe import MoEConfig, simulate_moe
from moecl_verify.numeric.pool import make_pool
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.theory import prop4


def test_one_expert_averaged_over_all_task_sequences_is_proposition4_derived():
    pool = make_pool(generator_for(0, "oracle-test"), N=2, d=5, sigma0=0.7)
    r, T = 0.4, 5
    seqs = np.array(list(itertools.product(range(pool.N), repeat=T)))  # every sequence, equally likely
    res = conditional_errors(pool.W, seqs, np.zeros_like(seqs), 1, r)
    for t in range(2, T + 1):
        exact = prop4.forgetting_derived().evaluate(r=r, S=pool.S, D=pool.D, t=t)
        assert abs(res["forgetting"][:, t - 1].mean() - exact) < 1e-12
        exact_g = prop4.generalization_derived().evaluate(r=r, S=pool.S, D=pool.D, T=t)
        assert abs(res["generalization"][:, t - 1].mean() - exact_g) < 1e-12


def test_oracle_router_gaussian_features_match_monte_carlo():
    pool = make_pool(generator_for(1, "oracle-test"), N=3, d=8, sigma0=0.5)
    cfg = MoEConfig(M=4, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.3, router="oracle", oracle_sets=((0, 3), (1,), (2,)))
    run = simulate_moe(pool, cfg, R=6000, T=8, s=3, features="gaussian", seed=2, key=("oracle-test",), chunk_size=6000)
    res = conditional_errors(pool.W, run.tasks, run.chosen, 4, 1 - 3 / 8)
    for t in (2, 5, 8):
        diff = run.generalization[:, t - 1] - res["generalization"][:, t - 1]
        se = diff.std(ddof=1) / np.sqrt(diff.size)
        assert abs(diff.mean()) < 5 * se, (t, diff.mean(), se)
