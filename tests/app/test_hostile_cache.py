"""The results cache deletes only what it owns: a folder is a cache only with the marker the cache writes when
it creates the folder, ``cache clear`` refuses every other folder in one line with exit 2, and inside a cache it
deletes only entries, never a user's file put beside them."""

import errno
import json
import os

import pytest

from moecl_verify.cli import main
from moecl_verify.numeric import cache as cache_module
from moecl_verify.numeric.cache import MARKER, ResultCache

HEX = "cd" * 32


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _report_folder(tmp_path):
    """A folder as a report run leaves it, plus a user's own files: nothing here is a cache's."""
    folder = tmp_path / "report"
    folder.mkdir()
    for name, text in (("results.json", '{"schema": 4}'), ("run-info.json", "{}"), ("figure.npz", "x"),
                       ("notes.record", "mine"), ("draft.tmp", "mine"), (f"{HEX}.json", "{}"), ("lock", "mine")):
        (folder / name).write_text(text)
    return folder


def test_cache_clear_refuses_a_report_folder_and_deletes_nothing(tmp_path, capsys, snapshot, one_line_error):
    folder = _report_folder(tmp_path)
    before = snapshot(folder)
    code, out, err = _run(capsys, "cache", "clear", "--cache-dir", str(folder))
    assert code == 2 and out == "" and one_line_error(err, "--cache-dir", "not a moecl-verify results cache")
    assert snapshot(folder) == before


def test_cache_clear_through_the_environment_refuses_a_users_folder(tmp_path, capsys, monkeypatch, snapshot, one_line_error):
    folder = _report_folder(tmp_path)
    before = snapshot(folder)
    monkeypatch.setenv("MOECL_CACHE_DIR", str(folder))
    code, out, err = _run(capsys, "cache", "clear")
    assert code == 2 and one_line_error(err, "--cache-dir")
    assert snapshot(folder) == before


def test_a_file_named_like_the_marker_is_not_a_marker(tmp_path, capsys, snapshot, one_line_error):
    folder = _report_folder(tmp_path)
    (folder / MARKER).write_text('{"mine": true}')
    before = snapshot(folder)
    code, _, err = _run(capsys, "cache", "clear", "--cache-dir", str(folder))
    assert code == 2 and one_line_error(err, "--cache-dir")
    assert snapshot(folder) == before


def test_a_run_refuses_to_make_a_users_folder_its_cache(tmp_path, capsys, snapshot, one_line_error):
    folder = _report_folder(tmp_path)
    before = snapshot(folder)
    code, _, err = _run(capsys, "run", "--claims", "lemma4", "--budget", "smoke", "--quiet", "--format", "json",
                        "--out", str(tmp_path / "out"), "--cache-dir", str(folder))
    assert code == 2 and one_line_error(err, "--cache-dir", "figure.npz")
    assert snapshot(folder) == before and not (tmp_path / "out").exists()


def test_clear_deletes_only_entries_and_keeps_the_marker_and_a_users_file(tmp_path, capsys):
    folder = tmp_path / "cache"
    with ResultCache(folder) as cache:
        cache.put(HEX, {"x": [1.0]}, {"what": "chunk"})
        cache.put_record("claim-" + HEX, {"r": 1}, {"what": "record"})
    assert json.loads((folder / MARKER).read_text())["tool"] == "moecl-verify"
    (folder / "results.json").write_text("a user's file, put in the cache folder")
    code, out, _ = _run(capsys, "cache", "clear", "--cache-dir", str(folder))
    assert code == 0 and "removed 4 files" in out
    assert sorted(p.name for p in folder.iterdir()) == sorted([MARKER, "lock", "results.json"])


def test_a_cache_of_an_earlier_version_holding_only_entries_is_adopted(tmp_path):
    folder = tmp_path / "old-cache"
    folder.mkdir()
    (folder / f"{HEX}.npz").write_bytes(b"x")
    (folder / f"{HEX}.json").write_text("{}")
    (folder / "lock").write_text("12345")
    with ResultCache(folder):
        pass
    assert (folder / MARKER).is_file()
    assert cache_module.clear(folder) == 2


def test_an_edited_marker_cannot_widen_what_clear_deletes(tmp_path):
    folder = tmp_path / "cache"
    with ResultCache(folder):
        pass
    marker = json.loads((folder / MARKER).read_text())
    (folder / MARKER).write_text(json.dumps({**marker, "entries": ".*"}))
    (folder / "thesis.tex").write_text("mine")
    assert cache_module.clear(folder) == 0 and (folder / "thesis.tex").read_text() == "mine"


def test_keys_that_are_not_digests_are_refused(tmp_path):
    with ResultCache(tmp_path / "c") as cache:
        for key in ("../results", "results", "claim-" + "z" * 64):
            with pytest.raises(ValueError, match="not a SHA-256"):
                cache.put(key, {"x": [1.0]}, {})


def _read_only(monkeypatch):
    """The cache folder as a read-only one answers, also for root (who may write anywhere)."""
    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(cache_module.tempfile, "mkstemp", denied)


def test_a_read_only_cache_is_one_line_for_run(tmp_path, capsys, monkeypatch, snapshot, one_line_error):
    folder = tmp_path / "cache"
    with ResultCache(folder):
        pass
    _read_only(monkeypatch)
    code, _, err = _run(capsys, "run", "--claims", "lemma4", "--budget", "smoke", "--quiet", "--format", "json",
                        "--out", str(tmp_path / "out"), "--cache-dir", str(folder))
    assert code == 2 and one_line_error(err, "--cache-dir", "not writable")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only folder")
def test_a_read_only_cache_folder_is_one_line_for_run_and_clear(tmp_path, capsys, snapshot, one_line_error):
    folder = tmp_path / "cache"
    with ResultCache(folder) as cache:
        cache.put(HEX, {"x": [1.0]}, {})
    folder.chmod(0o555)
    try:
        for args in (["cache", "clear", "--cache-dir", str(folder)],
                     ["run", "--claims", "lemma4", "--budget", "smoke", "--quiet", "--format", "json",
                      "--out", str(tmp_path / "out"), "--cache-dir", str(folder)]):
            code, _, err = _run(capsys, *args)
            assert code == 2 and one_line_error(err, "--cache-dir"), err
    finally:
        folder.chmod(0o755)
