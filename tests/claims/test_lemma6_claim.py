"""Lemma 6 through the scaling mechanism (smoke budget)."""

from moecl_verify.checks import runner


def test_lemma6_entries_per_hidden_constant():
    run = runner.run(["lemma6"], budget="smoke", seed=0)
    assert [r.config["hidden_constant"] for r in run.results] == [1.0, 0.5]
    for res in run.results:
        means = [m["mean_theta_max"] for m in res.config["means"]]
        assert means == sorted(means, reverse=True)  # shrinks with sigma0
        assert res.verdict == "confirmed" and res.observed > 0.5


def test_scaling_figure_is_drawn_reproducibly(tmp_path):
    from moecl_verify.reports import scaling_figures

    run = runner.run(["lemma6"], budget="smoke", seed=0)
    (a,) = scaling_figures.write(run, tmp_path / "a")
    (b,) = scaling_figures.write(run, tmp_path / "b")
    assert a.name == "fig_lemma6_scaling.png" and a.read_bytes()[:4] == b"\x89PNG"
    assert a.read_bytes() == b.read_bytes()
