"""The worst-case searches of the paper's exactly checkable bounds (packs/moe_cl/entries/worst_case.py).

Each statement's exact slack is checked against a case computed by hand, its domain guards against the cases
it excludes, and each search against its known outcome: the printed router bound fails at the smallest size
with simple numbers, the sharp one is not broken, eq. (22) read given the sequence fails on a clustered pool
(every counterexample rechecked here by an independent computation), and the searches are deterministic.
"""

from fractions import Fraction as F

import pytest

from moecl_verify.checks.search import search
from moecl_verify.packs.moe_cl.entries import worst_case as wc
from moecl_verify.packs.moe_cl.entries import worst_case_more as wcm
from moecl_verify.numeric.seeding import generator_for


def test_the_printed_router_bound_slack_at_a_hand_computed_case():
    # M = 2, lambda = 1, h = (1, 0), g = (0, 0): p(h) = (1, 0) (the first output leads by the whole noise range),
    # p(g) = (1/2, 1/2); ||p - q|| = 1/2, ||h - g|| = 1; slack / ||h - g|| = 1/4 - 1/2 = -1/4
    x = {"M": 2, "h": (F(1), F(0)), "g": (F(0), F(0)), "lam": F(1)}
    assert wc.LEMMA2_STATED.exact_slack(x) == F(-1, 4)
    # the sharp constant 2 / lambda = 2 leaves 2 - 1/2 = 3/2
    assert wc.LEMMA2_SHARP.exact_slack(x) == F(3, 2)
    # equal outputs are outside the statement (both sides 0)
    assert wc.LEMMA2_STATED.exact_slack({**x, "h": (F(0), F(0))}) == wc.OUTSIDE


def test_eq20_averaged_slack_at_t_equal_t1_is_the_closed_form():
    # unit vectors w_1 = (1, 0) (t = 0), w_2 = (0, 1) (t = 1); T = T1 = 3, routing (1, 1, 2) over M = 3: every
    # round is exploration, and the averaged E[G_T] = RHS - (D / T) sum_m (1 - r^L_m) with L = (2, 1, 0), r = 1/2:
    # slack / D = (1/3) ((1 - 1/4) + (1 - 1/2)) = 5/12
    x = {"N": 2, "M": 3, "T1": 3, "late": 0, "w": (F(0), F(1)), "m": (0, 0, 1), "sigma": (0, 0, 0)}
    assert wc.EQ20_AVERAGED.exact_slack(x) == F(5, 12)
    assert wc.EQ20_AVERAGED.exact_slack({**x, "T1": 2}) == wc.OUTSIDE  # T1 < M: exploration too short


def test_eq22_slack_agrees_with_a_computation_by_hand():
    # One expert for the whole run is outside the routings searched (every expert explored, a round after T1),
    # though the hand computation of that case agrees with the tool's oracle.
    x = {"N": 3, "K": 2, "M": 2, "T1": 2, "late": 1, "w": (F(-1, 4), F(0), F(-1, 3)), "n": (1, 0, 0),
         "m": (0, 0, 0)}
    assert wc.EQ22_GIVEN_ROUTING.exact_slack(x) == wc.OUTSIDE
    # not clustered (task 2 nearer to task 1 than task 3 is): outside the statement
    assert wc.EQ22_GIVEN_ROUTING.exact_slack({**x, "w": (F(0), F(1, 4), F(-1))}) == wc.OUTSIDE


def test_eq22_fails_on_a_routing_algorithm_1_can_make_computed_by_hand():
    """w = (3/5, 4/5), (0, -1), (1, 0) (circle parameters 1/2, -1, 0); clusters {0, 2}, {1}; r = 1/2; tasks
    0, 0, 1 routed to experts 1, 0, 1, T1 = 2: both experts explored, round 3 (task 1, cluster 1) on expert 1.

    Squared gaps g01 = 18/5, g02 = 4/5, g12 = 2 (within 4/5 <= 0.4 * 2: clustered); S = 1, D = 2(32/5)/9 = 64/45.
    Each expert starts at E||w - w_n||^2 = 1; a round moves it to r e + (1 - r) g(n_t, n):
    expert 1 after round 1: (1/2, 23/10, 9/10); expert 0 after round 2: the same; expert 1 after round 3:
    (41/20, 23/20, 29/20). G_3 = (41/20 + 1/2 + 23/20) / 3 = 37/30.
    Eq. (22): counts at T (2, 1, 2 for the rounds' experts) and at T1 (1, 1, 1): inner = (r(1 - r) + (1 - r))/2
    = 3/8; first = (r^2 + r + r^2)/3 (S + 3/8 D) = 23/45; Psi1 = (2/5 + 0 + 2/5)/3 = 4/15, Psi2 =
    (2/5 + 18/5 + 14/5 + 0 + 2/5 + 2)/6 = 23/15; late = (1 - r)/3 = 1/6; right side = 23/45 + (27/15)/6 = 73/90.
    Slack = (73/90 - 37/30) / D = -19/64."""
    x = {"N": 3, "K": 2, "M": 2, "T1": 2, "late": 1, "w": (F(1, 2), F(-1), F(0)), "n": (0, 0, 1), "m": (1, 0, 1)}
    assert wc.EQ22_GIVEN_ROUTING.exact_slack(x) == F(-19, 64)
    # the same case with round 3 routed outside task 1's cluster is not a routing the search may use
    assert wc.EQ22_GIVEN_ROUTING.exact_slack({**x, "m": (1, 0, 0)}) == wc.OUTSIDE


@pytest.mark.parametrize("seed", [0, 1])
def test_the_searches_find_what_they_should_and_every_counterexample_holds_exactly(seed):
    stated = wc.run_search(wc.LEMMA2_STATED, seed, "lemma2", 300)
    assert stated.found and stated.counterexample.inputs["M"] == 2  # shrunk to the smallest size
    assert stated.counterexample.slack == wc.LEMMA2_STATED.exact_slack(stated.counterexample.inputs) < 0
    sharp = wc.run_search(wc.LEMMA2_SHARP, seed, "lemma2", 1000)
    assert not sharp.found and sharp.evaluations >= 900  # the budget spent (less a few per configuration)
    eq22 = wc.run_search(wc.EQ22_GIVEN_ROUTING, seed, "thm2.generalization", 3000)
    assert eq22.found
    x = eq22.counterexample.inputs
    assert eq22.counterexample.slack == wc.EQ22_GIVEN_ROUTING.exact_slack(x) < 0
    assert len(x["n"]) > x["T1"] and set(x["m"][: x["T1"]]) == set(range(x["M"]))  # a routing Algorithm 1 can make


def test_a_search_is_deterministic_for_its_seed():
    a = wc.run_search(wc.EQ22_GIVEN_ROUTING, 3, "thm2.generalization", 800)
    b = wc.run_search(wc.EQ22_GIVEN_ROUTING, 3, "thm2.generalization", 800)
    assert a == b


def test_an_entry_says_what_was_searched_and_never_confirms():
    result = search(wc.LEMMA2_SHARP, generator_for(0, "test"), budget=200)
    entry = wc.entry("lemma2", "-", wc.LEMMA2_SHARP, result, "f", None, form="derived")
    assert entry.verdict == "inconclusive" and "200 evaluations" in entry.evidence
    assert "does not prove the bound" in entry.evidence and entry.config["search"]["evaluations"] == 200
    found = wc.entry("lemma2", "-", wc.LEMMA2_STATED, search(wc.LEMMA2_STATED, generator_for(0, "t"), budget=200),
                     "f", None)
    assert found.verdict == "refuted" and found.config["counterexample"]["slack"] == "-1/4"


def test_the_exact_eq22_agrees_with_the_runs_float_version():
    import numpy as np

    from moecl_verify.packs.moe_cl.experiments import theorem_bounds
    from moecl_verify.theory.conditional import eq22_rhs, pool_constants, psi

    rng = np.random.default_rng(7)
    W = rng.normal(size=(6, 3))
    chosen = rng.integers(0, 4, size=(1, 12))
    exact_W = [tuple(F(x) for x in w) for w in W]
    S, D = pool_constants(exact_W)
    p1, p2 = psi(exact_W, 2)
    exact = eq22_rhs([int(m) for m in chosen[0]], 4, 5, F(2, 5), S, D, p1, p2)
    f1, f2 = theorem_bounds.psi(W, 2)
    assert float(p1) == pytest.approx(f1, rel=1e-12) and float(p2) == pytest.approx(f2, rel=1e-12)
    assert float(exact) == pytest.approx(theorem_bounds.eq22_rhs(chosen, 4, 5, 0.4, float(S), float(D), f1, f2)[0],
                                         rel=1e-12)


# ------------------------------------------------------------------------ eq. (19) given the tasks and routing


def _circ(t):
    return ((1 - t * t) / (1 + t * t), 2 * t / (1 + t * t))


def _eq19_by_hand(ts, tasks, chosen, t):
    """Eq. (19) given the sequence, recomputed from the definitions without the tool's code, r = 1/2: each expert's
    expected squared error to every task under eq. (42)'s recursion (A1), F_t from its definition, the right side
    from the routing counts L; returns (right side - F_t) / D."""
    W = [_circ(x) for x in ts]
    sq = lambda a, b: sum((p - q) ** 2 for p, q in zip(a, b))  # noqa: E731
    N, r = len(W), F(1, 2)
    S = sum(sq(w, (0, 0)) for w in W) / N
    D = sum(sq(W[a], W[b]) for a in range(N) for b in range(N) if a != b) / N**2
    err = {m: [sq((0, 0), w) for w in W] for m in set(chosen)}
    own = []  # E||w^(m_tau)_tau - w_(n_tau)||^2, right after round tau
    for n_t, m_t in zip(tasks[:t], chosen[:t]):
        err[m_t] = [r * e + (1 - r) * sq(W[n_t], W[n]) for n, e in enumerate(err[m_t])]
        own.append(err[m_t][n_t])
    F_t = sum(err[chosen[i]][tasks[i]] - own[i] for i in range(t - 1)) / (t - 1)
    L = lambda m, upto: sum(1 for x in chosen[:upto] if x == m)  # noqa: E731
    rhs = sum((r ** L(chosen[i], t) - r ** L(chosen[i], i + 1)) * S + (r ** L(chosen[i], i + 1) - r ** L(chosen[i], t)) * D
              for i in range(t - 1)) / (t - 1)
    return (rhs - F_t) / D


def test_eq19_slack_at_hand_computed_cases():
    # w = (1, 0), (0, 1) (t = 0, 1): S = 1, D = (2 + 2) / 4 = 1. One expert given task 1 then task 2: its error on
    # task 1 is r * 1 = 1/2 after round 1 and r * 1/2 + (1 - r) * 2 = 5/4 after round 2, so F_2 = 3/4; the right
    # side (r^2 - r) S + (r - r^2) D = -1/4 + 1/4 = 0: slack / D = -3/4
    x = {"N": 2, "M": 3, "T": 2, "w": (F(0), F(1)), "n": (0, 1), "m": (0, 0)}
    assert wcm.EQ19_GIVEN_ROUTING.exact_slack(x) == F(-3, 4)
    # different experts: neither moves on the other's task, both sides 0 (a violation of the printed '<' only)
    assert wcm.EQ19_GIVEN_ROUTING.exact_slack({**x, "m": (0, 1)}) == 0
    # tasks 1, 1, 2 on one expert, t = 3: errors (task 1, task 2) (1, 1) -> (1/2, 3/2) -> (1/4, 7/4) -> (9/8, 7/8);
    # F_3 = ((9/8 - 1/2) + (9/8 - 1/4)) / 2 = 3/4; with S = D every summand (r^L_t - r^L_tau)(S - D) is 0
    assert wcm.EQ19_GIVEN_ROUTING.exact_slack({**x, "T": 3, "n": (0, 0, 1), "m": (0, 0, 0)}) == F(-3, 4)
    # N = 3, w = (1, 0), (0, 1), (0, -1): gaps 2, 2, 4, D = 2 (2 + 2 + 4) / 9 = 16/9. Tasks 2 then 3 on one expert:
    # F_2 = (1 - r)(4 - r) = 7/4, right side r (1 - r)(D - S) = 7/36: slack / D = (7/36 - 63/36) * 9/16 = -7/8
    y = {"N": 3, "M": 4, "T": 2, "w": (F(0), F(1), F(-1)), "n": (1, 2), "m": (2, 2)}
    assert wcm.EQ19_GIVEN_ROUTING.exact_slack(y) == F(-7, 8) == _eq19_by_hand(y["w"], y["n"], y["m"], 2)
    assert wcm.EQ19_GIVEN_ROUTING.exact_slack({**y, "M": 3}) == wc.OUTSIDE  # M = N: not Theorem 1's case
    # a longer sequence against the computation by hand
    z = {"N": 3, "M": 4, "T": 5, "w": (F(1, 3), F(-2), F(1, 2)), "n": (0, 2, 1, 0, 2), "m": (1, 1, 3, 1, 3)}
    assert wcm.EQ19_GIVEN_ROUTING.exact_slack(z) == _eq19_by_hand(z["w"], z["n"], z["m"], 5)


def test_at_t_2_with_two_tasks_eq19s_slack_takes_three_values_on_every_pool():
    """N = 2, t = 2 by hand: different experts 0; one expert, same task twice: F_2 = -r(1 - r) = -1/4 against
    r (1 - r)(D - 1) = (D - 1)/4, slack D/4, i.e. 1/4; two tasks (gap g, D = g/2): (1 - r)(r D - g) / D = -3/4."""
    import itertools

    for ts in ((F(0), F(1)), (F(1, 3), F(-2)), (F(-1, 5), F(7, 2))):
        seen = {wcm.EQ19_GIVEN_ROUTING.exact_slack({"N": 2, "M": 3, "T": 2, "w": ts, "n": n, "m": m})
                for n in itertools.product(range(2), repeat=2) for m in itertools.product(range(3), repeat=2)}
        assert seen == {F(-3, 4), F(0), F(1, 4)}


def test_eq19_planted_too_tight_is_found_and_the_sharp_version_is_not():
    # by the test above, on N = 2, t = 2 the least slack / D is -3/4, so "slack / D + 3/4 >= 0" holds there with
    # equality, and lowering it by 1/100 fails on every sequence giving one expert two different tasks
    configs = [{"N": 2, "M": 3, "T": 2}, {"N": 2, "M": 4, "T": 2}]
    planted = wcm.eq19_bound("planted", F(3, 4) - F(1, 100))
    found = search(planted, generator_for(0, "test", "eq19 planted"), budget=1000, restarts=25, configs=configs)
    assert found.found and found.counterexample.slack == F(-1, 100)
    x = found.counterexample.inputs
    assert x["m"][0] == x["m"][1] and x["n"][0] != x["n"][1]
    sharp = search(wcm.eq19_bound("sharp", F(3, 4)), generator_for(0, "test", "eq19 sharp"), budget=1000,
                   restarts=25, configs=configs)
    assert not sharp.found and sharp.evaluations >= 900 and sharp.least_slack >= -1e-12


@pytest.mark.parametrize("evaluations", [300, 3000])
def test_eq19s_search_finds_the_violation_and_it_holds_by_hand(evaluations):
    res = wc.run_search(wcm.EQ19_GIVEN_ROUTING, 0, "thm1.forgetting_early", evaluations)
    assert res.found
    x = res.counterexample.inputs
    assert res.counterexample.slack == wcm.EQ19_GIVEN_ROUTING.exact_slack(x) < 0
    assert res.counterexample.slack == _eq19_by_hand(x["w"][:x["N"]], x["n"], x["m"], x["T"])


# ------------------------------------------------------------------------------ Lemma 12, correct routing


def _hand_case():
    """d = 3, s = 2, beta = 1: w_1 = (0, 0, 1), w_2 = (-1, 0, 1); the expert gets task 1, then task 2 twice."""
    return {"N": 2, "s": 2, "w": (F(0), F(0), F(1), F(-1), F(0), F(1)), "theta": (F(-1), F(0), F(0)),
            "beta": (F(1),) * 3, "noise": (F(0), F(1), F(0), F(0), F(1), F(0), F(1), F(0), F(0)), "n": (0, 1)}


def test_lemma12_slack_at_a_hand_computed_case():
    # Round 1, task 1, X = [(0,0,1), (0,1,0)]: w_1 = (0,0,1) lies in the span, w = (0,0,1).
    # Round 2, task 2, X = [(-1,0,1), (0,1,0)] (orthogonal columns): residual (-1,0,0) projects to
    # ((-1,0,0).(-1,0,1) / 2) (-1,0,1) = (-1/2, 0, 1/2), so w = (-1/2, 0, 3/2).
    # Round 3, task 2 again (the proof's premise), X = [(-1,0,1), (1,0,0)] spans the x-z plane, which holds the
    # residual (-1/2, 0, -1/2): the step is the whole residual, Delta = 1/4 + 1/4 = 1/2; xbar = (0,0,1).
    # theta = (-1,0,0): theta.w_2 = 1 > theta.w_1 = 0, so the expert is in M_2 (eq. 11).
    x = _hand_case()
    q = wcm.lemma12_round(x)
    assert (q.delta, q.residual, q.xbar_inf) == (F(1, 2), F(1, 2), F(1))
    assert wcm.LEMMA12_GIVEN_ROUND.exact_slack(x) == F(-1, 2)
    # the gate parameter pointing the other way puts the expert in M_1: outside the statement
    assert wcm.LEMMA12_GIVEN_ROUND.exact_slack({**x, "theta": (F(1), F(0), F(0))}) == wc.OUTSIDE
    # s = 1 (the signal column only): round 2 leaves a residual orthogonal to w_2 = the span of round 3's
    # features, so round 3 does not move the expert: Delta = 0
    one = {**x, "s": 1, "noise": ()}
    assert wcm.lemma12_round(one).delta == 0 and wcm.LEMMA12_GIVEN_ROUND.exact_slack(one) == 0


def _delta_by_sympy(x):
    """Eq. (5) as printed, w_t = w_{t-1} + X (X^T X)^{-1} (y - X^T w_{t-1}) with y = X^T w_n, in sympy: the routed
    round's Delta ||xbar||_inf, independently of the tool's projection code."""
    import sympy as sp

    d, s = 3, x["s"]
    W = [sp.Matrix([sp.Rational(v.numerator, v.denominator) for v in x["w"][i * d:(i + 1) * d]]) for i in range(x["N"])]
    R = lambda v: sp.Rational(v.numerator, v.denominator)  # noqa: E731
    w = sp.zeros(d, 1)
    for i, task in enumerate((x["n"][0], x["n"][1], x["n"][1])):
        cols = [R(x["beta"][i]) * W[task]]
        cols += [sp.Matrix([R(v) for v in x["noise"][(i * (s - 1) + c) * d:(i * (s - 1) + c + 1) * d]])
                 for c in range(s - 1)]
        X = sp.Matrix.hstack(*cols)
        new = w + X * (X.T * X).inv() * (X.T * W[task] - X.T * w)
        step, w = new - w, new
    xbar = X * sp.ones(s, 1)
    return step.dot(step) * max(abs(v) for v in xbar)


@pytest.mark.parametrize("evaluations", [300, 3000])
def test_lemma12s_search_finds_a_moving_expert_and_sympy_agrees(evaluations):
    res = wc.run_search(wcm.LEMMA12_GIVEN_ROUND, 0, "lemma12", evaluations)
    assert res.found
    x = res.counterexample.inputs
    assert res.counterexample.slack == wcm.LEMMA12_GIVEN_ROUND.exact_slack(x) < 0
    assert -res.counterexample.slack == _delta_by_sympy(x)
    assert x["n"][0] != x["n"][1] and x["s"] == 2  # the only shape in which it can move, by the case above
    W = [x["w"][i * 3:(i + 1) * 3] for i in range(x["N"])]
    score = [sum(a * b for a, b in zip(x["theta"], w)) for w in W]
    assert score.index(max(score)) == x["n"][1] and score.count(max(score)) == 1  # routed within M_n


def _relative(c):
    return lambda q: wc.OUTSIDE if q.residual < wc.MIN_GAP else c - q.delta / q.residual


def test_lemma12_planted_too_tight_is_found_and_the_true_bound_is_not():
    # A projection does not lengthen a vector, so Delta = ||P (w_n - w_{t-1})||^2 <= ||w_n - w_{t-1}||^2, with
    # equality when the residual lies in the span of the features; 99/100 of it fails near there.
    planted = wcm.lemma12_bound("planted", _relative(F(99, 100)))
    found = search(planted, generator_for(0, "test", "lemma12 planted"), budget=1000,
                   configs=[{"N": 2, "s": 2}, {"N": 3, "s": 2}])
    assert found.found and F(-1, 100) <= found.counterexample.slack < 0
    true = search(wcm.lemma12_bound("true", _relative(F(1))), generator_for(0, "test", "lemma12 true"), budget=1000)
    assert not true.found and true.evaluations >= 900
    # and the statement itself with one feature per round (where it holds, by the case above)
    s1 = search(wcm.LEMMA12_GIVEN_ROUND, generator_for(0, "test", "lemma12 s=1"), budget=600,
                configs=[{"N": 2, "s": 1}, {"N": 3, "s": 1}])
    assert not s1.found and s1.evaluations >= 500


# ------------------------------------------------------------------------ eq. (20) given the tasks and routing


def _eq20_by_hand(ts, tasks, chosen, T1):
    """Eq. (20) given the sequence, from the definitions without the tool's code, r = 1/2: G_T the mean over the
    rounds of E||w^(m_tau)_T - w_(n_tau)||^2 (eq. (42)'s recursion), the right side at the counts of rounds
    1..T1; returns (right side - G_T) / D."""
    W = [_circ(x) for x in ts]
    sq = lambda a, b: sum((p - q) ** 2 for p, q in zip(a, b))  # noqa: E731
    N, r, T = len(W), F(1, 2), len(tasks)
    S = sum(sq(w, (0, 0)) for w in W) / N
    D = sum(sq(W[a], W[b]) for a in range(N) for b in range(N) if a != b) / N**2
    err = {m: [sq((0, 0), w) for w in W] for m in set(chosen)}
    for n_t, m_t in zip(tasks, chosen):
        err[m_t] = [r * e + (1 - r) * sq(W[n_t], W[n]) for n, e in enumerate(err[m_t])]
    G = sum(err[m][n] for n, m in zip(tasks, chosen)) / T
    L = {m: sum(1 for x in chosen[:T1] if x == m) for m in set(chosen)}
    rhs = sum(r ** L[m] * S + (1 - r ** L[m]) * D for m in chosen) / T
    return (rhs - G) / D


def test_eq20_given_routing_slack_at_hand_computed_cases():
    # w = (1, 0), (0, 1): S = D = 1. One expert given tasks 1, 1, 2 (T = T1 = 3): its errors (task 1, task 2) go
    # (1, 1) -> (1/2, 3/2) -> (1/4, 7/4) -> (9/8, 7/8), so G_3 = (9/8 + 9/8 + 7/8) / 3 = 25/24 against
    # r^3 S + (1 - r^3) D = 1: slack / D = -1/24
    x = {"N": 2, "M": 3, "T": 3, "T1": 3, "w": (F(0), F(1)), "n": (0, 0, 1), "m": (0, 0, 0)}
    assert wcm.EQ20_GIVEN_ROUTING.exact_slack(x) == F(-1, 24)
    # tasks 1, 1, 1, 2 with T1 = 3: errors (1/8, 15/8) after three rounds of task 1, then (17/16, 15/16):
    # G_4 = (3 * 17/16 + 15/16) / 4 = 33/32 against 1: slack / D = -1/32
    y = {**x, "T": 4, "n": (0, 0, 0, 1), "m": (0, 0, 0, 0)}
    assert wcm.EQ20_GIVEN_ROUTING.exact_slack(y) == F(-1, 32)
    assert wcm.EQ20_GIVEN_ROUTING.exact_slack({**x, "M": 4}) == wc.OUTSIDE  # T1 = 3 < M = 4
    assert wcm.EQ20_GIVEN_ROUTING.exact_slack({**x, "N": 3, "w": (F(0), F(1), F(-1))}) == wc.OUTSIDE  # M = N
    z = {"N": 3, "M": 4, "T": 7, "T1": 5, "w": (F(1, 3), F(-2), F(1, 2)), "n": (0, 2, 1, 0, 2, 2, 1),
         "m": (1, 0, 3, 1, 2, 3, 0)}
    assert wcm.EQ20_GIVEN_ROUTING.exact_slack(z) == _eq20_by_hand(z["w"], z["n"], z["m"], 5)


def test_eq20_given_routing_planted_too_tight_is_found_and_the_sharp_version_is_not():
    """N = 2 unit vectors (S = 1, D = g/2 for their squared gap g), M = 3, T = T1 = 3, r = 1/2, by hand: one expert
    with tasks a, a, b gives G_3 = 1/8 + 11g/24 against 1/8 + 7g/16, slack / D = -1/24 on every pool; tasks a, b, a
    give +1/8, b, a, a +5/24, a, a, a +7/8; a routing over two experts adds (g/4)/3 for the single round and 0 or
    more for the pair, over three experts more still. So slack / D + 1/24 >= 0 there, with equality."""
    configs = [{"N": 2, "M": 3, "T": 3, "T1": 3}]
    planted = wcm.eq20_given_bound("planted", F(1, 24) - F(1, 100))
    found = search(planted, generator_for(0, "test", "eq20 planted"), budget=2000, restarts=10, configs=configs)
    assert found.found and found.counterexample.slack == F(-1, 100)
    x = found.counterexample.inputs
    assert len(set(x["m"])) == 1 and x["n"][0] == x["n"][1] != x["n"][2]
    sharp = search(wcm.eq20_given_bound("sharp", F(1, 24)), generator_for(0, "test", "eq20 sharp"), budget=2000,
                   restarts=10, configs=configs)
    assert not sharp.found and sharp.evaluations >= 1800 and sharp.least_slack >= -1e-12


@pytest.mark.parametrize("evaluations", [300, 3000])
def test_eq20_given_routings_search_finds_a_violation_and_it_holds_by_hand(evaluations):
    res = wc.run_search(wcm.EQ20_GIVEN_ROUTING, 0, "thm1.generalization", evaluations)
    assert res.found
    x = res.counterexample.inputs
    assert res.counterexample.slack == wcm.EQ20_GIVEN_ROUTING.exact_slack(x) < 0
    assert res.counterexample.slack == _eq20_by_hand(x["w"], x["n"], x["m"], min(x["T1"], x["T"]))


def test_eq20_averaged_fails_on_its_explicit_example_computed_by_hand():
    """w = (1, 0), (0, 1), (99/101, -20/101) (circle parameters 0, 1, -1/10), r = 1/2, M = N = 3, T1 = 3, T = 4,
    every round on expert 0, tasks of rounds 1-3 uniform over the three, round 4 on task sigma(0) = 2nd task.
    E[G_4] enumerated over the 27 task sequences by a recursion written here (the expert starts at 0 and
    E||w_t - w_n||^2 moves to r e + (1 - r) ||w_{n_t} - w_n||^2); eq. (20)'s right side with L^(0) = 3 at T1 is
    r^3 S + (1 - r^3) D."""
    from itertools import product

    def circ(t):
        return ((1 - t * t) / (1 + t * t), 2 * t / (1 + t * t))

    W = [circ(F(0)), circ(F(1)), circ(F(-1, 10))]
    sq = lambda a, b: sum((x - y) ** 2 for x, y in zip(a, b))  # noqa: E731
    r, N = F(1, 2), 3
    S = sum(sq(w, (0, 0)) for w in W) / N
    D = sum(sq(W[a], W[b]) for a in range(N) for b in range(N) if a != b) / N**2
    total = F(0)
    for head in product(range(N), repeat=3):
        tasks = [*head, 1]
        e = [sq((0, 0), w) for w in W]
        for n_t in tasks:
            e = [r * x + (1 - r) * sq(W[n_t], W[n]) for n, x in enumerate(e)]
        total += sum(e[n] for n in tasks) / 4
    lhs, rhs = total / 27, r**3 * S + (1 - r**3) * D
    assert (lhs, rhs) == (F(898, 909), F(7181, 7272))
    (example,) = wc.EQ20_AVERAGED.examples
    assert wc.EQ20_AVERAGED.exact_slack(example) == (rhs - lhs) / D == F(-3, 7168)
    found = wc.run_search(wc.EQ20_AVERAGED, 5, "thm1.generalization", 300)
    assert found.found and found.from_example and found.counterexample.slack == F(-3, 7168)
