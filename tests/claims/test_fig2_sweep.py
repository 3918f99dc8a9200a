"""Figure 2's reproduction sweep: common random numbers across the grid, and how the run's decisions on planted
grid entries become a reproduction finding (through checks/decide.py and its reconciliation across hidden
constants), not a false statement."""

import dataclasses

import numpy as np
import pytest

from moecl_verify.checks import decide
from moecl_verify.checks.context import context_for
from moecl_verify.checks.kinds.mean import HorizonTest
from moecl_verify.checks.stats import MeanTest
from moecl_verify.numeric.moe import draw_moe_chunk
from moecl_verify.packs.moe_cl import PACK
from moecl_verify.packs.moe_cl.claims.figures import fig2
from moecl_verify.packs.moe_cl.experiments import fig2_runs
from moecl_verify.packs.moe_cl.experiments.fig2_runs import FIG2

FAMILY_RATE = 1e-3


def _draws(scale: float, sigma_t: float):
    pool = fig2_runs.pool(None, scale, True, pool=0)
    # the key and seed fig2_runs.run gives M = 10 on pool 0; T shortened, the streams are per round
    return pool, draw_moe_chunk(pool, M=10, size=3, T=40, s=FIG2["s"], features="definition1", sigma_t=sigma_t,
                                beta_max=1.0, seed=0, key=("fig2", 10, 0), index=0)


def test_every_grid_point_replays_the_same_draws():
    """Same ground truths, tasks, routing noise and normals at every (scale, sigma_t): the noise columns scale
    by sigma_t exactly and the signal column by the scale (common random numbers)."""
    base_pool, base = _draws(1.0, 0.1)
    for scale in fig2.SIGNAL_SCALES:
        for sigma_t in fig2.NOISE_LEVELS:
            pool, d = _draws(scale, sigma_t)
            assert np.array_equal(pool.W, base_pool.W)
            np.testing.assert_allclose(pool.V, scale * base_pool.W, rtol=1e-15)
            assert np.array_equal(d.tasks, base.tasks)
            assert np.array_equal(d.noise, base.noise)
            # the signal column is beta_t v_n: where base's column is parallel to v_n, scaled by `scale`; the
            # other columns are the same normals times sigma_t
            signal = np.isclose(np.abs(np.einsum("rtds,rtd->rts", base.X, base_pool.V[base.tasks])),
                                np.linalg.norm(base.X, axis=2) * np.linalg.norm(base_pool.V[base.tasks], axis=2)[..., None])
            ratio = np.where(signal[:, :, None, :], scale, sigma_t / 0.1)
            np.testing.assert_allclose(d.X, base.X * ratio, rtol=1e-12, atol=1e-15)


def _planted(pool: int, scale: float, margins: tuple[float, float], sigma_t: float = FIG2["sigma_t"]):
    """A grid entry of the convergence claim with planted margins (F, G at M = 10), s.e. 0.01."""
    ctx = context_for(PACK, "smoke", 0)
    tests = [HorizonTest(f"{e}, M=10", MeanTest(expected=0.0, observed=m, stderr=0.01, n=20))
             for e, m in zip("FG", margins)]
    extra = dict(signal_scale=scale, sigma_t=sigma_t, hidden_constant=scale)
    if sigma_t != FIG2["sigma_t"]:
        extra.update(part=fig2._noise_part(sigma_t), role=fig2.SENSITIVITY)
    return fig2._measurement(ctx, "fig2.termination_converges", fig2.CONVERGES, tests, pool, **extra)


def _dependence(pool: int, drop: float):
    ctx = context_for(PACK, "smoke", 0)
    tests = [HorizonTest(f"{e}, M=10", MeanTest(expected=0.0, observed=drop, stderr=0.01, n=20)) for e in "FG"]
    return fig2._measurement(ctx, "fig2.termination_converges", "planted dependence", tests, pool,
                             part=fig2.DEPENDENCE_PART, role=fig2.SENSITIVITY, scales=[1.0, 10.0])


def _decided(entries):
    (results,) = decide.decide_claims([entries], FAMILY_RATE)
    return results


def test_a_claim_that_holds_at_one_scale_and_fails_at_another_is_a_reproduction_finding():
    results = _decided([_planted(0, 1.0, (-1.0, -1.0)), _planted(0, 10.0, (1.0, 1.0)),
                        _planted(1, 1.0, (-1.0, -1.0)), _planted(1, 10.0, (1.0, 1.0))])
    by = {(r.key.pool, r.key.constant): r for r in results}
    # the decision module's reconciliation: the refutation at c = 1 that c = 10 confirms is withdrawn
    assert by[(0, 1.0)].verdict == "inconclusive" and by[(0, 10.0)].verdict == "confirmed"
    (slip,) = fig2.converges_slips(results)
    assert slip.slip_class == "unstated assumption"
    assert "c in {1}" in slip.holds and "they do for c in {10}" in slip.holds
    assert "holds only at some scales" in slip.summary
    assert slip.entries[0] == by[(0, 1.0)].key


def test_failing_everywhere_with_no_dependence_stays_a_false_statement():
    results = _decided([_planted(0, 1.0, (-1.0, -1.0)), _planted(0, 10.0, (-1.0, -1.0)), _dependence(0, 0.0)])
    assert {r.verdict for r in results if r.key.is_statement} == {"refuted"}
    (slip,) = fig2.converges_slips(results)
    assert slip.slip_class == "false statement" and "it holds at no c tried" in slip.holds


def test_failing_everywhere_while_the_errors_move_with_the_scale_is_an_unstated_assumption():
    results = _decided([_planted(0, 1.0, (-2.0, -2.0)), _planted(0, 10.0, (-0.5, -0.5)), _dependence(0, 1.5)])
    (slip,) = fig2.converges_slips(results)
    assert slip.slip_class == "unstated assumption"
    assert "the errors depend on that unstated scale" in slip.holds


def test_off_the_stated_noise_level_an_entry_never_decides_the_statement():
    """Refuted at sigma_t = 0.2 at every scale, confirmed at the stated sigma_t: no slip, and the statement's
    entries are the stated ones only."""
    results = _decided([_planted(0, 1.0, (1.0, 1.0)), _planted(0, 1.0, (-1.0, -1.0), sigma_t=0.2),
                        _planted(0, 10.0, (-1.0, -1.0), sigma_t=0.2)])
    off = [r for r in results if not r.key.is_statement]
    assert len(off) == 2 and {r.verdict for r in off} == {"refuted"} and {r.key.role for r in off} == {"sensitivity"}
    assert fig2.converges_slips(results) == []


@pytest.mark.parametrize("sigma_t", [0.05, 0.2])
def test_the_stated_noise_level_keeps_its_shared_run_key(sigma_t):
    """Other claims fetch Figure 2's runs by their old key; a new noise level gets its own."""
    ctx = context_for(PACK, "smoke", 0)
    calls = []
    ctx._shared[("fig2", 10, True, 1.0, True, 0, 0, ctx.budget.name)] = "stated"
    ctx._shared[("fig2", 10, True, 1.0, True, 0, 0, ctx.budget.name, sigma_t)] = "other"
    assert fig2_runs.run(ctx, 10, True, pool=0) == "stated"
    assert fig2_runs.run(ctx, 10, True, pool=0, sigma_t=sigma_t) == "other"
    assert not calls


def _regime_entry(conclusion: str, pool: int, verdict: str):
    from moecl_verify.checks.model import ClaimResult

    errors = {"F_T": {"one expert": 0.5, "with termination": 0.09, "without termination": 0.2},
              "G_T": {"one expert": 0.6, "with termination": 0.13, "without termination": 0.25}}
    config = {"part": fig2.SPECIALIZING[conclusion], "role": fig2.SENSITIVITY, "pool": pool, "conclusion": conclusion,
              "errors": errors, "near_zero": fig2.NEAR_ZERO, "N": 3, "M": 6, "sigma0": 0.2, "signal_scale": 20.0,
              "Gamma": 0.267, "T1": 108, "features": "definition1"}
    return ClaimResult(id="fig2.termination_converges", source="-", kind="qualitative", form="stated", verdict=verdict,
                       expected=0.0, observed=0.1, stderr=0.01, p_value=0.5, false_fail_rate=1e-3,
                       min_detectable=None, config=config, evidence="-", evidence_type="criterion")


def test_the_bottom_line_says_which_conclusions_survive_where_the_gate_specializes():
    """Through the pack's data (Pack.survives) only: held on every pool, failed on some pool, or not settled; and
    no sentence once no entry it names is decided."""
    from moecl_verify.checks.model import RunResult
    from moecl_verify.reports import bottom_line

    def run_of(*results):
        ids = dict.fromkeys(r.id for r in results)
        claims = tuple({"id": i, "summary": i, "source": "-", "kind": "qualitative", "statement": "x",
                        "preconditions": [], "notes": ""} for i in ids)
        return RunResult(tuple(results), (), (), {"budget": "smoke", "seed": 0, "claims": list(ids)}, claims, {})

    beats, higher, zero = "fig2.moe_beats_single", "fig2.no_termination_higher", "fig2.termination_converges"
    rows = [_regime_entry(beats, 0, "confirmed"), _regime_entry(beats, 1, "confirmed"),
            _regime_entry(higher, 0, "confirmed"), _regime_entry(higher, 1, "inconclusive"),
            _regime_entry(zero, 0, "refuted"), _regime_entry(zero, 1, "inconclusive")]
    (said,) = [s for s in bottom_line.sentences(run_of(*rows)) if s.kind == "holds"]
    assert "MoE beats one expert (G_T 0.13 against one expert's 0.6) on every task pool tried" in said.text
    assert "but the errors do not fall to near zero" in said.text
    assert "not settled: termination lowers the errors" in said.text
    assert "not Figure 2's configuration" in said.text
    undecided = [dataclasses.replace(r, verdict="inconclusive") for r in rows]
    assert not [s for s in bottom_line.sentences(run_of(*undecided)) if s.kind == "holds"]


def test_a_larger_signal_scale_lowers_forgetting_at_M10_on_a_fresh_run():
    """A qualitative check with a margin (an independent reading measured forgetting falling as v_n's scale
    grows), on the runs the sweep uses: E[F_T | M = 10] with termination at c = 10 is below 3/4 of its value at
    c = 1, on the same draws, on pool 0 at the smoke size."""
    ctx = context_for(PACK, "smoke", 0)
    small = fig2_runs.run(ctx, 10, True, 1.0, pool=0).forgetting[:, -1].mean()
    large = fig2_runs.run(ctx, 10, True, 10.0, pool=0).forgetting[:, -1].mean()
    assert large < 0.75 * small
