import math

import numpy as np
import pytest

from moecl_verify.numeric.pool import TaskPool, make_pool


def naive_S_D(W):
    N = len(W)
    S = sum(float(np.dot(w, w)) for w in W) / N
    D = 0.0
    for n in range(N):
        for m in range(N):
            if n != m:
                D += float(np.sum((W[m] - W[n]) ** 2))
    return S, D / N**2


@pytest.mark.parametrize("N,d,seed", [(1, 1, 0), (2, 3, 1), (6, 10, 2), (17, 4, 3)])
def test_S_and_D_match_double_loop(N, d, seed):
    pool = make_pool(np.random.default_rng(seed), N=N, d=d, sigma0=0.7)
    S, D = naive_S_D(pool.W)
    assert pool.S == pytest.approx(S, rel=1e-12)
    assert pool.D == pytest.approx(D, rel=1e-12, abs=1e-15)


def test_D_stable_for_offset_pool():
    # Large common offset: the uncentred formula would lose most digits.
    rng = np.random.default_rng(5)
    W = 1e6 + rng.standard_normal((5, 3))
    _, D = naive_S_D(W)
    assert TaskPool(W, W).D == pytest.approx(D, rel=1e-6)


def test_hand_values():
    W = np.array([[1.0, 0.0], [0.0, 1.0]])
    pool = TaskPool(W, 2 * W)
    assert pool.N == 2 and pool.d == 2
    assert pool.S == pytest.approx(1.0)
    # two ordered pairs, each ||e1 - e2||^2 = 2, divided by N^2 = 4
    assert pool.D == pytest.approx(1.0)


def test_std_vs_variance_reading_and_signal_scale():
    a = make_pool(np.random.default_rng(0), N=4, d=3, sigma0=4.0)
    b = make_pool(np.random.default_rng(0), N=4, d=3, sigma0=4.0, sigma0_is="variance", signal_scale=3.0)
    np.testing.assert_allclose(b.W, a.W / 2.0)
    np.testing.assert_allclose(b.V, 3.0 * b.W)
    np.testing.assert_array_equal(a.V, a.W)


def test_pool_is_read_only():
    pool = make_pool(np.random.default_rng(0), N=2, d=2, sigma0=1.0)
    with pytest.raises(ValueError):
        pool.W[0, 0] = 1.0


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(N=0), "N"),
        (dict(d=0), "d"),
        (dict(sigma0=0.0), "sigma0"),
        (dict(sigma0=-1.0), "sigma0"),
        (dict(sigma0=math.inf), "sigma0"),
        (dict(sigma0=math.nan), "sigma0"),
        (dict(sigma0_is="sd"), "sigma0_is"),
        (dict(signal_scale=0.0), "signal_scale"),
    ],
)
def test_validation(kwargs, name):
    args = dict(N=2, d=2, sigma0=1.0) | kwargs
    with pytest.raises(ValueError, match=name):
        make_pool(np.random.default_rng(0), **args)


def test_shape_mismatch_rejected():
    with pytest.raises(ValueError, match="V"):
        TaskPool(np.zeros((2, 3)), np.zeros((3, 2)))
