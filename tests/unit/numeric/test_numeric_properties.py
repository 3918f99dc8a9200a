"""Property-based tests of Algorithm 1's engine over its parameter space (hypothesis).

For every drawn configuration: all outputs finite; each expert's final model
interpolates the data of the last task it was routed (eq. 5); loads sum to t
at every round; and F_T, G_T agree with eq. (15)-(16) recomputed from the
final expert models and the stored per-round errors E_tau.
"""

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from moecl_verify.numeric.moe import MoEConfig, draw_moe, run_moe_batched
from moecl_verify.numeric.pool import make_pool
from moecl_verify.numeric.seeding import generator_for


@st.composite
def configurations(draw):
    d = draw(st.integers(2, 6))
    return dict(
        N=draw(st.integers(1, 4)), M=draw(st.integers(1, 5)), d=d, s=draw(st.integers(1, d - 1)),
        T=draw(st.integers(1, 7)), R=draw(st.integers(1, 3)),
        features=draw(st.sampled_from(["definition1", "gaussian"])),
        sigma_t=draw(st.sampled_from([0.0, 0.1, 1.0])), beta_max=draw(st.sampled_from([1e-6, 1.0, 5.0])),
        sigma0=draw(st.sampled_from([0.05, 0.4, 2.0])),
        eta=draw(st.floats(0.05, 2.0)), alpha=draw(st.floats(0.0, 2.0)), lam=draw(st.floats(0.0, 1.0)),
        Gamma=draw(st.floats(0.0, 1.0)), termination=draw(st.booleans()),
        seed=draw(st.integers(0, 2**16)),
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configurations())
def test_engine_invariants(c):
    rng = generator_for(c["seed"], "properties")
    pool = make_pool(rng, N=c["N"], d=c["d"], sigma0=c["sigma0"])
    cfg = MoEConfig(M=c["M"], eta=c["eta"], alpha=c["alpha"], lam=c["lam"], Gamma=c["Gamma"],
                    termination=c["termination"], record_rounds=True)
    draws = draw_moe(rng, pool, R=c["R"], T=c["T"], s=c["s"], M=c["M"], features=c["features"],
                     sigma_t=c["sigma_t"], beta_max=c["beta_max"])
    run = run_moe_batched(pool, draws, cfg)
    T, W = c["T"], pool.W

    for name in ("model_error", "generalization", "theta", "w", "theta_max"):
        assert np.all(np.isfinite(getattr(run, name))), name
    assert np.all(np.isfinite(run.forgetting[:, 1:])) and np.all(np.isnan(run.forgetting[:, 0]))

    # Loads: cumulative per round sum to t; final loads are the routing counts.
    np.testing.assert_array_equal(run.rounds["loads"].sum(axis=2), np.broadcast_to(np.arange(1, T + 1), (c["R"], T)))
    for m in range(c["M"]):
        np.testing.assert_array_equal(run.loads[:, m], (run.chosen == m).sum(axis=1))

    for r in range(c["R"]):
        # Interpolation: the last task routed to m is fitted exactly by m's final model.
        for m in set(run.chosen[r].tolist()):
            j = int(np.flatnonzero(run.chosen[r] == m)[-1])
            X = draws.X[r, j]
            target = X.T @ W[run.tasks[r, j]]
            np.testing.assert_allclose(X.T @ run.w[r, m], target, atol=1e-7 * (1 + np.abs(target).max()))
        # Eq. (15)-(16) at t = T from the final models and the stored E_tau.
        now = ((run.w[r, run.chosen[r]] - W[run.tasks[r]]) ** 2).sum(axis=1)
        np.testing.assert_allclose(run.generalization[r, -1], now.mean(), rtol=1e-9, atol=1e-12)
        if T >= 2:
            expected_f = (now[:-1] - run.model_error[r, :-1]).mean()
            np.testing.assert_allclose(run.forgetting[r, -1], expected_f, rtol=1e-8, atol=1e-10)
