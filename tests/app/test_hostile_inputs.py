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
"""

import json
import math
import os

import pytest

from moecl_verify.cli import main
from moecl_verify.cli_simulate import memory_plan
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
    from moecl_verify.cli_simulate import DRAWS_PER_CHUNK_BYTES
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
