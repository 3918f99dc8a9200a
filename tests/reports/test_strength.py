"""How sure each finding is: the strength a slip takes from its entries, a declared reading shown in the bottom
line and the report, and results.json's copy (written, read back, and read from a file that predates it).

The expected strengths follow from the rules of checks/strength.py applied by hand to the entries built here (an
entry is sampled when its evidence type is not ``exact``); none is copied from the tool's output.
"""

import json
from dataclasses import replace

import pytest

from moecl_verify.checks import strength
from moecl_verify.checks.model import STRENGTH_LABELS, STRENGTHS, ClaimResult, RunResult, Slip
from moecl_verify.reports import bottom_line, markdown, results_json

pytestmark = pytest.mark.app


def entry(claim_id, verdict, evidence_type="exact", part=None):
    exact = evidence_type == "exact"
    config = {"features": "gaussian", **({"part": part} if part else {})}
    return ClaimResult(id=claim_id, source="-", kind="bound", form="stated", verdict=verdict, expected=0.0,
                       observed=None if exact else 0.1, stderr=None if exact else 0.01,
                       p_value=None if exact else 1e-9, false_fail_rate=None if exact else 1e-3, min_detectable=None,
                       config=config, evidence="counterexample: 3/4 > 0" if exact else "z-test",
                       evidence_type=evidence_type)


def run_of(*results, slips=()):
    ids = dict.fromkeys(r.id for r in results)
    claims = tuple({"id": i, "summary": i, "source": "-", "kind": "bound", "statement": "x", "preconditions": [],
                    "notes": ""} for i in ids)
    return RunResult(tuple(results), tuple(slips), (), {"budget": "smoke", "seed": 0, "claims": list(ids)}, claims, {})


def slip(slip_id, *entries, **fields):
    return Slip(slip_id, "Lemma 3", "false statement", "-", "the expert moves", "-",
                entries=tuple(e.key for e in entries), **fields)


# ----------------------------------------------------------------------------- the strength a slip's entries give


def test_a_slip_on_exact_entries_is_exact_and_one_on_a_sampled_decided_entry_is_monte_carlo():
    exact = entry("lemma3", "refuted", part="a")
    sampled = entry("lemma3", "refuted", "criterion", part="b")
    assert strength.derived(slip("s", exact), [exact, sampled]) == "exact"
    assert strength.derived(slip("s", sampled), [exact, sampled]) == "monte_carlo"
    # one decided entry sampled is enough: the finding is only as sure as its least sure decisive part
    assert strength.derived(slip("s", exact, sampled), [exact, sampled]) == "monte_carlo"
    for kind in ("mean", "proportion", "scaling"):
        other = entry("lemma3", "refuted", kind, part="c")
        assert strength.derived(slip("s", exact, other), [exact, other]) == "monte_carlo"


def test_only_the_decided_entries_count_and_a_slip_on_no_entry_states_an_exact_reason():
    exact = entry("lemma3", "refuted", part="a")
    undecided = entry("lemma3", "inconclusive", "criterion", part="b")
    # the undecided sampled entry decides nothing: the exact refutation makes the finding
    assert strength.derived(slip("s", exact, undecided), [exact, undecided]) == "exact"
    # nothing decided: all entries count
    assert strength.derived(slip("s", undecided), [undecided]) == "monte_carlo"
    assert strength.derived(slip("s"), []) == "exact"
    # entries the run does not hold: not called exact on evidence the reader cannot see
    assert strength.derived(slip("s", exact), []) == "monte_carlo"
    # an entry of a schema-1 file, without an evidence type: sampled by its p-value
    legacy = replace(entry("lemma3", "refuted", "criterion", part="d"), evidence_type="")
    assert strength.derived(slip("s", legacy), [legacy]) == "monte_carlo"


def test_a_monte_carlo_finding_says_how_many_of_its_decided_entries_are_exact():
    exact = entry("lemma3", "refuted", part="a")
    sampled = [entry("lemma3", "refuted", "criterion", part=p) for p in "bc"]
    undecided = entry("lemma3", "inconclusive", part="d")
    mixed = slip("s", exact, *sampled, undecided)
    # decided: the exact one and two sampled ones (the undecided exact entry decides nothing)
    assert strength.words(mixed, [exact, *sampled, undecided]) == (
        "Monte Carlo at the stated configuration; 1 of its 3 decided checks exact")
    assert strength.words(slip("s", *sampled), sampled) == "Monte Carlo at the stated configuration"
    assert strength.words(slip("s", exact), [exact]) == "exact"


def test_a_declared_strength_is_kept_and_the_rest_are_settled_from_the_entries():
    exact = entry("lemma3", "refuted")
    read = slip("r", exact, strength="reading", strength_note="the termination rule")
    plain = slip("p", exact)
    settled = strength.settle([read, plain], [exact])
    assert [(s.strength, s.strength_note) for s in settled] == [("reading", "the termination rule"), ("exact", "")]
    assert strength.of(plain, [exact]) == ("exact", "")


def test_a_strength_outside_the_closed_set_or_a_reading_without_its_name_is_refused():
    with pytest.raises(ValueError, match="strength 'sure' is not one of exact, monte_carlo, reading, transcription"):
        slip("s", strength="sure")
    with pytest.raises(ValueError, match="names it"):
        slip("s", strength="reading")


def test_the_words_name_the_reading_and_ask_for_the_original():
    assert strength.text("exact") == "exact"
    assert strength.text("monte_carlo") == "Monte Carlo at the stated configuration"
    assert strength.text("reading", "the scale of v_n") == "rests on a reading: the scale of v_n"
    assert strength.text("transcription") == "possibly a transcription artifact (check against the original)"
    assert strength.short("monte_carlo") == "Monte Carlo"
    assert strength.weakest([("exact", ""), ("reading", "x"), ("monte_carlo", "")]) == ("reading", "x")
    assert strength.weakest([]) == ("", "")


def test_the_schema_enum_and_the_labels_are_the_closed_set():
    defs = results_json.schema()["$defs"]
    assert tuple(defs["strength"]["enum"]) == STRENGTHS == tuple(STRENGTH_LABELS)
    assert defs["slip"]["properties"]["strength"] == {**defs["slip"]["properties"]["strength"],
                                                      "$ref": "#/$defs/strength"}
    sentence = results_json.schema()["properties"]["findings"]["properties"]["bottom_line"]["items"]
    assert sentence["properties"]["strength"]["$ref"] == "#/$defs/strength"


# ----------------------------------------------------------------------------- a finding on a reading, shown as such

LEMMA3 = "lemma3.expert_moves"


def reading_run(declared=True):
    """Lemma 3 refuted exactly, its slip (a false statement in Lemma 3, which Proposition 1's proof uses) declared
    to rest on a reading, and Proposition 1 refuted on a sampled entry with a slip of its own following from it."""
    lemma3, prop1 = entry("lemma3", "refuted"), entry("prop1", "refuted", "criterion")
    fields = {"strength": "reading", "strength_note": "the termination rule"} if declared else {}
    slips = (slip(LEMMA3, lemma3, summary="Lemma 3 is false: the expert moves", **fields),
             Slip("prop1.models_keep_moving", "Prop 1", "false statement", "-", "-", "-", entries=(prop1.key,),
                  causes=(LEMMA3,)))
    return run_of(lemma3, prop1, slips=slips)


def test_a_bottom_line_sentence_on_a_reading_says_so_and_never_reads_as_exact():
    run = reading_run()
    (cause,) = [s for s in bottom_line.sentences(run) if s.kind == "cause"]
    # the root's own strength, then its derived slip's (sampled, and weaker than exact but not than a reading)
    assert cause.text.endswith(" *[rests on a reading: the termination rule]*")
    assert (cause.strength, cause.strength_note) == ("reading", "the termination rule")
    assert "exact" not in cause.text
    verdicts = next(s for s in bottom_line.sentences(run) if s.kind == "verdicts")
    # Lemma 3 (in the chain of lemmas, counted in a clause of its own) falls on its exact entry, on which the
    # reading slip rests: the sentence is as sure as its least sure part
    assert "lemmas behind them (Lemmas 1-16, Corollary 1)" in verdicts.text
    assert verdicts.strength == "reading"
    # the same slip undeclared: exact root, and what it breaks through Proposition 1's sampled slip says so
    plain = reading_run(declared=False)
    (cause,) = [s for s in bottom_line.sentences(plain) if s.kind == "cause"]
    assert cause.text.endswith(" *[exact; through `prop1.models_keep_moving`: Monte Carlo at the stated "
                               "configuration]*")
    assert cause.strength == "monte_carlo"


def test_the_report_shows_the_reading_beside_the_cause_the_audit_and_the_bottom_line():
    run = reading_run()
    text = markdown.render(run)
    bottom = text.split("## What stands and what falls")[0]
    assert "*[rests on a reading: the termination rule]*" in bottom
    (row,) = [line for line in text.splitlines() if line.startswith("| 1 | ") and f"[`{LEMMA3}`]" in line]
    # the table's "how sure" column names the reading
    assert " | rests on a reading: the termination rule | " in row
    audit = text.split("## Slip audit")[1]
    assert "- **Strength**: rests on a reading: the termination rule" in audit
    assert "- **Strength**: Monte Carlo at the stated configuration" in audit  # Proposition 1's, from its entry


def test_strengths_round_trip_through_results_json(tmp_path):
    run = reading_run()
    path = results_json.write(run, tmp_path / "results.json")
    doc = json.loads(path.read_text())
    assert [(s["strength"], s.get("strength_note")) for s in doc["slips"]] == [
        ("reading", "the termination rule"), ("monte_carlo", None)]
    stored = {s["kind"]: s for s in doc["findings"]["bottom_line"]}
    assert (stored["cause"]["strength"], stored["cause"]["strength_note"]) == ("reading", "the termination rule")
    back = results_json.load(path)
    assert [(s.strength, s.strength_note) for s in back.slips] == [("reading", "the termination rule"),
                                                                  ("monte_carlo", "")]
    assert results_json.dumps(back) == path.read_text()


def test_a_file_written_before_strengths_loads_with_the_derived_ones(tmp_path):
    run = reading_run(declared=False)
    doc = json.loads(results_json.dumps(run))
    for s in doc["slips"]:
        s.pop("strength"), s.pop("strength_note", None)
    for s in doc["findings"]["bottom_line"]:
        s.pop("strength", None), s.pop("strength_note", None)
    (tmp_path / "results.json").write_text(json.dumps(doc))
    back = results_json.load(tmp_path / "results.json")
    # Lemma 3's slip on its exact entry, Proposition 1's on its sampled one
    assert [s.strength for s in back.slips] == ["exact", "monte_carlo"]
    # and a strength outside the closed set is refused with the field named
    doc["slips"][0]["strength"] = "certain"
    (tmp_path / "results.json").write_text(json.dumps(doc))
    with pytest.raises(results_json.ResultsFileError, match=r"slips\[0\]\.strength: 'certain' is not one of"):
        results_json.load(tmp_path / "results.json")


def test_diff_reports_a_changed_strength_but_not_one_a_file_never_recorded():
    from moecl_verify.reports import diff

    new = json.loads(results_json.dumps(reading_run()))
    old = json.loads(results_json.dumps(reading_run(declared=False)))
    changed = {(c.key, c.field) for c in diff.compare(old, new).text}
    assert (f"slips: {LEMMA3}", "strength") in changed and (f"slips: {LEMMA3}", "strength_note") in changed
    for s in old["slips"]:
        s.pop("strength"), s.pop("strength_note", None)
    assert not any(c.field.startswith("strength") for c in diff.compare(old, new).text)


def test_a_possible_transcription_artifact_weakens_a_refutation_only_where_it_is_its_sole_explanation():
    from moecl_verify.reports import headline

    sampled = entry("prop4.forgetting", "refuted", "criterion", part="a")
    artifact = slip("coefficient", sampled, strength="transcription", strength_note="a displaced superscript")
    # alone, the refutation may be the transcription's: the entry is no surer than the artifact
    alone = run_of(sampled, slips=[artifact])
    assert headline.entry_strength(alone, sampled) == ("transcription", "a displaced superscript")
    # with a second slip on the same entry that holds whatever the original printed, the entry falls either way
    step = slip("derivation step", sampled)
    both = run_of(sampled, slips=strength.settle([artifact, step], [sampled]))
    assert headline.entry_strength(both, sampled)[0] == "monte_carlo"
    # a reading is kept: the measurement itself was made under it
    reading = slip("rule", sampled, strength="reading", strength_note="the termination rule")
    kept = run_of(sampled, slips=strength.settle([reading, step], [sampled]))
    assert headline.entry_strength(kept, sampled) == ("reading", "the termination rule")


def test_a_line_that_falls_is_as_sure_as_its_surest_refutation():
    from moecl_verify.reports import headline

    printed = entry("prop4.forgetting", "refuted", "criterion", part="a")
    other = entry("prop4.generalization", "refuted", "criterion", part="b")
    artifact = slip("coefficient", printed, strength="transcription", strength_note="a displaced superscript")
    run = run_of(printed, other, slips=strength.settle([artifact], [printed, other]))
    # the line quotes the first refutation, but the second, which no artifact explains, makes it fall anyway
    assert headline.verdict_strength(run, [printed, other], headline.FALLS, printed.key)[0] == "monte_carlo"
    # with only the possible artifact refuting, the line is no surer than it
    alone = run_of(printed, slips=[artifact])
    assert headline.verdict_strength(alone, [printed], headline.FALLS, printed.key)[0] == "transcription"
