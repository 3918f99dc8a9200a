"""results.junit.xml: the verdicts as a JUnit test report, for CI dashboards.

One ``<testsuite name="moecl-verify">``; one ``<testcase>`` per results entry,
named ``<claim id>[<form>/<features>]``.  ``refuted`` is a failure,
``inconclusive`` and ``not_checkable`` are skipped, ``confirmed`` passes.
Deterministic: no timestamps, every ``time`` is "0".  Reads results; computes
nothing.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from moecl_verify.checks.kinds.base import number, p_text
from moecl_verify.checks.model import ClaimResult, RunResult

SUITE = "moecl-verify"


def case_name(res: ClaimResult) -> str:
    from moecl_verify.checks.api import entry_key

    return f"{res.id}[{entry_key(res)}]"


def _message(res: ClaimResult) -> str:
    if res.verdict == "refuted":
        if res.false_fail_rate is None:  # symbolic: decided exactly, no sampling error
            return "refuted symbolically (exact)"
        return f"refuted at false-fail rate {res.false_fail_rate:.2g} (p = {p_text(res.p_value)})"
    if res.verdict == "inconclusive":
        return "inconclusive: no disagreement found, but the run was too small to exclude one"
    return "not checkable as written"


def build(run: RunResult) -> ET.Element:
    counts = run.counts()
    suite = ET.Element(
        "testsuite",
        {
            "name": SUITE,
            "tests": str(len(run.results)),
            "failures": str(counts["refuted"]),
            "errors": "0",
            "skipped": str(counts["inconclusive"] + counts["not_checkable"]),
            "time": "0",
        },
    )
    props = ET.SubElement(suite, "properties")
    for key in ("budget", "seed", "replicates", "family_false_fail_rate"):
        if key in run.meta:
            ET.SubElement(props, "property", {"name": key, "value": str(run.meta[key])})
    for res in run.results:
        case = ET.SubElement(suite, "testcase", {"classname": res.id, "name": case_name(res), "time": "0"})
        if res.verdict == "refuted":
            node = ET.SubElement(case, "failure", {"message": _message(res), "type": "refuted"})
            node.text = res.evidence
        elif res.verdict in ("inconclusive", "not_checkable"):
            node = ET.SubElement(case, "skipped", {"message": f"{_message(res)}. {res.evidence}"})
        system_out = ET.SubElement(case, "system-out")
        system_out.text = res.evidence
    return suite


def render(run: RunResult) -> str:
    suite = build(run)
    ET.indent(suite, space="  ")
    body = ET.tostring(suite, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def write(run: RunResult, path: Path) -> Path:
    Path(path).write_text(render(run), encoding="utf-8")
    return Path(path)
