"""Hostile and degenerate inputs (issue 7, item 4): each is refused in one line with exit 2, or handled
as documented (exit 0, finite output, a one-line note on stderr where the setting is unusual).

| input                                  | answer                                                        |
|----------------------------------------|---------------------------------------------------------------|
| s >= d (not overparameterized)         | exit 2, names --s                                             |
| s = 1                                  | runs: X_t is the signal column alone (Definition 1)           |
| sigma_t = 0 (X^T X singular)           | runs: minimum-norm step through the pseudo-inverse, with note |
| beta_t near 0 (--beta-max 1e-12)       | runs: ill-conditioned but solvable; outputs finite            |
| sigma0 >= 1                            | runs, with a note that the paper's regime is sigma0 < 1       |
| M = 1, N = 1                           | run (M = 1 is the single expert; N = 1 has D = 0)             |
| T = 1 (F_t undefined)                  | exit 2, names --T                                             |
| lambda = 0                             | runs: plain argmax routing, with note                         |
| Gamma < 0                              | exit 2, names --Gamma                                         |
| T too large for memory                 | exit 2 before allocating, names --T and --replicates          |
| NaN or infinite parameters             | exit 2, names the parameter                                   |
| --config with unknown keys             | exit 2, names the key and lists the known ones                |
| --claims matching nothing              | exit 2, names --claims                                        |
| --out that cannot be created/written   | exit 2, names --out                                           |
| cache directory locked by another run  | exit 2 (tests/checks/test_cli_cache.py)                       |
| results.json without meta (diff)       | exit 2, names the file and the missing field                  |
| an entry with verdict "maybe" (diff)   | exit 2, names the entry's field and the four verdicts         |
| results.json of a newer schema         | exit 2, names the schema and the ones this version reads      |
| truncated results.json (report --from) | exit 2, names the file, says it ends early; nothing written   |
| a key twice in one object of a results file (report --from, diff, list --from) | exit 2, names the object and the key |
| a run whose results.json the reader would refuse | exit 2, names the field; no results.json, nothing else written |
| a bad --from file (list)               | exit 2; a bad default report/results.json: warning, exit 0    |
| MNIST IDX header not matching its size | exit 2 before any claim runs, names the file (plain or .gz)   |
| MNIST file that is a folder            | exit 2, names the missing file                                |
| unreadable MNIST folder                | exit 2 (skipped as root)                                      |

tests/app/test_fuzz_inputs.py mutates results.json and IDX files at random for the same answers.
"""

import gzip
import json
import math
import os
import re
import struct
from dataclasses import replace

import pytest

from moecl_verify.cli import main
from moecl_verify.packs.moe_cl.commands.simulate import memory_plan
from moecl_verify.errors import UsageError

SMALL = ["simulate", "--T", "4", "--replicates", "6", "--json"]


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("args, name", [
    (["simulate", "--s", "10", "--d", "10"], "--s"),
    (["simulate", "--T", "1"], "--T"),
    (["simulate", "--model", "moe", "--Gamma", "-0.5"], "--Gamma"),
    (["simulate", "--model", "moe", "--eta", "nan"], "--eta"),
    (["simulate", "--sigma0", "inf"], "--sigma0"),
    (["simulate", "--model", "moe", "--lam", "-inf"], "--lam"),
    (["simulate", "--T", "100000000", "--replicates", "100000"], "--T"),
    (["run", "--claims", "lemma99*"], "--claims"),
])
def test_refused_in_one_line_with_exit_2(capsys, args, name):
    code, out, err = _run(capsys, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("moecl-verify: error:") and name in err


@pytest.mark.parametrize("args, note", [
    (["--s", "1"], None),
    (["--sigma-t", "0"], "pseudo-inverse"),
    (["--beta-max", "1e-12"], None),
    (["--sigma0", "1.5"], "outside the paper's regime"),
    (["--N", "1"], None),
    (["--model", "moe", "--M", "1"], None),
    (["--model", "moe", "--lam", "0"], "argmax"),
    (["--model", "moe", "--features", "gaussian", "--s", "1", "--N", "1", "--M", "1"], None),
])
def test_degenerate_but_legal_settings_run_with_finite_output(capsys, args, note):
    code, out, err = _run(capsys, *SMALL, *args)
    assert code == 0, err
    doc = json.loads(out)
    values = [row[k] for row in doc["rounds"] for k in ("forgetting", "generalization") if row[k] is not None]
    assert values and all(math.isfinite(v) for v in values)
    if note:
        assert note in err and err.count("\n") == 1
    else:
        assert err == ""


def test_n_equal_one_has_no_task_gap(capsys):
    _, out, _ = _run(capsys, *SMALL, "--N", "1")
    assert json.loads(out)["config"]["D"] == 0.0


def test_draws_are_streamed_so_chunks_do_not_shrink_with_the_horizon():
    # Draws come BLOCK_ROUNDS rounds at a time: the chunk size is the same at T = 20 and T = 10^5, and a
    # block of a chunk's features stays within DRAWS_PER_CHUNK_BYTES (two copies for Definition 1).
    from moecl_verify.packs.moe_cl.commands.simulate import DRAWS_PER_CHUNK_BYTES
    from moecl_verify.numeric.streams import BLOCK_ROUNDS

    long = memory_plan(R=10, T=100_000, d=10, s=6, moe=False, limit=2**40)
    assert long == memory_plan(R=10, T=20, d=10, s=6, moe=True, limit=2**40) > 1
    assert long * BLOCK_ROUNDS * 10 * 6 * 8 * 2 <= DRAWS_PER_CHUNK_BYTES
    assert memory_plan(R=10, T=20, d=1000, s=600, moe=True, limit=2**40) < long
    with pytest.raises(UsageError, match="lower --T or --replicates"):
        memory_plan(R=10**6, T=10**6, d=10, s=6, moe=True, limit=2**34)


@pytest.mark.parametrize("doc, word", [
    ({"M": 4, "colour": "red"}, "unknown key 'colour'"),
    ({"no-termination": "yes"}, "true or false"),
    ({"features": "fourier"}, "must be one of"),
    ([1, 2], "JSON object"),
])
def test_config_file_errors(capsys, tmp_path, doc, word):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc))
    code, _, err = _run(capsys, "simulate", "--config", str(path))
    assert code == 2 and err.count("\n") == 1 and word in err


def test_config_file_values_apply_and_the_command_line_wins(capsys, tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"model": "moe", "M": 4, "no-termination": True, "T": 3, "replicates": 4}))
    code, out, _ = _run(capsys, "simulate", "--config", str(path), "--json", "--M", "6")
    config = json.loads(out)["config"]
    assert code == 0 and config["M"] == 6 and config["termination"] is False and config["T"] == 3


def test_out_that_cannot_be_a_directory(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _, err = _run(capsys, "run", "--claims", "lemma4", "--out", str(blocker / "sub"))
    assert code == 2 and "--out" in err and err.count("\n") == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_out_inside_a_read_only_directory(capsys, tmp_path):
    tmp_path.chmod(0o500)
    try:
        code, _, err = _run(capsys, "run", "--claims", "lemma4", "--out", str(tmp_path / "rep"))
    finally:
        tmp_path.chmod(0o700)
    assert code == 2 and "--out" in err


def _refused(err: str, *words: str) -> bool:
    return err.count("\n") == 1 and err.startswith("moecl-verify: error:") and all(w in err for w in words)


@pytest.mark.parametrize("change, words", [
    (lambda doc: doc.pop("meta"), ["meta: missing"]),
    (lambda doc: doc["results"][0].update(verdict="maybe"),
     ["results[0].verdict: 'maybe' is not one of confirmed, refuted, inconclusive, not_checkable"]),
    (lambda doc: doc.update(schema_version=4), ["written by a newer moecl-verify: schema 4, this version reads 1, 2, 3"]),
    (lambda doc: doc["results"][0].update(form="guessed"), ["results[0].form", "stated, corrected, derived"]),
    (lambda doc: doc["results"][0].pop("evidence_type"), ["results[0].evidence_type: missing"]),
])
def test_diff_refuses_a_bad_results_file_in_one_line(capsys, tmp_path, results_document, change, words):
    # Before: no meta was a KeyError traceback with exit 1 (which CI reads as a reversed finding), and an
    # unknown verdict passed for a moved one.
    doc = results_document({})
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(doc))
    change(doc)
    bad.write_text(json.dumps(doc))
    for args in ((str(good), str(bad)), (str(bad), str(good))):
        code, out, err = _run(capsys, "diff", *args)
        assert code == 2 and out == "" and _refused(err, "diff:", repr(str(bad)), *words), err


def test_report_from_a_truncated_file_writes_nothing(capsys, tmp_path, tiny_run):
    from moecl_verify.reports import results_json

    path = results_json.write(tiny_run, tmp_path / "results.json")
    path.write_text(path.read_text(encoding="utf-8")[:-200], encoding="utf-8")
    code, out, err = _run(capsys, "report", "--from", str(path), "--out", str(tmp_path / "out"), "--format", "json")
    assert code == 2 and out == "" and _refused(err, "--from", repr(str(path)), "truncated"), err
    assert not (tmp_path / "out").exists()


def _duplicated(text: str, field: str, again: str) -> str:
    """The file's text with ``field`` (its first occurrence, ``"name": value``) followed by ``again``: one object
    naming a key twice."""
    at = text.index(field) + len(field)
    return text[:at] + ", " + again + text[at:]


@pytest.mark.parametrize("field, again, where", [
    ('"verdict": "confirmed"', '"verdict": "refuted"', "results[0]: the key 'verdict' appears twice"),
    ('"tool": "moecl-verify"', '"tool": "moecl-verify"', "the document: the key 'tool' appears twice"),
    ('"features": "gaussian"', '"features": "definition1"', "results[0].key: the key 'features' appears twice"),
])
def test_a_key_twice_in_one_object_is_refused_by_every_reader(capsys, tmp_path, tiny_run, field, again, where):
    # Before: json kept the last of the two, so the file read as whichever value a parser happened to keep.
    from moecl_verify.reports import results_json

    good = results_json.write(tiny_run, tmp_path / "good.json")
    bad = tmp_path / "bad.json"
    bad.write_text(_duplicated(good.read_text(encoding="utf-8"), field, again), encoding="utf-8")
    json.loads(bad.read_text(encoding="utf-8"))  # still JSON: only the key twice is wrong
    with pytest.raises(results_json.ResultsFileError, match=re.escape(where)):
        results_json.load(bad)
    out = tmp_path / "out"
    for args, prefix in ((["report", "--from", str(bad), "--out", str(out), "--format", "json,md"], "--from"),
                         (["diff", str(good), str(bad)], "diff"), (["list", "--from", str(bad)], "--from")):
        code, stdout, err = _run(capsys, *args)
        assert code == 2 and _refused(err, prefix, repr(str(bad)), where), (args, err)
        assert stdout == "" and "Traceback" not in err
    assert not out.exists()


def _without_evidence_type(results: list) -> None:
    results[1] = replace(results[1], evidence_type="")


def _twice(results: list) -> None:
    results.insert(2, results[1])


@pytest.mark.parametrize("spoil, words", [
    (_without_evidence_type, ["results[1].evidence_type: '' is not one of mean"]),
    (_twice, ["results[2] has the key of results[1]"]),
])
def test_a_run_whose_results_file_the_reader_would_refuse_writes_nothing(capsys, tmp_path, monkeypatch, tiny_run,
                                                                         spoil, words):
    # Before: results.json was written as it came, and `report --from`, `diff` and `list --from` refused it.
    from moecl_verify.checks import runner

    results = list(tiny_run.results)
    spoil(results)
    monkeypatch.setattr(runner, "run", lambda *a, **k: replace(tiny_run, results=tuple(results)))
    out = tmp_path / "out"
    code, stdout, err = _run(capsys, "run", "--claims", "lemma2", "--out", str(out), "--quiet", "--format", "json,md")
    path = out / "results.json"
    assert code == 2 and _refused(err, repr(str(path)), "not written: the reader would refuse it", *words), err
    assert "Traceback" not in err and stdout == ""
    # Nor any other report, nor run-info.json: only the folder's lock, the tool's own bookkeeping.
    assert [p.name for p in out.iterdir()] in ([], [".moecl-lock"])


def test_list_refuses_a_bad_from_file_and_warns_about_a_bad_default(capsys, tmp_path, monkeypatch, results_document):
    doc = results_document({})
    doc["results"][0]["verdict"] = "maybe"  # ClaimResult itself refuses it: only a file can hold it
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "results.json").write_text(json.dumps(doc))
    code, _, err = _run(capsys, "list", "--from", str(tmp_path / "report"))
    assert code == 2 and _refused(err, "--from", "results[0].verdict"), err
    monkeypatch.chdir(tmp_path)  # the default file, report/results.json: the listing goes on without verdicts
    code, out, err = _run(capsys, "list")
    assert code == 0 and "lemma2" in out
    assert err.count("\n") == 1 and err.startswith("moecl-verify: warning:") and "verdicts left out" in err


def _idx(shape: tuple[int, ...], data: bytes) -> bytes:
    """An IDX file of unsigned bytes, written from the format's description: its header may claim any shape."""
    return bytes([0, 0, 0x08, len(shape)]) + b"".join(struct.pack(">I", n) for n in shape) + data


def _mnist_folder(folder, compressed=False):
    """Four well-formed, tiny MNIST files (3 training and 2 test images of 28 x 28)."""
    folder.mkdir()
    for name, shape in (("train-images-idx3-ubyte", (3, 28, 28)), ("train-labels-idx1-ubyte", (3,)),
                        ("t10k-images-idx3-ubyte", (2, 28, 28)), ("t10k-labels-idx1-ubyte", (2,))):
        data = _idx(shape, bytes(math.prod(shape)))
        (folder / (name + (".gz" if compressed else ""))).write_bytes(gzip.compress(data) if compressed else data)
    return folder


@pytest.mark.parametrize("compressed", [False, True])
def test_mnist_file_whose_header_does_not_match_its_size_stops_the_run_before_it_starts(capsys, tmp_path, compressed):
    # Before: IdxError with a traceback and exit 1, once Figure 3's claim had started.
    folder = _mnist_folder(tmp_path / "mnist", compressed)
    name = "train-images-idx3-ubyte" + (".gz" if compressed else "")
    data = _idx((2**31, 28, 28), bytes(100))
    (folder / name).write_bytes(gzip.compress(data) if compressed else data)
    out = tmp_path / "out"
    code, _, err = _run(capsys, "run", "--mnist", str(folder), "--claims", "lemma2", "--out", str(out), "--quiet",
                        "--format", "json")
    assert code == 2 and _refused(err, "--mnist", str(folder / name), "needs"), err
    assert not (out / "results.json").exists()


def test_mnist_file_that_is_a_folder_is_refused(capsys, tmp_path):
    folder = _mnist_folder(tmp_path / "mnist")
    (folder / "t10k-labels-idx1-ubyte").unlink()
    (folder / "t10k-labels-idx1-ubyte").mkdir()
    code, _, err = _run(capsys, "run", "--mnist", str(folder), "--claims", "lemma2", "--out", str(tmp_path / "o"))
    assert code == 2 and _refused(err, "--mnist", "t10k-labels-idx1-ubyte"), err


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads unreadable files")
@pytest.mark.parametrize("locked", ["folder", "file"])
def test_unreadable_mnist_folder_or_file_is_refused(capsys, tmp_path, locked):
    folder = _mnist_folder(tmp_path / "mnist")
    target = folder if locked == "folder" else folder / "train-labels-idx1-ubyte"
    target.chmod(0)
    try:
        code, _, err = _run(capsys, "run", "--mnist", str(folder), "--claims", "lemma2", "--out", str(tmp_path / "o"))
    finally:
        target.chmod(0o700)
    assert code == 2 and _refused(err, "--mnist"), err
