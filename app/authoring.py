"""Writing a pack: the one module a pack's author imports from.

Everything a claims module needs, typed and keyword-only, and checked when it is built, so that a misspelt
kind, a verdict that does not exist or a shared-work name a claim never declared fails where it is written,
in one line, not minutes into a run:

* closed sets as enums: :class:`Verdict`, :class:`Form`, :class:`Role`, :class:`ClaimKind`,
  :class:`SlipClass`, :class:`Strength` (each member is also the plain string the results file stores);
* :func:`claim` (a claim, ready for :func:`register`), :func:`exact` (an entry decided without sampling),
  :func:`slip` (a finding for the slip audit);
* :class:`Shared`, a typed handle on work several claims share: a claim lists its handles, and fetching
  through a handle is what the claim declared (no string to match by hand);
* the evidence a claim returns for the run to decide, re-exported from the machinery:
  :class:`Measurement` with :class:`HorizonTest` and :func:`mean_test` (means at horizons, or a criterion's
  margins), :class:`ProportionEvidence` with :class:`ProportionRow`, :class:`ScalingEvidence`; and
  :func:`register_kind` for a kind of evidence of the pack's own;
* the pack's declaration, :class:`Pack` and :class:`HeadlineItem`, and :func:`generator_for`, the only source
  of randomness a claim should use.

How a sampled entry is decided, in general terms: the run collects every sampled entry's p-value (small:
evidence that the statement fails) into one family and decides them together under Holm's procedure at the
run's family-wise false-fail rate.  An entry Holm rejects is *refuted*.  One it does not reject is *confirmed*
only if the run could have refuted it: the smallest discrepancy the entry resolves at the threshold it faced
(its standard error times the normal quantiles of that threshold and of the run's power) must be within the
entry's *resolution*, the discrepancy that would matter for the statement.  For a :class:`Measurement` that is
``resolution`` times ``scale``: ``scale`` the natural size of the quantity compared, ``resolution`` a share of
it (2% by default).  Otherwise the entry is *inconclusive*, which is an honest answer.  A larger budget shrinks the standard error, so more
entries are decided.

The API reference, generated from these docstrings: docs/authoring-api.txt (a test keeps it in step).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable, Iterable

from moecl_verify.checks.entry_key import FORMS, ROLES, EntryKey
from moecl_verify.checks.kinds import register_kind
from moecl_verify.checks.kinds.mean import HorizonTest, Measurement
from moecl_verify.checks.kinds.proportion import ProportionEvidence, ProportionRow
from moecl_verify.checks.kinds.scaling import ScalingEvidence
from moecl_verify.checks.model import SLIP_CLASSES, STRENGTHS, VERDICTS, ClaimResult, Interpretation, Slip, exact_result
from moecl_verify.checks.pack import HeadlineItem, Pack
from moecl_verify.checks.registry import KINDS, Claim, register
from moecl_verify.checks.stats import mean_test
from moecl_verify.numeric.seeding import generator_for


def _members(values: Iterable[str]) -> dict[str, str]:
    return {value.upper().replace(" ", "_").replace("-", "_"): value for value in values}


# Built from the machinery's own tuples, so that an enum and the set the results file's schema checks are one.
Verdict = Enum("Verdict", _members(VERDICTS), type=str, module=__name__)
Verdict.__doc__ = "An entry's verdict: confirmed, refuted, inconclusive, not_checkable."
Form = Enum("Form", _members(FORMS), type=str, module=__name__)
Form.__doc__ = "Which statement an entry checks: as stated, as corrected, or as derived here."
Role = Enum("Role", _members(ROLES), type=str, module=__name__)
Role.__doc__ = ("What an entry checks: the statement, a step of the document's proof, or the sensitivity of a "
                "result to a setting the document fixes (decided and reported, never a verdict on the statement).")
ClaimKind = Enum("ClaimKind", _members(KINDS), type=str, module=__name__)
ClaimKind.__doc__ = "What kind of statement a claim is (symbolic identity, bound, scaling, probability, ...)."
SlipClass = Enum("SlipClass", _members(SLIP_CLASSES), type=str, module=__name__)
SlipClass.__doc__ = "What kind of error a slip is (notation, false statement, unstated assumption, ...)."
Strength = Enum("Strength", _members(STRENGTHS), type=str, module=__name__)
Strength.__doc__ = ("How sure a finding is: exact, Monte Carlo, holding under a reading of silent or garbled text, "
                    "or possibly a transcription artifact.")


class AuthoringError(ValueError):
    """A claim, entry or slip built with a value outside its closed set, or of the wrong type."""


def _member(enum: type[Enum], value: Any, what: str) -> str:
    try:
        return enum(value).value
    except ValueError:
        choices = ", ".join(repr(m.value) for m in enum)
        raise AuthoringError(f"{what} must be one of {choices}, got {value!r}") from None


def _text(value: Any, what: str, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise AuthoringError(f"{what} must be a {'' if empty else 'non-empty '}string, got {value!r}")
    return value


@dataclass(frozen=True)
class Shared:
    """A handle on work several claims share (a simulation their checks all read), by namespace.

    A claim lists the handles it uses in :func:`claim`'s ``shares``; claims sharing a handle are measured in
    one process when claims run in parallel, and the work is computed once per run and key.  Fetch with
    ``handle.get(ctx, key, compute)``: ``compute()`` runs the first time ``(namespace, *key)`` is asked for."""

    namespace: str

    def __post_init__(self) -> None:
        _text(self.namespace, "a shared namespace")

    def get(self, ctx, key: tuple, compute: Callable[[], Any]) -> Any:
        return ctx.shared((self.namespace, *key), compute)


def claim(*, id: str, source: str, kind: ClaimKind | str, statement: str, measure: Callable[[Any], list],
          preconditions: Iterable[str] = (), summary: str = "", notes: str = "",
          slips: Callable[[list], list] | None = None, interpretations: Iterable[Interpretation] = (),
          forms: Callable[[], list] | None = None, artifacts: Iterable[tuple] = (),
          shares: Iterable[Shared] = ()) -> Claim:
    """A claim of the document: its ``id`` (dotted, lower case), where the document states it (``source``), its
    ``kind``, the ``statement`` as the document prints it (LaTeX), and ``measure(ctx)``, which returns its entries
    (evidence for the run to decide, and :func:`exact` entries).  ``slips(results)`` turns the decided entries
    into findings; ``shares`` are the :class:`Shared` handles its measure fetches through.  Register it with
    ``register(__name__, claim(...))`` at the module's top level."""
    _text(id, "a claim's id")
    if not callable(measure):
        raise AuthoringError(f"claim {id}: measure must be a function of the run's context, got {measure!r}")
    if slips is not None and not callable(slips):
        raise AuthoringError(f"claim {id}: slips must be a function of the decided entries, got {slips!r}")
    handles = tuple(shares)
    for handle in handles:
        if not isinstance(handle, Shared):
            raise AuthoringError(f"claim {id}: shares must be Shared handles, got {handle!r}")
    return Claim(id=id, source=_text(source, f"claim {id}: source"), kind=_member(ClaimKind, kind, f"claim {id}: kind"),
                 statement=_text(statement, f"claim {id}: statement", empty=True),
                 preconditions=tuple(_text(p, f"claim {id}: a precondition") for p in preconditions),
                 measure=measure, slips=slips, interpretations=tuple(interpretations), summary=summary, notes=notes,
                 forms=forms, artifacts=tuple(artifacts), shares=tuple(h.namespace for h in handles))


def exact(*, claim_id: str, source: str, kind: ClaimKind | str, part: str, verdict: Verdict | str, evidence: str,
          statement: str, form: Form | str = Form.STATED, role: Role | str = Role.STATEMENT, **config) -> ClaimResult:
    """An entry decided without sampling (a sympy identity, rational arithmetic, an exhaustive search, or a stated
    reason why the text cannot be checked): its ``verdict``, the ``evidence`` in words, the ``statement``
    checked, named within its claim by ``part``; ``config`` holds what the entry records (a counterexample, the
    values it was checked at)."""
    _text(claim_id, "an entry's claim id")
    return exact_result(claim_id, _text(source, f"{claim_id}: source"), _member(ClaimKind, kind, f"{claim_id}: kind"),
                        _text(part, f"{claim_id}: part", empty=True), _member(Verdict, verdict, f"{claim_id}: verdict"),
                        _text(evidence, f"{claim_id}: evidence"), _text(statement, f"{claim_id}: statement", empty=True),
                        form=_member(Form, form, f"{claim_id}: form"), role=_member(Role, role, f"{claim_id}: role"),
                        **config)


def slip(*, id: str, location: str, slip_class: SlipClass | str, stated: str, holds: str, evidence: str,
         entries: Iterable[EntryKey] = (), causes: Iterable[str] = (), effect: str = "", summary: str = "",
         strength: Strength | str | None = None, strength_note: str = "") -> Slip:
    """A finding for the slip audit: where the document says it (``location``), what it ``stated``, what
    ``holds`` instead and the ``evidence``; ``entries`` the keys of the decided entries it rests on (most
    decisive first), ``causes`` the ids of the slips it follows from; ``strength`` only where the finding rests on
    a reading or may be a transcription artifact (else it is derived from the entries)."""
    keys = tuple(entries)
    for key in keys:
        if not isinstance(key, EntryKey):
            raise AuthoringError(f"slip {id}: entries must be entry keys (an entry's .key), got {key!r}")
    return Slip(id=_text(id, "a slip's id"), location=_text(location, f"slip {id}: location"),
                slip_class=_member(SlipClass, slip_class, f"slip {id}: slip_class"),
                stated=_text(stated, f"slip {id}: stated"), holds=_text(holds, f"slip {id}: holds"),
                evidence=_text(evidence, f"slip {id}: evidence"), entries=keys,
                causes=tuple(_text(c, f"slip {id}: a cause") for c in causes), effect=effect, summary=summary,
                strength="" if strength is None else _member(Strength, strength, f"slip {id}: strength"),
                strength_note=strength_note)


def api_reference() -> str:
    """This module's API reference as plain text, generated from its docstrings (docs/authoring-api.txt is this
    text; a test keeps the two in step): the module's description; each of its own functions and classes as the
    standard library's pydoc renders them; each enum with its members; each name it re-exports from the
    machinery with its signature and the first paragraph of its docstring."""
    import inspect
    import pydoc
    import sys

    here = sys.modules[__name__]
    out = ["moecl_verify.authoring", "", inspect.getdoc(here), ""]

    def section(title: str) -> None:
        out.extend(["", title, "=" * len(title), ""])

    def first_paragraph(obj) -> str:
        doc = inspect.getdoc(obj) or ""
        return doc.split("\n\n")[0]

    enums = [n for n in __all__ if isinstance(getattr(here, n), type) and issubclass(getattr(here, n), Enum)]
    own = [n for n in __all__ if n not in enums and getattr(getattr(here, n), "__module__", "") == __name__]
    borrowed = [n for n in __all__ if n not in enums and n not in own]
    section("Closed sets")
    for name in enums:
        enum = getattr(here, name)
        out.append(f"{name}: {enum.__doc__}")
        out.append("    " + ", ".join(f"{m.name} = {m.value!r}" for m in enum))
        out.append("")
    section("Building claims, entries and slips")
    for name in own:
        obj = getattr(here, name)
        if inspect.isclass(obj):  # its own doc and methods (pydoc would list every inherited one)
            out.append(f"class {name}{inspect.signature(obj) if not issubclass(obj, Exception) else ''}")
            out.extend("    " + line for line in (inspect.getdoc(obj) or "").splitlines())
            for method, value in vars(obj).items():
                if not method.startswith("_") and callable(value):
                    out.append(f"    {method}{inspect.signature(value)}")
                    out.extend("        " + line for line in (inspect.getdoc(value) or "").splitlines())
        else:
            out.extend(line.rstrip() for line in pydoc.plaintext.document(obj, name).splitlines())
        out.append("")
    section("From the machinery")
    for name in borrowed:
        obj = getattr(here, name)
        try:
            signature = str(inspect.signature(obj))
        except (TypeError, ValueError):
            signature = ""
        out.append(f"{name}{signature}")
        out.append(f"    from {obj.__module__}")
        out.extend("    " + line for line in first_paragraph(obj).splitlines())
        out.append("")
    return "\n".join(out).rstrip() + "\n"


__all__ = ["AuthoringError", "ClaimKind", "Form", "HeadlineItem", "HorizonTest", "Interpretation", "Measurement",
           "Pack", "ProportionEvidence", "ProportionRow", "Role", "ScalingEvidence", "Shared", "SlipClass",
           "Strength", "Verdict", "claim", "exact", "generator_for", "mean_test", "register", "register_kind", "slip"]
