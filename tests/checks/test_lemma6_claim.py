"""Lemma 6 through the scaling mechanism (smoke budget)."""

from checks import runner


def test_lemma6_entries_per_hidden_constant():
    run = runner.run(["lemma6"], budget="smoke", seed=0)
    assert [r.config["hidden_constant"] for r in run.results] == [1.0, 0.5]
    for res in run.results:
        means = [m["mean_theta_max"] for m in res.config["means"]]
        assert means == sorted(means, reverse=True)  # shrinks with sigma0
        assert res.verdict == "confirmed" and res.observed > 0.5
