"""The authoring module: closed sets as enums that are the machinery's own sets, keyword-only constructors that
refuse a wrong value where it is written, shared work through typed handles, and an API reference that is the
text its docstrings generate."""

from pathlib import Path

import pytest

from moecl_verify import authoring as a
from moecl_verify.checks.context import Context, BUDGETS
from moecl_verify.checks.entry_key import FORMS, ROLES
from moecl_verify.checks.model import SLIP_CLASSES, STRENGTHS, VERDICTS
from moecl_verify.checks.registry import KINDS, Claim


def test_the_enums_are_the_machinerys_closed_sets():
    for enum, values in ((a.Verdict, VERDICTS), (a.Form, FORMS), (a.Role, ROLES), (a.ClaimKind, KINDS),
                         (a.SlipClass, SLIP_CLASSES), (a.Strength, STRENGTHS)):
        assert tuple(m.value for m in enum) == tuple(values)
        assert all(m == m.value for m in enum)  # a member is the string the results file stores


def _measure(ctx):
    return [a.exact(claim_id="t.one", source="s", kind=a.ClaimKind.SYMBOLIC_IDENTITY, part="", verdict="confirmed",
                    evidence="sympy: 0 = 0", statement="0 = 0")]


def test_a_claim_built_here_is_the_registrys_claim_with_its_shared_handles():
    work = a.Shared("t.work")
    made = a.claim(id="t.one", source="s", kind="bound", statement=r"x \\le 1", measure=_measure, shares=(work,))
    assert isinstance(made, Claim) and made.kind == "bound" and made.shares == ("t.work",)
    entry = made.measure(None)[0]
    assert entry.verdict == "confirmed" and entry.evidence_type == "exact" and entry.form == "stated"
    ctx = Context(budget=BUDGETS["smoke"], seed=0)
    calls = []
    assert work.get(ctx, (1,), lambda: calls.append(1) or 42) == 42 == work.get(ctx, (1,), lambda: 0)
    assert calls == [1]  # computed once per run and key


@pytest.mark.parametrize("build, message", [
    (lambda: a.claim(id="t.x", source="s", kind="bund", statement="", measure=_measure), "kind must be one of"),
    (lambda: a.claim(id="t.x", source="s", kind="bound", statement="", measure=None), "measure must be a function"),
    (lambda: a.claim(id="t.x", source="s", kind="bound", statement="", measure=_measure, shares=("t.work",)),
     "shares must be Shared handles"),
    (lambda: a.claim(id="", source="s", kind="bound", statement="", measure=_measure), "id must be a non-empty"),
    (lambda: a.exact(claim_id="t.x", source="s", kind="bound", part="", verdict="true", evidence="e", statement=""),
     "verdict must be one of"),
    (lambda: a.exact(claim_id="t.x", source="s", kind="bound", part="", verdict="refuted", evidence="e",
                     statement="", role="lemma"), "role must be one of"),
    (lambda: a.slip(id="t.s", location="l", slip_class="typo", stated="a", holds="b", evidence="c"),
     "slip_class must be one of"),
    (lambda: a.slip(id="t.s", location="l", slip_class="notation", stated="a", holds="b", evidence="c",
                    entries=("t.x",)), "entries must be entry keys"),
])
def test_a_wrong_value_fails_where_it_is_written(build, message):
    with pytest.raises(a.AuthoringError, match=message):
        build()


def test_a_slip_built_here_carries_its_strength_only_when_declared():
    assert a.slip(id="t.s", location="l", slip_class=a.SlipClass.NOTATION, stated="a", holds="b",
                  evidence="c").strength == ""
    assert a.slip(id="t.s", location="l", slip_class="notation", stated="a", holds="b", evidence="c",
                  strength=a.Strength.READING, strength_note="the rule").strength == "reading"


def test_the_published_api_reference_is_what_the_docstrings_generate():
    published = Path(__file__).resolve().parents[2] / "docs" / "authoring-api.txt"
    assert published.read_text(encoding="utf-8") == a.api_reference(), (
        "docs/authoring-api.txt is stale: regenerate it with python -c \"from moecl_verify import authoring; "
        "open('docs/authoring-api.txt', 'w').write(authoring.api_reference())\"")
    text = a.api_reference()
    for name in a.__all__:
        assert name in text
