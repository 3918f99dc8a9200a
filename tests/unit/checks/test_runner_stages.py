"""The runner's four stages (plan, measure, decide, assemble) compose to :func:`runner.run`: the same
results file, and each stage does its one job (planning checks the parameters before anything runs; measuring
fills what observers asked for; deciding is the run's one Holm family)."""

import pytest

from moecl_verify.checks import runner
from moecl_verify.reports import results_json

PATTERNS = ["lemma4", "lemma6"]


def test_the_stages_compose_to_a_run():
    whole = runner.run(PATTERNS, budget="smoke", seed=0, reuse_claims=False)
    run_plan = runner.plan(PATTERNS, "smoke", 0, runner.DEFAULT_FAMILY_RATE, None, False, None, 1, None)
    assert [c.id for c in run_plan.claims] == PATTERNS and run_plan.store is None
    timings, started = {}, []
    measured, artifacts = runner.measure(run_plan, runner.Observers(
        timings=timings, on_claim=lambda i, n, claim_id, phase: started.append((claim_id, phase))))
    assert [claim.id for claim, _ in measured] == PATTERNS and set(timings) == set(PATTERNS)
    assert started == [("lemma4", "start"), ("lemma4", "done"), ("lemma6", "start"), ("lemma6", "done")]
    results, slips, interpretations = runner.decide(run_plan, measured)
    staged = runner.assemble(run_plan, results, slips, interpretations, artifacts)
    assert results_json.dumps(staged) == results_json.dumps(whole)


@pytest.mark.parametrize("changes, message", [
    (dict(budget="huge"), "budget must be one of"),
    (dict(lanes=0), "lanes must be"),
    (dict(family_rate=1.5), "family false-fail rate"),
])
def test_planning_refuses_bad_parameters_before_any_claim_runs(changes, message):
    args = dict(patterns=PATTERNS, budget="smoke", seed=0, family_rate=0.001, chunk_runner=None,
                reuse_claims=False, options=None, lanes=1, pack=None)
    with pytest.raises(ValueError, match=message):
        runner.plan(**{**args, **changes})


@pytest.mark.parametrize("pack_name, pattern", [("moe-cl", "lemma4"), ("moe-chapter", "softmax.*")])
def test_meta_reports_the_packs_own_sizes(pack_name, pattern):
    import dataclasses

    from moecl_verify.checks import pack as packs

    run = runner.run([pattern], budget="smoke", reuse_claims=False, pack=pack_name)
    sizes = packs.get(pack_name).budgets["smoke"]
    expected = {f.name: getattr(sizes, f.name) for f in dataclasses.fields(sizes)}
    assert set(run.meta["sizes"]) == set(expected) and "replicates" not in run.meta
    for name, value in expected.items():
        shown = run.meta["sizes"][name]
        assert shown == (list(value) if isinstance(value, tuple) else value) or shown == [str(v) for v in value]
