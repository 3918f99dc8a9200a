"""Proposition 2 through the scaling mechanism, and the rule for hidden constants."""

from checks import runner
from checks.scaling import reconcile_constants


def test_reconcile_constants():
    assert reconcile_constants({1.0: "refuted", 0.5: "confirmed"}) == {1.0: "inconclusive", 0.5: "confirmed"}
    assert reconcile_constants({1.0: "refuted", 0.5: "refuted"}) == {1.0: "refuted", 0.5: "refuted"}
    assert reconcile_constants({1.0: "refuted", 0.5: "inconclusive"}) == {1.0: "refuted", 0.5: "inconclusive"}


def test_prop2_smoke():
    run = runner.run(["prop2.*"], budget="smoke", seed=0)
    assert len(run.results) == 6
    for res in run.results:
        means = [m["mean_gap"] for m in res.config["means"]]
        assert means[0] > means[-1]  # gaps shrink with sigma0
    by_t2 = {r.config["hidden_constant"]: r.verdict for r in run.results if r.id == "prop2.t2"}
    assert "refuted" not in by_t2.values() or "confirmed" not in by_t2.values()
