"""The chapter's pack as a whole: it imports nothing of the paper's pack, and a smoke run from the command line
exits 0, writes results.json with the routing and gradient claims and their verdicts, and reports the claims in
the chapter's order."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import moecl_verify.packs.moe_chapter as chapter

pytestmark = pytest.mark.app
FORBIDDEN = "moecl_verify.packs.moe_cl"
# The claims of this part of the chapter, in the chapter's order (groups by Pack.order, ids naturally within).
ROUTING_AND_GRADIENTS = ("gate.simplex", "topk.dense_special_case", "topk.normalised_k1", "batch.routing_matrix",
                         "aux.frequencies", "aux.gradient", "aux.ste_needed", "expert.gradient",
                         "expert.update_scale")


def imported_modules(source: str, package: str) -> set[str]:
    """Every module an ``import`` or ``from ... import`` in ``source`` names (relative imports resolved against
    ``package``), with the names imported from it as submodule candidates."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def _names_forbidden(modules: set[str]) -> bool:
    return any(m == FORBIDDEN or m.startswith(FORBIDDEN + ".") for m in modules)


def test_no_module_of_the_chapter_pack_imports_the_papers_pack():
    root = Path(chapter.__file__).parent
    files = sorted(root.rglob("*.py"))
    assert len(files) >= 8  # the pack's own modules and its claims
    bad = []
    for path in files:
        package = ".".join(["moecl_verify", "packs", "moe_chapter", *path.relative_to(root).parent.parts])
        if _names_forbidden(imported_modules(path.read_text(encoding="utf-8"), package)):
            bad.append(path.name)
    assert bad == []


def test_the_import_scan_sees_every_form_of_import():
    package = "moecl_verify.packs.moe_chapter.claims"
    assert _names_forbidden(imported_modules("import moecl_verify.packs.moe_cl.claims.router.lemma2", package))
    assert _names_forbidden(imported_modules("from moecl_verify.packs import moe_cl", package))
    assert _names_forbidden(imported_modules("def f():\n    from moecl_verify.packs.moe_cl import PACK\n", package))
    assert _names_forbidden(imported_modules("from ...moe_cl import entries", package))
    assert not _names_forbidden(imported_modules("from moecl_verify.packs.moe_chapter import model", package))


@pytest.mark.heavy
@pytest.mark.slow
def test_a_smoke_run_of_the_chapter_writes_its_claims_in_order(tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, "MOECL_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "moecl_verify", "run", "--pack", "moe-chapter", "--budget", "smoke",
                           "--out", str(out), "--quiet", "--jobs", "1", "--format", "json,md"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert doc["meta"]["pack"] == "moe-chapter"
    ids = set(r["id"] for r in doc["results"])
    assert set(ROUTING_AND_GRADIENTS) <= ids and {c["id"] for c in doc["claims"]} == ids
    # results.json lists entries by id (the machinery's order for every pack); the chapter's order is the one its
    # reports read the claims in: the pack's sort key, and the details' claim sections
    assert [i for i in chapter.PACK.in_order(ids) if i in ROUTING_AND_GRADIENTS] == list(ROUTING_AND_GRADIENTS)
    details = (out / "report-details.md").read_text(encoding="utf-8")
    sections = [line.split("`")[1] for line in details.splitlines() if line.startswith("## `")]
    assert [i for i in sections if i in ROUTING_AND_GRADIENTS] == list(ROUTING_AND_GRADIENTS)
    order = chapter.PACK.order
    ranks = [order.index(i.split(".")[0]) for i in sections]
    assert ranks == sorted(ranks)  # every claim of the run, its group where the chapter puts it
    verdicts: dict[str, set] = {}
    for r in doc["results"]:
        verdicts.setdefault(r["id"], set()).add(r["verdict"])
    refuted = {i for i in ROUTING_AND_GRADIENTS if "refuted" in verdicts[i]}
    assert refuted == {"batch.routing_matrix", "aux.ste_needed", "expert.update_scale"}
    assert all(verdicts[i] == {"confirmed"} for i in set(ROUTING_AND_GRADIENTS) - refuted)
    # refutations of the statement as printed: the batch form's literal reading of its prose and the sentence on
    # the experts' update; the STE is refuted as a proof step, and the K = 1 finding is a derived consequence
    stated_refuted = {r["id"] for r in doc["results"] if r["verdict"] == "refuted" and r["id"] in ROUTING_AND_GRADIENTS
                      and r["key"]["form"] == "stated" and r["key"]["role"] == "statement"}
    assert stated_refuted == {"batch.routing_matrix", "expert.update_scale"}
    slips = {s["id"]: s["class"] for s in doc["slips"]}
    assert {i: slips.get(i) for i in ("topk.normalised_k1.no_gate_gradient", "batch.routing_matrix.hadamard_shapes",
                                      "aux.ste_needed.justification", "expert.update_scale.not_implied")} == {
        "topk.normalised_k1.no_gate_gradient": "inconsistency between sections",
        "batch.routing_matrix.hadamard_shapes": "notation",
        "aux.ste_needed.justification": "notation",
        "expert.update_scale.not_implied": "unstated assumption",
    }


def test_the_papers_results_are_the_same_with_the_chapters_claims_loaded():
    """Both packs use the ids thm1.* and thm2.*; the registry keeps them apart by module, so loading every claim of
    the chapter changes nothing in a run of the paper's claims of the same names."""
    from moecl_verify.checks import registry, runner
    from moecl_verify.reports import results_json

    papers = ["thm1.m1_specialization", "lemma2"]
    before = results_json.dumps(runner.run(papers, budget="smoke", seed=0, pack="moe-cl"))
    chapter_ids = {c.id for c in registry.all_claims("moe-chapter")}
    assert {"thm1.expressivity", "thm2.ratio"} <= chapter_ids
    after = runner.run(papers, budget="smoke", seed=0, pack="moe-cl")
    assert {r.id for r in after.results} == set(papers)
    assert results_json.dumps(after) == before
