"""Lemma 12 (locality-loss gradient): verdicts and the facts behind them."""

import dataclasses
import numpy as np
import sympy as sp

import moecl_verify.packs.moe_cl.claims.router.lemma12 as mod
from moecl_verify.checks.context import context_for
from moecl_verify.packs.moe_cl import PACK
from moecl_verify.checks.decide import decide_claims
from moecl_verify.checks.entry_key import EntryKey
from moecl_verify.checks.kinds.proportion import ProportionEvidence
from moecl_verify.checks.model import ClaimResult
from moecl_verify.checks.kinds.scaling import ScalingEvidence
from moecl_verify.numeric.moe import MoEConfig, draw_moe
from moecl_verify.numeric.pool import make_pool
from moecl_verify.numeric.seeding import generator_for


def _key(item) -> EntryKey:
    """The key of a decided entry, or the one its evidence declares (decided later, by the run)."""
    return item.key if isinstance(item, ClaimResult) else EntryKey.of(item.claim_id, item.form, item.config)[0]


def test_lemma12_exact_counterexample_by_hand():
    ce = mod.exact_counterexample()
    # w_2 = w_a + P_2 (w_n - w_a) with span X_2 = span{e1, (0,1,1)}: (1, -1/2, -1/2) + (0, 1, 0) = (1, 1/2, -1/2);
    # residual (0, -1/2, 1/2) projected on span{e1, e3} is (0, 0, 1/2): Delta = 1/4
    assert ce["w2"] == [1, sp.Rational(1, 2), -sp.Rational(1, 2)]
    assert ce["delta"] == sp.Rational(1, 4) and ce["literal_ok"]
    assert ce["grad0_inf"] > 0


def test_replay_matches_the_engine():
    s0 = 0.4
    pool = make_pool(generator_for(0, "t12", "pool"), N=3, d=6, sigma0=s0, signal_scale=1 / s0)
    cfg = MoEConfig(M=4, eta=s0**0.5, alpha=s0**0.5, lam=s0**1.25, Gamma=s0**1.25)
    draws = draw_moe(generator_for(0, "t12", "draws"), pool, R=5, T=20, s=3, M=4, features="definition1")
    rep = mod.replay(pool, draws, cfg)
    assert np.allclose(rep["w"], rep["run"].w)
    # Delta is the squared step of the routed expert; it is zero exactly when the expert did not move
    assert np.all(rep["delta"] >= 0)
    # a fresh expert's first step under Definition 1 (v = w / sigma0) lands on w_n: residual ||w_n - 0||_inf
    first = rep["run"].chosen[:, 0]
    assert np.allclose(rep["resid"][:, 0], np.abs(pool.W[draws.tasks[:, 0]]).max(axis=1))
    assert first.shape == (5,)


def test_lemma12_entries_on_tiny_runs(monkeypatch):
    monkeypatch.setattr(mod, "GRAD_CASES", ((2, 1, 0),))
    monkeypatch.setattr(mod, "SIGMA0", (0.4, 0.1, 0.025))
    monkeypatch.setattr(mod, "BOOTSTRAP", 100)
    ctx = context_for(PACK, "smoke", 0)
    ctx.sizes = dataclasses.replace(ctx.sizes, lemma12_gt_replicates=6, lemma12_lt_replicates=6)
    out = mod.measure_lemma12(ctx)
    # The simulated M > N entry is evidence on the count of correctly routed rounds that moved the expert:
    # "never" (at most 0), so a single such round refutes it at any threshold.
    sim = next(e for e in out if _key(e).part == "statement.M>N simulated")
    assert isinstance(sim, ProportionEvidence) and (sim.claim, sim.bound) == ("at_most", 0.0)
    (row,) = sim.rows
    assert row.trials == sim.config["rounds_correct"] and row.successes == sim.config["rounds_moved"] > 0
    assert sim.p_value == 0.0
    scaling = [e for e in out if _key(e).part.startswith(("statement.M<N", "proof.M<N"))]
    assert all(isinstance(e, ScalingEvidence) and (e.law, e.exponent) == ("O", 1.5) for e in scaling)
    decided = decide_claims([out], 1e-3)[0]
    verdicts = {r.key.label: r.verdict for r in decided}
    assert len(verdicts) == len(decided)  # one entry per label
    assert verdicts["derived.gradient"] == "confirmed"
    assert verdicts["derived.vanishing"] == "confirmed"
    assert verdicts["statement.M>N exact"] == "refuted"
    assert verdicts["statement.M>N simulated"] == "refuted"
    lt = [r for r in decided if r.key.part.startswith(("statement.M<N", "proof.M<N"))]
    assert {(r.key.part, r.key.constant) for r in lt} == {
        (label, float(c)) for label in ("statement.M<N", "proof.M<N premise") for c in mod.CONSTANTS}
    assert {p for p in verdicts if p.startswith(("statement.M<N", "proof.M<N"))} == {
        f"{label}, c = {c:g}" for label in ("statement.M<N", "proof.M<N premise") for c in mod.CONSTANTS}
    # The premise is a step of the proof; the M < N gradient bound is the statement.
    assert all(r.key.role == ("proof step" if r.key.part.startswith("proof.") else "statement") for r in lt)
    slip = next(s for s in mod.slips_lemma12(decided) if s.id == "lemma12.loc_gradient_nonzero")
    # The worst-case search of the same statement (a moving expert under the proof's premise) joins the slip.
    searched = next(r for r in decided if r.key.part == "worst case searched")
    assert searched.verdict == "refuted" and searched.p_value is None and searched.key in slip.entries


def test_lemma12_sweep_pools_share_their_base_draws_across_sigma0():
    # w_n = sigma0 c_k(n) + sigma0^1.5 xi_n and v_n = w_n / sigma0 = c_k(n) + sigma0^0.5 xi_n: with the same base
    # draws at every sigma0, v(0.1) - v(0.4) = (0.1^0.5 - 0.4^0.5) xi, and the centres are those of the pool seed.
    a, b = mod.lt_pool(1, 0.1), mod.lt_pool(1, 0.4)
    xi = (a.V - b.V) / (0.1**0.5 - 0.4**0.5)
    centres = a.V - 0.1**0.5 * xi
    K = mod.SIM_LT["K"]
    assert np.allclose(centres, centres[np.arange(mod.SIM_LT["N"]) % K])  # tasks n, n + K share a centre
    assert not np.allclose(mod.lt_pool(0, 0.1).V, a.V)  # pools differ


def test_lemma12_sweep_replicates_are_paired_across_sigma0(monkeypatch):
    # The chunks at two sigma0 carry the same replicate keys, indices and sizes (keys without sigma0), one set per
    # pool: the same draws are replayed along the sweep.
    seen = {}

    def record(*, pool, cfg, size, T, seed, key, index):
        seen.setdefault(cfg.eta, []).append((key, index, size))
        return {"grad": np.full(size, np.nan), "resid": np.full(size, np.nan)}

    monkeypatch.setattr(mod, "_lt_chunk", record)
    ctx = context_for(PACK, "smoke", 0)
    ctx.sizes = dataclasses.replace(ctx.sizes, lemma12_lt_replicates=8)
    mod._lt_stats(ctx, 0.1, 1.0)
    mod._lt_stats(ctx, 0.4, 1.0)
    low, high = seen.values()
    assert low == high and len(low) == 2  # the smoke budget's two pools, one chunk each
    assert [key[-1] for key, _, _ in low] == [0, 1] and all("0.1" not in key for key, _, _ in low)
