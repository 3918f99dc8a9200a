"""Claims are registered explicitly, by the module that declares them (no frame inspection): the module named
in the call decides the pack a claim belongs to, and a wrong call fails at once with the reason."""

import sys
import types

import pytest

from moecl_verify.checks import registry
from moecl_verify.checks.registry import Claim, register


def _claim(claim_id="reg.test"):
    return Claim(id=claim_id, source="-", kind="bound", statement="", preconditions=(), measure=lambda ctx: [])


@pytest.fixture
def clean_registry(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "_ORIGINS", {})
    for name in ("some_pack.claims.one", "other_pack.claims.one"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    return registry._REGISTRY


def test_a_claim_belongs_to_the_module_the_call_names(clean_registry):
    claim = _claim()
    assert register("some_pack.claims.one", claim) is claim
    assert clean_registry == {("some_pack.claims.one", "reg.test"): claim}
    # The same id from another module is another pack's claim, not a clash.
    other = _claim()
    register("other_pack.claims.one", other)
    assert clean_registry[("other_pack.claims.one", "reg.test")] is other
    register("some_pack.claims.one", claim)  # registering the same object again is harmless
    with pytest.raises(ValueError, match="registered twice"):
        register("some_pack.claims.one", _claim())


def test_a_module_imported_anew_replaces_all_its_claims(clean_registry, monkeypatch):
    register("some_pack.claims.one", _claim("reg.kept"))
    register("some_pack.claims.one", _claim("reg.dropped"))
    monkeypatch.setitem(sys.modules, "some_pack.claims.one", types.ModuleType("some_pack.claims.one"))  # a re-import
    fresh = _claim("reg.kept")
    register("some_pack.claims.one", fresh)  # the new module registers one of the two ids, anew
    assert clean_registry == {("some_pack.claims.one", "reg.kept"): fresh}


def test_a_name_that_is_no_loaded_module_is_refused(clean_registry):
    with pytest.raises(TypeError, match="no module named 'some_pack.claims.on' is loaded"):
        register("some_pack.claims.on", _claim())  # a typo would register a claim no pack finds
    assert clean_registry == {}


@pytest.mark.parametrize("args, message", [
    ((_claim(),), "missing"),  # the old one-argument form
    (("", _claim()), "module must be"),
    ((None, _claim()), "module must be"),
    (("some_pack.claims.one", "not a claim"), "claim must be a Claim"),
])
def test_a_wrong_call_fails_at_once_with_the_reason(clean_registry, args, message):
    with pytest.raises(TypeError, match=message):
        register(*args)
    assert clean_registry == {}


def test_every_shipped_claim_is_keyed_by_a_module_of_its_packs_claims_package():
    for pack_name in ("moe-cl", "moe-chapter"):
        claims = registry.all_claims(pack_name)
        modules = set(registry.claim_modules(pack_name))
        keyed = {claim_id: module for (module, claim_id), c in registry._REGISTRY.items() if c in claims}
        assert len(claims) > 5 and set(keyed.values()) <= modules
