"""Lemma 16's recursion: exact for an oracle router with Gaussian features only."""

from moecl_verify.checks import runner


def test_lemma16_verdicts_by_router_and_features():
    run = runner.run(["lemma16"], budget="smoke", seed=0)
    by = {(r.config.get("router"), r.config["features"]): r for r in run.results}
    assert by[("oracle", "gaussian")].verdict != "refuted"
    assert by[("oracle", "definition1")].verdict == "refuted"
    assert by[("learned", "definition1")].verdict == "refuted"
    # the derivation does not apply exactly with a feature-dependent router: never confirmed
    assert by[("learned", "gaussian")].verdict in ("inconclusive", "refuted")
    keys = [(r.form, r.config["features"], r.key.label) for r in run.results]
    assert len(keys) == len(set(keys))  # entries are distinguishable (notebook, JUnit)
    assert all(r.key.part == f"{r.config['router']} router" for r in run.results if "router" in r.config)


def test_smallest_definition1_counterexample_lands_on_the_ground_truth():
    from moecl_verify.packs.moe_cl.claims.theorems.lemma16 import smallest_definition1_counterexample

    ce = smallest_definition1_counterexample()
    assert (ce["N"], ce["M"], ce["d"], ce["s"], ce["t"]) == (1, 1, 2, 1, 1)
    assert ce["measured_max"] < 1e-20 and ce["eq42"] > 0.01
