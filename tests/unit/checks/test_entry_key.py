"""EntryKey: an entry's identity as typed fields, its rendered label, and the mapping from schema 1 and 2 labels.

Expected values follow from the rules in checks/entry_key.py's docstrings (label: the part, then "pool k", then
"c = x", joined by ", "; legacy_key: a trailing "c = ..." removed where the entry has a hidden constant, a
trailing "pool k" removed where its pool is k, proof step by the label or by ".step" in the claim's id)."""

import json
import math

import pytest

from moecl_verify.checks.entry_key import EntryKey, legacy_key
from moecl_verify.checks.model import ClaimResult, Slip, exact_result


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize("fields", [
    {"role": "lemma"},
    {"role": "proof"},
    {"form": "guessed"},
    {"pool": True},
    {"pool": "0"},
    {"pool": 1.0},
    {"constant": math.nan},
    {"constant": math.inf},
    {"constant": -math.inf},
    {"constant": True},
    {"constant": "0.5"},
    {"reading": 1},
    {"features": 2},
    {"part": None},
])
def test_invalid_fields_are_refused(fields):
    with pytest.raises(ValueError):
        EntryKey("x", **fields)


@pytest.mark.parametrize("claim", ["", None, 3])
def test_a_key_names_a_claim(claim):
    with pytest.raises(ValueError):
        EntryKey(claim)


def test_defaults_and_constant_as_float():
    key = EntryKey("x")
    assert (key.form, key.part, key.role, key.reading, key.features, key.pool, key.constant) == (
        "stated", "", "statement", None, None, None, None)
    one = EntryKey("x", constant=1)
    assert one.constant == 1.0 and isinstance(one.constant, float) and one == EntryKey("x", constant=1.0)
    assert EntryKey("x", pool=0).pool == 0  # pool 0 is a pool, not "no pool"


# --------------------------------------------------------------------------- of()


def test_of_takes_part_and_role_out_and_reads_the_typed_fields():
    config = {"features": "gaussian", "part": "gap at T2", "role": "proof step", "pool": 1,
              "hidden_constant": 0.5, "reading": "every round", "seed": 0}
    key, rest = EntryKey.of("lemma13", "corrected", config)
    assert key == EntryKey("lemma13", form="corrected", part="gap at T2", role="proof step", reading="every round",
                           features="gaussian", pool=1, constant=0.5)
    # part and role only identify the entry; the other key fields stay configuration.
    assert rest == {"features": "gaussian", "pool": 1, "hidden_constant": 0.5, "reading": "every round", "seed": 0}
    assert "part" in config and "role" in config  # the claim's own dict is left alone


@pytest.mark.parametrize("features", ["-", "—", None])
def test_of_reads_no_feature_model_as_none(features):
    key, rest = EntryKey.of("x", "stated", {"features": features, "part": "a"})
    assert key.features is None and rest == {"features": features}


def test_of_without_part_or_role():
    key, rest = EntryKey.of("x", "stated", {"hidden_constant": 1.0})
    assert (key.part, key.role, key.constant, key.features) == ("", "statement", 1.0, None)
    assert rest == {"hidden_constant": 1.0}
    assert EntryKey.of("x", "stated", {"part": None})[0].part == ""


@pytest.mark.parametrize("pool", ["antipodal", True, 1.0, None])
def test_of_keeps_only_a_drawn_pools_index(pool):
    key, rest = EntryKey.of("x", "stated", {"part": "a", "pool": pool})
    assert key.pool is None and rest["pool"] == pool


def test_of_refuses_a_bad_role():
    with pytest.raises(ValueError):
        EntryKey.of("x", "stated", {"part": "a", "role": "step"})


# --------------------------------------------------------------------------- label, text, grouping


@pytest.mark.parametrize("fields, label", [
    ({}, ""),
    ({"part": "between sets at t1"}, "between sets at t1"),
    ({"pool": 0}, "pool 0"),
    ({"constant": 1.0}, "c = 1"),
    ({"constant": 0.5}, "c = 0.5"),
    ({"part": "Figure 2 configuration, M = 10", "pool": 0}, "Figure 2 configuration, M = 10, pool 0"),
    ({"part": "Algorithm 1 M = 12", "constant": 0.5}, "Algorithm 1 M = 12, c = 0.5"),
    ({"part": "a", "pool": 2, "constant": 0.25}, "a, pool 2, c = 0.25"),
    ({"pool": 1, "constant": 2}, "pool 1, c = 2"),
    # reading, features and role are not part of the label (the text names them)
    ({"part": "a", "reading": "r", "features": "gaussian", "role": "proof step"}, "a"),
])
def test_label_renders_part_then_pool_then_constant(fields, label):
    assert EntryKey("x", **fields).label == label


def test_is_statement_only_for_the_stated_form_and_the_statement_role():
    assert EntryKey("x").is_statement
    assert not EntryKey("x", role="proof step").is_statement
    assert not EntryKey("x", form="corrected").is_statement
    assert not EntryKey("x", form="derived").is_statement


def test_across_constants_groups_only_by_the_constant():
    a1, a2 = EntryKey("x", part="a", constant=1.0), EntryKey("x", part="a", constant=0.5)
    assert a1.across_constants() == a2.across_constants() == EntryKey("x", part="a")
    assert a1.across_constants().constant is None and a1.constant == 1.0  # a new key; the old one is unchanged
    others = [EntryKey("x", part="b", constant=1.0), EntryKey("x", part="a", pool=1, constant=1.0),
              EntryKey("x", part="a", role="proof step", constant=1.0), EntryKey("y", part="a", constant=1.0),
              EntryKey("x", form="derived", part="a", constant=1.0), EntryKey("x", part="a", reading="r", constant=1.0),
              EntryKey("x", part="a", features="gaussian", constant=1.0)]
    assert all(o.across_constants() != a1.across_constants() for o in others)
    assert len({o.across_constants() for o in others}) == len(others)


def test_text_tells_apart_keys_that_differ_only_in_role_reading_or_features():
    base = EntryKey("lemma7", part="sign", pool=0, constant=1.0)
    variants = [base, EntryKey("lemma7", part="sign", pool=0, constant=1.0, role="proof step"),
                EntryKey("lemma7", part="sign", pool=0, constant=1.0, reading="every round"),
                EntryKey("lemma7", part="sign", pool=0, constant=1.0, reading="1 - o(1)"),
                EntryKey("lemma7", part="sign", pool=0, constant=1.0, features="gaussian"),
                EntryKey("lemma7", part="sign", pool=0, constant=1.0, features="definition1")]
    assert len({v.label for v in variants}) == 1  # one label ...
    assert len({v.text for v in variants}) == len(variants)  # ... but each its own text
    assert base.text.startswith("lemma7 [stated]") and base.label in base.text
    assert "proof step" in variants[1].text and "every round" in variants[2].text and "gaussian" in variants[4].text
    assert EntryKey("b").text == "b [stated]"
    assert EntryKey("b", form="derived").text != EntryKey("b").text


def test_json_round_trip():
    keys = [EntryKey("x"),
            EntryKey("thm1.forgetting_early", form="corrected", part="Figure 2 configuration, M = 10",
                     role="proof step", reading="given the routing", features="gaussian", pool=3, constant=0.5)]
    for key in keys:
        data = key.to_json()
        assert list(data) == ["claim", "form", "part", "role", "reading", "features", "pool", "constant"]
        assert EntryKey.from_json(json.loads(json.dumps(data))) == key
    assert keys[1].to_json()["pool"] == 3 and keys[1].to_json()["constant"] == 0.5


def test_from_json_validates():
    with pytest.raises(ValueError):
        EntryKey.from_json({**EntryKey("x").to_json(), "role": "lemma"})


# --------------------------------------------------------------------------- schema 1 and 2


def _legacy(part, claim="x", **config):
    return legacy_key({"id": claim, "form": "stated", "config": {"part": part, **config}})


def test_legacy_constant_after_a_comma():
    key = _legacy("between sets at t1, c = 0.5", hidden_constant=0.5)
    assert (key.part, key.constant, key.pool, key.role) == ("between sets at t1", 0.5, None, "statement")
    assert key.label == "between sets at t1, c = 0.5"


def test_legacy_constant_after_a_space():
    key = _legacy("Algorithm 1 M = 12 c = 0.5", hidden_constant=0.5)
    assert (key.part, key.constant) == ("Algorithm 1 M = 12", 0.5)
    assert _legacy("M = 6 c = 1", hidden_constant=1.0).part == "M = 6"
    assert _legacy("measured c = 1", hidden_constant=1.0).part == "measured"


def test_legacy_constant_alone():
    key = _legacy("c = 1", hidden_constant=1.0)
    assert (key.part, key.constant, key.label) == ("", 1.0, "c = 1")


def test_legacy_constant_kept_without_a_hidden_constant():
    key = _legacy("a, c = 0.5")
    assert (key.part, key.constant) == ("a, c = 0.5", None)


def test_legacy_pool_alone():
    key = _legacy("pool 1", pool=1)
    assert (key.part, key.pool, key.label) == ("", 1, "pool 1")


def test_legacy_pool_after_a_part():
    key = _legacy("Figure 2 configuration, M = 10, pool 0", pool=0)
    assert (key.part, key.pool) == ("Figure 2 configuration, M = 10", 0)


def test_legacy_pool_kept_when_the_entrys_pool_differs():
    key = _legacy("X, pool 1", pool=2)
    assert (key.part, key.pool) == ("X, pool 1", 2)


def test_legacy_pool_then_constant():
    key = _legacy("X, pool 0, c = 1", pool=0, hidden_constant=1.0)
    assert (key.part, key.pool, key.constant) == ("X", 0, 1.0)


def test_legacy_named_pool_is_configuration():
    part = "sign w.p. 1 - o(1): every signal (sigma_t = sigma0 / 4), constructed pool"
    key = _legacy(part, pool="antipodal")
    assert (key.part, key.pool) == (part, None)


@pytest.mark.parametrize("part", ["proof: foo", "Proof of step 2", "proof.identity", "a proof step (35)",
                                  "gap, proof step"])
def test_legacy_proof_step_by_label(part):
    assert _legacy(part).role == "proof step"


def test_legacy_proof_step_by_claim_id():
    key = _legacy("exact grid", claim="lemma11.step3")
    assert (key.claim, key.part, key.role) == ("lemma11.step3", "exact grid", "proof step")


@pytest.mark.parametrize("part", ["statement.O", "a proof", "between sets at t1"])
def test_legacy_statement_otherwise(part):
    assert _legacy(part).role == "statement"


def test_legacy_reads_the_other_fields_from_the_configuration():
    key = legacy_key({"id": "lemma10", "form": "derived",
                      "config": {"part": "p", "features": "gaussian", "reading": "uniform", "seed": 0}})
    assert (key.claim, key.form, key.part, key.features, key.reading) == ("lemma10", "derived", "p", "gaussian",
                                                                          "uniform")
    assert legacy_key({"id": "x", "form": "stated", "config": {"features": "-"}}) == EntryKey("x")


# --------------------------------------------------------------------------- records carrying keys


def test_a_result_takes_its_key_from_its_configuration():
    res = exact_result("lemma4", "-", "bound", "proof.aux_gradient", "refuted", "e", "f", form="corrected",
                       role="proof step", pool=0, hidden_constant=0.5)
    assert res.key == EntryKey("lemma4", form="corrected", part="proof.aux_gradient", role="proof step", pool=0,
                               constant=0.5)
    assert "part" not in res.config and "role" not in res.config
    assert res.config["pool"] == 0 and res.config["hidden_constant"] == 0.5
    assert "role" not in exact_result("x", "-", "bound", "a", "confirmed", "e", "f").config


def test_a_result_refuses_a_key_of_another_entry():
    fields = dict(id="x", source="-", kind="bound", form="stated", verdict="confirmed", expected=None, observed=None,
                  stderr=None, p_value=None, false_fail_rate=None, min_detectable=None, config={}, evidence="e")
    assert ClaimResult(**fields, key=EntryKey("x", part="a").to_json()).key == EntryKey("x", part="a")
    for other in (EntryKey("y"), EntryKey("x", form="derived")):
        with pytest.raises(ValueError):
            ClaimResult(**fields, key=other)


def test_a_slip_holds_entry_keys():
    slip = Slip("x.slip", "-", "false statement", "s", "h", "e", entries=(EntryKey("x", pool=1).to_json(),))
    assert slip.entries == (EntryKey("x", pool=1),)
    with pytest.raises(TypeError):
        Slip("x.slip", "-", "false statement", "s", "h", "e", entries=("x",))


def test_a_stated_entry_labelled_derived_stays_out_of_the_statement_under_the_mapping():
    """Schema 2's headline kept a stated entry whose label began with "derived" out of the statement's
    verdict; the mapping gives it the role that does the same. A derived-form entry keeps the statement role
    (its form already keeps it out)."""
    stated = legacy_key({"id": "thm2.generalization", "form": "stated", "config": {"part": "derived bound check"}})
    derived = legacy_key({"id": "lemma10", "form": "derived", "config": {"part": "derived.tanh"}})
    assert stated.role == "proof step" and not stated.is_statement
    assert derived.role == "statement" and not derived.is_statement
