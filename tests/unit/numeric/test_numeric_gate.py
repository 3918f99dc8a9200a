"""The gate gradient used by the engine: finite differences of the losses, zero sum."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from moecl_verify.numeric.gate import gate_outputs, softmax, task_loss, task_loss_gradient


def _instance(seed, M, d):
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(M, d))
    xbar = rng.normal(size=d)
    chosen = int(rng.integers(M))
    delta = float(rng.uniform(0, 3))
    t = int(rng.integers(1, 50))
    counts = rng.multinomial(t, np.ones(M) / M).astype(float)
    counts[chosen] = max(counts[chosen], 1.0)
    fracs = counts / t
    past = rng.uniform(0, 1, size=M) * counts
    return theta, xbar, chosen, delta, fracs, past, t


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), M=st.integers(2, 6), d=st.integers(1, 5))
def test_gradient_equals_central_differences(seed, M, d):
    theta, xbar, chosen, delta, fracs, past, t = _instance(seed, M, d)
    alpha = 0.7
    pi = softmax(gate_outputs(theta, xbar))
    grad = task_loss_gradient(
        pi[None], np.array([chosen]), np.array([delta]), np.array([fracs[chosen]]), t, alpha, xbar[None]
    )[0]
    eps = 1e-6
    fd = np.zeros_like(theta)
    for k in range(M):
        for j in range(d):
            up, down = theta.copy(), theta.copy()
            up[k, j] += eps
            down[k, j] -= eps
            fd[k, j] = (task_loss(up, xbar, chosen, delta, fracs, past, t, alpha) - task_loss(down, xbar, chosen, delta, fracs, past, t, alpha)) / (2 * eps)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-8)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), M=st.integers(1, 8), d=st.integers(1, 5))
def test_gradients_sum_to_zero_over_experts(seed, M, d):
    theta, xbar, chosen, delta, fracs, past, t = _instance(seed, M, d)
    pi = softmax(gate_outputs(theta, xbar))
    grad = task_loss_gradient(pi[None], np.array([chosen]), np.array([delta]), np.array([fracs[chosen]]), t, 0.5, xbar[None])[0]
    np.testing.assert_allclose(grad.sum(axis=0), 0.0, atol=1e-12)


def test_softmax_is_stable_for_large_outputs():
    pi = softmax(np.array([[1000.0, 999.0, -1000.0]]))
    assert np.all(np.isfinite(pi)) and abs(pi.sum() - 1) < 1e-15
