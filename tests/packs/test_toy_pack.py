"""A second document plugs in without touching the machinery: the toy pack (tests/packs/toy, outside the
moecl_verify package) is found by its entry point and runs through the whole pipeline, reports included.

The expected verdicts come from the mathematics, not from the tool: for X ~ Uniform(0, 1), Var(X) = 1/12 =
E[X^2] - (E[X])^2 = 1/3 - 1/4, while E[X^2] + (E[X])^2 = 7/12.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.app


def _cli(toy_path: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": toy_path, "MOECL_CACHE_DIR": str(cwd / "cache")}
    return subprocess.run([sys.executable, "-m", "moecl_verify", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=600)


def test_the_toy_pack_is_discovered_beside_the_default(toy_installed):
    from moecl_verify.checks import pack as packs
    from moecl_verify.checks.registry import all_claims

    installed = packs.installed()
    assert {"toy", "moe-cl"} <= set(installed)
    assert packs.default().name == "moe-cl"  # the toy pack does not declare itself the default
    assert [c.id for c in all_claims("toy")] == ["median.half", "median.slip", "var.false", "var.true"]
    # Claims are the pack's own: the default pack's registry does not see them, nor the reverse.
    assert not {"median.half", "median.slip", "var.false", "var.true"} & {c.id for c in all_claims()}


@pytest.mark.heavy
def test_a_run_of_the_toy_pack_gives_the_verdicts_the_mathematics_gives(toy_path, tmp_path):
    listing = _cli(toy_path, "packs", cwd=tmp_path)
    assert listing.returncode == 0 and "toy" in listing.stdout and "moe-cl" in listing.stdout
    claims = _cli(toy_path, "list", "--pack", "toy", cwd=tmp_path)
    assert claims.returncode == 0 and claims.stdout.split()[0] == "median.half"

    out = tmp_path / "out"
    done = _cli(toy_path, "run", "--pack", "toy", "--budget", "smoke", "--out", str(out), "--quiet", "--jobs", "1",
                "--format", "json,md,html,junit,headline", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert doc["meta"]["pack"] == "toy" and doc["paper"] == "A textbook identity: the variance of a uniform variable"
    verdicts = {(r["id"], r["evidence_type"]): r["verdict"] for r in doc["results"]}
    assert verdicts == {("var.true", "exact"): "confirmed", ("var.true", "mean"): "confirmed",
                        ("var.false", "exact"): "refuted", ("var.false", "mean"): "refuted",
                        ("median.half", "exact"): "confirmed", ("median.half", "sign"): "confirmed",
                        ("median.slip", "exact"): "refuted", ("median.slip", "sign"): "refuted"}
    assert [s["id"] for s in doc["slips"]] == ["var.false.sign"]
    report = (out / "report.md").read_text(encoding="utf-8")
    assert report.startswith("# moecl-verify report: *A textbook identity: the variance of a uniform variable*")
    details = (out / "report-details.md").read_text(encoding="utf-8")
    assert "## Claims, in the textbook's order" in details and "paper" not in (report + details).lower()
    assert "](report-details.md#claims)" in report  # the main body links into its details
    row = next(line for line in report.splitlines() if line.startswith("| **The variance identity**"))
    assert "**stands**" in row
    assert "var.false.sign" in report + details and (out / "report.html").is_file()
    junit = (out / "results.junit.xml").read_text(encoding="utf-8")
    assert 'tests="8"' in junit and 'failures="4"' in junit
    assert "The variance identity" in (out / "headline.csv").read_text(encoding="utf-8")

    strict = _cli(toy_path, "run", "--pack", "toy", "--budget", "smoke", "--out", str(out), "--quiet", "--jobs", "1",
                  "--format", "json", "--strict", cwd=tmp_path)
    assert strict.returncode == 1  # var.false is refuted
    same = _cli(toy_path, "diff", str(out), str(out), "--pack", "toy", "--strict", cwd=tmp_path)
    assert same.returncode == 0 and "same findings" in same.stdout
    other = _cli(toy_path, "diff", str(out), str(out), "--pack", "moe-cl", cwd=tmp_path)
    assert other.returncode == 2 and "of pack toy, not moe-cl" in other.stderr
    rendered = _cli(toy_path, "report", "--from", str(out / "results.json"), "--out", str(tmp_path / "again"),
                    "--format", "md", "--quiet", cwd=tmp_path)
    assert rendered.returncode == 0 and (tmp_path / "again" / "report.md").read_text(encoding="utf-8") == report


@pytest.mark.heavy
def test_an_unknown_pack_is_one_line_and_exit_2(toy_path, tmp_path):
    done = _cli(toy_path, "run", "--pack", "tyo", "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "moecl-verify: error: --pack: no pack 'tyo'; did you mean toy? (installed: moe-chapter, moe-cl, toy; moecl-verify packs)"]
    option = _cli(toy_path, "run", "--pack", "toy", "--mnist", str(tmp_path), "--out", str(tmp_path / "o"),
                  cwd=tmp_path)
    assert option.returncode == 2 and "--mnist belongs to pack moe-cl, not toy" in option.stderr


@pytest.mark.heavy
def test_the_toy_packs_notebook_reruns_its_claims(toy_path, tmp_path):
    out = tmp_path / "out"
    done = _cli(toy_path, "run", "--pack", "toy", "--budget", "smoke", "--out", str(out), "--quiet", "--jobs", "1",
                "--format", "json,ipynb", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    import nbformat

    nb = nbformat.read(out / "report.ipynb", as_version=4)
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert outputs.count("verdicts as recorded in results.json: True") == 4  # one per claim


@pytest.mark.heavy
def test_a_results_file_whose_pack_is_not_installed_still_renders(toy_path, tmp_path):
    """The toy pack's results read where the toy pack is not installed: entries in id order, the title the file
    records, no headline items, no failure; re-rendered as JSON, the file keeps its title."""
    out = tmp_path / "out"
    done = _cli(toy_path, "run", "--pack", "toy", "--budget", "smoke", "--out", str(out), "--quiet", "--jobs", "1",
                "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    again = subprocess.run([sys.executable, "-m", "moecl_verify", "report", "--from", str(out / "results.json"),
                            "--out", str(tmp_path / "bare"), "--format", "json,md,junit", "--quiet"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert again.returncode == 0, again.stderr
    text = (tmp_path / "bare" / "report.md").read_text(encoding="utf-8")
    title = "A textbook identity: the variance of a uniform variable"
    assert text.startswith(f"# moecl-verify report: *{title}*") and "`var.false`" in text
    assert "Proposition" not in text
    # The pack's own kind of evidence (its sign test) is not known here: its entries are listed by the fields
    # every entry has, under the kind's name.
    details = (tmp_path / "bare" / "report-details.md").read_text(encoding="utf-8")
    assert "### Evidence of kind `sign` (its pack is not installed here" in details and "`median.slip`" in details
    assert (tmp_path / "bare" / "results.json").read_bytes() == (out / "results.json").read_bytes()


@pytest.mark.heavy
def test_list_shows_the_verdicts_of_its_own_packs_file_only(toy_path, tmp_path):
    out = tmp_path / "out"
    done = _cli(toy_path, "run", "--pack", "toy", "--budget", "smoke", "--out", str(out), "--quiet", "--jobs", "1",
                "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    mine = _cli(toy_path, "list", "--pack", "toy", "--from", str(out), cwd=tmp_path)
    assert mine.returncode == 0
    lines = {line.split()[0]: line for line in mine.stdout.splitlines()}
    assert "2 refuted" in lines["var.false"] and "2 confirmed" in lines["var.true"]  # exact and Monte Carlo
    other = _cli(toy_path, "list", "--from", str(out), cwd=tmp_path)
    assert other.returncode == 2 and "of pack toy, not moe-cl" in other.stderr


def test_a_kind_of_evidence_of_the_packs_own_decides_renders_and_reads_back(toy_installed, tmp_path):
    """The toy pack's sign test (moecl_toy_pack/sign_kind.py) is registered as it loads, decided under the run's
    error control with the machinery's kinds, tabled in the report, stored in the results file's schema and read
    back: no machinery edit.  Expected verdicts from the mathematics: Uniform(0, 1)'s median is 1/2 (P(X > 2/5) =
    3/5, a shift of 0.1 that 4,000 draws resolve)."""
    from moecl_verify.checks import kinds, runner
    from moecl_verify.reports import markdown, results_json

    run = runner.run(["median.*"], budget="smoke", reuse_claims=False, pack="toy")
    verdicts = {(r.id, r.evidence_type): r.verdict for r in run.results}
    assert verdicts == {("median.half", "exact"): "confirmed", ("median.half", "sign"): "confirmed",
                        ("median.slip", "exact"): "refuted", ("median.slip", "sign"): "refuted"}
    sign = next(r for r in run.results if r.evidence_type == "sign" and r.id == "median.half")
    assert sign.false_fail_rate is not None and sign.min_detectable <= 0.05 and sign.config["trials"] == 4_000
    assert "sign" in kinds.tags() and "sign" in results_json.schema()["$defs"]["entry"]["properties"][
        "evidence_type"]["enum"]
    (tmp_path / "results.json").write_text(results_json.dumps(run), encoding="utf-8")
    again = results_json.load(tmp_path / "results.json")
    assert [(r.id, r.evidence_type, r.verdict) for r in again.results] == [
        (r.id, r.evidence_type, r.verdict) for r in run.results]
    details = markdown.render(run)  # the main body and its details, whole
    assert "### Sign tests (medians)" in details and "| above / trials |" in details


def test_a_kind_that_misses_part_of_the_protocol_fails_when_registered():
    import types
    from dataclasses import dataclass

    from moecl_verify.checks import kinds
    from moecl_verify.checks.kinds.base import Table

    @dataclass(frozen=True)
    class NoDecision:
        TAG = "broken"
        claim_id: str

        @property
        def p_value(self):
            return 1.0

    table = Table("Broken", (), "resolution", lambda r: ())
    module = types.ModuleType("broken_kind")
    module.TABLES, module.RECORDS = {"broken": table}, {"broken": NoDecision}
    with pytest.raises(kinds.KindError, match="lacks detectable, decide of the Evidence protocol"):
        kinds.register_kind(module)
    taken = types.ModuleType("taken_kind")
    taken.TABLES, taken.RECORDS = {"mean": table}, {"x": NoDecision}
    with pytest.raises(kinds.KindError, match="'mean' is already taken"):
        kinds.register_kind(taken)
    codec = types.ModuleType("codec_kind")  # a record tag the cache's codec uses for its own containers
    codec.TABLES, codec.RECORDS = {"codec": table}, {"dict": NoDecision}
    with pytest.raises(kinds.KindError, match="record tag 'dict' is already taken"):
        kinds.register_kind(codec)

    @dataclass(frozen=True)
    class Untagged:
        claim_id: str

    untagged = types.ModuleType("untagged_kind")
    untagged.TABLES, untagged.RECORDS = {"untagged": table}, {"untagged": Untagged}
    with pytest.raises(kinds.KindError, match="no class in RECORDS declares TAG"):
        kinds.register_kind(untagged)
    assert not {"broken", "codec", "untagged"} & set(kinds.tags())


def test_a_kind_registered_anew_is_what_the_cache_stores_and_reads(toy_installed):
    """The toy pack unloaded and loaded again (as these tests do): its kind's new class is the one a claim record
    stores and reads back, not the first import's."""
    import importlib
    import sys

    from moecl_verify.checks import claim_store, kinds

    first = importlib.import_module("moecl_toy_pack.sign_kind")
    importlib.import_module("moecl_toy_pack")
    kinds.unregister_kind(first)
    for name in [m for m in sys.modules if m.startswith("moecl_toy_pack")]:
        del sys.modules[name]
    importlib.import_module("moecl_toy_pack")
    second = sys.modules["moecl_toy_pack.sign_kind"]
    assert second is not first and kinds.RECORDS["sign"] is second.SignEvidence
    made = second.SignEvidence(claim_id="median.half", source="s", kind="probability", form="stated", config={},
                               above=5, trials=10, resolution=0.05)
    back = claim_store.decode(claim_store.encode(made))
    assert type(back) is second.SignEvidence and back == made
