"""Exact routing probabilities of eq. (1) against hand-derived values, symmetry and a seeded Monte Carlo."""

from fractions import Fraction as F

import numpy as np
import pytest

from moecl_verify.numeric.seeding import generator_for
from moecl_verify.theory.routing import integrate_piecewise, jacobian, routing_probabilities, switch_probability


@pytest.mark.parametrize("M", [2, 3, 4, 5])
def test_equal_outputs_give_uniform_routing(M):
    assert routing_probabilities([F(7, 3)] * M, F(1, 2)) == tuple(F(1, M) for _ in range(M))


def test_gap_of_lambda_or_more_is_deterministic():
    # an output lambda above every other wins whatever the noise; one lambda below never wins
    assert routing_probabilities([0, F(1, 2), F(1, 4)], F(1, 4)) == (0, 1, 0)
    assert routing_probabilities([0, 0, -1], 1) == (F(1, 2), F(1, 2), 0)


@pytest.mark.parametrize("z", [F(0), F(1, 4), F(1, 2), F(3, 4), F(1)])
def test_two_experts_closed_form(z):
    # p_1 = P(V_1 - V_0 > -z) = 1/2 + z - z^2/2 for z in [0, 1] (V uniform on [0, 1]), by hand
    p0, p1 = routing_probabilities([0, z], 1)
    assert p1 == F(1, 2) + z - z * z / 2 and p0 + p1 == 1


def test_probabilities_sum_to_one_and_are_scale_invariant():
    rng = np.random.default_rng(1)
    for _ in range(20):
        M = int(rng.integers(2, 5))
        h = [F(int(k), 6) for k in rng.integers(-8, 9, size=M)]
        lam = F(int(rng.integers(1, 5)), 3)
        p = routing_probabilities(h, lam)
        assert sum(p) == 1 and all(0 <= v <= 1 for v in p)
        assert routing_probabilities([3 * v for v in h], 3 * lam) == p


def test_float_inputs_give_floats_matching_exact():
    exact = routing_probabilities([0, F(1, 3), F(-1, 5)], F(1, 2))
    approx = routing_probabilities([0.0, 1 / 3, -0.2], 0.5)
    assert all(isinstance(v, float) for v in approx)
    assert np.allclose([float(v) for v in exact], approx, atol=1e-12)


def test_against_seeded_monte_carlo():
    h, lam, n = np.array([0.0, 0.1, 0.25, -0.2]), 0.5, 400_000
    U = generator_for(0, "test_routing", "mc").random((n, 4)) * lam
    counts = np.bincount(np.argmax(h + U, axis=1), minlength=4) / n
    p = np.array(routing_probabilities(list(h), lam))
    se = np.sqrt(p * (1 - p) / n) + 1e-12
    assert np.all(np.abs(counts - p) < 5 * se)


def test_switch_probability_two_experts_by_hand_and_monte_carlo():
    # h = 0, h_hat = (eps, 0), lambda = 1: the argmax differs iff r_0 < r_1 < r_0 + eps: eps - eps^2/2
    for eps in (F(1, 8), F(1, 2), F(1)):
        assert switch_probability([0, 0], [eps, 0], 1) == eps - eps * eps / 2
    h, hh, lam, n = np.array([0.0, 0.2, -0.1]), np.array([0.15, 0.05, 0.0]), 0.4, 400_000
    r = generator_for(0, "test_routing", "switch").random((n, 3)) * lam
    mc = np.mean(np.argmax(h + r, axis=1) != np.argmax(hh + r, axis=1))
    exact = switch_probability(list(h), list(hh), lam)
    assert abs(mc - exact) < 5 * np.sqrt(exact * (1 - exact) / n)


def test_jacobian_rows_and_finite_differences():
    h, lam = [F(0), F(1, 5), F(1, 2), F(-1, 3)], F(1, 2)
    J = jacobian(h, lam)
    eps = F(1, 10**6)
    base = routing_probabilities(h, lam)
    for j in range(4):
        bumped = list(h)
        bumped[j] += eps
        fd = [(a - b) / eps for a, b in zip(routing_probabilities(bumped, lam), base)]
        assert all(abs(fd[m] - J[m][j]) < F(1, 10**4) for m in range(4))
    for m, row in enumerate(J):
        assert sum(row) == 0 and row[m] <= 1 / lam and all(v <= 0 for j, v in enumerate(row) if j != m)
    # equal outputs: dp_m/dh_m = 1/lambda exactly, for any M
    assert jacobian([0, 0, 0], F(1, 4))[1][1] == 4


def test_piecewise_integral_of_known_polynomials():
    assert integrate_piecewise([F(0)]) == F(1, 2)  # int_0^1 u du
    assert integrate_piecewise([F(0), F(0)]) == F(1, 3)  # int_0^1 u^2 du
    assert integrate_piecewise([F(1, 2)]) == F(7, 8)  # int_0^1 min(1, u + 1/2) du
    assert integrate_piecewise([], [F(-1, 2)]) == F(1, 2)  # 1{u >= 1/2}
