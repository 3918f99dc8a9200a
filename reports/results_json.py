"""results.json: the contract between checks and reports, and with automation.

Byte-for-byte deterministic for the same command and seed: no timestamps or
timings (those go to run-info.json), fixed key order, ``repr`` floats.
"""

from __future__ import annotations

import json
from pathlib import Path

from moecl_verify.checks.model import ClaimResult, Interpretation, RunResult, Slip, to_jsonable

# 2: every entry names the kind of evidence that decided it (evidence_type); 1 lacks it.
SCHEMA_VERSION = 2
READABLE_SCHEMAS = (1, 2)


def as_document(run: RunResult) -> dict:
    return {
        "tool": "moecl-verify",
        "schema_version": SCHEMA_VERSION,
        "paper": "Theory on Mixture-of-Experts in Continual Learning",
        "meta": to_jsonable(run.meta),
        "summary": run.counts(),
        "claims": to_jsonable(list(run.claims)),
        "results": to_jsonable(list(run.results)),
        "slips": to_jsonable(list(run.slips)),
        "interpretations": to_jsonable(list(run.interpretations)),
        "artifacts": to_jsonable(run.artifacts),
    }


def dumps(run: RunResult) -> str:
    return json.dumps(as_document(run), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write(run: RunResult, path: Path) -> Path:
    path.write_text(dumps(run), encoding="utf-8")
    return path


def load(path: Path) -> RunResult:
    """Read a results.json back, so reports can be re-rendered without recomputing."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if doc.get("tool") != "moecl-verify" or doc.get("schema_version") not in READABLE_SCHEMAS:
        raise ValueError(f"{path}: not a moecl-verify results file of schema {', '.join(map(str, READABLE_SCHEMAS))}")
    results = tuple(ClaimResult(**entry) for entry in doc["results"])
    slips = tuple(
        Slip(
            id=s["id"],
            location=s["location"],
            slip_class=s["class"],
            stated=s["stated"],
            holds=s["holds"],
            evidence=s["evidence"],
        )
        for s in doc["slips"]
    )
    interpretations = tuple(Interpretation(**i) for i in doc["interpretations"])
    return RunResult(results, slips, interpretations, doc["meta"], tuple(doc["claims"]), doc.get("artifacts", {}))
