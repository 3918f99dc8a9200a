"""Claims measured in lanes (worker processes): grouping by shared work, the declaration check, and
results identical to a sequential run."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from moecl_verify.checks import lanes, runner
from moecl_verify.checks import pack as packs
from moecl_verify.checks.context import BUDGETS, Context, UndeclaredShare
from moecl_verify.checks.registry import Claim, all_claims
from moecl_verify.reports import results_json


def _claim(claim_id: str, *shares: str) -> Claim:
    return Claim(id=claim_id, source="test", kind="bound", statement="", preconditions=(),
                 measure=lambda ctx: [], shares=shares)


def test_groups_join_claims_sharing_a_namespace_transitively():
    claims = [_claim("a", "x"), _claim("b"), _claim("c", "y", "x"), _claim("d", "y"), _claim("e", "z")]
    got = sorted([c.id for c in g] for g in lanes.groups(claims))
    assert got == [["a", "c", "d"], ["b"], ["e"]]


def test_groups_keep_the_given_order_within_a_group_and_start_with_the_costliest():
    claims = [_claim("a", "x"), _claim("b"), _claim("c", "x"), _claim("d")]
    hints = {"b": 50.0, "c": 5.0, "a": 1.0}
    assert [[c.id for c in g] for g in lanes.groups(claims, hints)] == [["b"], ["a", "c"], ["d"]]
    # Without hints every claim counts the same: the larger group first.
    assert [[c.id for c in g] for g in lanes.groups(claims)] == [["a", "c"], ["b"], ["d"]]


def test_registered_claims_that_share_work_are_grouped():
    """Figure 2's runs serve Theorems 1 and 2 and the insights C4 and C5: one group, so one process."""
    by_id = {c.id: i for i, g in enumerate(lanes.groups(all_claims(), packs.default().cost_hints)) for c in g}
    assert len({by_id[i] for i in ("fig2.moe_beats_single", "thm1.generalization", "thm2.generalization",
                                    "c4", "c5")}) == 1
    assert len({by_id[i] for i in ("lemma1", "lemma5", "lemma7", "lemma8", "lemma9")}) == 1
    assert by_id["lemma1"] != by_id["prop2.t2"]


def test_a_fetch_under_an_undeclared_namespace_fails():
    ctx = Context(budget=BUDGETS["smoke"], seed=0)
    ctx.claim_id, ctx.declared = "lemma99", ("fig2",)
    assert ctx.shared(("fig2", 1), lambda: 3) == 3
    with pytest.raises(UndeclaredShare, match="lemma99 fetches shared work 'prop2'"):
        ctx.shared(("prop2", 1), lambda: 3)


@pytest.mark.heavy
def test_lanes_give_the_sequential_results_byte_for_byte(tmp_path):
    """Three groups (Lemma 11's steps share its grid; Lemmas 3 and 10 stand alone) over two processes."""
    patterns = ["lemma3", "lemma10", "lemma11.step3", "lemma11.step4", "lemma11.step5"]
    seen = []
    one = runner.run(patterns, budget="smoke")
    two = runner.run(patterns, budget="smoke", lanes=2,
                     on_claim=lambda index, total, claim_id, phase: seen.append((index, claim_id, phase)))
    a, b = results_json.write(one, tmp_path / "one.json"), results_json.write(two, tmp_path / "two.json")
    assert a.read_bytes() == b.read_bytes()
    done = [(index, claim_id) for index, claim_id, phase in seen if phase == "done"]
    assert sorted(i for i, _ in done) == [1, 2, 3, 4, 5]  # counted as they finish
    assert {c for _, c in done} == {"lemma3", "lemma10", "lemma11.step3", "lemma11.step4", "lemma11.step5"}
    # Lemma 11's steps share one process and run in registry order there.
    starts = [c for _, c, phase in seen if phase == "start"]
    assert starts.index("lemma11.step3") < starts.index("lemma11.step4") < starts.index("lemma11.step5")


def test_a_lane_failure_is_raised_in_the_parent():
    with pytest.raises(Exception, match="no claim matches 'no.such.claim'"):
        list(lanes.measure_in_lanes([_claim("no.such.claim")], lanes=1, budget="smoke", seed=0,
                                    cache_dir=None, on_start=lambda claim_id: None,
                                    on_work=lambda label, done, total: None))


class _Events(list):
    put = list.append


def test_a_lane_sends_each_result_as_a_file_and_names_a_claim_whose_result_cannot_be_sent(tmp_path, monkeypatch):
    """Measurements travel as pickles in files, written before the short "done" message; one that cannot be
    pickled fails inside the lane, naming its claim (instead of vanishing in the queue's sender thread)."""
    from moecl_verify.checks import registry

    events = _Events()
    monkeypatch.setattr(lanes, "_EVENTS", events)
    pack = packs.default().name
    counts = lanes._measure_group(["lemma3"], "smoke", 0, {}, pack, None, str(tmp_path))
    kinds = [e[0] for e in events if e[0] != "work"]
    # Without a cache a lane reports only its group and the group's peak resident memory.
    assert kinds == ["start", "done"] and counts["claims"] == ["lemma3"] and set(counts) == {"claims", "peak_rss_bytes"}
    assert 10**7 < counts["peak_rss_bytes"] < 10**11  # a Python process with numpy: tens of MB at least
    done = events[-1]
    finished = pickle.loads(Path(done[2]).read_bytes())
    assert done[1] == "lemma3" and finished.claim_id == "lemma3" and finished.measurements
    assert not list(tmp_path.glob("*.tmp"))

    bad = Claim(id="test.unsendable", source="test", kind="bound", statement="", preconditions=(),
                measure=lambda ctx: [lambda: 0])
    registered = registry.get
    monkeypatch.setattr(registry, "get", lambda claim_id, pack=None: bad if claim_id == bad.id
                        else registered(claim_id, pack))
    with pytest.raises(lanes.LaneError, match="test.unsendable: .*pickle"):
        lanes._measure_group([bad.id], "smoke", 0, {}, pack, None, str(tmp_path))


def test_lanes_must_be_a_positive_integer():
    with pytest.raises(ValueError, match="lanes must be an integer >= 1"):
        runner.run(["lemma3"], budget="smoke", lanes=0)


@pytest.mark.heavy
def test_lanes_fill_the_run_cache_and_an_identical_rerun_reuses_every_claim(tmp_path):
    """Two lanes write their chunks to the run's cache while the parent holds its lock and stores each claim's
    record; the lanes' chunk counts reach run-info, and a rerun reuses every claim, byte for byte."""
    import json

    from moecl_verify.cli import main

    args = ["run", "--budget", "smoke", "--claims", "lemma12,lemma3,prop4.generalization", "--quiet", "--format",
            "json", "--jobs", "2", "--cache-dir", str(tmp_path / "cache")]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    first, second = (json.loads((tmp_path / run / "run-info.json").read_text()) for run in "ab")
    assert first["claim_lanes"] == 2 and first["claim_records"]["computed"] == 3
    assert first["cache"]["misses"] > 0 and first["cache"]["hits"] == 0  # counted in the lanes
    assert second["claim_records"]["reused"] == 3
    assert (tmp_path / "a" / "results.json").read_bytes() == (tmp_path / "b" / "results.json").read_bytes()


def test_released_shared_work_is_computed_again_and_the_rest_is_kept():
    ctx = Context(budget=BUDGETS["smoke"], seed=0)
    calls = []

    def compute(value):
        calls.append(value)
        return value

    assert ctx.shared(("x", 1), lambda: compute("x1")) == "x1"
    assert ctx.shared(("y", 1), lambda: compute("y1")) == "y1"
    ctx.release(["x"])
    assert ctx.shared(("y", 1), lambda: compute("y again")) == "y1"  # kept
    assert ctx.shared(("x", 1), lambda: compute("x again")) == "x again"  # dropped, so computed anew
    assert calls == ["x1", "y1", "x again"]


def test_a_sequential_run_drops_a_namespace_after_its_last_claim(monkeypatch):
    """In one process a run holds one group's shared work at a time: after the last claim declaring 'x', a
    claim of another group no longer finds x's work."""
    seen = {}

    def first(ctx):
        ctx.shared(("x", 0), lambda: "x's simulation")
        return []

    def second(ctx):
        seen["x kept"] = ("x", 0) in ctx._shared
        return []

    claims = [Claim(id="t.first", source="t", kind="bound", statement="", preconditions=(), measure=first,
                    shares=("x",)),
              Claim(id="t.second", source="t", kind="bound", statement="", preconditions=(), measure=second)]
    monkeypatch.setattr(runner, "select", lambda patterns, pack=None: claims)
    runner.run(None, budget="smoke", seed=0, reuse_claims=False)
    assert seen == {"x kept": False}
