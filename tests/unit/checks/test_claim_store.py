"""Finished-claim records: a faithful codec, keys that change with the code, corruption recomputed."""

import json
import math
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from moecl_verify.checks import claim_store, runner
from moecl_verify.checks.claim_store import ClaimStore, Uncacheable, decode, encode, source_version
from moecl_verify.checks.model import ClaimResult
from moecl_verify.checks.kinds.mean import HorizonTest, Measurement
from moecl_verify.checks.registry import get
from moecl_verify.checks.stats import MeanTest
from moecl_verify.numeric.cache import ResultCache
from moecl_verify.numeric.chunks import ChunkRunner
from moecl_verify.reports import results_json


def same(a, b) -> bool:
    """Equal values of identical types all the way down (NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, (float, np.floating)) and math.isnan(a):
        return math.isnan(b)
    return a == b


def json_round_trip(value):
    return decode(json.loads(json.dumps(encode(value), sort_keys=True)))


scalars = (st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.floats(allow_nan=True)
           | st.floats(width=32).map(np.float32) | st.floats().map(np.float64) | st.integers(-2**63, 2**63 - 1).map(np.int64)
           | st.booleans().map(np.bool_))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.lists(inner, max_size=3).map(tuple)
                      | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=3), max_leaves=12)


@given(values)
def test_codec_rebuilds_values_with_their_types_and_dict_order(value):
    assert same(json_round_trip(value), value)


def test_codec_rebuilds_measurements_and_results():
    m = Measurement("x", "Lemma 3", "bound", "stated", {"b": (1, 2), "a": np.float64(0.1)},
                    (HorizonTest(3, MeanTest(1.0, np.float64(1.5), math.inf, 10)), HorizonTest("M=2", MeanTest(0, -0.0, 0.1, 2))),
                    scale=2.0, formula="f", rule="positive")
    r = ClaimResult("x", "s", "bound", "stated", "refuted", None, 1.0, None, 0.5, 1e-3, None, {"k": [1]}, "e")
    back = json_round_trip([m, r])
    assert back == [m, r] and same(back[0].config, m.config) and list(back[0].config) == ["b", "a"]


@pytest.mark.parametrize("value", [Fraction(1, 3), sympy.Rational(1, 3), np.zeros(2), {1.5: 1}.keys(), object()])
def test_values_it_cannot_store_faithfully_make_the_claim_uncacheable(value):
    with pytest.raises(Uncacheable):
        encode({"nested": [value]})


def test_source_version_changes_with_any_source_file(tmp_path):
    installed = claim_store.layer_roots()
    copies = []
    for package, root in installed:
        copy = tmp_path / package
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__"))
        copies.append((package, copy))
    before = source_version(tuple(copies))
    assert before == source_version(installed) == source_version()
    routing = tmp_path / "moecl_verify.theory" / "routing.py"
    routing.write_text(routing.read_text() + "\n# edited\n")
    source_version.cache_clear()
    assert source_version(tuple(copies)) != before
    source_version.cache_clear()


def test_source_version_covers_only_the_package_layers():
    import moecl_verify.checks

    packages = [package for package, _ in claim_store.layer_roots()]
    assert packages == ["moecl_verify.theory", "moecl_verify.numeric", "moecl_verify.checks"]
    # Each root is the folder the imported layer lives in, not a folder of the same name elsewhere.
    assert dict(claim_store.layer_roots())["moecl_verify.checks"] == Path(moecl_verify.checks.__file__).parent


def test_keys_separate_claim_budget_seed_and_library_versions():
    base = ("lemma3", "smoke", 2000, 0, {"numpy": "2"})
    variants = [("lemma4", *base[1:]), ("lemma3", "standard", 20000, 0, {"numpy": "2"}),
                ("lemma3", "smoke", 2000, 1, {"numpy": "2"}), ("lemma3", "smoke", 2000, 0, {"numpy": "3"})]
    keys = {claim_store.claim_key(*v)[0] for v in [base, *variants]}
    assert len(keys) == 5


def _run(cache, **kw):
    return runner.run(["lemma3"], budget="smoke", seed=0, chunk_runner=ChunkRunner(cache=cache), **kw)


@pytest.mark.heavy
def test_a_rerun_reuses_the_record_without_measuring(tmp_path, monkeypatch):
    with ResultCache(tmp_path) as cache:
        records: dict = {}
        first = results_json.dumps(_run(cache, claim_records=records))
        assert records["computed"] == 1 and records["reused"] == 0
        claim = get("lemma3")
        monkeypatch.setattr(type(claim), "measure", property(lambda self: pytest.fail("measured again")), raising=False)
        records = {}
        assert results_json.dumps(_run(cache, claim_records=records)) == first
        assert records["reused"] == 1


@pytest.mark.heavy
def test_a_corrupt_record_is_reported_and_recomputed(tmp_path):
    problems = []
    with ResultCache(tmp_path, on_problem=problems.append) as cache:
        first = results_json.dumps(_run(cache))
        (record,) = [p for p in tmp_path.glob("claim-*.record") if not p.name.startswith("claim-slips-")]
        data = bytearray(record.read_bytes())
        data[len(data) // 2] ^= 0xFF
        record.write_bytes(bytes(data))
        records: dict = {}
        assert results_json.dumps(_run(cache, claim_records=records)) == first
    assert records["computed"] == 1 and len(problems) == 1 and "corrupt" in problems[0]


def test_an_undecodable_record_with_a_valid_checksum_is_recomputed(tmp_path):
    problems = []
    with ResultCache(tmp_path, on_problem=problems.append) as cache:
        key, description = claim_store.claim_key("lemma3", "smoke", 2000, 0, runner.versions())
        cache.put_record(key, {"measured": {"t": "pickle", "v": "..."}, "artifacts": {}}, description)
        store = ClaimStore(cache, "smoke", 2000, 0, runner.versions())
        assert store.get("lemma3") is None
    assert len(problems) == 1 and "undecodable" in problems[0]


def test_slips_are_rebuilt_exactly_when_the_claims_decided_results_change(tmp_path):
    from moecl_verify.checks.model import Slip

    calls = []

    def build(results):
        calls.append(results)
        return [Slip("s", "here", "false statement", "a", "b", f"verdict {results[0].verdict}")]

    refuted = ClaimResult("x", "s", "bound", "stated", "refuted", None, 1.0, None, 0.5, 1e-3, None, {}, "e")
    with ResultCache(tmp_path) as cache:
        store = ClaimStore(cache, "smoke", 2000, 0, runner.versions())
        first = store.slips("x", [refuted], build)
        assert store.slips("x", [refuted], build) == first and len(calls) == 1
        confirmed = store.slips("x", [ClaimResult(**{**refuted.__dict__, "verdict": "confirmed"})], build)
        assert len(calls) == 2 and confirmed[0].evidence == "verdict confirmed"


def test_a_claims_key_covers_its_packs_own_code(tmp_path):
    """A pack's modules (here the default pack's package, copied) enter the key of its finished claims: an
    edit to a pack's experiment recomputes its claims, even for a pack from another distribution."""
    from moecl_verify.checks import pack as packs

    pack = packs.default()
    roots = claim_store.layer_roots(pack)
    assert roots[:3] == claim_store.layer_roots() and roots[3] == (pack.modules[0], pack.root())
    copies = []
    for package, root in roots:
        copy = tmp_path / package
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__"))
        copies.append((package, copy))
    before = source_version(tuple(copies))
    experiment = next((tmp_path / pack.modules[0]).rglob("experiments/*.py"))
    experiment.write_text(experiment.read_text() + "\n# edited\n")
    source_version.cache_clear()
    assert source_version(tuple(copies)) != before
    source_version.cache_clear()
    # The pack's name is part of the key too: two packs with a claim of the same id never share a record.
    import dataclasses

    key_a, _ = claim_store.claim_key("x", "smoke", 1, 0, {}, pack)
    renamed = dataclasses.replace(pack, name="another-pack")  # the same code under another name
    assert key_a != claim_store.claim_key("x", "smoke", 1, 0, {}, renamed)[0]


@pytest.mark.parametrize("edited, changes", [
    ("moecl_verify.theory.routing", {"moe-cl"}),  # the paper's model
    ("moecl_verify.numeric.dnn_batch", {"moe-cl"}),  # the paper's deep-network engine, imported inside a function
    ("moecl_verify.packs.moe_chapter.model", {"moe-chapter"}),  # the chapter's model
    ("moecl_verify.checks.decide", {"moe-cl", "moe-chapter"}),  # the machinery both packs run on
])
def test_editing_one_documents_model_recomputes_only_its_claims(edited, changes, tmp_path, monkeypatch):
    from moecl_verify.checks import pack as packs
    from moecl_verify.numeric import sources

    both = {name: packs.get(name) for name in ("moe-cl", "moe-chapter")}

    def keys():
        claim_store.pack_source_version.cache_clear()
        sources.import_closure.cache_clear()  # files are found by sources.module_file, patched below
        return {name: claim_store.claim_key("a.claim", "smoke", 10, 0, {"numpy": "2"}, pack)[0]
                for name, pack in both.items()}

    before = keys()
    original = sources.module_file(edited)
    copy = tmp_path / original.name
    copy.write_bytes(original.read_bytes() + b"\n# an edit\n")
    real = sources.module_file

    def edited_file(name):
        return copy if name == edited else real(name)

    monkeypatch.setattr(sources, "module_file", edited_file)
    after = keys()
    monkeypatch.undo()
    keys()
    assert {name for name in both if after[name] != before[name]} == changes
