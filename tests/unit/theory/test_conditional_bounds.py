"""Exact conditional errors (rationals) and the shrinker for Theorem 1's bounds."""

from fractions import Fraction

import numpy as np
from hypothesis import given, settings, strategies as st

from moecl_verify.numeric.conditional_oracle import conditional_errors as float_oracle
from moecl_verify.theory.conditional import conditional_errors, eq19_rhs, eq20_rhs, pool_constants, smallest_violation

HALF = Fraction(1, 2)
E1, E2 = (Fraction(1), Fraction(0)), (Fraction(0), Fraction(1))


def test_hand_computed_sequences():
    # r = 1/2, w_1 = e1, w_2 = e2; one expert takes task 1 then task 2:
    # E||w_1 - w_1||^2 = 1/2, then E||w_2 - w_1||^2 = 1/2 * 1/2 + 1/2 * 2 = 5/4, so F_2 = 3/4.
    errs = conditional_errors([E1, E2], (0, 1), (0, 0), 3, HALF)
    assert errs.forgetting == (None, Fraction(3, 4))
    assert pool_constants([E1, E2]) == (1, 1)
    # eq. (19) at t = 2, L_2 = 2, L_1 = 1: (r^2 - r)(S - D) = 0 < 3/4: the bound fails.
    assert eq19_rhs((0, 0), 3, 2, HALF, Fraction(1), Fraction(1)) == 0
    # tasks 1, 1, 2 on one expert: G_3 = (9/8 + 9/8 + 7/8) / 3 = 25/24 > r^3 S + (1 - r^3) D = 1.
    assert conditional_errors([E1, E2], (0, 0, 1), (0, 0, 0), 3, HALF).generalization[-1] == Fraction(25, 24)
    assert eq20_rhs((0, 0, 0), 3, 3, HALF, Fraction(1), Fraction(1)) == 1


def test_shrinker_returns_the_shortest_violations():
    early = smallest_violation("eq19", exceeds=True)
    assert (early.horizon, early.tasks, early.chosen, early.lhs, early.rhs) == (2, (0, 1), (0, 0), Fraction(3, 4), 0)
    general = smallest_violation("eq20", exceeds=True)
    assert general.horizon == 3 and general.lhs == Fraction(25, 24) and general.rhs == 1
    late = smallest_violation("late")
    assert late.horizon == 3 and late.T1 == 2 and late.lhs != late.rhs


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3)), min_size=1, max_size=8),
       st.lists(st.integers(-3, 3), min_size=6, max_size=6))
def test_rational_and_float_oracles_agree(rounds, entries):
    W = np.array(entries, dtype=float).reshape(3, 2)
    tasks, chosen = zip(*rounds)
    exact = conditional_errors([tuple(Fraction(int(x)) for x in w) for w in W], tasks, chosen, 4, Fraction(2, 5))
    approx = float_oracle(W, np.array([tasks]), np.array([chosen]), 4, 0.4)
    np.testing.assert_allclose(approx["generalization"][0], [float(g) for g in exact.generalization], atol=1e-12)
    np.testing.assert_allclose(approx["forgetting"][0, 1:], [float(f) for f in exact.forgetting[1:]], atol=1e-12)


def test_inside_the_premises_the_shortest_violations_are_other_ones():
    """Only sequences inside Theorem 1's premises (T1 >= M, every expert explored, one task per expert after T1):
    one expert taking every round no longer counts."""
    early = smallest_violation("eq19", exceeds=True, premises=True)
    # rounds 1-2 are the start of an exploration that may route expert 3 later: the same case as without premises
    assert (early.horizon, early.tasks, early.chosen, early.lhs, early.rhs) == (2, (0, 1), (0, 0), Fraction(3, 4), 0)
    # eq. (20) with every expert explored: up to four rounds no sequence exceeds the bound (the 25/24 case of one
    # expert taking tasks 1, 1, 2 lies outside)
    assert smallest_violation("eq20", exceeds=True, premises=True) is None
    late = smallest_violation("late", premises=True)
    # T1 = 3 = M, every expert explored in rounds 1-3, by hand: tasks 1, 1, 1 on experts 1, 2, 3, then task 1 on
    # expert 1 again. E[F_3] = 0 (each expert has only its own task); at t = 4 expert 1's error on task 1 goes from
    # r = 1/2 to r^2 = 1/4, so F_4 = (1/4 - 1/2) / 3 = -1/12 against (T1 - 1)/(t - 1) E[F_3] = 0
    assert (late.horizon, late.T1, late.tasks, late.chosen) == (4, 3, (0, 0, 0, 0), (0, 1, 2, 0))
    assert (late.lhs, late.rhs) == (Fraction(-1, 12), 0) and late.premises
    assert set(late.chosen[:late.T1]) == {0, 1, 2}
