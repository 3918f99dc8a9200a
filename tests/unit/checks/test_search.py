"""The worst-case search finds planted violations, confirms them exactly, shrinks them to the smallest case, and
reports only its effort and least slack when it finds nothing.

Every search is seeded, so the numbers asserted here are those of one deterministic run; the shrunk cases are
checked against values worked out by hand.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy

from moecl_verify.checks.search import Choice, Premise, Real, Size, Statement, recheck, search, shrink


def _l1(v) -> object:
    return sum((abs(t) for t in v), 0)


def _triangle(factor, strict=False, sizes=(1, 4)) -> Statement:
    """|a + b|_1 <= factor (|a|_1 + |b|_1) for a, b in [-1, 1]^n: true for factor 1, false below."""
    def slack(x):
        assert len(x["a"]) == len(x["b"]) == x["n"] and all(-1 <= t <= 1 for t in x["a"] + x["b"]), x  # in the space
        return factor * (_l1(x["a"]) + _l1(x["b"])) - _l1([p + q for p, q in zip(x["a"], x["b"])])

    return Statement(f"triangle x {factor}", slack=slack, exact_slack=slack, sizes=(Size("n", *sizes),),
                     reals=(Real("a", -1, 1, "n"), Real("b", -1, 1, "n")), strict=strict)


TIGHT = _triangle(Fraction(9, 10))


def _square_gap(margin, strict=False) -> Statement:
    """x^2 + y^2 >= 2xy + margin on [-1, 1]^2: true for margin 0 (it is (x - y)^2 >= 0), false near x = y above."""
    def slack(x):
        return x["x"] ** 2 + x["y"] ** 2 - 2 * x["x"] * x["y"] - margin

    return Statement(f"square gap {margin}", slack=slack, exact_slack=slack, reals=(Real("x"), Real("y")),
                     strict=strict)


def _no_triple(s) -> int:
    """0 iff three consecutive entries are equal (in {0, 1}); 2 when there is no window of three."""
    return min((abs(s[i] - s[i + 1]) + abs(s[i + 1] - s[i + 2]) for i in range(len(s) - 2)), default=2)


RUNS = Statement("no three equal in a row", slack=lambda x: _no_triple(x["s"]),
                 exact_slack=lambda x: _no_triple(x["s"]), sizes=(Size("T", 1, 8),), choices=(Choice("s", "T", 2),))

# (x + 2^52) - 2^52 - x is 0 exactly, but floats round x + 2^52 to an integer: -x for x in (0, 1/2).
CANCELLATION = Statement("cancellation", slack=lambda x: (x["x"] + 2.0**52) - 2.0**52 - x["x"],
                         exact_slack=lambda x: (x["x"] + 2**52) - 2**52 - x["x"], reals=(Real("x", 0, 1),),
                         strict=False)


def test_a_planted_vector_violation_is_found_confirmed_and_shrunk_to_simple_values():
    result = search(TIGHT, np.random.default_rng(0), budget=400)
    assert result.found
    assert result.configurations == ({"n": 1},)  # the smallest size is searched first and already fails
    assert (result.evaluations, result.restarts, result.exact_evaluations) == (6, 1, 1)
    cex = result.counterexample
    # The exact slack of what the search found really is what the engine reports, and violates.
    assert TIGHT.exact_slack(cex.found_inputs) == cex.found_slack < 0
    assert cex.inputs == {"n": 1, "a": (0,), "b": (1,)}
    assert all(isinstance(v, Fraction) for v in cex.inputs["a"] + cex.inputs["b"])
    # By hand: 9/10 (|0| + |1|) - |0 + 1| = -1/10.
    assert cex.slack == Fraction(-1, 10)
    assert cex.steps[-1] == "b[0] negated: b = (1)"  # positive preferred, as Hypothesis does
    assert result.least_slack == float(cex.found_slack)


def test_a_witness_found_at_a_large_size_is_shrunk_to_the_smallest():
    result = search(TIGHT, np.random.default_rng(0), budget=400, configs=[{"n": 4}])
    cex = result.counterexample
    assert result.found and cex.found_inputs["n"] == 4
    assert (result.evaluations, result.restarts) == (25, 1)
    assert cex.steps[0] == "n: 4 -> 1 (projected)"
    assert cex.inputs == {"n": 1, "a": (0,), "b": (1,)} and cex.slack == Fraction(-1, 10)


def test_a_planted_scalar_violation_on_the_diagonal_shrinks_to_zero():
    gap = _square_gap(Fraction(1, 100))
    result = search(gap, np.random.default_rng(0), budget=400)
    assert result.found
    assert (result.evaluations, result.restarts) == (6, 1)
    cex = result.counterexample
    # By hand: 0 + 0 - 0 - 1/100.
    assert cex.inputs == {"x": 0, "y": 0} and cex.slack == Fraction(-1, 100)
    assert cex.steps == ("all reals all to 0: x = 0, y = 0",)


def test_a_true_statement_gives_no_counterexample_only_the_effort_and_least_slack():
    result = search(_triangle(1, sizes=(1, 3)), np.random.default_rng(0), budget=600)
    assert not result.found and result.counterexample is None
    # The budget counts float and exact evaluations: rechecking a float lead costs up to one per rationalization.
    assert result.evaluations + result.exact_evaluations == result.allowed_evaluations == 600
    assert (result.evaluations, result.exact_evaluations, result.restarts) == (544, 56, 21)
    assert result.configurations == ({"n": 1}, {"n": 2}, {"n": 3})
    # The bound is tight (a and b of the same signs), where |a + b| and |a| + |b| round differently.
    assert result.least_slack == 0 and result.float_only == 14
    assert result.summary() == ("triangle x 1: no violation in 544 float and 56 exact evaluations, 21 restarts over "
                                "3 size configurations (14 float violations not confirmed); least slack 0")


def test_the_equality_case_of_a_true_bound_raises_float_leads_that_the_exact_recheck_rejects():
    result = search(_square_gap(0), np.random.default_rng(0), budget=600)
    assert not result.found and result.least_slack >= 0
    assert (result.evaluations, result.exact_evaluations, result.restarts) == (592, 8, 6)
    # Nelder-Mead drives x - y to 0, where x^2 + y^2 - 2xy cancels to a rounding error below 0.
    assert result.float_only == 2
    assert all(u.float_slack < 0 <= u.exact_slack for u in result.unconfirmed)


def test_a_strict_bound_failing_only_on_an_equality_set_is_confirmed_by_a_coarser_rational():
    strict = _square_gap(0, strict=True)
    # x and y differ by 1e-12 as floats, so their own values give (x - y)^2 > 0; denominators <= 10^9 make them
    # both 1/10, where the strict bound fails with slack 0.
    check = recheck(strict, {"x": 0.1, "y": 0.1 + 1e-12})
    assert check.confirmed and check.max_denominator == 10**9
    assert check.inputs == {"x": Fraction(1, 10), "y": Fraction(1, 10)} and check.slack == 0
    assert check.evaluations == 2


def test_the_exact_recheck_matches_a_hand_computed_case():
    gap = _square_gap(Fraction(1, 100))
    # Dyadic floats are their own rationals: (1/2 - 7/16)^2 - 1/100 = 1/256 - 1/100 = -39/6400.
    check = recheck(gap, {"x": 0.5, "y": 0.4375})
    assert check.confirmed and check.max_denominator is None and check.evaluations == 1
    assert check.inputs == {"x": Fraction(1, 2), "y": Fraction(7, 16)}
    assert check.slack == Fraction(-39, 6400)
    # (1/2 - 3/8)^2 - 1/100 = 9/1600 > 0 at every rationalization: not confirmed, the finest reported.
    check = recheck(gap, {"x": 0.5, "y": 0.375})
    assert not check.confirmed and check.slack == Fraction(9, 1600) and check.max_denominator is None


def test_rationalizing_never_leaves_the_box():
    hi = 0.6666666666  # just below 2/3, which denominators <= 10^6 would round it up to
    below = Statement("below the top", slack=lambda x: hi - x["x"], exact_slack=lambda x: Fraction(hi) - x["x"],
                      reals=(Real("x", 0, hi),), strict=False)
    check = recheck(below, {"x": hi})
    # Every coarser rational lands above hi and is clipped back onto it: one point, one evaluation.
    assert not check.confirmed and check.slack == 0 and check.evaluations == 1


def test_exact_slacks_may_be_sympy_rationals_but_never_floats():
    sym = Statement("sym", slack=lambda x: x["x"] - 0.5,
                    exact_slack=lambda x: sympy.Rational(x["x"]) - sympy.Rational(1, 2), reals=(Real("x", 0, 1),))
    check = recheck(sym, {"x": 0.25})
    assert check.confirmed and check.slack == Fraction(-1, 4) and type(check.slack) is Fraction
    floaty = Statement("floaty", slack=lambda x: x["x"] - 0.5, exact_slack=lambda x: float(x["x"]) - 0.5,
                       reals=(Real("x", 0, 1),))
    with pytest.raises(TypeError, match="rational"):
        recheck(floaty, {"x": 0.25})


def test_a_float_only_violation_is_recorded_and_not_reported():
    check = recheck(CANCELLATION, {"x": 0.25})
    assert CANCELLATION.slack({"x": 0.25}) == -0.25
    # 1/4 is the same rational at every step of the ladder, so it is evaluated once.
    assert not check.confirmed and check.slack == 0 and check.evaluations == 1
    result = search(CANCELLATION, np.random.default_rng(0), budget=200)
    assert not result.found and result.counterexample is None
    assert result.float_only > 0 and result.least_slack == 0
    assert (result.evaluations, result.exact_evaluations, result.restarts, result.float_only) == (156, 44, 30, 11)
    assert all(u.float_slack < 0 and u.exact_slack == 0 for u in result.unconfirmed)


def test_a_planted_sequence_violation_is_found_at_the_smallest_length():
    result = search(RUNS, np.random.default_rng(1), budget=400)
    assert result.found
    assert result.configurations == ({"T": 1}, {"T": 2}, {"T": 3})  # T = 1, 2 have no window: the budget runs on
    assert (result.evaluations, result.restarts) == (203, 80)
    assert result.counterexample.inputs == {"T": 3, "s": (0, 0, 0)}
    assert result.counterexample.slack == 0


def test_a_long_violating_sequence_is_shortened_and_lowered():
    result = search(RUNS, np.random.default_rng(1), budget=400, configs=[{"T": 8}])
    cex = result.counterexample
    assert cex.found_inputs == {"T": 8, "s": (0, 1, 1, 1, 0, 0, 1, 1)}
    assert cex.inputs == {"T": 3, "s": (0, 0, 0)}
    assert cex.steps[0].startswith("T: 8 -> 3 (searched")  # the prefix (0, 1, 1) holds: a short search fails it
    assert cex.steps[-1] == "s all to 0: s = (0, 0, 0)"


def _all_used(x) -> Fraction:
    assert len(x["m"]) == x["T"] and all(0 <= v < x["M"] for v in x["m"]), x  # the inputs stay in the space
    return len(set(x["m"])) - x["M"] + Fraction(1, 2)


# "a routing of T rounds over M experts uses every expert": the alphabet of the sequence depends on a size.
ALL_USED = Statement("every expert used", slack=_all_used, exact_slack=_all_used,
                     sizes=(Size("M", 1, 3), Size("T", 1, 4)), choices=(Choice("m", "T", "M"),))


def test_sizes_shape_the_sequences_and_are_shrunk_one_at_a_time():
    result = search(ALL_USED, np.random.default_rng(2), budget=300)
    # (M, T) = (1, 1) and (1, 2) hold; (2, 1) is the first of total size 3 where a single round leaves one unused.
    assert result.configurations == ({"M": 1, "T": 1}, {"M": 1, "T": 2}, {"M": 2, "T": 1})
    # With one expert a configuration is a single point: evaluated once, not once per restart.
    assert (result.evaluations, result.restarts) == (3, 3)
    assert result.counterexample.inputs == {"M": 2, "T": 1, "m": (0,)}
    assert result.counterexample.slack == Fraction(-1, 2)  # by hand: 1 - 2 + 1/2
    big = search(ALL_USED, np.random.default_rng(2), budget=300, configs=[{"M": 3, "T": 4}])
    cex = big.counterexample
    assert cex.found_inputs["M"] == 3 and len(set(cex.found_inputs["m"])) < 3
    assert cex.inputs == {"M": 2, "T": 1, "m": (0,)}
    assert [step.split(" (")[0] for step in cex.steps if "->" in step] == ["M: 3 -> 2", "T: 4 -> 1"]


def test_shrinking_refuses_inputs_that_do_not_violate():
    with pytest.raises(ValueError, match="do not violate"):
        shrink(TIGHT, {"n": 1, "a": (Fraction(1),), "b": (Fraction(-1),)}, np.random.default_rng(0))


def test_the_budget_caps_evaluations_in_total_and_per_size_configuration():
    result = search(_triangle(1, sizes=(1, 8)), np.random.default_rng(0), budget=50, per_config=10)
    assert result.evaluations + result.exact_evaluations == 50
    assert result.configurations == tuple({"n": n} for n in range(1, 6))


def test_the_same_seed_gives_the_same_result_and_another_seed_another_search():
    first = search(TIGHT, np.random.default_rng(5), budget=300, configs=[{"n": 3}])
    again = search(TIGHT, np.random.default_rng(5), budget=300, configs=[{"n": 3}])
    other = search(TIGHT, np.random.default_rng(6), budget=300, configs=[{"n": 3}])
    assert first == again
    assert first.counterexample.found_inputs == again.counterexample.found_inputs
    assert other.counterexample.found_inputs != first.counterexample.found_inputs
    true = _triangle(1)
    assert search(true, np.random.default_rng(5), budget=300) == search(true, np.random.default_rng(5), budget=300)


def _spike(examples=()) -> Statement:
    """(x - 1/3)^2 > 0 on [-1, 1] fails at x = 1/3 alone: a random search (floats never equal 1/3) misses it."""
    def slack(x):
        return (x["x"] - Fraction(1, 3)) ** 2 if isinstance(x["x"], Fraction) else (x["x"] - 1 / 3) ** 2 + 1e-6

    return Statement("spike", slack=slack, exact_slack=lambda x: (x["x"] - Fraction(1, 3)) ** 2,
                     reals=(Real("x", -1, 1),), strict=True, examples=examples)


def test_an_explicit_example_is_rechecked_first_and_decides_only_if_it_violates_exactly():
    missed = search(_spike(), np.random.default_rng(0), budget=300)
    assert not missed.found and not missed.from_example
    kept = search(_spike(({"x": Fraction(1, 3)},)), np.random.default_rng(0), budget=300)
    assert kept.found and kept.from_example and kept.counterexample.slack == 0
    assert kept.counterexample.inputs["x"] == Fraction(1, 3) and kept.evaluations == 0
    # an example that does not violate is no finding: the search goes on as without it
    wrong = search(_spike(({"x": Fraction(1, 2)},)), np.random.default_rng(0), budget=300)
    assert not wrong.found and not wrong.from_example and wrong.exact_evaluations >= 1


# ------------------------------------------------------------------------------------------------ premises


def _half(x):
    return x["x"] - Fraction(1, 2) if isinstance(x["x"], Fraction) else x["x"] - 0.5


AT_LEAST_HALF = Premise("x >= 1/2", "x is at least 1/2", lambda x: x["x"] >= Fraction(1, 2))
# "x >= 1/2" stated for x in [-1, 1] with the premise x >= 1/2: true on its premise, false on half the box.
INSIDE_ONLY = Statement("x >= 1/2 given x >= 1/2", slack=lambda x: float(_half(x)), exact_slack=_half,
                        reals=(Real("x"),), strict=False, premises=(AT_LEAST_HALF,))


def test_a_statement_whose_only_violations_lie_outside_its_premises_is_not_refuted():
    without = search(Statement("x >= 1/2", slack=lambda x: float(_half(x)), exact_slack=_half, reals=(Real("x"),),
                               strict=False), np.random.default_rng(0), budget=300)
    assert without.found  # the same inequality without its premise fails (three quarters of the box)
    result = search(INSIDE_ONLY, np.random.default_rng(0), budget=300)
    assert not result.found and result.counterexample is None and result.outside > 0
    assert result.least_slack >= 0 and result.least_at["x"] >= 0.5  # the least slack is one seen inside
    assert result.outside_violation is None and result.premises == ("x >= 1/2",)
    assert "outside the premises" in result.summary()


def test_a_violation_outside_the_premises_is_reported_as_such_and_decides_nothing():
    result = search(INSIDE_ONLY, np.random.default_rng(0), budget=300, report_outside=True)
    assert not result.found
    v = result.outside_violation
    assert v is not None and v.broken == ("x >= 1/2",)
    assert v.inputs["x"] < Fraction(1, 2) and v.slack == v.inputs["x"] - Fraction(1, 2) < 0  # exact, by hand
    assert "outside the premises (x >= 1/2 broken)" in result.summary()


def test_an_example_outside_the_premises_is_not_an_instance():
    st = Statement("ex", slack=lambda x: float(_half(x)), exact_slack=_half, reals=(Real("x"),), strict=False,
                   premises=(AT_LEAST_HALF,), examples=({"x": Fraction(0)},))
    result = search(st, np.random.default_rng(0), budget=100)
    assert not result.found and not result.from_example


def _unused(x) -> Fraction:
    return len(set(x["m"])) - x["M"] + Fraction(1, 2)


EXPLORED = Premise("T >= M", "at least one round per expert", lambda x: x["T"] >= x["M"], sizes_only=True)
FIRST = Premise("m_1 = 1", "the first round goes to expert 1", lambda x: x["m"][0] == 1)
# "a routing uses every expert" again, now given T >= M and m_1 = 1: the shrinker alone would go to M = 2, T = 1
# (first test of ALL_USED above), which breaks the first premise, and m = (0, ...) breaks the second.
GIVEN = Statement("every expert used, given T >= M", slack=_unused, exact_slack=_unused,
                  sizes=(Size("M", 1, 3), Size("T", 1, 4)), choices=(Choice("m", "T", "M"),),
                  premises=(EXPLORED, FIRST))


def test_search_and_shrinking_stay_inside_the_premises_and_the_counterexample_records_them():
    result = search(GIVEN, np.random.default_rng(2), budget=400, configs=[{"M": 3, "T": 4}, {"M": 3, "T": 2}])
    assert result.skipped_configurations == 1  # T = 2 < M = 3: a configuration outside a premise on the sizes
    cex = result.counterexample
    assert result.found and cex.found_inputs["M"] == 3
    # The smallest case inside: M = 2, T = 2 (T >= M), m_1 = 1, so both rounds on expert 1 (by hand: 1 - 2 + 1/2).
    assert cex.inputs == {"M": 2, "T": 2, "m": (1, 1)} and cex.slack == Fraction(-1, 2)
    assert [name for name, _ in cex.premises] == ["T >= M", "m_1 = 1"]
    assert all(p.holds(cex.inputs) for p in GIVEN.premises) and all(p.holds(cex.found_inputs) for p in GIVEN.premises)
    with pytest.raises(ValueError, match="premises"):
        shrink(GIVEN, {"M": 2, "T": 1, "m": (0,)}, np.random.default_rng(0))


def test_the_default_configurations_skip_those_outside_a_premise_on_the_sizes():
    result = search(GIVEN, np.random.default_rng(2), budget=400)
    assert all(c["T"] >= c["M"] for c in result.configurations)
    assert result.skipped_configurations == sum(1 for m in range(1, 4) for t in range(1, 5) if t < m) == 3
    assert result.found and result.counterexample.inputs == {"M": 2, "T": 2, "m": (1, 1)}


def test_a_recheck_confirms_only_a_rationalization_inside_the_premises():
    # x = 0.5 - 1e-12: its own rational violates but lies outside the premise; the coarser ones round to 1/2,
    # inside, where the slack is 0 and the non-strict bound holds. So nothing inside is confirmed.
    check = recheck(INSIDE_ONLY, {"x": 0.5 - 1e-12})
    assert not check.confirmed
    assert recheck(INSIDE_ONLY, {"x": 0.5 - 1e-12}, inside=False).confirmed
