"""Derived bounds and their uses (checks/derived.py) on hand-made data: a use's verdict follows from its relation
and from whether every step of the bound and of the applicability derivation checks."""

import pytest

from moecl_verify.checks.derived import DerivedBound, Use


def use(relation="contradicts", why=(("window inside", True), ("same quantity", True)), **kw):
    return Use(bound_id=kw.pop("bound_id", "b"), claim_id=kw.pop("claim_id", "demo.a"),
               part=kw.pop("part", "step x"), relation=relation, why=why, **kw)


def bound(*uses, steps=(("a <= b", True),)):
    return DerivedBound(id="b", statement="x <= 1.", assumptions=["x >= 0"], reading="r", steps=steps, uses=uses)


def test_a_use_decides_only_when_every_step_checks():
    assert use("contradicts").verdict == "refuted"
    assert use("implies").verdict == "confirmed"
    assert use("does not apply").verdict == "inconclusive"
    # one unchecked applicability step: the use decides nothing, and its derivation says which step
    weak = use("contradicts", why=(("window inside", True), ("same quantity", False)))
    assert (weak.checked, weak.verdict) == (False, "inconclusive")
    assert weak.derivation() == "(1) window inside; (2) same quantity [NOT CONFIRMED]."
    assert use("contradicts", why=()).checked is False  # no derivation at all is not a checked one


def test_the_bound_must_check_too():
    u = use("contradicts")
    assert bound(u).verdict(u) == "refuted"
    unchecked = bound(u, steps=(("a <= b", True), ("b <= c", False)))
    assert not unchecked.checked and unchecked.verdict(u) == "inconclusive"
    text = bound(u).evidence(u)
    assert text.startswith("Derived bound b (every step checked): x <= 1. Reading: r.")
    assert "(contradicts): (1) window inside; (2) same quantity." in text


def test_uses_are_found_by_claim_and_part_and_must_name_their_bound():
    u, v = use(part="p1"), use(part="p2", relation="implies")
    b = bound(u, v)
    assert b.use("demo.a", "p2") is v and b.assumptions == ("x >= 0",)
    with pytest.raises(KeyError):
        b.use("demo.a", "p3")
    with pytest.raises(ValueError, match="names 'other'"):
        bound(use(bound_id="other"))


@pytest.mark.parametrize("bad", [dict(relation="refutes"), dict(claim_id=""), dict(why=(("", True),))])
def test_malformed_uses_are_refused(bad):
    args = {"relation": "contradicts", "why": (("w", True),), **bad}
    with pytest.raises(ValueError):
        Use(bound_id="b", claim_id=args.get("claim_id", "demo.a"), part="p", relation=args["relation"],
            why=args["why"])
