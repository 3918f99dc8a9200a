"""Entry keys in a whole run (checks/entry_key.py): stored as fields, unique, proof steps marked, every
slip naming entries of the run, and the keys of a schema-2 file of the previous version mapped onto this
version's keys."""

import json
from pathlib import Path

import pytest

from moecl_verify.checks.entry_key import legacy_key
from moecl_verify.reports import results_json

pytestmark = pytest.mark.slow

PREVIOUS = Path(__file__).parent / "data" / "schema2_smoke_entries.json"
SWEPT = "fig2.termination_converges"  # the claim whose entries the reproduction sweep keyed by the scale of v_n


def test_every_entry_stores_its_key_and_no_label_in_its_configuration(smoke_run):
    doc = json.loads((smoke_run.out / "results.json").read_text())
    assert doc["schema_version"] == 3
    keys = [json.dumps(e["key"], sort_keys=True) for e in doc["results"]]
    assert len(set(keys)) == len(keys), "two entries share a key"
    for entry in doc["results"]:
        assert (entry["key"]["claim"], entry["key"]["form"]) == (entry["id"], entry["form"])
        assert "part" not in entry["config"] and "role" not in entry["config"]


def test_proof_steps_are_marked_as_such(smoke_run):
    """The pack names every entry of a proof step "proof ..." or puts it in a claim of a step; its role must
    say so (a role forgotten would let a proof step decide a statement's headline)."""
    run = smoke_run.result()
    named = lambda r: r.key.part.lower().startswith("proof") or "proof step" in r.key.part.lower() or ".step" in r.id  # noqa: E731
    assert [r.key.text for r in run.results if named(r) != (r.key.role == "proof step")] == []
    assert sum(r.key.role == "proof step" for r in run.results) >= 40


def test_every_slip_names_entries_of_the_run(smoke_run):
    run = smoke_run.result()
    keys = {r.key for r in run.results}
    assert all(set(slip.entries) <= keys for slip in run.slips), [
        (slip.id, [k.text for k in slip.entries if k not in keys]) for slip in run.slips]
    # Only the slips found by reading the text alone (notation, the experiments' settings) rest on no entry.
    from moecl_verify.packs.moe_cl.claims import audit
    from moecl_verify.packs.moe_cl.claims.single_expert import prop4

    text_only = {s.id for s in audit.TEXT_SLIPS + prop4.TEXT_SLIPS}
    assert {s.id for s in run.slips if not s.entries} == text_only
    # A slip's entries are the ones its evidence quotes: each names a refuted or confirmed entry.
    decided = {r.key: r.verdict for r in run.results}
    assert all(decided[k] in ("refuted", "confirmed") for slip in run.slips for k in slip.entries)


def test_the_previous_versions_keys_map_onto_this_versions(smoke_run):
    """The documented mapping for files of schema 1 and 2 gives every entry of the previous version's smoke
    run (same budget and seed, read from a stored copy of its identifying fields) the key this version's
    run gives the same entry: no entry appears or vanishes by the move to keys."""
    run = smoke_run.result()
    claims = {r.id for r in run.results}
    previous = json.loads(PREVIOUS.read_text())
    assert previous["schema_version"] == 2
    mapped = {legacy_key(e) for e in previous["results"] if e["id"] in claims}
    now = {r.key for r in run.results}
    assert len(mapped) == sum(e["id"] in claims for e in previous["results"]), "two old entries map to one key"
    # Three changes since that version, and nothing else: the theorems' entries in expectation now name their
    # reading (Theorem 2's verdict depends on it), the worst-case searches are new entries, and so are the uses
    # of the update rule's gate-gap bound in Proposition 3 and Lemma 13.
    from dataclasses import replace

    from moecl_verify.packs.moe_cl.entries import conditional_reading, derived_bounds, worst_case

    renamed = {k for k in now - mapped if k.reading == conditional_reading.IN_EXPECTATION}
    # A fourth: Figure 2's convergence entries carry the unstated scale of v_n as their hidden constant (the
    # reproduction sweep), the old entry being the scale-1 point; the sweep's other points and its sensitivity
    # entries are new.
    swept = {k for k in now - mapped if k.claim == SWEPT and (k.constant is not None or k.role == "sensitivity")}
    rescaled = {replace(k, constant=None) for k in swept if k.constant == 1.0 and k.role == "statement"}
    assert {replace(k, reading=None) for k in renamed} | rescaled == mapped - now and len(renamed) >= 10
    assert rescaled and len(swept) > len(rescaled)
    uses = {(derived_bounds.PROP3_CLAIM, derived_bounds.PROP3_PART),
            (derived_bounds.LEMMA13_CLAIM, derived_bounds.LEMMA13_PART)}
    assert {(k.claim, k.part) for k in now - mapped - renamed - swept if k.part != worst_case.PART} == uses
    searched = now - mapped - renamed - swept - {k for k in now if (k.claim, k.part) in uses}
    assert {k.claim for k in searched} == {"lemma2", "lemma12", "thm1.forgetting_early",
                                                          "thm1.generalization", "thm2.generalization"}


def test_a_schema_2_file_diffs_against_its_schema_3_rewrite_as_the_same_findings(smoke_run, tmp_path):
    """diff applies the mapping: the run written as schema 2 (label in config.part as the previous version
    wrote it, no keys) against itself as schema 3 shows no entry added, removed or changed."""
    from moecl_verify.reports import diff

    doc = json.loads((smoke_run.out / "results.json").read_text())
    old = json.loads(json.dumps(doc))
    old["schema_version"] = 2
    for entry in old["results"]:
        key = entry.pop("key")
        entry["config"]["part"] = _schema2_label(key)
    for slip in old["slips"]:
        slip.pop("entries", None)
    (tmp_path / "old.json").write_text(json.dumps(old))
    result = diff.compare(results_json.read(tmp_path / "old.json"), doc)
    assert result.same_findings and not result.text, diff.render(result, show_text=True)


def _schema2_label(key: dict) -> str:
    """How the previous version wrote a label: the part, then ", pool k", then ", c = x" (as written by its
    claims; the mapping also reads the comma-less "... c = x")."""
    bits = [key["part"]] if key["part"] else []
    if key["pool"] is not None:
        bits.append(f"pool {key['pool']}")
    if key["constant"] is not None:
        bits.append(f"c = {key['constant']:g}")
    return ", ".join(bits)


def test_every_declared_cause_is_a_slip_the_pack_can_establish(smoke_run):
    """A cause names a slip by id; a typo would leave its slip a root cause without a word. Every cause named
    in the run is a slip of the run or a slip id written in the pack's claims (established at other budgets)."""
    import re

    from moecl_verify.packs import moe_cl

    run = smoke_run.result()
    source = "\n".join(p.read_text() for p in Path(moe_cl.__file__).parent.rglob("*.py"))
    written = set(re.findall(r'id="([A-Za-z0-9_.]+)"', source))
    named = {c for slip in run.slips for c in slip.causes}
    assert named, "no slip of the run names a cause"
    assert named - {s.id for s in run.slips} - written == set()
