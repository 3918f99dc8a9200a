"""results.json and report.md: contract fields, round trip, byte-identical reruns."""

import json
import re
from pathlib import Path

import pytest

from moecl_verify.checks import runner
from moecl_verify.reports import markdown, results_json

CONTRACT = (
    "id",
    "source",
    "kind",
    "form",
    "verdict",
    "expected",
    "observed",
    "stderr",
    "p_value",
    "false_fail_rate",
    "min_detectable",
    "config",
    "evidence",
)


@pytest.fixture(scope="module")
def smoke():
    return runner.run(["prop4.*"], budget="smoke", seed=3)


def test_results_json_has_contract_fields(smoke):
    doc = json.loads(results_json.dumps(smoke))
    assert doc["results"], "no entries"
    for entry in doc["results"]:
        for key in CONTRACT:
            assert key in entry, key
        assert entry["form"] in ("stated", "corrected", "derived")
        # Schema 3: the entry's key names it (beside its id and form); its configuration no longer holds the label.
        assert (entry["key"]["claim"], entry["key"]["form"]) == (entry["id"], entry["form"])
        assert "part" not in entry["config"] and "role" not in entry["config"]
    for slip in doc["slips"]:
        # an effect and a plain summary only where the claim states them
        assert list(slip)[:8] == ["id", "location", "class", "stated", "holds", "evidence", "entries", "causes"]
        assert set(list(slip)[8:]) <= {"effect", "summary", "strength", "strength_note"}
        assert all(slip[k] for k in list(slip)[8:])
        # every slip states how sure it is (declared by its claim, or derived from its entries)
        assert slip["strength"] in ("exact", "monte_carlo", "reading", "transcription")
    assert all("strength" in s for s in doc["findings"]["bottom_line"] if s["kind"] != "open")
    assert doc["interpretations"]
    assert sum(doc["summary"].values()) == len(doc["results"])
    # The bottom line travels with the file: each sentence with the slips and entries it rests on, all of the run.
    keys = [e["key"] for e in doc["results"]]
    sentences = doc["findings"]["bottom_line"]
    assert 1 <= len(sentences) <= 10 and sentences[0]["kind"] == "verdicts"
    assert all(k in keys for s in sentences for k in s["entries"])
    assert {i for s in sentences for i in s["slips"]} <= {s["id"] for s in doc["slips"]}
    assert doc["findings"]["answers"] == []  # this run checks no question beyond the paper


def test_round_trip_renders_identically(smoke, tmp_path):
    path = results_json.write(smoke, tmp_path / "results.json")
    again = results_json.load(path)
    assert results_json.dumps(again) == results_json.dumps(smoke)
    assert markdown.render(again) == markdown.render(smoke)


def test_same_seed_byte_identical_other_seed_not(smoke):
    rerun = runner.run(["prop4.*"], budget="smoke", seed=3)
    assert results_json.dumps(rerun) == results_json.dumps(smoke)
    assert markdown.render(rerun) == markdown.render(smoke)
    other = runner.run(["prop4.generalization"], budget="smoke", seed=4)
    assert results_json.dumps(other) != results_json.dumps(smoke)


def test_markdown_reads_like_a_report(smoke):
    text = markdown.render(smoke)
    assert text.startswith("# moecl-verify report")
    first_screen = text.splitlines()[:60]
    assert "## What stands and what falls" in first_screen
    assert "## Slip audit" in text and "## Interpretations" in text and "## The run" in text
    for res in smoke.results:
        assert f"`{res.id}`" in text
    # the differing term is printed for non-derived forms
    assert "− derived" in text


def test_load_rejects_foreign_files(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"tool": "other"}')
    with pytest.raises(ValueError):
        results_json.load(bad)


def _tiny_document() -> dict:
    from moecl_verify.checks.model import RunResult, exact_result

    entry = exact_result("lemma2", "Lemma 2", "bound", "the constant", "refuted", "a counterexample", "2/lambda")
    return results_json.as_document(RunResult((entry,), (), (), {"seed": 0}, ({
        "id": "lemma2", "source": "Lemma 2", "kind": "bound", "summary": "s", "notes": "", "statement": "x",
        "preconditions": []},)))


def test_results_schema_is_a_valid_schema_whose_closed_sets_are_the_codes():
    """The schema is shipped data, kept in step with the constants it copies (and with the evidence types
    checks/decide.py and checks/model.py write, which no constant names)."""
    from jsonschema import Draft202012Validator

    from moecl_verify.checks import kinds
    from moecl_verify.checks.model import FORMS, SLIP_CLASSES, VERDICTS
    from moecl_verify.checks.registry import KINDS

    schema = results_json.schema()
    Draft202012Validator.check_schema(schema)
    defs = schema["$defs"]
    assert tuple(defs["verdict"]["enum"]) == VERDICTS
    assert tuple(defs["entry"]["properties"]["form"]["enum"]) == FORMS
    assert tuple(defs["slip"]["properties"]["class"]["enum"]) == SLIP_CLASSES
    assert tuple(defs["claim"]["properties"]["kind"]["enum"]) == KINDS
    # Exact entries, and every registered kind of evidence by its tag.
    written = {"exact"} | set(kinds.TABLES)
    assert written == set(defs["entry"]["properties"]["evidence_type"]["enum"])
    assert schema["properties"]["schema_version"]["enum"] == list(results_json.READABLE_SCHEMAS)


def test_a_schema_1_file_without_evidence_types_is_read(tmp_path):
    doc = _tiny_document()
    doc["schema_version"] = 1
    del doc["results"][0]["evidence_type"], doc["artifacts"]  # the first schema-1 files had no artifacts either
    (tmp_path / "results.json").write_text(json.dumps(doc))
    run = results_json.load(tmp_path)  # the folder holding it, as diff and list accept
    assert run.results[0].evidence_type == "" and run.results[0].verdict == "refuted" and run.artifacts == {}


def test_a_schema_2_file_gets_its_keys_by_the_documented_mapping(tmp_path):
    """A schema-2 entry stored its label in config.part, with the constant and the pool written into it; the
    reader gives it the key of checks/entry_key.py::legacy_key and drops the label from its configuration."""
    doc = _tiny_document()
    doc["schema_version"] = 2
    (entry,) = doc["results"]
    del entry["key"]
    entry["config"].update(part="between sets at t1, c = 0.5", hidden_constant=0.5)
    (tmp_path / "results.json").write_text(json.dumps(doc))
    (res,) = results_json.load(tmp_path / "results.json").results
    assert (res.key.claim, res.key.form, res.key.part, res.key.constant) == ("lemma2", "stated", "between sets at t1", 0.5)
    assert res.key.role == "statement" and res.key.pool is None and "part" not in res.config
    assert res.key.label == "between sets at t1, c = 0.5"


@pytest.mark.parametrize("text, problem", [
    (lambda t: t.replace('"seed": 0', '"seed": NaN'), "meta.seed: NaN is not a finite number"),
    (lambda t: t.replace('"seed": 0', '"seed": 1e999'), "meta.seed: 1e999 is not a finite number"),
    (lambda t: t.replace('"seed": 0', '"seed": ' + "9" * 5000), "meta.seed: 999"),
    (lambda t: t.replace('"id": "lemma2"', '"id": "\\ud800"', 1), "claims[0].id: not text (a lone surrogate"),
    (lambda t: t.replace('"id": "lemma2"', '"id": "lemma2\\n"', 1), "claims[0].id: 'lemma2\\n' is not an id"),
    (lambda t: t.replace('"seed": 0', '"seed": ' + "[" * 70 + "]" * 70), "nested deeper than 64 levels"),
    (lambda t: t.replace('"seed": 0', '"seed": ' + "[" * 50_000 + "]" * 50_000), "nested deeper than 64 levels"),
    (lambda t: t.replace('"seed": 0', '"seed": -1'), "meta.seed: -1 is below 0"),
    (lambda t: t.replace('"seed": 0', '"seed": "0"'), "meta.seed: expected integer, got string '0'"),
    (lambda t: t.replace('"refuted": 1', '"refuted": 2'), "summary.refuted: 2, but the results hold 1 refuted"),
    (lambda t: t.replace('"tool": "moecl-verify"', '"tool": "other"'), "not a moecl-verify results file ('tool' is"),
    (lambda t: t[:-30], "the file ends early (truncated?)"),
    (lambda t: "[]", "not a moecl-verify results file: a JSON array, not an object"),
    (lambda t: b"\xff" + t.encode(), "not UTF-8 text (byte 0xff at offset 0)"),
    (lambda t: t.replace('"verdict": "refuted"', '"verdict": "confirmed", "verdict": "refuted"', 1),
     "results[0]: the key 'verdict' appears twice (one object holds each key once)"),
    (lambda t: t.replace('"seed": 0', '"seed": 0, "seed": 0'), "meta: the key 'seed' appears twice"),
    # the number hooks still read what they read: the first problem in document order is named
    (lambda t: t.replace('"seed": 0', '"seed": NaN').replace('"verdict": "refuted"', '"verdict": "refuted", '
                                                               '"verdict": "refuted"', 1),
     "meta.seed: NaN is not a finite number"),
])
def test_read_refuses_in_one_line_naming_the_file_and_the_field(tmp_path, text, problem):
    good = json.dumps(_tiny_document(), indent=2)
    path = tmp_path / "bad.json"
    bad = text(good)
    path.write_bytes(bad if isinstance(bad, bytes) else bad.encode("utf-8"))
    with pytest.raises(results_json.ResultsFileError) as caught:
        results_json.read(path)
    message = str(caught.value)
    assert message.startswith(f"{str(path)!r}: ") and "\n" not in message and problem in message, message


def test_write_refuses_a_document_the_reader_would_refuse_and_writes_nothing(tmp_path):
    from dataclasses import replace

    path = tmp_path / "results.json"
    path.write_text(json.dumps(_tiny_document()), encoding="utf-8")
    run = results_json.load(path)
    before = path.read_bytes()
    spoiled = replace(run, results=(replace(run.results[0], evidence_type=""),))
    with pytest.raises(results_json.ResultsNotWritten) as caught:
        results_json.write(spoiled, path)
    message = str(caught.value)
    assert message == (f"{str(path)!r}: not written: the reader would refuse it (results[0].evidence_type: '' is "
                       "not one of mean, criterion, proportion, scaling, exact)")
    assert path.read_bytes() == before  # the earlier file is left as it was
    with pytest.raises(results_json.ResultsNotWritten):
        results_json.write(spoiled, tmp_path / "new.json")
    assert not (tmp_path / "new.json").exists()
    results_json.write(run, tmp_path / "good.json")  # what the reader accepts is written
    assert results_json.load(tmp_path / "good.json") == run


@pytest.mark.parametrize("where, problem", [("folder", "cannot read (No such file or directory)"),
                                            ("device", "not a regular file")])
def test_read_refuses_what_is_not_a_results_file(tmp_path, where, problem):
    path = tmp_path if where == "folder" else Path("/dev/zero")  # /dev/zero would never end
    with pytest.raises(results_json.ResultsFileError, match=re.escape(problem)):
        results_json.read(path)


def test_scaling_table_lists_fits_with_intervals_and_local_exponents():
    import numpy as np

    from moecl_verify.checks.model import ClaimResult, RunResult
    from moecl_verify.checks.kinds.scaling import ScalingEvidence
    from moecl_verify.checks.scaling import fit_exponent

    sigma0 = [0.4, 0.2, 0.1, 0.05, 0.025]
    rng = np.random.default_rng(0)
    # The default pack sweeps sigma0: the fit names it so, and the table reads the range under that name.
    fit = fit_exponent(sigma0, [2 * s**0.75 * rng.lognormal(0, 0.05, 200) for s in sigma0], np.random.default_rng(1),
                       resamples=200, parameter="sigma0")
    verdict, reason = _judge(ScalingEvidence(claim_id="t", source="t", config={}, formula="", what="y", fit=fit, law="Theta", exponent=0.75))
    res = ClaimResult(id="demo", source="-", kind="scaling", form="stated", verdict=verdict, expected=0.75,
                      observed=fit.exponent, stderr=0.01, p_value=None, false_fail_rate=0.01, min_detectable=0.1,
                      config={"part": "demo gap", "law": "Theta(sigma0^0.75)", **fit.summary()}, evidence=reason)
    text = markdown.render(RunResult((res,), (), (), {}, ({"id": "demo", "source": "-", "kind": "scaling",
                                                          "summary": "demo", "notes": "", "statement": "x",
                                                          "preconditions": []},), {}))
    row = next(line for line in text.splitlines() if line.startswith("| `demo` | demo gap"))
    low, high = fit.summary()["exponent_interval"]
    assert f"[{markdown.num(low, 3)}, {markdown.num(high, 3)}]" in row and "→" in row and "[0.025, 0.4]" in row
    assert low < 0.75 < high and verdict == "confirmed"


def test_slips_are_grouped_under_root_causes_ranked_by_what_they_break(smoke):
    import re

    from moecl_verify.reports.consequence import BREAKING, root_causes

    text = markdown.render(smoke)
    table = text.split("## Root causes", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| ") and line[2].isdigit()]
    main = [re.search(r"\[`([^`]+)`\]\(#slip-", row[1]).group(1) for row in rows]
    other = text.split("## Other slips", 1)[1].split("\n## ", 1)[0]
    listed = [re.match(r"- \[`([^`]+)`\]", line).group(1) for line in other.splitlines() if line.startswith("- [`")]
    ranked = root_causes(smoke)
    # at most six in the main table, every other root cause in the details' two lists, none twice, in rank order
    assert 1 <= len(main) <= 6 and sorted(main + listed) == sorted(r.slip.id for r in ranked)
    assert [r for r in [x.slip.id for x in ranked] if r in main] == main
    # each row counts the slips that follow from its root, and every slip is a root or follows from one
    families = {r.slip.id: r for r in ranked}
    for row, root in zip(rows, main):
        n = len(families[root].derived)
        assert (f"{n} slip{'s follow' if n > 1 else ' follows'} from it" in row[1]) == (n > 0)
    assert {s.id for r in ranked for s in (r.slip, *(d.slip for d in r.derived))} == {s.id for s in smoke.slips}
    # the main table's errors each touch a headline result, and a breaking one is never below one that only
    # undercuts
    assert all(families[r].breaks or families[r].undercuts for r in main)
    breaking = [i for i, r in enumerate(main) if families[r].breaks and any(
        s.slip_class in BREAKING for s in (families[r].slip, *(d.slip for d in families[r].derived)))]
    undercutting = [i for i, r in enumerate(main) if not families[r].breaks]
    assert not breaking or not undercutting or max(breaking) < min(undercutting)


def test_stream_outputs_are_merged_however_the_kernel_cut_them():
    import nbformat

    from moecl_verify.reports.notebook import coalesce_streams

    one = nbformat.v4.new_output("stream", name="stdout", text="a\nb\n")
    cut = [nbformat.v4.new_output("stream", name="stdout", text="a"), nbformat.v4.new_output("stream", name="stdout", text="\nb\n")]
    assert coalesce_streams(cut) == [one]
    mixed = [nbformat.v4.new_output("stream", name="stdout", text="a"), nbformat.v4.new_output("stream", name="stderr", text="w"),
             nbformat.v4.new_output("stream", name="stdout", text="b")]
    assert [o["text"] for o in coalesce_streams(mixed)] == ["a", "w", "b"]


def _judge(evidence, threshold: float = 1e-3):
    """(verdict, reason) of a scaling entry at ``threshold`` (rejected when its p-value is at most it)."""
    judgement = evidence.judge(threshold, evidence.p_value <= threshold)
    return judgement.verdict, judgement.reason


def test_a_file_of_a_pack_not_installed_draws_its_sweep_under_the_name_it_records(tmp_path):
    """The stand-in pack reads the swept parameter's name off the entries (``sigma0_range`` here), so the
    scaling table and figure of a file whose pack is absent still find their rows."""
    import numpy as np

    from moecl_verify.checks.kinds.scaling import ScalingEvidence
    from moecl_verify.checks.model import RunResult
    from moecl_verify.checks.scaling import fit_exponent
    from moecl_verify.reports import figures

    sweep = [0.4, 0.2, 0.1, 0.05]
    rng = np.random.default_rng(0)
    fit = fit_exponent(sweep, [s**0.5 * rng.lognormal(0, 0.05, 100) for s in sweep], np.random.default_rng(1),
                       resamples=200, parameter="sigma0")
    evidence = ScalingEvidence(claim_id="gap", source="-", config={"part": "gap", "means": [
        {"sigma0": s, "mean": m} for s, m in zip(fit.x, fit.means)]}, formula="", what="gap", fit=fit,
        law="Theta", exponent=0.5)
    entry = evidence.decide(1e-3, evidence.p_value <= 1e-3)
    claim = {"id": "gap", "source": "-", "kind": "scaling", "summary": "gap", "notes": "", "statement": "x",
             "preconditions": []}
    run = RunResult((entry,), (), (), {"pack": "elsewhere"}, (claim,), {}, "A document elsewhere")
    text = markdown.render(run)
    assert text.startswith("# moecl-verify report: *A document elsewhere*")
    assert "sigma0 range" in text and "[0.05, 0.4]" in text
    written = figures.write(run, tmp_path)
    assert [p.name for p in written] == ["fig_gap_scaling.png"]


def test_slips_keep_their_causes_and_a_circle_of_causes_is_refused(tmp_path):
    from moecl_verify.checks.model import Slip, to_jsonable

    doc = _tiny_document()
    slips = [Slip("lemma2.statement", "Lemma 2", "wrong constant or exponent", "s", "h", "e"),
             Slip("cor1.lambda_factor", "Cor 1", "false intermediate step", "s", "h", "e",
                  causes=("lemma2.statement",))]
    doc["slips"] = to_jsonable(slips)
    (tmp_path / "results.json").write_text(json.dumps(doc))
    read = results_json.load(tmp_path / "results.json")
    assert [s.causes for s in read.slips] == [(), ("lemma2.statement",)]
    doc["slips"][0]["causes"] = ["cor1.lambda_factor"]
    (tmp_path / "results.json").write_text(json.dumps(doc))
    with pytest.raises(results_json.ResultsFileError, match="in a circle"):
        results_json.read(tmp_path / "results.json")
    doc["slips"][0]["causes"] = ["lemma2.statement"]  # itself
    (tmp_path / "results.json").write_text(json.dumps(doc))
    with pytest.raises(results_json.ResultsFileError, match="in a circle"):
        results_json.read(tmp_path / "results.json")


def test_diff_matches_entries_by_their_fields_not_by_the_line_it_prints():
    """Two entries whose keys differ only beyond the printed digits of their constant stay two entries: a
    verdict that moves in one of them is reported."""
    from moecl_verify.checks.model import RunResult, exact_result
    from moecl_verify.reports import diff

    def document(second_verdict):
        entries = (exact_result("lemma2", "Lemma 2", "bound", "gap", "refuted", "e", "f", hidden_constant=1.0),
                   exact_result("lemma2", "Lemma 2", "bound", "gap", second_verdict, "e", "f",
                                hidden_constant=1.0000001))
        return results_json.as_document(RunResult(entries, (), (), {"seed": 0}, ({
            "id": "lemma2", "source": "Lemma 2", "kind": "bound", "summary": "s", "notes": "", "statement": "x",
            "preconditions": []},)))

    old, new = document("inconclusive"), document("refuted")
    assert old["results"][0]["key"]["constant"] != old["results"][1]["key"]["constant"]
    result = diff.compare(old, new)
    assert not result.added and not result.removed
    assert [(c.old, c.new) for c in result.verdicts] == [("inconclusive", "refuted")]
    assert not result.same_findings


def test_a_slip_entry_that_is_not_a_key_is_one_line_not_a_traceback(tmp_path):
    doc = _tiny_document()
    key = dict(doc["results"][0]["key"], pool=1.0)  # JSON Schema counts 1.0 as an integer
    doc["slips"] = [{"id": "lemma2.statement", "location": "l", "class": "false statement", "stated": "s",
                     "holds": "h", "evidence": "e", "entries": [key], "causes": []}]
    (tmp_path / "results.json").write_text(json.dumps(doc))
    with pytest.raises(results_json.ResultsFileError, match=r"slips\[0\]\.entries\[0\]: .*pool"):
        results_json.read(tmp_path / "results.json")


def test_configuration_values_read_as_numbers_not_python_records():
    from moecl_verify.reports.markdown import _value

    assert _value({"mean": 0.25572, "stderr": 0.0030298362229151006, "n": 200}) == "0.2557 ± 0.003 (n = 200)"
    assert _value([0.1, {"mean": 1.0, "stderr": 0.5}]) == "[0.1, 1 ± 0.5]"
    assert _value({"a": 0.123456}) == "{a: 0.1235}" and _value("text") == "text"
