"""Proposition 4's forms against values worked out by hand from the recursion.

Hand computation (r = 1/2, S = 1, D = 1), using
e_t(i) = r e_{t-1}(i) + (1 - r) * (0 if t == i else D),  e_0(i) = S:

  e_1(1) = r S = 1/2;  e_2(1) = r e_1(1) + (1-r) D = 1/4 + 1/2 = 3/4.
  e_1(2) = r S + (1-r) D = 1;  e_2(2) = r e_1(2) + 0 = 1/2.
  e_3(1) = r e_2(1) + (1-r) D = 3/8 + 1/2 = 7/8;  e_3(2) = r e_2(2) + (1-r) D = 1/4 + 1/2 = 3/4.

  F_2 = e_2(1) - e_1(1) = 1/4.
  F_3 = ((e_3(1) - e_1(1)) + (e_3(2) - e_2(2))) / 2 = (3/8 + 1/4) / 2 = 5/16.
  G_1 = e_1(1) = 1/2.   G_2 = (e_2(1) + e_2(2)) / 2 = (3/4 + 1/2) / 2 = 5/8.

Eq. (17) as printed, t = 2: r^{1} S + (r - r^2) D = 1/2 + 1/4 = 3/4.
Eq. (17) with the S coefficient r^t - r^tau, t = 2: (1/4 - 1/2) + (1/2 - 1/4) = 0.
Eq. (18) at T = 2: r^2 S + (1 - r^2) D = 1/4 + 3/4 = 1.
"""

from fractions import Fraction

import pytest
import sympy as sp

from moecl_verify.theory import prop4, single_expert
from moecl_verify.theory.symbols import D, S, T, generic_branch, r, t, tau

HALF = dict(r=0.5, S=1.0, D=1.0)


@pytest.mark.parametrize(
    "form, horizon, value",
    [
        (prop4.forgetting_derived, 2, 1 / 4),
        (prop4.forgetting_derived, 3, 5 / 16),
        (prop4.forgetting_stated, 2, 3 / 4),
        (prop4.forgetting_corrected, 2, 0.0),
    ],
)
def test_forgetting_forms_match_hand_values(form, horizon, value):
    assert form().evaluate(**HALF, t=horizon) == pytest.approx(value, abs=1e-15)


@pytest.mark.parametrize(
    "form, horizon, value",
    [
        (prop4.generalization_derived, 1, 1 / 2),
        (prop4.generalization_derived, 2, 5 / 8),
        (prop4.generalization_stated, 2, 1.0),
    ],
)
def test_generalization_forms_match_hand_values(form, horizon, value):
    assert form().evaluate(**HALF, T=horizon) == pytest.approx(value, abs=1e-15)


def test_hand_recursion_values():
    rec = single_expert.expected_error_by_recursion
    h = Fraction(1, 2)
    assert rec(2, 1, h, 1, 1) == Fraction(3, 4)
    assert rec(2, 2, h, 1, 1) == Fraction(1, 2)
    assert rec(3, 1, h, 1, 1) == Fraction(7, 8)
    assert rec(3, 2, h, 1, 1) == Fraction(3, 4)


def test_closed_form_error_equals_literal_recursion_exactly():
    rv, Sv, Dv = sp.Rational(2, 5), sp.Rational(3, 2), sp.Rational(7, 3)
    t_, i_ = sp.symbols("t_ i_", integer=True, positive=True)
    closed = single_expert.expected_error(t_, i_)
    for tt in range(1, 8):
        for ii in range(1, tt + 1):
            exact = single_expert.expected_error_by_recursion(tt, ii, rv, Sv, Dv)
            assert closed.subs({t_: tt, i_: ii, r: rv, S: Sv, D: Dv}) == exact


def test_closed_forgetting_and_generalization_equal_recursion_sums():
    rv, Sv, Dv = sp.Rational(3, 7), sp.Rational(5, 4), sp.Rational(2, 3)
    rec = single_expert.expected_error_by_recursion
    for tt in range(2, 9):
        by_rec = sum(rec(tt, k, rv, Sv, Dv) - rec(k, k, rv, Sv, Dv) for k in range(1, tt)) / (tt - 1)
        assert sp.simplify(prop4.forgetting_derived().expr.subs({t: tt, r: rv, S: Sv, D: Dv}) - by_rec) == 0
        by_rec_g = sum(rec(tt, k, rv, Sv, Dv) for k in range(1, tt + 1)) / tt
        assert sp.simplify(prop4.generalization_derived().expr.subs({T: tt, r: rv, S: Sv, D: Dv}) - by_rec_g) == 0


def test_stated_form_is_the_printed_summand_summed():
    # Eq. (17) at t = 3 from the printed summand, summed by hand.
    by_hand = ((r**2 * S + (r - r**3) * D) + (r * S + (r**2 - r**3) * D)) / 2
    assert sp.simplify(prop4.forgetting_stated().expr.subs(t, 3) - by_hand) == 0


def test_readable_gaps_equal_sympy_differences():
    assert prop4.readable_gaps_hold()
    assert sp.simplify(prop4.generalization_gap() - (1 - r**T) * D / T) == 0
    assert sp.simplify(-prop4.forgetting_summand_gap("corrected") - (1 - r) * (1 - r ** (t - tau)) * D) == 0


def test_generic_branch_refuses_piecewise_without_catch_all():
    pw = sp.Piecewise((1, r < 1), (2, r > 2))
    with pytest.raises(ValueError):
        generic_branch(pw)
    assert generic_branch(sp.Piecewise((1, sp.Eq(r, 1)), (r, True))) == r


def test_definition1_gain_differs_from_s_over_d():
    along, across = single_expert.definition1_projection_gain(10, 6)
    assert along == 1 and across == sp.Rational(5, 9)
    assert across != sp.Rational(6, 10)


def test_readable_text_names_the_checked_expressions():
    from sympy.parsing.sympy_parser import implicit_multiplication_application, parse_expr, standard_transformations

    tr = standard_transformations + (implicit_multiplication_application,)
    names = {"r": r, "t": t, "tau": tau, "D": D, "T": T}
    for key, expr in (
        ("summand", prop4.SAME_TASK_SUMMAND),
        ("forgetting", prop4.SAME_TASK_FORGETTING),
        ("generalization", prop4.SAME_TASK_GENERALIZATION),
    ):
        parsed = parse_expr(prop4.READABLE_TEXT[key].replace("^", "**"), local_dict=names, transformations=tr)
        assert sp.simplify(parsed - expr) == 0, key
