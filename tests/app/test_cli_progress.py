"""What the command line shows during and after a run: the progress display (terminal, log, quiet),
the closing lines, `list --from`, `cache info`, the cache-creation notice and exit 130."""

import io
import re
from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console

from moecl_verify import cli
from moecl_verify.checks.model import ClaimResult, RunResult
from moecl_verify.cli import main
from moecl_verify.progress import RunDisplay, notebook_progress
from moecl_verify.reports import results_json

pytestmark = pytest.mark.app

# Two claims that take well under a second at smoke.
CLAIMS = ["audit.preconditions", "lemma3"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _run(tmp_path, *extra, out="out"):
    return main(["run", "--claims", ",".join(CLAIMS), "--budget", "smoke", "--format", "json",
                 "--out", str(tmp_path / out), "--cache-dir", str(tmp_path / "cache"), *extra])


@pytest.mark.heavy
def test_log_mode_prints_one_short_line_per_claim_and_reused_claims_on_a_warm_rerun(tmp_path, capsys):
    assert _run(tmp_path) == 0
    cold = capsys.readouterr().err
    assert _run(tmp_path) == 0
    warm = capsys.readouterr().err
    notice = f"moecl-verify: created results cache at {tmp_path / 'cache'}"
    for err in (cold, warm):
        # The notice names the cache's path in full, however long; every progress line fits 80 columns.
        assert "\r" not in err and all(len(line) <= 80 for line in err.splitlines() if line != notice), err
        claim_lines = [line for line in err.splitlines() if line.startswith("[")]
        # One line per claim, numbered k of n as the claims finish (in lanes the order of finishing is the
        # machine's), naming every claim once.
        assert [line.split()[0] for line in claim_lines] == [f"[{k}/2]" for k in range(1, len(CLAIMS) + 1)]
        assert sorted(line.split()[1] for line in claim_lines) == sorted(CLAIMS)
        assert "writing reports" in err.splitlines()
        holm = [line for line in err.splitlines() if line.startswith("deciding verdicts (Holm across ")]
        entries = len(results_json.load(tmp_path / "out" / "results.json").results)
        assert len(holm) == 1 and 0 < int(holm[0].split()[4]) <= entries
    assert all(" done in " in line for line in cold.splitlines() if line.startswith("["))
    assert all(line.endswith("reused from the cache") for line in warm.splitlines() if line.startswith("["))
    # The cache directory's creation is announced by the run that creates it, and only by it.
    assert cold.splitlines().count(notice) == 1 and "created results cache" not in warm


@pytest.mark.heavy
def test_quiet_prints_nothing_on_stderr(tmp_path, capsys):
    (tmp_path / "cache").mkdir()
    assert _run(tmp_path, "--quiet") == 0
    assert capsys.readouterr().err == ""


def test_terminal_mode_draws_one_line_with_counts_and_the_current_work(monkeypatch):
    # A terminal that draws frames (under TERM=dumb, rich's live display draws only the last one).
    monkeypatch.setenv("TERM", "xterm")
    console = Console(file=io.StringIO(), force_terminal=True, width=80, color_system=None)
    with RunDisplay(console=console) as display:
        display.claim(1, 3, "lemma5", "start")
        display.work("exploration fixed 1/t sigma0=0.003125 c=1 and a long tail to cut", 3, 20)
        display._rich.refresh()  # the periodic refresh, drawn now
        display.claim(1, 3, "lemma5", "done")
        display.claim(2, 3, "prop2.t1", "start")
        display.claim(2, 3, "prop2.t1", "reused")
        notebook_progress(4, 9)
    frames = [ANSI.sub("", f) for f in re.split(r"[\r\n]", console.file.getvalue())]
    frames = [f for f in frames if f.strip()]
    assert any("0 of 3 claims" in f and "lemma5 · exploration" in f and f.endswith("…") for f in frames), frames
    assert any("2 of 3 claims" in f and "prop2.t1 (reused)" in f for f in frames)
    assert any("executing notebook: cell 5 of 9" in f for f in frames)  # 4 ran, the 5th is running
    assert "finished" in frames[-1] and "2 of 3 claims" in frames[-1]
    assert all(len(f) <= 80 for f in frames)


def test_notebook_progress_outside_a_display_does_nothing_and_log_mode_brackets_the_notebook():
    notebook_progress(1, 2)  # no display: nothing to do, nothing raised
    stream = io.StringIO()
    with RunDisplay(stream=stream) as display:
        for k in range(4):
            notebook_progress(k, 3)
        display.step("writing reports")
        display.step("writing reports")
    lines = stream.getvalue().splitlines()
    assert lines[0] == "executing notebook: 3 code cells" and lines[1].startswith("executed notebook: 3 code cells in ")
    assert lines[2:] == ["writing reports"]


def test_notebook_execution_reports_each_code_cell(tmp_path):
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    from moecl_verify.reports import notebook

    nb = new_notebook(cells=[new_markdown_cell("# x"), new_code_cell("1 + 1"), new_code_cell("  "),
                             new_code_cell("print(2)")])
    calls = []
    notebook.execute(nb, tmp_path, on_cell=lambda done, total: calls.append((done, total)))
    assert calls == [(0, 2), (1, 2), (2, 2)]  # two code cells with source; the blank one is not run


@pytest.mark.heavy
def test_closing_lines_are_short_and_name_the_report(tmp_path, capsys):
    assert _run(tmp_path, "--quiet", "--format", "json,md") == 0
    out = capsys.readouterr().out.splitlines()
    run = results_json.load(tmp_path / "out" / "results.json")
    counts = Counter(r.verdict for r in run.results)
    assert out[0].startswith(f"{len(run.results)} entries: ") and out[0].endswith(f"; {len(run.slips)} slips")
    assert all(f"{n} {v}" in out[0] for v, n in counts.items())
    assert out[1:] == [f"report: {tmp_path / 'out' / 'report.md'}", f"all outputs in {tmp_path / 'out'}/"]
    # `report --from` closes the same way, without report.md when markdown is not asked for.
    assert main(["report", "--from", str(tmp_path / "out" / "results.json"), "--out", str(tmp_path / "again"),
                 "--format", "json", "--quiet"]) == 0
    assert capsys.readouterr().out.splitlines() == [out[0], f"all outputs in {tmp_path / 'again'}/"]


def _entry(claim_id: str, verdict: str, part: str) -> ClaimResult:
    return ClaimResult(id=claim_id, source="-", kind="bound", form="stated", verdict=verdict, expected=1.0,
                       observed=1.0, stderr=0.1, p_value=0.5, false_fail_rate=1e-3, min_detectable=0.01,
                       config={"part": part}, evidence="e", evidence_type="mean")


@pytest.mark.heavy
def test_list_from_shows_each_claims_last_verdicts_aligned(tmp_path, capsys):
    verdicts = {"lemma4": ["refuted", "confirmed", "refuted", "refuted"], "lemma10": ["inconclusive", "confirmed"]}
    results = tuple(_entry(c, v, f"part {i}") for c, vs in verdicts.items() for i, v in enumerate(vs))
    run = RunResult(results, (), (), {"claims": list(verdicts), "budget": "smoke", "replicates": 10, "seed": 0},
                    tuple({"id": c, "summary": "s", "source": "-", "kind": "bound", "statement": "x",
                           "preconditions": [], "notes": ""} for c in verdicts))
    results_json.write(run, tmp_path / "results.json")
    for source in (tmp_path, tmp_path / "results.json"):  # the folder or the file
        assert main(["list", "--from", str(source)]) == 0
        captured = capsys.readouterr()
        lines = captured.out.splitlines()
        assert str(tmp_path / "results.json") in captured.err
        rows = {line.split()[0]: line for line in lines}
        assert "  3 refuted, 1 confirmed  " in rows["lemma4"]
        assert "  1 confirmed, 1 inconclusive  " in rows["lemma10"]  # a tie: in the verdicts' own order
        assert "  —  " in rows["lemma2"]  # not in that run
        ids = [line.split()[0] for line in lines]
        assert ids.index("lemma2") < ids.index("lemma4") < ids.index("lemma10")
        # Aligned: the verdict column starts at one offset in every row.
        starts = {line.index(token) for line, token in
                  ((rows["lemma4"], "3 refuted"), (rows["lemma10"], "1 confirmed"), (rows["lemma2"], "—"))}
        assert len(starts) == 1
    assert main(["list", "--from", str(tmp_path / "missing")]) == 2


@pytest.mark.heavy
def test_cache_info_says_where_the_cache_is_and_how_big(tmp_path, capsys):
    assert _run(tmp_path, "--quiet") == 0
    capsys.readouterr()
    assert main(["cache", "info", "--cache-dir", str(tmp_path / "cache")]) == 0
    text = capsys.readouterr().out
    cache = tmp_path / "cache"
    assert f"results cache: {cache.resolve()}" in text
    from moecl_verify.numeric.cache import MARKER

    # Entries only: the cache's marker is not an entry.
    on_disk = sum(p.stat().st_size for p in cache.iterdir()
                  if p.suffix in (".json", ".npz", ".record") and p.name != MARKER)
    number, unit = re.search(r"size: ([\d.]+) (B|kB|MB|GB)", text).groups()
    shown = float(number) * {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}[unit]
    assert on_disk > 0 and abs(shown - on_disk) <= 0.01 * on_disk
    chunks = sum(1 for p in cache.glob("*.npz") if p.with_suffix(".json").exists())
    records = sum(1 for p in cache.glob("*.record") if p.with_suffix(".json").exists())
    assert f"({records} of them claim and slip records)" in text and f"simulation chunks: {chunks};" in text
    assert main(["cache", "info", "--cache-dir", str(tmp_path / "none")]) == 0
    assert "not created yet" in capsys.readouterr().out


def test_an_interrupt_exits_130(monkeypatch, capsys):
    def interrupted(_args):
        raise KeyboardInterrupt

    monkeypatch.setitem(cli.COMMANDS, "list", interrupted)
    assert main(["list"]) == cli.EXIT_INTERRUPTED == 130
    assert capsys.readouterr().err == "moecl-verify: interrupted\n"
