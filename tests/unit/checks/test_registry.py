"""Claims are registered explicitly, by the module that declares them (no frame inspection): the module named
in the call decides the pack a claim belongs to, and a wrong call fails at once with the reason."""

import pytest

from moecl_verify.checks import registry
from moecl_verify.checks.registry import Claim, register


def _claim(claim_id="reg.test"):
    return Claim(id=claim_id, source="-", kind="bound", statement="", preconditions=(), measure=lambda ctx: [])


@pytest.fixture
def clean_registry(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", {})
    return registry._REGISTRY


def test_a_claim_belongs_to_the_module_the_call_names(clean_registry):
    claim = _claim()
    assert register("some_pack.claims.one", claim) is claim
    assert clean_registry == {("some_pack.claims.one", "reg.test"): claim}
    # The same id from another module is another pack's claim, not a clash.
    other = _claim()
    register("other_pack.claims.one", other)
    assert clean_registry[("other_pack.claims.one", "reg.test")] is other
    register("some_pack.claims.one", claim)  # registering the same object again (a re-import) is harmless
    with pytest.raises(ValueError, match="registered twice"):
        register("some_pack.claims.one", _claim())


@pytest.mark.parametrize("args, message", [
    ((_claim(),), "missing"),  # the old one-argument form
    (("", _claim()), "module must be"),
    ((None, _claim()), "module must be"),
    (("pack.claims.x", "not a claim"), "claim must be a Claim"),
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
