"""A pack's declaration is checked when it is built, so when the pack loads: every field against what it must
hold, a mistyped one failing at once in one line that names it."""

from dataclasses import fields

import pytest

from moecl_verify.checks import pack as packs
from moecl_verify.checks.pack import HeadlineItem, Pack

BASE = dict(name="my-pack", title="A title", source="a source", claims="my_pack.claims")


def test_every_field_of_a_pack_has_a_declared_specification():
    assert {f.name for f in fields(Pack)} == set(packs._FIELD_SPECS)


def test_the_shipped_packs_pass_their_checks():
    for name in ("moe-cl", "moe-chapter"):
        assert packs.get(name).name == name


@pytest.mark.parametrize("field, value, expected", [
    ("title", 3, "title must be a string"),
    ("order", ["single", "router"], "order must be a tuple of claim-id groups"),
    ("headline", ("not an item",), "headline must be a tuple of HeadlineItem"),
    ("chain", "lemmas", "chain must be a HeadlineItem or None"),
    ("budgets", [("smoke", 1)], "budgets must be a mapping"),
    ("figures", "fig.png", "figures must be a function of the run"),
    ("requests", lambda: [], "requests must be a function of the run"),  # takes no run
    ("derived_bounds", lambda run: (), "derived_bounds must be a function of no arguments"),
    ("answer_facts", {"open.x": "not a function"}, "answer_facts must be a mapping of claim ids to functions"),
    ("bottom_line_causes", -1, "bottom_line_causes must be an integer >= 0"),
    ("default", "yes", "default must be True or False"),
])
def test_a_mistyped_field_fails_when_the_pack_is_built(field, value, expected):
    with pytest.raises(ValueError, match=expected) as caught:
        Pack(**{**BASE, field: value})
    assert str(caught.value).startswith("pack 'my-pack': ") and "\n" not in str(caught.value)


def test_a_well_typed_declaration_is_accepted():
    item = HeadlineItem("x", "X", "states x", ("x",), "document")
    made = Pack(**BASE, order=("x",), headline=(item,), chain=item, figures=lambda run: [],
                requests=lambda run: [], derived_bounds=lambda: (), budgets={"smoke": 1, "standard": 2, "full": 3})
    assert made.chain is item
