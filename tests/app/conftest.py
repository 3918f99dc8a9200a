"""Small, valid results.json documents built from the records of checks/model.py, for the tests of the commands
that read one back (``report --from``, ``list --from``, ``diff``): no run, and no file outside the repository."""

from __future__ import annotations

import pytest

from moecl_verify.checks.model import ClaimResult, Interpretation, RunResult, Slip, exact_result
from moecl_verify.reports.results_json import as_document

META = {"claims": ["lemma2", "prop4.forgetting"], "budget": "smoke", "replicates": 10, "seed": 0,
        "family_false_fail_rate": 0.001, "power": 0.9, "versions": {"python": "3", "numpy": "2"},
        "simulation": "a test"}
CLAIMS = tuple({"id": cid, "source": "Appendix B", "kind": kind, "summary": "s", "notes": "", "statement": "x",
                "preconditions": ["M >= 2"]} for cid, kind in (("lemma2", "bound"), ("prop4.forgetting",
                                                                                       "expected-value identity")))


def entry(**fields) -> ClaimResult:
    """A confirmed mean entry of lemma2, with ``fields`` replaced."""
    base = dict(id="lemma2", source="Appendix B, Lemma 2", kind="bound", form="stated", verdict="confirmed",
                expected=1.0, observed=0.98, stderr=0.05, p_value=0.6, false_fail_rate=1e-3, min_detectable=0.1,
                config={}, evidence="agrees", horizons=[], formula="E[F_t] = 1/t", difference="",
                evidence_type="mean")
    return ClaimResult(**{**base, **fields})


def document(*entries: dict, meta: dict | None = None) -> dict:
    """A results.json document holding one entry per dict of ClaimResult fields (over :func:`entry`)."""
    return as_document(RunResult(tuple(entry(**e) for e in entries), (), (), dict(META if meta is None else meta),
                                 CLAIMS))


def _tiny_run() -> RunResult:
    rows = [{"t": t, "expected": 1 / t, "observed": 1 / t + 0.01, "stderr": 0.02, "z": 0.5, "p_value": 0.6,
             "min_detectable": 0.05} for t in (2, 4)]
    results = (
        entry(id="prop4.forgetting", kind="expected-value identity", config={"features": "gaussian", "t": 4,
                                                                             "decisive_horizon": 4}, horizons=rows),
        entry(form="derived", verdict="refuted", p_value=1e-9, evidence_type="criterion",
              config={"features": "definition1", "pool": 0},
              horizons=[{"case": "pool 0, t=2", "expected": 0.0, "observed": -0.3, "stderr": 0.05, "rhs": 1.5,
                         "measured": 1.8, "measured_stderr": 0.1}]),
        entry(form="corrected", verdict="inconclusive", expected=0.75, observed=0.7, evidence_type="proportion",
              config={"part": "P(gap <= C sigma0^1.5)", "trend": [{"sigma0": 0.05, "successes": 75, "trials": 100,
                                                                    "probability": 0.75, "low": 0.6, "high": 0.8}]}),
        entry(verdict="confirmed", expected=1.5, observed=1.49, evidence_type="scaling",
              config={"hidden_constant": 1.0, "sigma0": [0.05, 0.025], "exponent_interval": [1.4, 1.6],
                      "means": [{"sigma0": 0.05, "mean_gap": 0.01}, {"sigma0": 0.025, "mean_gap": None}]}),
        exact_result("lemma2", "Appendix B, Lemma 2", "symbolic identity", "the sharp constant", "refuted",
                     "sympy: 2/λ, not λ/M²", "||p - p'|| <= (2/λ) ||h - h'||"),
    )
    slips = (Slip("lemma2.statement", "Appendix B, Lemma 2", "wrong constant or exponent", "λ/M²", "2/λ",
                  "a counterexample at M = 2"),)
    interpretations = (Interpretation("lemma2.indicator", "proof of Lemma 2", "printed twice", "one each"),)
    return RunResult(results, slips, interpretations, dict(META), CLAIMS, {"demo": {"values": [1.5, None, 2]}})


@pytest.fixture(scope="session")
def results_document():
    """``results_document(*entries, meta=None)``: a valid results.json document (see :func:`document`)."""
    return document


@pytest.fixture(scope="session")
def tiny_run() -> RunResult:
    """A run with one entry of every evidence type (mean, criterion, proportion, scaling, exact), every form and
    verdict but not_checkable, a slip and an interpretation: what results.json can hold, in five entries."""
    return _tiny_run()


def _snapshot(folder) -> dict:
    """Every file below ``folder``: relative path -> (size, SHA-256, modification time), to show that a refused
    command touched nothing."""
    import hashlib
    from pathlib import Path

    root = Path(folder)
    return {str(p.relative_to(root)): (p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def _one_line_error(err: str, *names: str) -> bool:
    """``err`` is one line, the tool's error, without a traceback, naming each of ``names``."""
    return (err.count("\n") == 1 and err.startswith("moecl-verify: error:") and "Traceback" not in err
            and all(name in err for name in names))


@pytest.fixture(scope="session")
def snapshot():
    """``snapshot(folder)``: every file below it with its size, hash and modification time."""
    return _snapshot


@pytest.fixture(scope="session")
def one_line_error():
    """``one_line_error(err, *names)``: the tool's one-line error, no traceback, naming each name."""
    return _one_line_error
