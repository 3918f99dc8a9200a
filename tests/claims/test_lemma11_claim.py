"""Lemma 11: the proof chain's links against exact combinatorics, and the binomial machinery."""

import dataclasses
import itertools
import math
from fractions import Fraction as F

import moecl_verify.packs.moe_cl.claims.router.lemma11 as mod
from moecl_verify.checks import runner, stats
from moecl_verify.checks.context import context_for
from moecl_verify.packs.moe_cl import PACK
from moecl_verify.checks.entry_key import EntryKey
from moecl_verify.checks.kinds.proportion import ProportionEvidence
from moecl_verify.checks.model import ClaimResult


def _key(item) -> EntryKey:
    """The key of a decided entry, or the one its evidence declares (decided later, by the run)."""
    return item.key if isinstance(item, ClaimResult) else EntryKey.of(item.claim_id, item.form, item.config)[0]


def _brute_force_cover(N: int, M: int) -> F:
    """Enumerate all N^M assignments of M experts to N sets."""
    hits = sum(1 for a in itertools.product(range(N), repeat=M) if len(set(a)) == N)
    return F(hits, N**M)


def test_inclusion_exclusion_matches_enumeration():
    for N, M in ((2, 2), (2, 5), (3, 3), (3, 6), (4, 5)):
        assert mod.p_all_uniform(N, M) == _brute_force_cover(N, M)
        some_in_first = sum(1 for a in itertools.product(range(N), repeat=M) if 0 in a)
        assert mod.binomial_nonempty(N, M) == F(some_in_first, N**M) == 1 - mod.q_empty(N, M)


def test_step3_smallest_counterexample_by_hand():
    # N = 2, M = 2: both sets non-empty iff the experts differ: 1/2; the product is (1 - 1/4)^2 = 9/16
    ce = mod.smallest_step3_counterexample()
    assert (ce["N"], ce["M"], ce["p_all"], ce["product"]) == (2, 2, F(1, 2), F(9, 16))


def test_exact_chain_entries():
    run = runner.run(["lemma11.step3", "lemma11.step4", "lemma11.step5"], budget="smoke", seed=0)
    verdicts = {r.id: r.verdict for r in run.results}
    assert verdicts == {"lemma11.step3": "refuted", "lemma11.step4": "confirmed", "lemma11.step5": "confirmed"}
    assert [s.id for s in run.slips] == ["lemma11.step3_direction"]


def test_step5_constant_by_calculus():
    # sup_delta delta (ln 2 - ln delta) / ln 2 is at delta = 2/e, value 2 / (e ln 2)
    c_star, d_star = mod.step5_constant()
    assert abs(c_star - 2 / (math.e * math.log(2))) < 1e-12 and abs(d_star - 2 / math.e) < 1e-12
    assert not mod.step5_holds(2, 0.7, 1.0) and mod.step5_holds(2, 0.7, 1.07)


def test_wilson_and_binomial_tails():
    lo, hi = stats.wilson(50, 100, level=0.95)
    assert abs(lo - 0.4038) < 1e-3 and abs(hi - 0.5962) < 1e-3  # textbook Wilson 95% interval for 50/100
    n, p = 12, 0.3
    direct = sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(5))
    assert abs(stats.binom_cdf(4, n, p) - direct) < 1e-12
    assert abs(stats.binom_sf(5, n, p) - (1 - direct)) < 1e-12
    assert stats.binom_cdf(n, n, p) == 1.0 and stats.binom_sf(0, n, p) == 1.0


def test_simulated_entries_on_a_tiny_sweep(monkeypatch):
    monkeypatch.setattr(mod, "SIGMA0", (0.4, 0.05))
    monkeypatch.setattr(mod, "SIM_MS", (6,))
    ctx = context_for(PACK, "smoke", 0)
    ctx.sizes = dataclasses.replace(ctx.sizes, lemma11_replicates=30, lemma11_task_counts=(2, 3, 4))
    out = mod.measure_statement(ctx)
    parts = {_key(r).label: r for r in out}
    assert len(parts) == len(out)  # one entry per key
    assert parts["uniform model"].verdict == "confirmed"
    sim = [r for r in out if _key(r).part.startswith("Algorithm 1")]
    assert len(sim) == len(mod.CONSTANTS)
    # One entry per hidden constant, the constant a field of its key and not in its part.
    assert sorted(_key(r).constant for r in sim) == sorted(float(c) for c in mod.CONSTANTS)
    assert all(_key(r).part == "Algorithm 1 M = 6" for r in sim)
    bound = float(1 - 3 * mod.mpmath.exp(-2))
    assert all(r.expected == bound for r in sim)
    # Evidence, one row per sigma0: P(all sets non-empty) >= the proof's bound at every sigma0; its p-value is the
    # Bonferroni combination of the exact one-sided binomial tails P(X <= k) under P = bound.
    for r in sim:
        assert isinstance(r, ProportionEvidence) and (r.claim, r.bound) == ("at_least", bound)
        # 30 replicates shared by the sweep design's pools (2 at smoke): 15 each, 30 per sigma0.
        assert [row.x for row in r.rows] == [0.4, 0.05] and all(row.trials == 30 for row in r.rows)
        tails = [stats.binom_cdf(row.successes, row.trials, bound) for row in r.rows]
        assert abs(r.p_value - min(1.0, 2 * min(tails))) < 1e-9
    step1 = mod.measure_step1(ctx)
    assert len(step1) == len(mod.CONSTANTS) and len(step1[0].tests) == 2 * 2 * 3  # sigma0 x pool x task
    assert step1[0].tests[3].horizon == "sigma0=0.4, pool 1, n=0"
    assert all(_key(m).role == "proof step" and _key(m).part == "M = 6" for m in step1)
    step2 = mod.measure_step2(ctx)
    assert step2[0].verdict == "confirmed" and len(step2) == 1 + len(mod.CONSTANTS)
    assert all(_key(r).role == "proof step" for r in step2)
    # Algorithm 1's sets: P(|M_n| = 0) <= (1 - 1/N)^M, one row per sigma0 and task, one-sided binomial tails.
    q = float(mod.q_empty(3, 6))
    for r in step2[1:]:
        assert isinstance(r, ProportionEvidence) and (r.claim, r.bound) == ("at_most", q) and len(r.rows) == 2 * 3
        tails = [stats.binom_sf(row.successes, row.trials, q) for row in r.rows]
        assert abs(r.p_value - min(1.0, 6 * min(tails))) < 1e-9
