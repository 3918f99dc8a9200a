"""The worst-case searches of the paper's exactly checkable bounds (packs/moe_cl/entries/worst_case.py).

Each statement's exact slack is checked against a case computed by hand, its premises against the cases they
exclude, and each search against its known outcome: the printed router bound fails at the smallest size
with simple numbers, the sharp one is not broken, eq. (22) read given the sequence fails inside Theorem 2's
premises (K < M < N, clustered, every expert explored; every counterexample rechecked here by an independent
computation, its premises recomputed), eq. (20) averaged over the tasks finds none inside Theorem 1's, a
planted bound failing only outside its premises is not refuted, the structured counterexample round-trips
through results.json and recomputes exactly, and the searches are deterministic.
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
    # expert 3 is never used: outside the premises, which the search never evaluates
    assert wc.EQ20_AVERAGED.failing(x) == ("every expert explored",)
    assert "T1 = ceil(M / eta)" in wc.EQ20_AVERAGED.failing({**x, "T1": 2})  # T1 < M: exploration too short
    # every expert once (L = (1, 1, 1)): slack / D = (1/3) * 3 * (1 - 1/2) = 1/2, inside the premises
    y = {**x, "m": (0, 1, 2)}
    assert wc.EQ20_AVERAGED.exact_slack(y) == F(1, 2) and wc.EQ20_AVERAGED.failing(y) == ()
    # the second reading also asks that the sets split the experts with every task's set non-empty
    assert wc.EQ20_AVERAGED_SETS.failing(y) == ("inside the expert sets",)
    assert wc.EQ20_AVERAGED_SETS.failing({**y, "sigma": (0, 1, 0)}) == ()


def test_eq22s_premises_rule_out_what_theorem_2_does_not_speak_of():
    # K = M (Theorem 2 needs K < M < N) and one expert for the whole run (the other never explored)
    x = {"N": 3, "K": 2, "M": 2, "T1": 2, "late": 1, "w": (F(-1, 4), F(0), F(-1, 3)), "n": (1, 0, 0),
         "m": (0, 0, 0)}
    assert set(wc.EQ22_GIVEN_ROUTING.failing(x)) == {"K < M < N", "every expert explored"}
    # not clustered (task 2 nearer to task 1 than task 3 is): outside too
    assert "clustered ground truths" in wc.EQ22_GIVEN_ROUTING.failing({**x, "w": (F(0), F(1, 4), F(-1))})
    # M = 3 < N = 4 but K = 3 = M
    assert "K < M < N" in wc.EQ22_GIVEN_ROUTING.failing({"N": 4, "K": 3, "M": 3, "T1": 3, "late": 1},
                                                         sizes_only=True)
    assert wc.EQ22_GIVEN_ROUTING.failing({"N": 4, "K": 2, "M": 3, "T1": 3, "late": 1}, sizes_only=True) == ()


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
    Slack = (73/90 - 37/30) / D = -19/64.  But K = M = 2: Theorem 2 assumes K < M < N, so this case (the one an
    earlier search without premises reported) is outside the statement and decides nothing."""
    x = {"N": 3, "K": 2, "M": 2, "T1": 2, "late": 1, "w": (F(1, 2), F(-1), F(0)), "n": (0, 0, 1), "m": (1, 0, 1)}
    assert wc.EQ22_GIVEN_ROUTING.exact_slack(x) == F(-19, 64) == _eq22_by_hand(x)
    assert wc.EQ22_GIVEN_ROUTING.failing(x) == ("K < M < N",)
    # the same case with round 3 routed outside task 1's cluster breaks one premise more
    assert "routed inside the cluster" in wc.EQ22_GIVEN_ROUTING.failing({**x, "m": (1, 0, 0)})


def _sq(a, b):
    return sum((p - q) ** 2 for p, q in zip(a, b))


def _eq22_by_hand(x):
    """Eq. (22) given the sequence from its printed form, without the tool's code, r = 1/2 (d = 2, s = 1): the
    errors by eq. (42)'s recursion, Psi1 and Psi2 from their definitions (cluster of task n: n mod K), the right
    side with the inner index read as tau'; returns (right side - G_T) / D."""
    W = [_circ(t) for t in x["w"][:x["N"]]]
    N, K, T1, r = len(W), x["K"], x["T1"], F(1, 2)
    tasks, chosen = x["n"], x["m"]
    T = len(tasks)
    S = sum(_sq(w, (0, 0)) for w in W) / N
    D = sum(_sq(W[a], W[b]) for a in range(N) for b in range(N) if a != b) / N**2
    err = {m: [_sq((0, 0), w) for w in W] for m in set(chosen)}
    for n_t, m_t in zip(tasks, chosen):
        err[m_t] = [r * e + (1 - r) * _sq(W[n_t], W[n]) for n, e in enumerate(err[m_t])]
    G = sum(err[m][n] for n, m in zip(tasks, chosen)) / T
    cluster = [[j for j in range(N) if j % K == k] for k in range(K)]
    psi1 = sum(sum(_sq(W[j], W[n]) for j in cluster[n % K]) / len(cluster[n % K]) for n in range(N)) / N
    psi2 = sum(sum(sum(_sq(W[j], W[n]) for j in c) / len(c) for c in cluster) / K for n in range(N)) / N
    L = lambda m, upto: sum(1 for v in chosen[:upto] if v == m)  # noqa: E731
    inner = sum(r ** (L(chosen[i], T) - L(chosen[i], T1)) * (1 - r ** L(chosen[i], T1)) for i in range(T1)) / T1
    first = sum(r ** L(m, T) for m in chosen) / T * (S + inner * D)
    late = sum(1 - r ** (L(chosen[i], T) - L(chosen[i], T1)) for i in range(T1, T)) / T
    return (first + (psi2 + psi1) * late - G) / D


def _premises_by_hand(x) -> bool:
    """Theorem 2's premises as this test reads them, recomputed without the tool's predicates."""
    W = [_circ(t) for t in x["w"][:x["N"]]]
    N, K, M, T1 = x["N"], x["K"], x["M"], x["T1"]
    within = [_sq(W[a], W[b]) for a in range(N) for b in range(a) if a % K == b % K]
    across = [_sq(W[a], W[b]) for a in range(N) for b in range(a) if a % K != b % K]
    return (K < M < N and T1 >= M and len(x["n"]) > T1 and set(x["m"][:T1]) == set(range(M))
            and all(m % K == n % K for n, m in zip(x["n"][T1:], x["m"][T1:]))
            and max(within) * 5 <= 2 * min(across))


def test_eq22_fails_inside_its_premises_at_a_case_computed_by_hand():
    """w_1 = (1, 0), w_2 = (0, 1), w_3 = (12/13, 5/13), w_4 = (5/13, 12/13) (circle parameters 0, 1, 1/5, 2/3);
    clusters {1, 3}, {2, 4}; K = 2 < M = 3 < N = 4; tasks 1, 2, 1 on experts 3, 1, 2 (every expert explored,
    T1 = 3), then task 1 on expert 1 (experts 1 and 3 serve cluster 1).  Both sides are recomputed from the
    printed definitions by :func:`_eq22_by_hand`, which shares no code with the tool."""
    x = {"N": 4, "K": 2, "M": 3, "T1": 3, "late": 1, "w": (F(0), F(1), F(1, 5), F(2, 3)), "n": (0, 1, 0, 0),
         "m": (2, 0, 1, 0)}
    assert _premises_by_hand(x) and wc.EQ22_GIVEN_ROUTING.failing(x) == ()
    assert wc.EQ22_GIVEN_ROUTING.exact_slack(x) == _eq22_by_hand(x) < 0


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
    assert eq22.counterexample.slack == wc.EQ22_GIVEN_ROUTING.exact_slack(x) == _eq22_by_hand(x) < 0
    # inside Theorem 2's premises, recomputed here: K < M < N, clustered, every expert explored, later rounds in
    # the cluster; found by the search, not by a declared example
    assert _premises_by_hand(x) and not eq22.from_example and not wc.EQ22_GIVEN_ROUTING.examples
    assert [n for n, _ in eq22.counterexample.premises] == [p.name for p in wc.EQ22_GIVEN_ROUTING.premises]


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
    assert found.config["counterexample"]["premises"] == []  # the router bound declares none


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
    assert "M > N" in wcm.EQ19_GIVEN_ROUTING.failing({**y, "M": 3})  # M = N: not Theorem 1's case
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
    # the gate parameter pointing the other way puts the expert in M_1: outside the lemma's premise
    assert wcm.LEMMA12_GIVEN_ROUND.failing({**x, "theta": (F(1), F(0), F(0))}) == ("routed within M_n",)
    assert wcm.LEMMA12_GIVEN_ROUND.failing(x) == ()
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
    # the budget is spent (float evaluations and the exact rechecks of float leads, where Delta = 0 rounds
    # below 0), inside the premise: only rounds routed within M_n
    assert not s1.found and s1.evaluations + s1.exact_evaluations >= 590 and s1.outside > 0


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
    # but two experts are never used during exploration: outside Theorem 1's premises
    assert wcm.EQ20_GIVEN_ROUTING.failing(x) == ("every expert explored",)
    # tasks 1, 1, 1, 2 with T1 = 3: errors (1/8, 15/8) after three rounds of task 1, then (17/16, 15/16):
    # G_4 = (3 * 17/16 + 15/16) / 4 = 33/32 against 1: slack / D = -1/32 (outside the premises too)
    y = {**x, "T": 4, "n": (0, 0, 0, 1), "m": (0, 0, 0, 0)}
    assert wcm.EQ20_GIVEN_ROUTING.exact_slack(y) == F(-1, 32)
    assert "T1 = ceil(M / eta)" in wcm.EQ20_GIVEN_ROUTING.failing({**x, "M": 4})  # T1 = 3 < M = 4
    assert "M > N" in wcm.EQ20_GIVEN_ROUTING.failing({**x, "N": 3, "w": (F(0), F(1), F(-1))})  # M = N
    z = {"N": 3, "M": 4, "T": 7, "T1": 5, "w": (F(1, 3), F(-2), F(1, 2)), "n": (0, 2, 1, 0, 2, 2, 1),
         "m": (1, 0, 3, 1, 2, 3, 0)}
    assert wcm.EQ20_GIVEN_ROUTING.exact_slack(z) == _eq20_by_hand(z["w"], z["n"], z["m"], 5)


def test_eq20_given_routing_planted_with_violations_only_outside_the_premises_is_not_refuted():
    """N = 2 unit vectors (S = 1, D = g/2 for their squared gap g), M = 3, T = T1 = 3, r = 1/2, by hand.  Outside
    the premises, one expert with tasks a, a, b gives slack / D = -1/24 on every pool (tasks a, b, a give +1/8,
    b, a, a +5/24, a, a, a +7/8; two experts more).  Inside them every expert is explored, so each takes one round:
    its error on its task is r ||w||^2 = 1/2 after it, G_3 = 1/2 against r S + (1 - r) D = 1/2 + D/2, slack / D =
    1/2 on every pool and sequence.  So "slack / D + 1/24 - 1/100 >= 0" fails only outside the premises, and
    "slack / D - 1/2 - 1/100 >= 0" fails everywhere inside them."""
    configs = [{"N": 2, "M": 3, "T": 3, "T1": 3}]
    planted = wcm.eq20_given_bound("planted", F(1, 24) - F(1, 100))
    inside = search(planted, generator_for(0, "test", "eq20 planted"), budget=1000, restarts=10, configs=configs,
                    report_outside=True)
    assert not inside.found and inside.evaluations >= 900 and inside.least_slack >= F(1, 2) - 1e-9
    # the violation outside, if the search meets one, is reported as such, with the premise it breaks
    if inside.outside_violation is not None:
        assert inside.outside_violation.broken == ("every expert explored",)
        assert planted.exact_slack(inside.outside_violation.inputs) < 0
    tight = search(wcm.eq20_given_bound("tight", -F(1, 2) - F(1, 100)), generator_for(0, "test", "eq20 tight"),
                   budget=1000, restarts=10, configs=configs)
    assert tight.found and tight.counterexample.slack == F(-1, 100)
    x = tight.counterexample.inputs
    assert sorted(x["m"]) == [0, 1, 2]  # every expert explored, one round each
    sharp = search(wcm.eq20_given_bound("sharp", -F(1, 2)), generator_for(0, "test", "eq20 sharp"), budget=1000,
                   restarts=10, configs=configs)
    assert not sharp.found and sharp.least_slack >= -1e-12


# Inside the premises the violations start at T = 6 (N = 2, M = 3, T1 = 3): 300 evaluations (the smoke budget)
# reach only the smallest horizons, 1000 reach them.
@pytest.mark.parametrize("evaluations", [1000, 3000])
def test_eq20_given_routings_search_finds_a_violation_and_it_holds_by_hand(evaluations):
    res = wc.run_search(wcm.EQ20_GIVEN_ROUTING, 0, "thm1.generalization", evaluations)
    assert res.found
    x = res.counterexample.inputs
    assert res.counterexample.slack == wcm.EQ20_GIVEN_ROUTING.exact_slack(x) < 0
    assert res.counterexample.slack == _eq20_by_hand(x["w"], x["n"], x["m"], x["T1"])
    assert x["M"] > x["N"] and x["M"] <= x["T1"] <= x["T"] and set(x["m"][:x["T1"]]) == set(range(x["M"]))


def test_eq20_averaged_fails_outside_its_premises_on_the_old_example_computed_by_hand():
    """w = (1, 0), (0, 1), (99/101, -20/101) (circle parameters 0, 1, -1/10), r = 1/2, M = N = 3, T1 = 3, T = 4,
    every round on expert 0, tasks of rounds 1-3 uniform over the three, round 4 on task sigma(0) = 2nd task.
    E[G_4] enumerated over the 27 task sequences by a recursion written here (the expert starts at 0 and
    E||w_t - w_n||^2 moves to r e + (1 - r) ||w_{n_t} - w_n||^2); eq. (20)'s right side with L^(0) = 3 at T1 is
    r^3 S + (1 - r^3) D.  M = N and two experts never explored: outside Theorem 1's premises, so it is
    reported beside the entry and decides nothing."""
    from itertools import product

    W = [_circ(F(0)), _circ(F(1)), _circ(F(-1, 10))]
    r, N = F(1, 2), 3
    S = sum(_sq(w, (0, 0)) for w in W) / N
    D = sum(_sq(W[a], W[b]) for a in range(N) for b in range(N) if a != b) / N**2
    total = F(0)
    for head in product(range(N), repeat=3):
        tasks = [*head, 1]
        e = [_sq((0, 0), w) for w in W]
        for n_t in tasks:
            e = [r * x + (1 - r) * _sq(W[n_t], W[n]) for n, x in enumerate(e)]
        total += sum(e[n] for n in tasks) / 4
    lhs, rhs = total / 27, r**3 * S + (1 - r**3) * D
    assert (lhs, rhs) == (F(898, 909), F(7181, 7272))
    (example,) = wc.EQ20_AVERAGED_OUTSIDE
    assert wc.EQ20_AVERAGED.exact_slack(example) == (rhs - lhs) / D == F(-3, 7168)
    assert set(wc.EQ20_AVERAGED.failing(example)) == {"M > N", "M = Omega(N ln N)", "every expert explored"}
    assert not wc.EQ20_AVERAGED.examples  # no declared example decides the entry
    found = wc.run_search(wc.EQ20_AVERAGED, 5, "thm1.generalization", 300, cover=True)
    assert not found.found
    e = wc.entry("thm1.generalization", "-", wc.EQ20_AVERAGED, found, "f", "r", outside=wc.EQ20_AVERAGED_OUTSIDE)
    assert e.verdict == "inconclusive" and "Outside the premises (M > N" in e.evidence
    assert e.config["outside_premises"][0]["slack"] == str(rhs - lhs)


def test_the_task_average_by_linearity_equals_the_enumeration():
    """The searches evaluate eq. (20) averaged over the tasks in O(T^2) (theory.task_averaged's linearity form);
    here against the enumeration of the N^T1 exploration sequences, on random exact cases."""
    import random

    from moecl_verify.theory.task_averaged import task_averaged_by_linearity, task_averaged_generalization

    rng = random.Random(3)
    for _ in range(25):
        N, M, T1 = rng.choice([2, 3]), rng.choice([2, 3, 4]), rng.randint(1, 4)
        chosen = tuple(rng.randrange(M) for _ in range(T1 + rng.randint(0, 3)))
        W = [(F(rng.randint(-5, 5), rng.randint(1, 4)), F(rng.randint(-5, 5), rng.randint(1, 4))) for _ in range(N)]
        post = sorted(set(chosen[T1:]))
        for sigma, value in task_averaged_generalization(W, chosen, M, F(1, 2), T1).items():
            assert task_averaged_by_linearity(W, chosen, F(1, 2), T1, dict(zip(post, sigma))) == value


@pytest.mark.parametrize("st", [wc.EQ20_AVERAGED, wc.EQ20_AVERAGED_SETS], ids=["explored", "sets"])
def test_eq20_averaged_inside_the_premises_searches_every_size_and_reports_the_least_slack(st):
    res = wc.run_search(st, 0, "thm1.generalization", 600, cover=True)
    sizes = [c for c in res.configurations]
    assert all(c["M"] > c["N"] and c["T1"] >= c["M"] for c in sizes)
    assert {c["N"] for c in sizes} == {2, 3}  # the budget covers both N, not only the smallest sizes
    if not res.found:  # an honest inconclusive: the least slack seen inside the premises
        assert st.failing(res.least_at) == () and res.least_slack > 0
    else:  # a refutation must be inside the premises (recomputed)
        x = res.counterexample.inputs
        assert x["M"] > x["N"] and set(x["m"][:x["T1"]]) == set(range(x["M"]))


# ------------------------------------------------------------------ the structured counterexample in results.json


def test_the_structured_counterexample_round_trips_and_recomputes_exactly(tmp_path, monkeypatch):
    from moecl_verify.checks.model import RunResult
    from moecl_verify.reports import results_json
    from moecl_verify.theory.conditional import conditional_errors, eq22_rhs, pool_constants, psi

    st = wc.EQ22_GIVEN_ROUTING
    res = wc.run_search(st, 0, "thm2.generalization", 300)
    made = wc.entry("thm2.generalization", "Section 5.2", st, res, "f", "given the routing")
    claims = ({"id": "thm2.generalization", "summary": "s", "source": "x", "kind": "bound", "statement": "x",
               "preconditions": [], "notes": ""},)
    run = RunResult((made,), (), (), {"budget": "smoke", "replicates": 10, "seed": 0}, claims)
    # The file's findings are derived from the whole pack (its derived bounds take sympy limits for seconds) and
    # are not what is round-tripped here: the entry is.
    monkeypatch.setattr(results_json, "findings", lambda run: {})
    path = tmp_path / "results.json"
    path.write_text(results_json.dumps(run))
    back = results_json.load(path).results[0]
    c = back.config["counterexample"]
    assert c == made.config["counterexample"]
    # recompute from the stored paper quantities alone: vectors, tasks, routing (numbered from 1), K, T1, r
    W = [tuple(F(v) for v in w) for w in c["w"]]
    tasks, chosen = [n - 1 for n in c["tasks"]], [m - 1 for m in c["routing"]]
    assert (len(W), len(tasks), c["T"]) == (c["N"], c["T"], len(chosen))
    S, D = pool_constants(W)
    p1, p2 = psi(W, c["K"])
    lhs = conditional_errors(W, tasks, chosen, c["M"], F(c["r"])).generalization[-1]
    rhs = eq22_rhs(chosen, c["M"], c["T1"], F(c["r"]), S, D, p1, p2)
    assert (str(lhs), str(rhs), str(rhs - lhs), str((rhs - lhs) / D)) == (c["lhs"], c["rhs"], c["slack"],
                                                                          c["slack_over_D"])
    assert rhs - lhs < 0 and c["K"] < c["M"] < c["N"]
    # every premise it records holds when recomputed from the stored vectors
    names = [p["name"] for p in c["premises"]]
    assert names == [p.name for p in st.premises]
    within = [_sq(W[a], W[b]) for a in range(len(W)) for b in range(a) if a % c["K"] == b % c["K"]]
    across = [_sq(W[a], W[b]) for a in range(len(W)) for b in range(a) if a % c["K"] != b % c["K"]]
    assert max(within) * 5 <= 2 * min(across)
    assert set(chosen[:c["T1"]]) == set(range(c["M"])) and c["T"] > c["T1"] >= c["M"]
    assert all(m % c["K"] == n % c["K"] for n, m in zip(tasks[c["T1"]:], chosen[c["T1"]:]))
    # the evidence prints the vectors, not the search's circle parameters
    assert "w_1 = (" in back.evidence and "w = (" not in back.evidence


def test_the_realized_scan_counts_only_replicates_that_explore_every_expert():
    import numpy as np

    from moecl_verify.packs.moe_cl.entries import conditional_reading as cr

    chosen = np.array([[0, 1, 2, 0], [0, 0, 0, 1], [2, 1, 0, 0]])
    inside = cr.explored(chosen, 3, 3)
    assert inside.tolist() == [True, False, True]  # replicate 2 never routes expert 3 in rounds 1-3
    lhs, rhs = np.array([1.0, 5.0, 0.0]), np.zeros(3)  # only replicate 2 (outside) and 1 (inside) exceed
    count, text = cr.realized(lhs, rhs, 1.0, False, "test", inside=inside)
    assert count == 1 and "2 of 3 replicates explore every expert" in text and "1 of 2" in text
    assert cr.realized(lhs, rhs, 1.0, False, "test")[0] == 2  # without the premise both count
