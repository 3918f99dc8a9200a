"""Figure 2's qualitative claims at the smoke budget (20 replicates, T = 2000).

The convergence criterion misses by about 20 standard errors even at this
budget (margins near -1.9 with s.e. below 0.1), so its refutation is stable.
"""

import pytest

from moecl_verify.checks import runner


@pytest.fixture(scope="module")
def smoke():
    return runner.run(["fig2.*"], budget="smoke", seed=0)


def test_convergence_to_near_zero_is_refuted_with_a_slip(smoke):
    (res,) = [r for r in smoke.results if r.id == "fig2.termination_converges"]
    assert res.verdict == "refuted"
    assert all(h["observed"] < 0 for h in res.horizons)
    slip_ids = {s.id for s in smoke.slips}
    assert "fig2.convergence_not_reproduced" in slip_ids
    assert len(res.config["scale_sweep"]) == 6


def test_no_verdict_contradicts_the_margins(smoke):
    for res in smoke.results:
        zs = [h["z"] for h in res.horizons]
        if res.verdict == "confirmed":
            assert min(zs) > 0
        if res.verdict == "refuted":
            assert min(zs) < 0


def test_curves_artifact_has_every_configuration(smoke):
    art = smoke.artifacts["fig2_curves"]
    assert len(art["series"]) == 8
    assert art["series"][0]["forgetting"][0] is None  # F_1 undefined
    assert len(art["rounds"]) == len(art["series"][0]["generalization"])


def test_figure2_is_drawn_from_the_artifact_reproducibly(smoke, tmp_path):
    from moecl_verify.reports import artifact_figures

    first = artifact_figures.write(smoke, tmp_path / "a")
    second = artifact_figures.write(smoke, tmp_path / "b")
    assert [p.name for p in first] == ["fig_fig2_curves.png"]
    assert first[0].read_bytes()[:4] == b"\x89PNG"
    assert first[0].read_bytes() == second[0].read_bytes()
