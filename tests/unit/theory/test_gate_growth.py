"""The update rule's bound on the gate's gaps (theory/gate_growth.py): its pieces, its limits, and simulations
of Algorithm 1 that must never exceed it."""

import math

import numpy as np
import pytest
import sympy as sp

from moecl_verify.numeric.expert import min_norm_update
from moecl_verify.numeric.moe import MoEConfig, draw_moe, run_moe_batched
from moecl_verify.numeric.pool import make_pool
from moecl_verify.theory import gate_growth as gg


def test_pair_factor_is_one_half_and_holds_on_random_softmaxes():
    assert gg.pair_factor_bound() == sp.Rational(1, 2)
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(2000):
        M = int(rng.integers(2, 7))
        pi = rng.dirichlet(np.full(M, 0.3))
        c, m, m2 = rng.choice(M, size=3, replace=True)
        if m == m2:
            continue
        e = np.eye(M)[c]
        worst = max(worst, pi[c] * abs((e[m] - pi[m]) - (e[m2] - pi[m2])))
    assert worst <= 0.5 + 1e-12
    # Attained: pi = (1/2, 1/2), m routed, m' the other.
    pi = np.array([0.5, 0.5])
    assert pi[0] * abs((1 - pi[0]) - (0 - pi[1])) == 0.5


def test_aux_sums_and_the_harmonic_bound():
    assert gg.aux_sum("1/t", upper=False) == sp.harmonic(gg.T)
    assert sp.simplify(gg.aux_sum("t") - gg.T * (gg.T + 1) / 2) == 0
    assert gg.aux_sum("1") == gg.T
    for n in (1, 2, 10, 1000):
        assert float(sp.harmonic(n)) <= 1 + math.log(n) + 1e-12


def test_delta_sum_telescopes_to_4_T_Z2_and_the_4_is_attained():
    rng = np.random.default_rng(1)
    d, s, N, T = 6, 2, 3, 400
    W = rng.standard_normal((N, d))
    Z2 = (W**2).sum(1).max()
    w, total = np.zeros(d), 0.0
    for _ in range(T):
        n = rng.integers(N)
        X = rng.standard_normal((d, s)) * rng.choice([0.01, 1, 100], size=s)
        new = min_norm_update(w, X, X.T @ W[n])
        total += ((new - w) ** 2).sum()
        w = new
    assert total <= 4 * T * Z2
    # Two tasks w and -w, X spanning w: Delta = 4 ||w||^2 after the first round.
    u = np.array([1.0, 0.0, 0.0])
    w, total = np.zeros(3), 0.0
    for k in range(T):
        target = u if k % 2 == 0 else -u
        new = min_norm_update(w, u[:, None], np.array([target @ u]))
        total += ((new - w) ** 2).sum()
        w = new
    assert total == pytest.approx(4 * T - 3)
    assert total / (4 * T) > 0.99


def test_one_over_t_reading_bound_is_o_sigma0_075():
    s = gg.summary("1/t")
    assert s["exponent"] == 1
    assert s["log_power"] == 1  # sigma0 log(1/sigma0): the log is kept, not dropped
    assert s["ratio_limit"] == 0
    assert s["ratio_limit_growing_xbar"] == 0
    # The leading term, by hand: (c^2 M d X v / 2) sigma0 (3/4) log(1/sigma0).
    lead = gg.c**2 * gg.M * gg.d * gg.X_inf * gg.v_inf / 2 * gg.sigma0 * sp.Rational(3, 4) * sp.log(1 / gg.sigma0)
    assert sp.limit(s["bound"] / lead, gg.sigma0, 0, "+") == 1


def test_printed_t_reading_bound_decides_nothing():
    s = gg.summary("t")
    assert s["exponent"] == sp.Rational(-1, 2)
    assert s["ratio_limit"] == sp.oo


def test_mutation_without_the_1_over_t_factor_changes_the_answer():
    no_factor = gg.gap_bound_at_t1("1")
    assert gg.leading_exponent(no_factor) == sp.Rational(1, 4)
    assert gg.ratio_limit(no_factor) == sp.oo
    # and a Delta sum one power of sigma0 larger (O(sigma0) per round) would dominate with exponent 3/4.
    bigger = gg.gap_bound_at_t1("1/t").subs(gg.zeta, gg.zeta / sp.sqrt(gg.sigma0))
    assert gg.leading_exponent(bigger) == sp.Rational(3, 4)
    assert gg.ratio_limit(bigger) != 0


def _simulate(aux_factor, sigma0, c=1.0, M=6, R=16, seed=3):
    """Algorithm 1 without termination to t1 on a pool w_n = sigma0 z_n, v_n = z_n; per replicate the realized
    pieces of the bound (recorded each round) and the closed bound at the realized X_inf and zeta."""
    pool = make_pool(np.random.default_rng(seed), N=3, d=10, sigma0=sigma0, signal_scale=1.0 / sigma0)
    eta = c * sigma0**0.5
    cfg = MoEConfig(M=M, eta=eta, alpha=c * sigma0**0.5, lam=c * sigma0**1.25, Gamma=c * sigma0**1.25,
                    termination=False, aux_factor=aux_factor, record_rounds=True)
    T = int(math.ceil(M / (eta * sigma0**0.25)))
    draws = draw_moe(np.random.default_rng(seed + 1), pool, R=R, T=T, s=6, M=M, features="definition1", sigma_t=0.1)
    rows = np.arange(R)
    rec = {k: np.zeros(R) for k in ("loc", "aux", "delta_sum", "aux_sum")}

    def observe(st):
        x1 = np.abs(st.xbar).sum(-1)
        fc = st.counts[rows, st.chosen] / st.t * (1.0 / st.t if aux_factor == "1/t" else st.t)
        rec["loc"] += eta * 0.5 * st.delta * x1  # (eta/2) Delta_t ||xbar_t||_1
        rec["aux"] += eta * 0.5 * cfg.alpha * M * fc * x1  # (eta/2) alpha M f_t c(t) ||xbar_t||_1
        rec["delta_sum"] += st.delta
        rec["aux_sum"] += fc

    run = run_moe_batched(pool, draws, cfg, observer=observe)
    theta = run.theta
    H = np.einsum("rmd,nd->rmn", theta, pool.V)
    h = run.rounds["h"]  # h_m(X_t) = theta_m,t^T xbar_t, recorded before each update
    x_inf = np.abs(draws.X.sum(axis=-1)).max(axis=(1, 2))  # realized max_t ||xbar_t||_inf per replicate
    zeta = float(np.linalg.norm(pool.W, axis=1).max() / sigma0)
    v_inf = float(np.abs(pool.V).max())
    kw = dict(sigma0_=sigma0, c_=c, M_=M, d_=10, T_=T, zeta_=zeta)
    bound = np.array([gg.evaluate(aux_factor, X_inf_=x, **kw) for x in x_inf])
    return {
        "pair": np.abs(theta[:, :, None, :] - theta[:, None, :, :]).sum(-1).max(axis=(1, 2)),  # max ||theta_m - theta_m'||_1
        "gap": (H.max(axis=1) - H.min(axis=1)).max(axis=1),  # max over n, m, m' of |h_m(v_n) - h_m'(v_n)|
        "data_gap": (h.max(axis=2) - h.min(axis=2)).max(axis=1),  # max over rounds of |h_m(X_t) - h_m'(X_t)|
        "bound": bound, "gap_bound": bound * v_inf, "data_bound": bound * x_inf,
        "delta_bound": 4 * T * (sigma0 * zeta) ** 2, "aux_bound": float(gg.aux_sum(aux_factor, upper=False).subs(gg.T, T)),
        **rec,
    }


@pytest.mark.parametrize("aux_factor", ["1/t", "t"])
@pytest.mark.parametrize("sigma0", [0.4, 0.05])
def test_simulations_never_exceed_their_bound(aux_factor, sigma0):
    r = _simulate(aux_factor, sigma0)
    assert np.all(r["pair"] > 0)
    # Steps 1 and 4 with the realized pieces (the chain's tight end) ...
    assert np.all(r["pair"] <= r["loc"] + r["aux"])
    # ... steps 2 and 3 ...
    assert np.all(r["delta_sum"] <= r["delta_bound"])
    assert np.all(r["aux_sum"] <= r["aux_bound"] + 1e-12)
    # ... and the closed bound, on theta, on the signals, and on every round's own data (it grows with T).
    assert np.all(r["pair"] <= r["bound"])
    assert np.all(r["gap"] <= r["gap_bound"])
    assert np.all(r["data_gap"] <= r["data_bound"])


def test_the_numeric_check_can_fail():
    # Without its auxiliary term the chain is exceeded: under the printed factor t the gate drifts further
    # than the locality term alone allows, so the comparison above is not vacuous.
    r = _simulate("t", 0.1)
    assert np.any(r["pair"] > r["loc"])
    assert np.all(r["pair"] <= r["loc"] + r["aux"])
