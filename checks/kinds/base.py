"""What every kind of evidence is: the protocol the decision module and the renderers rely on.

An evidence kind is a frozen dataclass that a claim's ``measure`` returns, before any verdict. It knows

* ``p_value``: its p-value against its claim (small = evidence that the claim fails); the run's Holm
  family is built from these (:mod:`moecl_verify.checks.decide`);
* ``decide(threshold, rejected)``: the results entry once Holm has said whether its null is rejected at
  the threshold it faced: ``refuted`` if rejected; ``confirmed`` only if the run could have detected a
  discrepancy of the entry's resolution at that threshold; ``inconclusive`` otherwise;
* ``detectable(threshold)``: the smallest discrepancy the run resolves at that threshold, in the kind's
  own units (recorded as the entry's ``min_detectable``);
* ``describe``: its evidence sentence (inside ``decide``);
* ``TAG`` (the entry's ``evidence_type``) and, in its module, ``RECORDS`` (the dataclasses the results
  cache stores, by tag) and ``TABLES`` (the report's table of entries of that kind).

A kind is one module of :mod:`moecl_verify.checks.kinds`, registered in its ``__init__``.
"""

from __future__ import annotations

import re

from dataclasses import dataclass
from typing import Callable, ClassVar, Mapping, Protocol, runtime_checkable

from moecl_verify.checks.model import ClaimResult


@runtime_checkable
class Evidence(Protocol):
    """What the decision module needs of a kind of evidence."""

    TAG: ClassVar[str]
    claim_id: str

    @property
    def p_value(self) -> float: ...

    def detectable(self, threshold: float) -> float: ...

    def decide(self, threshold: float, rejected: bool) -> ClaimResult: ...


@dataclass(frozen=True)
class Judgement:
    """An entry's verdict at its threshold, the reason in words, and what the run resolves."""

    verdict: str
    reason: str
    min_detectable: float | None


def measured_sentence(res: ClaimResult, symbols: Mapping[str, str] | None = None) -> str:
    """The decisive number of an entry of any kind, from the fields every entry has: what was measured against
    what the statement gives (the sentence of a kind that says nothing more, or of one not installed)."""
    return f"measured {number(res.observed, 3)} ± {number(res.stderr, 2)} against the formula's {number(res.expected, 3)}"


@dataclass(frozen=True)
class Table:
    """How the report shows the entries of one kind: a title, the columns after the common ones (claim,
    form, features / part, verdict) and before the common ones (p, false-fail rate), the name of the
    resolution column, the cells of those columns for one entry, and ``decisive(entry, symbols)``, the entry's
    decisive number in words for the report's main body (``symbols`` maps a swept parameter's name to the
    pack's symbol for it)."""

    title: str
    columns: tuple[str, ...]
    resolution: str
    cells: Callable[[ClaimResult], tuple[str, ...]]
    decisive: Callable[[ClaimResult, Mapping[str, str]], str] = measured_sentence
    # The family of figures the report draws the kind's entries in: "estimates" (estimates against a formula),
    # "margin" (a criterion's margins per case), "probability" (counts against the swept parameter), "scaling"
    # (a fitted exponent over the swept parameter's window, recorded as ``<name>_range``); "" none.
    figure: str = ""


def number(x, digits: int = 4) -> str:
    """A number as the report prints it (— for missing, 0 for zero, ``digits`` significant digits)."""
    if x is None:
        return "—"
    if x == 0:
        return "0"
    return f"{x:.{digits}g}"


def p_text(p) -> str:
    """A p-value as the reports print it."""
    if p is None:
        return "—"
    return "< 1e-300" if p == 0 else f"{p:.2g}"


# What markdown must leave as written inside prose: code spans, math, link destinations.
_KEEP = re.compile(r"(`[^`]*`|\$\$.+?\$\$|\$[^$\n]+?\$|\]\([^)\s]*\))")


def plain(text: str) -> str:
    """Prose from a results file with its ``*`` and ``_`` taken literally: claims write ASCII mathematics
    (``sqrt(2)*sqrt(eta)``, ``||X||_inf``) that markdown would otherwise turn into emphasis.  Code spans,
    ``$...$`` math and link destinations are left as they are (an escape there would reach the formula or the
    anchor)."""
    parts = _KEEP.split(text)
    return "".join(part if i % 2 else re.sub(r"([*_])", r"\\\1", part) for i, part in enumerate(parts))


def cell(text: str) -> str:
    """Text safe inside a markdown table cell (and its ASCII mathematics kept literal, :func:`plain`)."""
    return plain(text).replace("|", "\\|").replace("\n", " ")


def result_of(item, judgement: Judgement, threshold: float) -> ClaimResult:
    """The results entry of a kind whose rule gives a :class:`Judgement` (its numbers, its configuration with
    the kind's own report fields, its evidence sentence)."""
    return ClaimResult(
        id=item.claim_id, source=item.source, kind=item.kind, form=item.form, verdict=judgement.verdict,
        expected=item.expected, observed=item.observed, stderr=item.stderr, p_value=item.p_value,
        false_fail_rate=threshold, min_detectable=judgement.min_detectable,
        config={**item.config, **item.report_config()}, evidence=item.describe(judgement), formula=item.formula,
        difference=item.difference, evidence_type=item.TAG,
    )
