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
    x = {"N": 2, "M": 3, "T": 3, "T1": 3, "w": (F(0), F(1)), "m": (0, 0, 1), "sigma": (0, 0, 0)}
    assert wc.EQ20_AVERAGED.exact_slack(x) == F(5, 12)
    assert wc.EQ20_AVERAGED.exact_slack({**x, "T1": 2}) == wc.OUTSIDE  # T1 < M: exploration too short


def _eq22_by_hand(ts, tasks, chosen_expert_rounds):
    """Eq. (22) given the sequence, recomputed without the tool's code: N = 3 unit vectors, K = 2 clusters
    (tasks 1, 3 and task 2), every round routed to one expert, T = T1 (no late rounds), r = 1/2."""
    def circ(t):
        return ((1 - t * t) / (1 + t * t), 2 * t / (1 + t * t))

    W = [circ(t) for t in ts]
    sq = lambda a, b: sum((x - y) ** 2 for x, y in zip(a, b))  # noqa: E731
    N, r = 3, F(1, 2)
    S = sum(sq(w, (0, 0)) for w in W) / N
    D = sum(sq(W[a], W[b]) for a in range(N) for b in range(N) if a != b) / N**2
    e = [sq((0, 0), w) for w in W]
    for n_t in tasks:
        e = [r * x + (1 - r) * sq(W[n_t], W[n]) for n, x in enumerate(e)]
    G = sum(e[n] for n in tasks) / len(tasks)
    T = chosen_expert_rounds
    rhs = r**T * (S + (1 - r**T) * D)  # one expert routed T times, T = T1: inner = 1 - r^T, late part empty
    return (rhs - G) / D


def test_eq22_slack_agrees_with_a_computation_by_hand():
    x = {"N": 3, "K": 2, "M": 2, "T": 2, "T1": 2, "w": (F(-1, 4), F(0), F(-1, 3)), "n": (1, 0), "m": (0, 0)}
    assert wc.EQ22_GIVEN_ROUTING.exact_slack(x) == _eq22_by_hand(x["w"], x["n"], 2) < 0
    # not clustered (task 2 nearer to task 1 than task 3 is): outside the statement
    assert wc.EQ22_GIVEN_ROUTING.exact_slack({**x, "w": (F(0), F(1, 4), F(-1))}) == wc.OUTSIDE


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
    if x["N"] == 3 and x["T"] == x["T1"] and len(set(x["m"])) == 1:  # the case the hand computation covers
        assert eq22.counterexample.slack == _eq22_by_hand(x["w"], x["n"], x["T"])


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
