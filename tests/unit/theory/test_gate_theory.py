"""The gate gradient derived in sympy from eq. 2, 6, 7, 8, and Lemma 4's printed factor."""

import pytest
import sympy as sp

from moecl_verify.theory import gate


@pytest.mark.parametrize("M, d, chosen", [(2, 1, 0), (3, 2, 1), (4, 1, 3)])
def test_sympy_gradient_equals_closed_form(M, d, chosen):
    assert gate.derived_matches_closed_form(M, d, chosen)


@pytest.mark.parametrize("M, d, chosen", [(2, 2, 1), (3, 1, 0)])
def test_lemma4_gradients_sum_to_zero(M, d, chosen):
    assert gate.gradients_sum_to_zero(M, d, chosen)


def test_lemma4_printed_aux_factor_is_t_squared_too_large():
    assert gate.lemma4_aux_factor_ratio() == gate.t_sym**2


def test_closed_form_detects_a_wrong_factor():
    # The check is not vacuous: the closed form with the printed factor t fails it.
    grad, theta, xbar, pi, fracs = gate.task_loss_gradient_symbolic(2, 1, 0)
    wrong = gate.closed_form_gradient(pi, list(xbar), 0, gate.Delta, fracs[0], 1 / gate.t_sym, gate.alpha, 2)
    assert sp.simplify(grad[0, 0] - wrong[0][0]) != 0
