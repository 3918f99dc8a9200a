"""JUnit, figures, notebook and the CLI's --format: parse, validate, execute, reproduce.

One smoke run (prop4.forgetting, seed 0) is rendered once with every format (the
notebook executed in a real kernel through nbclient), then re-rendered by
`python -m moecl_verify report --from` in a subprocess; the two must agree byte for
byte (results.json, report.md, results.junit.xml, PNGs) and cell for cell
(notebook sources and outputs).
"""

import ast
import base64
import json
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

import nbformat
import pytest

from moecl_verify import outputs
from moecl_verify.checks import runner
from moecl_verify.cli import FORMATS, _write_reports
from moecl_verify.checks.model import ClaimResult, Interpretation, RunResult, Slip
from moecl_verify.reports import figures, junit, markdown, math_text, notebook, results_json
from moecl_verify.packs.moe_cl import PACK

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
VERDICT_LINE = re.compile(r"^\s+(\S+/\S+)\s+(confirmed|refuted|inconclusive|not_checkable)\s", re.M)


def cli(*args):
    return subprocess.run([sys.executable, "-m", "moecl_verify", *args], capture_output=True, text=True, timeout=300)


# One worker renders the module's reports (the notebook is executed twice) once.
pytestmark = [pytest.mark.heavy, pytest.mark.xdist_group("report_outputs")]


@pytest.fixture(scope="module")
def smoke():
    return runner.run(["prop4.forgetting"], budget="smoke", seed=0)


@pytest.fixture(scope="module")
def rendered(smoke, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    written = _write_reports(smoke, out, list(FORMATS))
    return out, written


@pytest.fixture(scope="module")
def rerendered(rendered, tmp_path_factory):
    out, _ = rendered
    again = tmp_path_factory.mktemp("again")
    proc = cli("report", "--from", str(out / "results.json"), "--out", str(again))
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr, proc.stderr
    return again


def _entry_key(entry: dict) -> str:
    return f"{entry['form']}/{entry['config'].get('features', '-')}"


def _png_ok(data: bytes) -> tuple[int, int]:
    """Walk the PNG chunks, checking every CRC; returns (width, height)."""
    assert data[:8] == PNG_SIGNATURE
    pos, chunks = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        chunks.append((kind, body))
        pos += 12 + length
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    assert all(b"matplotlib" not in body.lower() for kind, body in chunks if kind in (b"tEXt", b"iTXt"))
    return struct.unpack(">II", chunks[0][1][:8])


# --- JUnit -------------------------------------------------------------------------------


def test_junit_one_testcase_per_entry_matching_verdicts(rendered):
    out, _ = rendered
    doc = json.loads((out / "results.json").read_text())
    suite = ET.parse(out / "results.junit.xml").getroot()
    assert suite.tag == "testsuite" and suite.get("name") == "moecl-verify"
    cases = suite.findall("testcase")
    assert len(cases) == len(doc["results"]) == int(suite.get("tests"))
    refuted = skipped = 0
    for case, entry in zip(cases, doc["results"]):
        assert case.get("classname") == entry["id"]
        assert case.get("name") == f"{entry['id']}[{_entry_key(entry)}]"
        failure, skip = case.find("failure"), case.find("skipped")
        if entry["verdict"] == "refuted":
            refuted += 1
            assert failure is not None and skip is None
            assert failure.get("message") and failure.text == entry["evidence"]
        elif entry["verdict"] in ("inconclusive", "not_checkable"):
            skipped += 1
            assert skip is not None and failure is None and skip.get("message")
        else:
            assert failure is None and skip is None
    assert int(suite.get("failures")) == refuted and int(suite.get("skipped")) == skipped
    assert {c.get("time") for c in cases} | {suite.get("time")} == {"0"}


def _synthetic() -> RunResult:
    def entry(form, verdict, evidence):
        return ClaimResult(
            id="x.claim", source="eq. (1)", kind="expected-value identity", form=form, verdict=verdict,
            expected=1.0, observed=1.0, stderr=0.1, p_value=0.5, false_fail_rate=1e-3, min_detectable=0.01,
            config={"features": "gaussian", "t": [2, 3]}, evidence=evidence,
            horizons=[
                {"t": 2, "expected": 1.0, "observed": 1.1, "stderr": 0.1},
                {"t": 3, "expected": 2.0, "observed": 1.9, "stderr": 0.1},
            ],
        )

    results = (
        entry("stated", "refuted", 'a < b & "c" > \'d\'\nsecond line ]]>'),
        entry("corrected", "not_checkable", "the sum over n = n' is <empty> & zero"),
        entry("derived", "confirmed", "fine"),
    )
    return RunResult(
        results,
        (Slip("s1", "eq. (1)", "notation", "||a|| < 1", "holds | b", "ev"),),
        (Interpretation("i1", "eq. (1)", "which?", "this one"),),
        {"claims": ["x.claim"], "budget": "smoke", "replicates": 10, "seed": 1},
        ({"id": "x.claim", "summary": "s", "source": "eq. (1)", "kind": "expected-value identity",
          "statement": r"\mathbb{E}[F_t] = 1", "preconditions": ["d > s"], "notes": ""},),
    )


def test_junit_escapes_and_covers_every_verdict():
    run = _synthetic()
    text = junit.render(run)
    assert text == junit.render(run)
    suite = ET.fromstring(text.encode("utf-8"))
    cases = suite.findall("testcase")
    assert cases[0].find("failure").text == run.results[0].evidence
    assert "<empty> & zero" in cases[1].find("skipped").get("message")
    assert cases[2].find("failure") is None and cases[2].find("skipped") is None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "1")


# --- figures -----------------------------------------------------------------------------


def test_figures_are_png_one_per_claim_and_linked_from_report(smoke, rendered):
    out, written = rendered
    expected = {"fig_prop4_forgetting.png"}
    assert {p.name for p in out.glob("fig_*.png")} == expected
    assert expected <= {p.name for p in written}
    for name in expected:
        width, height = _png_ok((out / name).read_bytes())
        assert width > 400 and height > 200
    text = (out / "report-details.md").read_text()  # the per-claim sections live in the details
    for cid, items in figures.figure_index(smoke).items():
        section = text.split(f"## `{cid}`", 1)[1].split("\n## ", 1)[0]
        for name, caption in items:
            # linked once, the caption said once below it (not repeated as alt text), never ending in ".."
            assert f"]({name})" in section and section.count(caption.rstrip(".")) == 1
            assert f"*Figure: {caption.rstrip('.')}.*" in section
    assert "..*" not in text and "..*" not in (out / "report.md").read_text()


def test_figures_byte_identical_when_redrawn(smoke, rendered, tmp_path):
    out, _ = rendered
    paths = figures.write(smoke, tmp_path)
    assert paths and all(p.read_bytes() == (out / p.name).read_bytes() for p in paths)
    synthetic = figures.write(_synthetic(), tmp_path / "syn")
    assert [p.name for p in synthetic] == ["fig_x_claim.png"]
    _png_ok(synthetic[0].read_bytes())


def test_markdown_without_figures_is_unchanged(smoke):
    plain = markdown.render(smoke)
    assert "![" not in plain
    assert markdown.render(smoke, None) == plain == markdown.render(smoke, {})
    assert "](fig_prop4_forgetting.png)" in markdown.render(smoke, figures.relative_paths(smoke))


# --- notebook ----------------------------------------------------------------------------


def test_notebook_validates_and_carries_statement_thresholds_and_figures(smoke, rendered):
    out, _ = rendered
    nb = nbformat.read(str(out / "report.ipynb"), as_version=4)
    nbformat.validate(nb)
    doc = json.loads((out / "results.json").read_text())
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "budget `smoke`" in text and "seed 0" in text
    assert "## Slip audit" in text and "## Interpretations" in text
    for slip in doc["slips"]:
        assert slip["id"] in text
    for claim in doc["claims"]:
        assert math_text.display(claim["statement"]) in text
    codes = [c for c in nb.cells if c.cell_type == "code"]
    assert len(codes) == len(doc["claims"])
    # The notebook follows the paper's order (the pack's order), not results.json's.
    for cell, claim in zip(codes, sorted(doc["claims"], key=lambda c: PACK.key(c["id"]))):
        call = next(
            n for n in ast.walk(ast.parse(cell.source)) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "check"
        )
        kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
        assert ast.literal_eval(call.args[0]) == claim["id"]
        assert kwargs["budget"] == "smoke" and kwargs["seed"] == 0
        recorded = {_entry_key(e): e["false_fail_rate"] for e in doc["results"] if e["id"] == claim["id"]}
        assert kwargs["false_fail_rates"] == recorded  # exact floats
    attached = [c for c in nb.cells if c.cell_type == "markdown" and c.get("attachments")]
    assert len(attached) == sum(len(items) for items in figures.figure_index(smoke).values())
    for cell in attached:
        (name, bundle), = cell.attachments.items()
        assert f"(attachment:{name})" in cell.source
        assert bundle["image/png"] == base64.b64encode((out / name).read_bytes()).decode()


def test_executed_notebook_prints_the_recorded_verdicts(rendered):
    out, _ = rendered
    nb = nbformat.read(str(out / "report.ipynb"), as_version=4)
    doc = json.loads((out / "results.json").read_text())
    codes = [c for c in nb.cells if c.cell_type == "code"]
    # The notebook follows the paper's order (the pack's order), not results.json's.
    for cell, claim in zip(codes, sorted(doc["claims"], key=lambda c: PACK.key(c["id"]))):
        assert cell.execution_count is not None
        assert "execution" not in cell.metadata  # record_timing=False
        assert not [o for o in cell.outputs if o.output_type == "error"]
        printed = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        recorded = {_entry_key(e): e["verdict"] for e in doc["results"] if e["id"] == claim["id"]}
        assert dict(VERDICT_LINE.findall(printed)) == recorded
        assert "verdicts as recorded in results.json: True" in printed


def test_synthetic_notebook_builds_and_validates(tmp_path):
    path = notebook.write(_synthetic(), tmp_path / "report.ipynb", execute_cells=False)
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    assert [c.id for c in nb.cells] == ["title", "headline", "intro", "x-claim-statement", "x-claim-rerun", "slip-audit", "interpretations"]


# --- reproduction ------------------------------------------------------------------------


def test_second_render_reproduces_every_file(rendered, rerendered):
    out, _ = rendered
    for name in ["results.json", "report.md", "results.junit.xml", *sorted(p.name for p in out.glob("fig_*.png"))]:
        assert (rerendered / name).read_bytes() == (out / name).read_bytes(), name
    assert notebook.source_cells(rerendered / "report.ipynb") == notebook.source_cells(out / "report.ipynb")
    first = nbformat.read(str(out / "report.ipynb"), as_version=4)
    second = nbformat.read(str(rerendered / "report.ipynb"), as_version=4)
    assert [c.get("outputs") for c in first.cells] == [c.get("outputs") for c in second.cells]


def test_results_json_round_trip_is_byte_identical(smoke, rendered):
    out, _ = rendered
    assert results_json.dumps(results_json.load(out / "results.json")) == (out / "results.json").read_text()


def test_report_format_selects_outputs(rendered, tmp_path):
    out, _ = rendered
    proc = cli("report", "--from", str(out / "results.json"), "--out", str(tmp_path), "--format", "junit,json")
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert outputs.MANIFEST in names  # the folder records what the tool wrote, beside the files asked for
    assert [n for n in names if not outputs.is_bookkeeping(n)] == ["results.json", "results.junit.xml"]
    bad = cli("report", "--from", str(out / "results.json"), "--out", str(tmp_path), "--format", "md,pdf")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "--format" in bad.stderr


def test_notebook_that_cannot_run_is_written_unexecuted(tmp_path, monkeypatch):
    monkeypatch.setattr(notebook, "KERNEL_NAME", "no-such-kernel-moecl")
    with pytest.raises(notebook.NotebookExecutionError, match="written unexecuted"):
        notebook.write(_synthetic(), tmp_path / "report.ipynb")
    nb = nbformat.read(str(tmp_path / "report.ipynb"), as_version=4)
    nbformat.validate(nb)
    assert all(c.execution_count is None for c in nb.cells if c.cell_type == "code")
