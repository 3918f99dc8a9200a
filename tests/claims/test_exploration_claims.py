"""Exploration-phase claims (Lemmas 1, 5, 7, 8, 9; packs/moe_cl/claims/exploration/) and their shared sweep
(packs/moe_cl/experiments/exploration_sweep.py, packs/moe_cl/entries/exploration.py): statistics, exact steps and summaries,
checked against hand-derived values and manufactured data (the full sweep runs in the CLI, not here)."""

import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy import stats as sps

import moecl_verify.packs.moe_cl.entries.exploration as entries
import moecl_verify.packs.moe_cl.experiments.exploration_sweep as sweep
from moecl_verify.checks import decide
from moecl_verify.packs.moe_cl.claims.exploration import lemma1, lemma5, lemma7, lemma8, lemma9
from moecl_verify.checks.context import context_for
from moecl_verify.packs.moe_cl import PACK
from moecl_verify.checks.kinds.proportion import ProportionEvidence
from moecl_verify.checks.kinds.scaling import ScalingEvidence
from moecl_verify.checks.kinds.mean import Measurement
from moecl_verify.checks.registry import all_claims
from moecl_verify.checks.kinds.scaling import ScalingEvidence
from moecl_verify.numeric.gate_trace import GateTrace
from moecl_verify.numeric.moe import MoEConfig
from moecl_verify.numeric.pool import TaskPool
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.packs.moe_cl.experiments.sweep_design import fit_sweep

CTX = context_for(PACK, "smoke", 0)


def test_claims_register_with_interpretations():
    _REGISTRY = {c.id: c for c in all_claims()}
    for cid in ("lemma1", "lemma5", "lemma7", "lemma8", "lemma9"):
        claim = _REGISTRY[cid]
        assert claim.interpretations and claim.slips is not None
    # Each claim is registered by the module named for it.
    for module in (lemma1, lemma5, lemma7, lemma8, lemma9):
        assert _REGISTRY[module.__name__.rpartition(".")[2]].measure.__module__ == module.__name__
    # Lemmas 1 and 7 show the same readings (the sweep's and their own).
    assert _REGISTRY["lemma1"].interpretations == _REGISTRY["lemma7"].interpretations == sweep.SIGNAL_INTERPRETATIONS


def test_batched_fit_recovers_manufactured_exponents():
    sigma0 = list(sweep.SIGMA0)
    rng = np.random.default_rng(1)
    # y = 3 sigma0^0.75 times a unit-mean factor: mean exponent 0.75.
    samples = [3 * s**0.75 * rng.exponential(1.0, 400) for s in sigma0]
    fit = fit_sweep(sigma0, samples, generator_for(0, "t"), PACK.budgets["smoke"])  # 2 pools of 200
    assert fit.low < 0.75 < fit.high and fit.high - fit.low < 0.2
    assert _judge(ScalingEvidence(claim_id="t", source="t", config={}, formula="", what="y", fit=fit, law="O", exponent=1.0))[0] == "refuted"
    # 90% quantiles of U(0, sigma0^-0.25) scale like sigma0^-0.25, whatever the mean does.
    samples = [s**-0.25 * rng.random(400) for s in sigma0]
    fit = fit_sweep(sigma0, samples, generator_for(0, "q"), PACK.budgets["smoke"], quantile=0.9)
    assert fit.low < -0.25 < fit.high
    assert fit.means[0] == pytest.approx(np.quantile(samples[0], 0.9))


def test_hoeffding_epsilon_solves_the_bound():
    eps, ratio = lemma8.hoeffding_epsilon()
    M, eta, delta = 6, 0.1, 0.1
    sym = {str(x): x for x in eps.free_symbols | ratio.free_symbols}
    e = float(eps.subs({sym["M"]: M, sym["eta"]: eta, sym["delta"]: delta}))
    assert 2 * M * math.exp(-2 * e**2 * M / eta) == pytest.approx(delta)
    want = math.sqrt(M * math.log(2 * M / delta) / 2)
    assert float(ratio.subs({sym["M"]: M, sym["delta"]: delta})) == pytest.approx(want)


def test_wrong_sign_probability_closed_form_and_monte_carlo():
    # int_0^1 Phi(-beta a) d beta = (a Phi(-a) - phi(a) + phi(0)) / a, by parts.
    nd = NormalDist()
    V = np.array([[3.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    st, s = 0.1, sweep.BASE["s"]
    want = 0.0
    for v in V:
        a = np.linalg.norm(v) / (st * math.sqrt(s - 1))
        want += (a * nd.cdf(-a) - nd.pdf(a) + nd.pdf(0)) / a / len(V)
    assert lemma7.wrong_sign_probability(V, st) == pytest.approx(want, rel=1e-9)
    # Definition 1 directly: beta v + (s-1) Gaussian columns, sign of <xbar, v>.
    rng = np.random.default_rng(2)
    n = 200_000
    task = rng.integers(0, 2, n)
    beta = 1 - rng.random(n)
    noise = st * rng.standard_normal((n, s - 1, 3)).sum(axis=1)
    xbar = beta[:, None] * V[task] + noise
    frac = np.mean(np.einsum("nd,nd->n", xbar, V[task]) <= 0)
    assert abs(frac - want) < 5 * math.sqrt(want / n)


def test_noise_sum_probability_against_monte_carlo():
    rng = np.random.default_rng(3)
    s, d = sweep.BASE["s"], sweep.BASE["d"]
    sums = 0.1 * rng.standard_normal((100_000, (s - 1) * d)).sum(axis=1)
    for sigma0 in (0.0125, 0.003125):
        p = lemma1.noise_sum_probability(sigma0, 0.1)
        assert abs(np.mean(np.abs(sums) < s * d * sigma0) - p) < 0.01
    assert lemma1.noise_sum_probability(0.003125, 0.003125 / 4) == pytest.approx(1.0)


def _hand_trace():
    """R = 1, T = 2, M = 2, d = 2, N = 2, T1 = 1: every summary is computable by hand."""
    theta = np.zeros((1, 3, 2, 2))
    theta[0, 1] = [[-0.2, 0.1], [0.1, 0.0]]  # theta after round 1
    theta[0, 2] = theta[0, 1]
    return GateTrace(
        tasks=np.array([[0, 1]]), chosen=np.array([[0, 1]]), theta=theta,
        h=np.zeros((1, 2, 2)), pi=np.full((1, 2, 2), 0.5), xbar=np.array([[[1.0, 0.5], [0.0, 1.0]]]),
        noise_sum=np.array([[[0.0, 0.5], [2.0, -1.0]]]), beta=np.array([[1.0, 1.0]]),
        delta=np.array([[0.04, 0.0]]), coef_loc=np.array([[0.02, 0.0]]), coef_aux=np.array([[0.3, 0.1]]),
        counts=np.array([[[1.0, 0.0], [1.0, 1.0]]]), applied=np.array([[True, True]]),
        freeze_round=np.array([0]), eta=1.0, grad_gap=np.zeros((1, 2)), w=np.zeros((1, 2, 2)), T1=1)


def test_summaries_on_a_hand_built_trace():
    trace = _hand_trace()
    pool = TaskPool(W=np.eye(2), V=np.array([[1.0, 0.0], [1.0, 1.0]]))
    cfg = MoEConfig(M=2, eta=1.0, alpha=0.5, lam=0.0, Gamma=0.0, T1=1)
    out = sweep.summarize(trace, pool, cfg, sigma0=1.0, pick_rng=np.random.default_rng(0))
    # Lemma 1 at round 2: expert gaps |theta . (2, -1)| = |-0.5| and |0.2|; the printed bound max|theta| |sum a|.
    assert out["l1_gap_q90"][0] == pytest.approx(np.quantile([0.5, 0.2], 0.9))
    assert out["l1_printed_fails"][0] == pytest.approx(1.0)  # 0.5 > 0.2 * 1 and 0.2 > 0.1 * 1
    # Lemma 7 at round 1 (routed expert 0, task 0): step (-0.2, 0.1) on v_0 = -0.2 (right sign), on v_1 = -0.1;
    # the other expert's step (0.1, 0) on v_0 = 0.1 (right sign).
    assert out["l7_routed_own_wrong"][0] == 0 and out["l7_routed_any_wrong"][0] == 0
    assert out["l7_others_own_wrong"][0] == 0
    assert out["l7_mag_routed"][0] == pytest.approx(0.2) and out["l7_mag_others"][0] == pytest.approx(0.1)
    # Lemmas 8, 9 at T1 = 1: counts (1, 0); theta_1 = 0.
    assert out["l8_dev_max"][0] == pytest.approx(0.5) and out["l9_count_spread"][0] == 1
    assert out["l9_theta_gap"][0] == 0.0
    # Lemma 5: ||grad_k|| = coef |1{k = m_t} - pi_k| ||xbar||_inf; round 1: (0.32 * 0.5 * 1) for both experts.
    assert out["l5_p1_task_min"][0] == pytest.approx(0.16) and out["l5_p1_aux_min"][0] == pytest.approx(0.15)
    assert out["l5_p2_task_max"][0] == pytest.approx(0.05)


def test_sign_flips_exactly_when_the_summed_features_oppose_the_signal():
    # A real (small) run: the routed expert's step on v_{n_t} is negative iff <xbar_t, v_{n_t}> > 0.
    from moecl_verify.numeric.gate_trace import run_gate_trace
    from moecl_verify.numeric.moe import draw_moe

    sigma0 = 0.05
    pool = sweep.pool_for(0, sigma0)
    cfg = sweep.config_for(sigma0, 1.0)
    draws = draw_moe(generator_for(0, "sign"), pool, R=20, T=cfg.exploration_rounds, s=6, M=6, sigma_t=0.3)
    tr = run_gate_trace(pool, draws, cfg)
    j = np.arange(tr.T)
    rows = np.arange(tr.R)[:, None]
    step = tr.theta[:, 1:] - tr.theta[:, :-1]
    v = pool.V[tr.tasks]
    routed = np.einsum("rtd,rtd->rt", step[rows, j[None, :], tr.chosen], v)
    along = np.einsum("rtd,rtd->rt", tr.xbar, v)
    assert (along <= 0).any()  # the sigma_t chosen makes wrong signs occur
    np.testing.assert_array_equal(routed < 0, along > 0)


def _scaling(c: float, exponent: float, part: str = "a") -> ScalingEvidence:
    """A manufactured scaling entry at hidden constant c: y = sigma0^exponent times a unit-mean factor."""
    rng = np.random.default_rng(int(100 * c) + int(10 * exponent))
    samples = [s**exponent * rng.exponential(1.0, 400) for s in sweep.SIGMA0]
    return entries.scaling_entry(CTX, "lemma9", "s", part, "O", 1.0, samples, c, "y", "f")


def test_scaling_entry_is_evidence_and_decide_reconciles_the_constants():
    ev = _scaling(1.0, 0.75)
    # The constant is a field of the entry (its key), not text in its part.
    assert isinstance(ev, ScalingEvidence) and ev.config["part"] == "a" and ev.config["hidden_constant"] == 1.0
    assert ev.fit.low < 0.75 < ev.fit.high and ev.fit.stderr > 0
    assert ev.p_value == pytest.approx(sps.norm.cdf((ev.fit.exponent - 1.0) / ev.fit.stderr))
    # O(sigma0^1) with exponent 0.75 at both constants of part "b": refuted at each, so refuted everywhere;
    # part "a" is confirmed at c = 0.5 (exponent 1.3), so its refutation at c = 1 becomes inconclusive.
    (out,) = decide.decide_claims([[ev, _scaling(0.5, 1.3), _scaling(1.0, 0.75, "b"), _scaling(0.5, 0.75, "b")]],
                                  1e-3)
    assert [r.verdict for r in out] == ["inconclusive", "confirmed", "refuted", "refuted"]
    assert [(r.key.part, r.key.constant) for r in out] == [("a", 1.0), ("a", 0.5), ("b", 1.0), ("b", 0.5)]
    assert out[0].key.label == "a, c = 1" and out[0].key.across_constants() == out[1].key.across_constants()
    assert "Across hidden constants the verdicts differ" in out[0].evidence
    assert entries.refuted_at_every_constant(out, "a") == []
    assert len(entries.refuted_at_every_constant(out, "b")) == 2
    assert "(bootstrap s.e.) with eta = alpha = sigma0^0.5;" in entries.fits(out[2:])
    assert entries.fits(out[2:]).endswith("with eta = alpha = 0.5 sigma0^0.5")


def test_probability_entry_tests_the_smallest_sigma0_against_the_calibration():
    rng = np.random.default_rng(4)
    n = 400
    growing = [s**-0.5 * rng.exponential(1.0, n) for s in sweep.SIGMA0]  # gap / sigma0^1.5 grows: P falls
    shrinking = [s**0.5 * rng.exponential(1.0, n) for s in sweep.SIGMA0]  # P climbs to 1
    flat = [rng.exponential(1.0, n) for _ in sweep.SIGMA0]
    verdicts = []
    for picks in (growing, shrinking, flat):
        ev = lemma1.probability_entry(CTX, "fixed", 1.0, picks)
        assert isinstance(ev, ProportionEvidence) and ev.claim == "at_least" and ev.bound == sweep.CALIBRATION
        C = np.quantile(picks[0], sweep.CALIBRATION)
        k = int(np.sum(picks[-1] <= C))
        (row,) = ev.rows
        assert (row.x, row.successes, row.trials) == (sweep.SIGMA0[-1], k, n)
        assert ev.p_value == pytest.approx(sps.binomtest(k, n, sweep.CALIBRATION, alternative="less").pvalue)
        assert [r["successes"] for r in ev.config["trend"]] == [int(np.sum(p <= C)) for p in picks]
        verdicts.append(decide.decide_entry(ev, 1e-3).verdict)
    assert verdicts == ["refuted", "confirmed", "inconclusive"]


def test_derived_sign_probability_is_a_score_test_of_the_fraction():
    # The sweep's pools have their own signals and equal shares of the replicates: the expected pooled fraction
    # is the average of each pool's probability.
    p = float(np.mean([lemma7.wrong_sign_probability(sweep.pool_for(k, sweep.SIGMA0[0]).V, sweep.SIGMA_T)
                       for k in range(PACK.budgets["smoke"].sweep_pools)]))
    n = 100_000
    m = lemma7.derived_sign_probability(CTX, round(p * n), n)
    assert isinstance(m, Measurement) and m.form == "derived" and m.config["part"] == lemma7.DERIVED_PART
    (h,) = m.tests
    assert h.test.expected == pytest.approx(p) and h.test.stderr == pytest.approx(math.sqrt(p * (1 - p) / n))
    assert decide.decide_entry(m, 1e-3).verdict == "confirmed"  # detects a discrepancy of p / 2 at n = 1e5
    wrong = decide.decide_entry(lemma7.derived_sign_probability(CTX, round(1.5 * p * n), n), 1e-3)
    assert wrong.verdict == "refuted" and wrong.p_value < 1e-10
    assert decide.decide_entry(lemma7.derived_sign_probability(CTX, round(p * 300), 300), 1e-3).verdict \
        == "inconclusive"


def test_exact_steps_of_lemma1():
    steps = lemma1._exact_lemma1(0.3)
    verdicts = {r.key.part: r.verdict for r in steps}
    # Each checks a step of the proof, not the statement: the headline reads them as such.
    assert all(r.key.role == "proof step" and not r.key.is_statement for r in steps)
    assert verdicts["proof: abs(theta^T a) <= max_j theta_j abs(sum_j a_j)"] == "refuted"
    assert verdicts["proof: Hoeffding's failure term is o(1)"] == "refuted"
    fixed, scaled = (v for k, v in verdicts.items() if k.startswith("proof: the summed noise"))
    assert (fixed, scaled) == ("refuted", "confirmed")


def test_same_seed_same_summaries():
    cfg = sweep.config_for(0.05, 1.0)
    kw = dict(pool=sweep.pool_for(0, 0.05), cfg=cfg, size=3, T=2 * cfg.exploration_rounds, sigma_t=0.1, sigma0=0.05,
              key=("k",), index=0)
    a, b = sweep.exploration_chunk(seed=0, **kw), sweep.exploration_chunk(seed=0, **kw)
    other = sweep.exploration_chunk(seed=1, **kw)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["l9_theta_gap"], other["l9_theta_gap"])


# --------------------------------------------------------------------------- Lemma 7's sign, two readings


def _counts(wrong_share, rounds=20_000, replicates=200):
    """Manufactured sign_counts: at each sigma0 ``wrong_share(sigma0)`` of ``rounds`` have the wrong sign."""
    return [{"sigma0": s0, "rounds": rounds, "wrong": round(wrong_share(s0) * rounds), "replicates": replicates,
             "replicates_wrong": min(replicates, round(wrong_share(s0) * rounds))} for s0 in sweep.SIGMA0]


def test_one_minus_o1_sign_entry_is_vanishing_evidence_with_the_bootstrap_failure_exponent():
    V = sweep.pool_for(0, sweep.SIGMA0[0]).V
    counts = _counts(lambda s0: 2 * s0)  # failure probability 0.1 ... 0.00625: exponent 1
    ev = lemma7.vanishing_sign_entry(CTX, "routed_own", counts, V)
    assert isinstance(ev, ProportionEvidence) and ev.claim == "vanishing" and ev.unit == "rounds"
    assert ev.config["reading"] == lemma7.ONE_MINUS_O1 and ev.config["part"].startswith(lemma7.VANISHING_PREFIX)
    assert ev.config["part"].endswith("(sigma_t = sigma0 / 4)")
    # Rows: right-sign rounds of all rounds, largest sigma0 first.
    assert [(r.x, r.successes, r.trials) for r in ev.rows] == [
        (s0, 20_000 - round(2 * s0 * 20_000), 20_000) for s0 in sweep.SIGMA0]
    assert ev.config["wrong"] == sum(c["wrong"] for c in counts) and ev.config["rounds"] == 100_000
    # The failure exponent is the least-squares slope of log((failures + 1/2) / (trials + 1)) on log sigma0.
    x = np.log(sweep.SIGMA0)
    y = np.log((np.array([c["wrong"] for c in counts]) + 0.5) / 20_001)
    slope, se = ev.failure_slope
    assert slope == pytest.approx(np.polyfit(x, y, 1)[0]) and slope == pytest.approx(1.0, abs=0.02)
    assert 0 < se < 0.1
    res = decide.decide_entry(ev, 1e-3)
    assert res.verdict == "confirmed" and res.observed == pytest.approx(1 - 0.00625)
    # A failure probability that does not fall (0.3 at every sigma0) refutes the 1 - o(1) reading ...
    flat = decide.decide_entry(lemma7.vanishing_sign_entry(CTX, "routed_own", _counts(lambda s0: 0.3), V), 1e-3)
    assert flat.verdict == "refuted" and flat.p_value < 1e-10
    assert abs(flat.config["failure_exponent"]["estimate"]) < 0.05
    # ... and a flat one between the confirm and refute levels leaves it open.
    mid = decide.decide_entry(lemma7.vanishing_sign_entry(CTX, "routed_own", _counts(lambda s0: 0.08), V), 1e-3)
    assert mid.verdict == "inconclusive"


def test_one_minus_o1_every_signal_note_names_the_pools_smallest_inner_product():
    counts = _counts(lambda s0: 2 * s0)
    positive = np.array([[1.0, 0.2, 0.0], [0.0, 1.0, 0.5], [0.3, 0.0, 1.0]])
    negative = np.array([[1.0, 0.0, 0.0], [-1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    note = lemma7.vanishing_sign_entry(CTX, "routed_any", counts, positive).note
    assert "smallest <v_n, v_n'> (n != n') is 0.2, so here it does" in note
    note = lemma7.vanishing_sign_entry(CTX, "routed_any", counts, negative).note
    assert "smallest <v_n, v_n'> (n != n') is -1, negative" in note
    assert "smallest <v_n, v_n'>" not in lemma7.vanishing_sign_entry(CTX, "routed_own", counts, negative).note


def test_lemma7_sign_readings_side_by_side_in_the_smoke_run(smoke_run):
    results = [r for r in smoke_run.result("lemma7").results if r.id == "lemma7"]
    by_part = {r.key.label: r for r in results}
    every = [r for r in results if r.config.get("reading") == lemma7.EVERY_ROUND]
    vanishing = [r for r in results if r.config.get("reading") == lemma7.ONE_MINUS_O1]
    assert len(every) == 4 and all(r.key.part.startswith("sign: ") for r in every)
    # One 1 - o(1) entry per sign statement whose truth does not hang on the pool, and one per sweep pool for
    # "every signal v_n", each naming its pool and the pool's smallest <v_n, v_n'>.
    pooled = [r for r in vanishing if "pool" not in r.config]
    per_pool = [r for r in vanishing if "pool" in r.config and r.config["pool"] != sweep.CONSTRUCTED]
    assert len(pooled) == len(lemma7.SIGN_PARTS) - len(lemma7.PER_POOL) == 2
    assert [r.config["pool"] for r in per_pool] == list(range(PACK.budgets["smoke"].sweep_pools))
    # The pool the derivation says fails, constructed: v_2 = -v_1, so some signal has the wrong sign in every
    # round once the noise is gone, and the failures cannot vanish.
    built = next(r for r in vanishing if r.config.get("pool") == sweep.CONSTRUCTED)
    V = sweep.constructed_pool(1.0).V
    assert np.array_equal(V[1], -V[0]) and np.array_equal(V[[0, 2]], sweep.pool_for(0, 1.0).V[[0, 2]])
    assert built.config["smallest_signal_inner_product"] == pytest.approx(-float(V[0] @ V[0]))
    assert built.verdict == "refuted" and built.observed == 0.0 and built.key.part.endswith(", constructed pool")
    assert built.key.pool is None  # a named pool, not a drawn one: its part says so
    for r in per_pool:
        V = sweep.pool_for(r.config["pool"], sweep.SIGMA0[0]).V
        gram = V @ V.T
        assert r.config["smallest_signal_inner_product"] == pytest.approx(gram[~np.eye(3, dtype=bool)].min())
        assert r.key.pool == r.config["pool"] and "pool" not in r.key.part
        assert r.key.label == f"{r.key.part}, pool {r.config['pool']}"
    assert all(r.evidence_type == "proportion" for r in vanishing)
    # Every-round reading: wrong signs occur, so each entry is refuted by its counterexamples (p = 0).
    assert all(r.verdict == "refuted" and r.p_value == 0.0 and r.config["wrong"] > 0 for r in every)
    # The two readings count the same rounds: right signs (1 - o(1)) = rounds - wrong signs (every round).
    own_every = by_part["sign: routed expert, own signal v_{n_t} (sigma_t = sigma0 / 4)"]
    own = by_part[lemma7.VANISHING_PREFIX + "routed expert, own signal v_{n_t} (sigma_t = sigma0 / 4)"]
    assert [(p["sigma0"], p["trials"] - p["successes"]) for p in own.config["probabilities"]] == [
        (p["sigma0"], p["successes"]) for p in own_every.config["probabilities"]]
    # Under sigma_t = sigma0 / 4 the wrong signs thin out with sigma0: rare at the smallest sigma0, and a
    # failure exponent clearly above 0 (the derivation gives 1).
    assert own.observed > 0.99 and own.config["failure_exponent"]["estimate"] > 0.3
    assert own.verdict == "confirmed"


def _judge(evidence, threshold: float = 1e-3):
    """(verdict, reason) of a scaling entry at ``threshold`` (rejected when its p-value is at most it)."""
    judgement = evidence.judge(threshold, evidence.p_value <= threshold)
    return judgement.verdict, judgement.reason
