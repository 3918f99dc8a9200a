"""The records of checks/model.py refuse, where they are built, a value outside results.json's closed sets:
a slip's class, an entry's verdict and form (the schema's enums, compared with these constants by
tests/reports/test_reports.py), so that no claim can make a run write a file the reader refuses."""

import re

import pytest

from moecl_verify.checks.model import FORMS, SLIP_CLASSES, VERDICTS, ClaimResult, Slip, exact_result


def _slip(slip_class: str) -> Slip:
    return Slip(id="lemma2.statement", location="Lemma 2", slip_class=slip_class, stated="s", holds="h", evidence="e")


def test_a_slip_of_every_class_is_built():
    assert [_slip(c).slip_class for c in SLIP_CLASSES] == list(SLIP_CLASSES)


@pytest.mark.parametrize("slip_class", ["wrong constant", "False statement", "", "typo"])
def test_a_slip_of_another_class_is_refused_naming_the_slip_the_field_and_the_classes(slip_class):
    with pytest.raises(ValueError) as raised:
        _slip(slip_class)
    message = str(raised.value)
    assert message.startswith(f"slip lemma2.statement: slip_class {slip_class!r} is not one of ")
    assert message.endswith(", ".join(SLIP_CLASSES))


def test_an_entry_of_every_verdict_and_form_is_built():
    built = {(exact_result("lemma2", "Lemma 2", "bound", "the constant", v, "e", "x", form=f).verdict, f)
             for v in VERDICTS for f in FORMS}
    assert built == {(v, f) for v in VERDICTS for f in FORMS}


def test_an_entry_of_another_verdict_or_form_is_refused_naming_the_entry_the_field_and_the_values():
    with pytest.raises(ValueError, match=re.escape("entry lemma2 [stated]: verdict 'maybe' is not one of "
                                                   + ", ".join(VERDICTS))):
        exact_result("lemma2", "Lemma 2", "bound", "the constant", "maybe", "e", "x")
    with pytest.raises(ValueError, match=re.escape("entry lemma2: form 'restated' is not one of " + ", ".join(FORMS))):
        exact_result("lemma2", "Lemma 2", "bound", "the constant", "refuted", "e", "x", form="restated")
    # and built directly, with a key the reader would otherwise accept
    entry = exact_result("lemma2", "Lemma 2", "bound", "the constant", "refuted", "e", "x")
    fields = {name: getattr(entry, name) for name in ClaimResult.__dataclass_fields__}
    with pytest.raises(ValueError, match="entry lemma2: form 'Stated' is not one of"):
        ClaimResult(**{**fields, "form": "Stated"})
