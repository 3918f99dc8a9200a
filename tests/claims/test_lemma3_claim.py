"""Lemma 3 is false: an expert given the same ground truth again still moves."""

import numpy as np

from moecl_verify.checks import runner
from moecl_verify.packs.moe_cl.claims.single_expert.lemma3 import smallest_counterexample


def test_statement_refuted_derived_not():
    run = runner.run(["lemma3"], budget="smoke", seed=0)
    for res in run.results:
        if res.form == "stated":
            assert res.verdict == "refuted" and res.config["moved_fraction"] == 1.0
        else:
            assert res.verdict != "refuted", res.evidence
    assert [s.id for s in run.slips] == ["lemma3.expert_moves"]


def test_counterexample_is_a_valid_trajectory_that_moves():
    ce = {k: np.array(v) for k, v in smallest_counterexample().items()}
    # each step interpolates its datum (eq. 5 with s = 1) ...
    assert np.isclose(ce["x_1"] @ ce["w_1"], ce["x_1"] @ ce["w_n"])
    assert np.isclose(ce["x_2"] @ ce["w_2"], ce["x_2"] @ ce["w_n"])
    # ... and moves along x_2 only (minimum norm), by a non-zero amount
    step = ce["w_2"] - ce["w_1"]
    assert abs(step[0] * ce["x_2"][1] - step[1] * ce["x_2"][0]) < 1e-12
    assert float(ce["step_sq"]) > 1e-3
