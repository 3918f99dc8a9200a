"""The report's section "Derived bounds and where they decide", on a hand-made run and a hand-made bound."""

import dataclasses

from moecl_verify.checks.derived import DerivedBound, Use
from moecl_verify.checks.model import ClaimResult, RunResult
from moecl_verify.checks.pack import Pack
from moecl_verify.reports import document, markdown, results_json


def _entry(claim_id, part, verdict):
    return ClaimResult(id=claim_id, source="-", kind="bound", form="derived", verdict=verdict, expected=None,
                       observed=None, stderr=None, p_value=None, false_fail_rate=None, min_detectable=None,
                       config={"features": "-", "part": part, "role": "proof step"}, evidence="e",
                       evidence_type="exact")


def _run(*results):
    ids = dict.fromkeys(r.id for r in results)
    claims = tuple({"id": i, "summary": i, "source": "-", "kind": "bound", "statement": "x", "preconditions": [],
                    "notes": ""} for i in ids)
    return RunResult(tuple(results), (), (), {"budget": "smoke", "seed": 0}, claims, {})


BOUND = DerivedBound(
    id="toy_bound", statement="|a - b| <= 1/n.", assumptions=("n >= 1",), reading="n counts rounds",
    steps=(("1/n <= 1 for n >= 1", True),),
    uses=(Use("toy_bound", "demo.a", "gap at n", "contradicts", (("n is the bound's n", True),),
              conclusion="So the gap is not 1/2."),
          Use("toy_bound", "demo.b", "gap later", "does not apply", (("m > n is outside", True),))))


def _details(run, monkeypatch, bounds=(BOUND,)):
    pack = Pack(name="toy-derived", title="T", source="-", claims="x.claims", derived_bounds=lambda: bounds)
    for module in (markdown, document):
        monkeypatch.setattr(module, "pack_of", lambda _run: dataclasses.replace(pack))
    report = markdown.render_parts(run)
    return {d.anchor: d for d in report.details}, report.main


def test_the_section_lists_each_use_with_its_verdict_in_the_run(monkeypatch):
    details, main = _details(_run(_entry("demo.a", "gap at n", "refuted")), monkeypatch)
    section = details["derived-bounds"]
    assert section.title == "Derived bounds and where they decide"
    assert "(#derived-bounds)" in main  # linked from the main body, written in the details only
    assert "### toy_bound" not in main
    text = section.text
    assert "- **Statement**: |a - b| <= 1/n." in text and "  - ✓ 1/n <= 1 for n >= 1" in text
    rows = [line for line in text.splitlines() if line.startswith("| [`demo.a`]") or line.startswith("| `demo.b`")]
    # demo.a ran and its entry was refuted; demo.b is not in this run (no link to a section that is not there)
    assert rows == ["| [`demo.a`](#claim-demo-a) | gap at n | contradicts | yes | refuted |",
                    "| `demo.b` | gap later | does not apply | yes | not in this run |"]
    assert "- `demo.a`, gap at n: (1) n is the bound's n. So the gap is not 1/2." in text


def test_no_section_when_no_use_bears_on_the_run(monkeypatch):
    details, main = _details(_run(_entry("demo.c", "other", "confirmed")), monkeypatch)
    assert "derived-bounds" not in details and "derived bounds" not in main.lower()
    details, _ = _details(_run(_entry("demo.a", "gap at n", "refuted")), monkeypatch, bounds=())
    assert "derived-bounds" not in details


def test_results_json_carries_the_uses_under_findings(monkeypatch):
    run = _run(_entry("demo.a", "gap at n", "refuted"))
    _details(run, monkeypatch)  # installs the hand-made pack
    monkeypatch.setattr(results_json, "is_installed", lambda _run: True)
    (found,) = results_json.findings(run)["derived_bounds"]
    assert (found["id"], found["checked"]) == ("toy_bound", True)
    assert found["uses"] == [
        {"claim": "demo.a", "part": "gap at n", "relation": "contradicts", "checked": True, "verdict": "refuted"},
        {"claim": "demo.b", "part": "gap later", "relation": "does not apply", "checked": True,
         "verdict": "not in this run"}]
    from jsonschema import Draft202012Validator

    schema = results_json.schema()
    Draft202012Validator({"$defs": schema["$defs"], **schema["properties"]["findings"]}).validate(
        results_json.findings(run))
