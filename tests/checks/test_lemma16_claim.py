"""Lemma 16's recursion: exact for an oracle router with Gaussian features only."""

from checks import runner


def test_lemma16_verdicts_by_router_and_features():
    run = runner.run(["lemma16"], budget="smoke", seed=0)
    by = {(r.config.get("router"), r.config["features"]): r for r in run.results}
    assert by[("oracle", "gaussian")].verdict != "refuted"
    assert by[("oracle", "definition1")].verdict == "refuted"
    assert by[("learned", "definition1")].verdict == "refuted"
    # the derivation does not apply exactly with a feature-dependent router: never confirmed
    assert by[("learned", "gaussian")].verdict in ("inconclusive", "refuted")
    keys = [(r.form, r.config["features"], r.config.get("part")) for r in run.results]
    assert len(keys) == len(set(keys))  # entries are distinguishable (notebook, JUnit)
