"""The ablation record in results.json (reports/results.schema.json, reports/results_json.py): written per slip,
validated, read back equal; the bottom line's cause sentences follow the ablations (a root cause without an
ablation of its own quotes what remains, the ablated cause its share)."""

import json

import numpy as np
import pytest

from moecl_verify.checks import ablation
from moecl_verify.checks.model import ClaimResult, RunResult, Slip
from moecl_verify.reports import bottom_line, results_json

pytestmark = pytest.mark.app

ROOT, OTHER, DERIVED = "lemma3.expert_moves", "prop3.routing_outside_sets", "thm1.late_forgetting_identity"


def entry(claim_id):
    return ClaimResult(id=claim_id, source="-", kind="bound", form="stated", verdict="refuted", expected=0.0,
                       observed=0.1, stderr=0.01, p_value=1e-9, false_fail_rate=1e-3, min_detectable=None,
                       config={"features": "gaussian"}, evidence="z-test", evidence_type="criterion")


def record(baseline, ablated, case):
    return ablation.paired(OTHER, "the misrouting", "the excess", baseline, ablated, case=case)


def planted_run():
    """A discrepancy of 2 whose ablation of OTHER leaves 0.2 (hand-made paired replicates)."""
    noise = np.array([0.1, -0.1, 0.05, -0.05])
    records = (record(2.0 + noise, 0.2 + noise / 10, "t = 10"), record(2.0 + noise, 0.2 + noise / 20, "t = 20"))
    results = (entry("lemma3"), entry("prop3"), entry("thm1.forgetting_late"))
    slips = (Slip(ROOT, "Lemma 3", "false statement", "-", "moves", "-", entries=(results[0].key,)),
             Slip(OTHER, "Prop 3", "false statement", "-", "outside", "-", entries=(results[1].key,)),
             Slip(DERIVED, "Thm 1", "false statement", "-", "far off", "-", entries=(results[2].key,),
                  causes=(ROOT, OTHER), effect="the excess is 2", ablation=records))
    ids = [r.id for r in results]
    claims = tuple({"id": i, "summary": i, "source": "-", "kind": "bound", "statement": "x", "preconditions": [],
                    "notes": ""} for i in ids)
    return RunResult(results, slips, (), {"budget": "smoke", "seed": 0, "claims": ids}, claims, {}), records


def test_the_ablation_record_round_trips_through_results_json(tmp_path):
    run, records = planted_run()
    path = results_json.write(run, tmp_path / "results.json")
    stored = json.loads(path.read_text())
    (derived,) = [s for s in stored["slips"] if s["id"] == DERIVED]
    # per root cause: what was removed, the baseline, the ablated value and the difference
    first = derived["ablation"][0]
    assert (first["cause"], first["removed"], first["case"]) == (OTHER, "the misrouting", "t = 10")
    assert first["baseline"] == pytest.approx(2.0) and first["ablated"] == pytest.approx(0.2)
    assert first["difference"] == pytest.approx(1.8) and first["replicates"] == 4
    assert all("ablation" not in s for s in stored["slips"] if s["id"] != DERIVED)  # only where measured
    again = results_json.load(path)
    assert {s.id: s for s in again.slips}[DERIVED].ablation == records
    assert results_json.dumps(again) == path.read_text()


def test_a_malformed_ablation_record_is_refused(tmp_path):
    run, _ = planted_run()
    path = results_json.write(run, tmp_path / "results.json")
    doc = json.loads(path.read_text())
    (derived,) = [s for s in doc["slips"] if s["id"] == DERIVED]
    del derived["ablation"][0]["baseline"]
    path.write_text(json.dumps(doc))
    with pytest.raises(results_json.ResultsFileError, match="baseline"):
        results_json.load(path)


def test_the_bottom_line_splits_the_discrepancy_by_the_ablations():
    run, _ = planted_run()
    causes = {s.slips[0]: s.text for s in bottom_line.sentences(run) if s.kind == "cause"}
    # the ablated cause: its share, 1.8 of 2 = 90% in both cases
    assert "removing the misrouting lowers the excess from 2 to 0.2, 90% of it" in causes[OTHER]
    # the other cause: only what remains, never the whole 2 as its own
    assert "with the misrouting removed, the excess is still 0.2" in causes[ROOT]
    assert "down from 2" in causes[ROOT] and "the excess is 2" not in causes[ROOT]
