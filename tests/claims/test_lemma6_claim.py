"""Lemma 6 through the scaling mechanism (smoke budget)."""

import pytest

from moecl_verify.checks import runner, stats
from moecl_verify.packs.moe_cl.claims.exploration import lemma6
from moecl_verify.checks.context import context_for
from moecl_verify.packs.moe_cl import PACK
from moecl_verify.checks.entry_key import EntryKey
from moecl_verify.checks.kinds.scaling import ScalingEvidence


def test_lemma6_entries_per_hidden_constant():
    run = runner.run(["lemma6"], budget="smoke", seed=0)
    assert [r.config["hidden_constant"] for r in run.results] == [1.0, 0.5]
    for res in run.results:
        means = [m["mean_theta_max"] for m in res.config["means"]]
        assert means == sorted(means, reverse=True)  # shrinks with sigma0
        assert res.evidence_type == "scaling" and res.config["law"] == "O(sigma0^0.5)" and res.expected == 0.5
        # The fitted exponent lies above 0.5: the O-law's one-sided p-value is large ...
        assert res.observed > 0.5 and res.stderr > 0
        assert res.p_value == pytest.approx(stats.one_sided_p(-(res.observed - 0.5) / res.stderr))
        assert res.p_value > 0.5
        # ... and the exponent's one-sided interval at the entry's threshold stays above 0.5 - 0.1: confirmed.
        assert res.observed - stats.normal_upper_quantile(res.false_fail_rate) * res.stderr >= 0.4
        assert res.verdict == "confirmed"


def test_lemma6_measure_returns_scaling_evidence():
    out = lemma6.measure(context_for(PACK, "smoke", 0))
    assert all(isinstance(e, ScalingEvidence) for e in out)
    # No part of its own: each entry is named by its hidden constant alone.
    keys = [EntryKey.of(e.claim_id, e.form, e.config)[0] for e in out]
    assert [(k.part, k.constant, k.label) for k in keys] == [("", 1.0, "c = 1"), ("", 0.5, "c = 0.5")]
    assert [(e.law, e.exponent, e.tolerance) for e in out] == [("O", 0.5, 0.1), ("O", 0.5, 0.1)]


def test_scaling_figure_is_drawn_reproducibly(tmp_path):
    from moecl_verify.reports import scaling_figures

    run = runner.run(["lemma6"], budget="smoke", seed=0)
    (a,) = scaling_figures.write(run, tmp_path / "a")
    (b,) = scaling_figures.write(run, tmp_path / "b")
    assert a.name == "fig_lemma6_scaling.png" and a.read_bytes()[:4] == b"\x89PNG"
    assert a.read_bytes() == b.read_bytes()
