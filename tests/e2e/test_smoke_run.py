"""One end-to-end run of every registered claim at the smoke budget, as a user or CI would start it.

Asserts what must hold of any honest run: every claim produced entries, the summary, the JUnit file and
the entries agree, the exact refutations (decided by rational arithmetic or sympy, so independent of the
seed) are there, and an identical rerun reuses the finished claims and writes byte-identical results.
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from moecl_verify.checks.registry import all_claims

pytestmark = pytest.mark.slow

# (claim id, part): entries decided exactly, each with a counterexample the tool derives itself.
EXACT_REFUTATIONS = [
    ("lemma2", "statement"),                          # the bound scales the wrong way in lambda
    ("lemma4", "proof.aux_gradient"),                 # factor t where 1/t follows
    ("lemma10", "statement.Omega"),
    ("lemma11.step3", "exact grid"),                  # the proof's inequality reversed
    ("lemma12", "statement.M>N exact"),
    ("thm1.forgetting_early", "conditional on the routing"),
    ("thm1.m1_specialization", "eq19 -> eq17 as printed"),
]


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "moecl_verify", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=900)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("e2e")
    cache = root / "cache"
    args = ["run", "--budget", "smoke", "--seed", "0", "--format", "json,junit", "--quiet", "--cache-dir", str(cache)]
    first = _cli(*args, "--out", str(root / "first"), cwd=root)
    second = _cli(*args, "--out", str(root / "second"), cwd=root)
    return root, first, second


def test_every_claim_has_entries_and_the_outputs_agree(runs):
    root, first, _ = runs
    assert first.returncode == 0, first.stderr
    data = json.loads((root / "first" / "results.json").read_text())
    ids = {c.id for c in all_claims()}
    assert {e["id"] for e in data["results"]} == ids == set(data["meta"]["claims"])
    counts = {v: sum(e["verdict"] == v for e in data["results"]) for v in data["summary"]}
    assert counts == data["summary"]
    suite = ET.parse(root / "first" / "results.junit.xml").getroot()
    cases = suite.iter("testcase")
    failed = sum(1 for case in cases if case.find("failure") is not None)
    assert failed == counts["refuted"]
    # Every Monte Carlo entry that went through the run-wide correction names the threshold it faced.
    assert all(0 < e["false_fail_rate"] <= data["meta"]["family_false_fail_rate"]
               for e in data["results"] if e["p_value"] is not None and e["false_fail_rate"] is not None)


def test_exact_refutations_do_not_depend_on_sampling(runs):
    root, _, _ = runs
    data = json.loads((root / "first" / "results.json").read_text())
    by_part = {(e["id"], e["config"].get("part")): e for e in data["results"]}
    for key in EXACT_REFUTATIONS:
        entry = by_part[key]
        assert entry["verdict"] == "refuted" and entry["false_fail_rate"] is None, key
    assert len(data["slips"]) >= len(EXACT_REFUTATIONS)


def test_an_identical_rerun_reuses_every_claim_and_is_byte_identical(runs):
    root, _, second = runs
    assert second.returncode == 0, second.stderr
    assert (root / "first" / "results.json").read_bytes() == (root / "second" / "results.json").read_bytes()
    info = json.loads((root / "second" / "run-info.json").read_text())
    assert info["claim_records"]["reused"] == len(all_claims())
    same = _cli("diff", str(root / "first" / "results.json"), str(root / "second" / "results.json"), cwd=root)
    assert same.returncode == 0 and same.stdout.strip().endswith("same findings")
