"""Output folders a user can trust (app/outputs.py): a folder is the tool's or is refused, one command at a
time, all outputs swapped in at once (results.json last), no printed path pointing at a file of an earlier run,
and empty or absurd flags refused in one line before anything is written."""

import json
import os
import subprocess
import sys
import threading

import pytest

from moecl_verify import outputs
from moecl_verify.cli import main
from moecl_verify.reports import results_json

LEMMA4 = ["run", "--claims", "lemma4", "--budget", "smoke", "--quiet", "--no-cache"]


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def results_file(tmp_path, results_document):
    path = tmp_path / "source" / "results.json"
    path.parent.mkdir()
    path.write_text(json.dumps(results_document({}, {"form": "derived", "verdict": "refuted", "p_value": 1e-9})))
    return path


def _report(capsys, source, out, *more):
    return _run(capsys, "report", "--from", str(source), "--out", str(out), "--quiet", *more)


def test_a_users_own_files_in_out_are_refused_and_untouched(tmp_path, capsys, results_file, snapshot,
                                                           one_line_error):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "results.json").write_text("my own results")
    (out / "report.md").write_text("my own report")
    before = snapshot(out)
    code, stdout, err = _report(capsys, results_file, out)
    assert code == 2 and stdout == "" and one_line_error(err, "--out", "--force", "report.md")
    assert snapshot(out) == before
    code, _, err = _run(capsys, *LEMMA4, "--format", "json", "--out", str(out))
    assert code == 2 and one_line_error(err, "--out", "--force")
    assert snapshot(out) == before


def test_force_replaces_only_files_of_the_names_the_tool_writes(tmp_path, capsys, results_file):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "report.md").write_text("my own report")
    (out / "notes.txt").write_text("my notes")
    code, _, _ = _report(capsys, results_file, out, "--format", "md,json", "--force")
    assert code == 0
    assert (out / "notes.txt").read_text() == "my notes"
    assert (out / "report.md").read_text() != "my own report"
    manifest = json.loads((out / outputs.MANIFEST).read_text())
    assert "notes.txt" not in manifest["files"] and {"report.md", "results.json"} <= set(manifest["files"])


def test_a_file_added_to_a_tool_folder_is_refused_next_time(tmp_path, capsys, results_file, snapshot,
                                                            one_line_error):
    out = tmp_path / "report"
    assert _report(capsys, results_file, out, "--format", "json")[0] == 0
    (out / "notes.txt").write_text("my notes")
    before = snapshot(out)
    code, _, err = _report(capsys, results_file, out, "--format", "json")
    assert code == 2 and one_line_error(err, "--out", "notes.txt")
    assert snapshot(out) == before


def test_a_report_the_user_edited_is_not_overwritten(tmp_path, capsys, results_file, snapshot, one_line_error):
    out = tmp_path / "report"
    assert _report(capsys, results_file, out, "--format", "md")[0] == 0
    (out / "report.md").write_text("my edits")
    before = snapshot(out)
    code, _, err = _report(capsys, results_file, out, "--format", "md")
    assert code == 2 and one_line_error(err, "report.md")
    assert snapshot(out) == before


@pytest.mark.heavy
def test_a_narrower_run_removes_the_earlier_runs_reports_and_names_only_its_own(tmp_path, capsys, results_file):
    out = tmp_path / "report"
    assert _report(capsys, results_file, out, "--format", "md,html,json")[0] == 0
    assert (out / "report.md").is_file() and (out / "report.html").is_file()
    code, stdout, err = _run(capsys, *LEMMA4, "--format", "json", "--out", str(out))
    assert code == 0
    assert "report:" not in stdout and "html:" not in stdout
    assert not (out / "report.md").exists() and not (out / "report.html").exists()
    assert "removed" in err and "earlier run" in err
    manifest = json.loads((out / outputs.MANIFEST).read_text())
    assert set(manifest["files"]) == {"results.json", "run-info.json"}


def test_rerendering_from_the_folders_own_results_keeps_them(tmp_path, capsys, results_file):
    out = tmp_path / "report"
    assert _report(capsys, results_file, out, "--format", "json,md")[0] == 0
    code, _, err = _report(capsys, out / "results.json", out, "--format", "junit")
    assert code == 0 and "removed" not in err
    assert {"results.json", "report.md", "results.junit.xml"} <= {p.name for p in out.iterdir()}


def test_a_second_command_on_a_held_folder_is_refused_naming_the_holder(tmp_path, capsys, results_file,
                                                                      one_line_error):
    out = tmp_path / "report"
    with outputs.OutputFolder(str(out)):
        code, _, err = _report(capsys, results_file, out)
        assert code == 2 and one_line_error(err, "--out", f"pid {os.getpid()}")
        code, _, err = _run(capsys, *LEMMA4, "--format", "json", "--out", str(out))
        assert code == 2 and one_line_error(err, "--out", "another moecl-verify command")


@pytest.mark.heavy
def test_two_runs_on_one_folder_cannot_both_succeed(tmp_path, capsys):
    """Two runs started together on one --out: exactly one writes, the other is refused with exit 2."""
    out = tmp_path / "report"
    command = [sys.executable, "-m", "moecl_verify", *LEMMA4, "--format", "json", "--out", str(out)]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in runs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    refused = next(err for code, err in results if code == 2)
    assert "another moecl-verify command" in refused or "in use" in refused


_KILL_AFTER = """
import os, sys
from moecl_verify import outputs
moves = int(sys.argv[1])
done = [0]
original_replace, original_write = outputs._replace, outputs._atomic_write_text
def replace(a, b):
    if done[0] == moves:
        os._exit(9)  # as SIGKILL: no cleanup runs
    done[0] += 1
    original_replace(a, b)
def write(path, text):
    if moves < 0 and path.name == outputs.JOURNAL:
        os._exit(9)
    original_write(path, text)
outputs._replace, outputs._atomic_write_text = replace, write
from moecl_verify.cli import main
main(sys.argv[2:])
"""


@pytest.mark.heavy
@pytest.mark.parametrize("moves", [-1, 0, 2, 5])
def test_a_kill_at_any_point_of_the_commit_leaves_the_old_set_or_the_new_one(tmp_path, capsys, results_file,
                                                                            moves):
    out = tmp_path / "report"
    assert _report(capsys, results_file, out, "--format", "md,junit,json")[0] == 0
    old = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    # The new set: other results, other formats.
    other = json.loads(results_file.read_text())
    other["meta"]["seed"] = 7
    new_source = tmp_path / "new.json"
    new_source.write_text(json.dumps(other))
    args = ["report", "--from", str(new_source), "--out", str(out), "--quiet", "--format", "md,json,headline"]
    killed = subprocess.run([sys.executable, "-c", _KILL_AFTER, str(moves), *args], capture_output=True, timeout=120)
    assert killed.returncode == 9, killed.stderr
    # The next command on the folder finishes what the journal records, or finds the old set untouched.
    with outputs.OutputFolder(str(out)):
        pass
    now = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    if moves < 0:
        assert now == old
    else:
        assert {"report.md", "report-details.md", "results.json", "headline.csv", "headline.tex",
                outputs.MANIFEST} <= set(now)
        assert "results.junit.xml" not in now  # the old set's file that the new one lacks
        assert json.loads(now["results.json"])["meta"]["seed"] == 7
    assert not [p for p in out.iterdir() if p.name.startswith(outputs.STAGING_PREFIX)]
    assert not (out / outputs.JOURNAL).exists()


def test_an_interrupted_write_before_the_commit_leaves_the_folder_as_it_was(tmp_path, capsys, results_file,
                                                                          monkeypatch, snapshot):
    out = tmp_path / "report"
    assert _report(capsys, results_file, out, "--format", "md,json")[0] == 0
    before = snapshot(out)
    from moecl_verify.reports import junit

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(junit, "write", interrupted)
    code, _, err = _report(capsys, results_file, out, "--format", "md,json,junit")
    assert code == 130
    after = snapshot(out)
    # The lock records its last holder; every other file is as it was, and no staged file is left.
    assert after.pop(outputs.LOCK)[:2] == before.pop(outputs.LOCK)[:2] and after == before


@pytest.mark.parametrize("args, name", [
    (["run", "--out", ""], "--out"),
    (["report", "--from", "x.json", "--out", " "], "--out"),
    (["run", "--claims", ""], "--claims"),
    (["run", "--claims", ","], "--claims"),
    (["run", "--claims", " , ,"], "--claims"),
    (["run", "--jobs", "99999999999999999999"], "--jobs"),
    (["run", "--jobs", "100000"], "--jobs"),
    (["run", "--jobs", "0"], "--jobs"),
    (["run", "--jobs", "-3"], "--jobs"),
])
def test_empty_and_absurd_values_are_refused_at_once(tmp_path, capsys, monkeypatch, args, name, snapshot,
                                                     one_line_error):
    monkeypatch.chdir(tmp_path)
    code, out, err = [None], None, None
    finished = threading.Event()

    def call():
        code[0] = main(args)
        finished.set()

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    assert finished.wait(timeout=30), f"{args} did not answer at once"
    out, err = capsys.readouterr()
    assert code[0] == 2 and one_line_error(err, name), err
    assert snapshot(tmp_path) == {}
    if name == "--jobs" and args[-1] not in ("0", "-3"):
        assert "between 1 and" in err


def test_negative_jobs_are_told_the_true_minimum(capsys):
    code, _, err = _run(capsys, "run", "--jobs", "-3")
    assert code == 2 and "between 1 and" in err and ">= 0" not in err


def test_a_dangling_symlink_or_a_loop_as_out_is_named(tmp_path, capsys, one_line_error):
    dangling, loop = tmp_path / "dangling", tmp_path / "loop"
    dangling.symlink_to(tmp_path / "nowhere")
    loop.symlink_to(loop)
    code, _, err = _run(capsys, *LEMMA4, "--out", str(dangling))
    assert code == 2 and one_line_error(err, "--out", "does not exist") and "File exists" not in err
    code, _, err = _run(capsys, *LEMMA4, "--out", str(loop))
    assert code == 2 and one_line_error(err, "--out", "loop")
    assert not (tmp_path / "nowhere").exists()


def test_a_file_as_out_is_named(tmp_path, capsys, one_line_error):
    target = tmp_path / "results.txt"
    target.write_text("mine")
    code, _, err = _run(capsys, *LEMMA4, "--out", str(target))
    assert code == 2 and one_line_error(err, "--out", "not a folder")
    assert target.read_text() == "mine"


def test_an_edited_manifest_cannot_make_the_tool_delete_outside_the_folder(tmp_path, capsys, results_file):
    out = tmp_path / "report"
    assert _report(capsys, results_file, out, "--format", "json")[0] == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    manifest = json.loads((out / outputs.MANIFEST).read_text())
    import hashlib

    manifest["files"]["../victim.txt"] = hashlib.sha256(b"mine").hexdigest()
    manifest["results_sha256"] = "other"
    (out / outputs.MANIFEST).write_text(json.dumps(manifest))
    assert _report(capsys, results_file, out, "--format", "md")[0] == 0
    assert victim.read_text() == "mine"


@pytest.mark.parametrize("flag, low", [("--replicates", 2), ("--every", 1), ("--T", 2), ("--d", 2), ("--N", 1)])
def test_numeric_flags_state_their_true_minimum(capsys, flag, low, one_line_error):
    code, _, err = _run(capsys, "simulate", flag, "-3")
    assert code == 2 and one_line_error(err, flag, f">= {low}") and ">= 0" not in err


def test_moe_flags_state_their_true_minimum(capsys, one_line_error):
    code, _, err = _run(capsys, "simulate", "--model", "moe", "--M", "-2")
    assert code == 2 and one_line_error(err, "--M", ">= 1")


def test_suggestions_are_claim_ids_and_never_the_refused_pattern(capsys):
    from moecl_verify.checks.registry import UnknownClaimPattern, all_claims

    ids = {c.id for c in all_claims()}
    for pattern in ("prop5", "prop4", "lemma3.*", "lema3"):
        error = UnknownClaimPattern(pattern, sorted(ids))
        assert set(error.suggestions) <= ids and pattern not in error.suggestions, (pattern, error.suggestions)
    assert "lemma3" in UnknownClaimPattern("lema3", sorted(ids)).suggestions
