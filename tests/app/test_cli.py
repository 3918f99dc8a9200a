"""The command line, end to end in subprocesses: outputs, exit codes, one-line errors."""

import json
import subprocess
import sys

import pytest

from moecl_verify import execution
from moecl_verify.cli import main


def cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "moecl_verify", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


@pytest.mark.heavy
def test_run_writes_reports_and_strict_fails_on_refutation(tmp_path):
    out = tmp_path / "rep"
    proc = cli("run", "--claims", "lemma2", "--budget", "smoke", "--out", str(out), "--quiet", "--format", "json,md")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "results.json").read_text())
    assert {e["id"] for e in doc["results"]} == {"lemma2"}
    assert (out / "report.md").read_text().startswith("# moecl-verify report")
    info = json.loads((out / "run-info.json").read_text())
    assert "wall_seconds" in info and set(info["claim_seconds"]) == {"lemma2"}
    # By default claims are measured in as many processes as the run may use cores; chunks stay in process.
    assert info["claim_lanes"] == execution.usable_cores() and info["executor"] == "inprocess"
    strict = main(["run", "--claims", "lemma2", "--budget", "smoke", "--out", str(out), "--strict", "--quiet", "--format", "json"])
    assert strict == 1  # Lemma 2 as printed is refuted


@pytest.mark.heavy
def test_report_rerenders_without_recomputing(tmp_path):
    out = tmp_path / "rep"
    assert main(["run", "--claims", "lemma2", "--budget", "smoke", "--out", str(out), "--quiet", "--format", "json,md"]) == 0
    again = tmp_path / "again"
    proc = cli("report", "--from", str(out / "results.json"), "--out", str(again), "--format", "json,md")
    assert proc.returncode == 0, proc.stderr
    assert (again / "report.md").read_text() == (out / "report.md").read_text()
    assert (again / "results.json").read_bytes() == (out / "results.json").read_bytes()


@pytest.mark.parametrize(
    "args, names",
    [
        (["run", "--claims", "nothing.*"], "--claims"),
        (["run", "--budget", "huge"], "--budget"),
        (["run", "--seed", "-1"], "--seed"),
        (["run", "--format", "pdf"], "--format"),
        (["run", "--out", "/proc/forbidden/dir"], "--out"),
        (["simulate", "--s", "10", "--d", "10"], "--s"),
        (["simulate", "--N", "0"], "--N"),
        (["simulate", "--sigma0", "0"], "--sigma0"),
        (["simulate", "--sigma0", "nan"], "--sigma0"),
        (["simulate", "--replicates", "1"], "--replicates"),
        (["simulate", "--T", "1"], "--T"),
        (["show", "prop9"], "prop9"),
        (["report", "--from", "/nonexistent.json"], "--from"),
        ([], "command"),
    ],
)
def test_bad_usage_exits_2_with_one_line(args, names, capsys):
    # In process (a subprocess per case costs the interpreter's start-up each time); an exception that escaped
    # main would fail the test, as a traceback would.  The entry point itself is tested below.
    try:
        code = main(args)
    except SystemExit as exit_:
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert names in lines[0]


def test_bad_usage_through_the_entry_point_is_one_line_and_exit_2():
    proc = cli("run", "--budget", "huge")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--budget" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_list_and_show(capsys):
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    for claim in ("prop4.forgetting", "lemma11.step3", "prop3", "lemma1"):
        assert claim in listing
    assert main(["show", "prop4.forgetting"]) == 0
    show = capsys.readouterr().out
    for form in ("[stated]", "[corrected]", "[derived]", "LaTeX:"):
        assert form in show


def test_simulate_json_reports_mean_and_stderr():
    proc = cli("simulate", "--model", "single", "--features", "gaussian", "--T", "4", "--replicates", "50", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [row["t"] for row in doc["rounds"]] == [1, 2, 3, 4]
    assert doc["rounds"][0]["forgetting"] is None
    assert doc["rounds"][1]["forgetting_stderr"] > 0


@pytest.mark.heavy
def test_simulate_moe_json_and_plot(tmp_path):
    png = tmp_path / "sim.png"
    proc = cli(
        "simulate", "--model", "moe", "--M", "4", "--N", "3", "--T", "25", "--replicates", "8",
        "--json", "--plot", str(png),
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["config"]["M"] == 4 and doc["config"]["T1"] == 8
    assert len(doc["summary"]["mean_load_per_expert"]) == 4
    assert abs(sum(doc["summary"]["mean_load_per_expert"]) - 25) < 1e-9  # loads sum to T
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "args, name",
    [
        (["--eta", "0"], "--eta"),
        (["--Gamma", "-1"], "--Gamma"),
        (["--M", "0"], "--M"),
        (["--pool", "clustered", "--K", "9"], "--K"),
        (["--router", "oracle", "--M", "2"], "--M"),
    ],
)
def test_simulate_moe_bad_parameters(args, name):
    proc = cli("simulate", "--model", "moe", "--N", "4", *args)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and name in proc.stderr


def test_version_help_defaults_and_list_order(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"moecl-verify {version('moecl-verify')}"
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: standard)" in text and "(default: report)" in text and "(default: None)" not in text
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    ids = [line.split()[0] for line in lines]
    assert ids.index("lemma2") < ids.index("lemma10") < ids.index("lemma11") < ids.index("lemma11.step1")
    # Columns line up: every line's kind starts at the same offset.
    offsets = {line.index(line.split()[1], len(line.split()[0])) for line in lines}
    assert len(offsets) == 1


@pytest.mark.heavy
def test_diff_reports_a_moved_verdict_and_exits_1(tmp_path, results_document):
    entry = {"id": "x", "form": "stated", "verdict": "confirmed", "config": {"features": "-"}, "expected": 1.0,
             "observed": 1.0, "stderr": 0.1, "p_value": 0.5, "false_fail_rate": 1e-3, "min_detectable": 0.1}
    old = results_document(entry, meta={"versions": {"numpy": "1"}})
    new = results_document(dict(entry, verdict="refuted", p_value=1e-9), meta={"versions": {"numpy": "2"}})
    for name, doc in (("old.json", old), ("new.json", new)):
        (tmp_path / name).write_text(json.dumps(doc))
    proc = cli("diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert proc.returncode == 1
    assert "VERDICT x [stated]" in proc.stdout and "confirmed -> refuted" in proc.stdout
    assert "versions" not in proc.stdout  # library versions describe the machine, not the paper
    same = cli("diff", str(tmp_path / "old.json"), str(tmp_path / "old.json"))
    assert same.returncode == 0 and same.stdout.strip().endswith("same findings")
    bad = cli("diff", str(tmp_path / "old.json"), str(tmp_path / "missing.json"))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "cannot read" in bad.stderr


@pytest.mark.heavy
def test_diff_exits_1_only_for_a_reversed_finding_unless_strict(tmp_path, results_document):
    def entry(eid, verdict, observed=1.0):
        return {"id": eid, "form": "stated", "verdict": verdict, "config": {}, "expected": 1.0, "observed": observed,
                "stderr": 0.1, "p_value": 0.5, "false_fail_rate": 1e-3, "min_detectable": 0.1}

    old = results_document(entry("a", "confirmed"), entry("b", "inconclusive"), entry("gone", "refuted"))
    new = results_document(entry("a", "confirmed", observed=1.01), entry("b", "refuted"), entry("new", "confirmed"))
    (tmp_path / "run1").mkdir()
    (tmp_path / "run1" / "results.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    # a number and an inconclusive -> refuted moved, entries came and went, but nothing flipped
    proc = cli("diff", str(tmp_path / "run1"), str(tmp_path / "new.json"))
    assert proc.returncode == 0, proc.stdout
    assert "VERDICT b [stated]: inconclusive -> refuted" in proc.stdout and "FLIP" not in proc.stdout
    assert "+ new [stated]: confirmed" in proc.stdout and "- gone [stated]: refuted" in proc.stdout
    assert cli("diff", "--strict", str(tmp_path / "run1"), str(tmp_path / "new.json")).returncode == 1
    only = cli("diff", "--only", "refuted", str(tmp_path / "run1"), str(tmp_path / "new.json")).stdout
    assert "b [stated]" in only and "gone [stated]" in only and "new [stated]" not in only and "a [stated]" not in only
    new = results_document(entry("a", "refuted"), entry("b", "refuted"), entry("new", "confirmed"))
    (tmp_path / "new.json").write_text(json.dumps(new))
    flipped = cli("diff", str(tmp_path / "run1"), str(tmp_path / "new.json"))
    assert flipped.returncode == 1 and "FLIP VERDICT a [stated]: confirmed -> refuted" in flipped.stdout


@pytest.mark.parametrize("argv, lanes, executor_jobs", [
    ([], None, 1),
    (["--jobs", "3"], 3, 1),
    (["--jobs", "3", "--executor", "processes"], 1, 3),
    (["--jobs", "1"], 1, 1),
])
def test_jobs_set_claim_lanes_with_the_default_executor_and_chunk_workers_otherwise(argv, lanes, executor_jobs):
    import argparse

    parser = argparse.ArgumentParser()
    execution.add_arguments(parser)
    args = parser.parse_args(argv)
    assert execution.lanes(args) == (execution.usable_cores() if lanes is None else lanes)
    with execution.chunk_runner(argparse.Namespace(**{**vars(args), "no_cache": True})) as runner:
        assert runner.executor.workers == executor_jobs
