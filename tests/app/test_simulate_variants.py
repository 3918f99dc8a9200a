"""`moecl-verify simulate --model moe` with the variants outside the paper: top-k, balancing, task frequencies.

Run in process (tiny sizes); each bad value must give one line on stderr naming the option and exit 2.
"""

import json

import pytest

from moecl_verify.packs.moe_cl.commands import simulate as cli_simulate
from moecl_verify.cli import main
from moecl_verify.numeric import moe

TINY = ["simulate", "--model", "moe", "--T", "30", "--replicates", "20", "--json"]


def run(capsys, *args):
    code = main([*TINY, *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_defaults_spelled_out_are_the_paper_run(capsys):
    plain = run(capsys)
    spelled = run(capsys, "--top-k", "1", "--balance", "aux", "--bias-rate", "0", "--task-freq", "uniform")
    assert plain == spelled
    assert plain["config"]["top_k"] == 1 and plain["config"]["balance"] == "aux"
    assert "task_schedule" not in plain["summary"] and "mean_final_bias_per_expert" not in plain["summary"]


def test_top_k_routes_k_experts_per_round(capsys):
    doc = run(capsys, "--top-k", "2", "--M", "4")
    assert doc["config"]["top_k"] == 2
    assert abs(sum(doc["summary"]["mean_load_per_expert"]) - 2 * 30) < 1e-9  # k experts per round
    top1 = run(capsys, "--M", "4")
    assert doc["rounds"] != top1["rounds"]


def test_bias_balancing_reports_its_bias(capsys):
    doc = run(capsys, "--balance", "bias", "--bias-rate", "0.5", "--bias-window", "10", "--M", "4")
    config = doc["config"]
    assert config["balance"] == "bias" and config["bias_rate"] == 0.5 and config["bias_window"] == 10
    bias = doc["summary"]["mean_final_bias_per_expert"]
    assert len(bias) == 4 and any(b != 0 for b in bias)
    # Every step is a multiple of the rate: each replicate's final bias is, hence so is 20 times their mean.
    assert all(abs(20 * b / 0.5 - round(20 * b / 0.5)) < 1e-9 for b in bias)


def test_task_frequencies_shape_the_drawn_tasks(capsys):
    only_first = run(capsys, "--N", "3", "--task-freq", "1,0,0")
    assert only_first["summary"]["observed_task_share"] == [1.0, 0.0, 0.0]
    never_rare = run(capsys, "--N", "3", "--task-freq", "rare:0")
    assert never_rare["summary"]["observed_task_share"][2] == 0.0
    late = run(capsys, "--N", "3", "--new-task-at", "21")
    phases = late["summary"]["task_schedule"]
    assert [start for start, _ in phases] == [1, 21] and phases[0][1][2] == 0.0
    # Task 3 can arrive in rounds 21..30 only: at most a third of the rounds.
    assert 0 < late["summary"]["observed_task_share"][2] <= 10 / 30
    swapped = run(capsys, "--N", "3", "--task-freq", "zipf:2", "--freq-swap-at", "16")
    first, second = swapped["summary"]["task_schedule"]
    assert second[0] == 16 and second[1] == first[1][::-1]
    assert swapped["config"]["task_freq"] == "zipf:2" and swapped["config"]["freq_swap_at"] == 16


def test_config_file_keys(tmp_path, capsys):
    path = tmp_path / "variants.json"
    path.write_text(json.dumps({"top-k": 2, "balance": "bias", "bias-rate": 0.25, "task-freq": "zipf:1", "M": 4}))
    doc = run(capsys, "--config", str(path))
    assert doc["config"]["top_k"] == 2 and doc["config"]["bias_rate"] == 0.25 and doc["config"]["task_freq"] == "zipf:1"
    path.write_text(json.dumps({"top-k": 0}))
    assert main([*TINY, "--config", str(path)]) == 2
    assert "--top-k" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, name",
    [
        (["--task-freq", "zipf:-1"], "--task-freq"),
        (["--task-freq", "rare:1.5"], "--task-freq"),
        (["--task-freq", "zipf:x"], "--task-freq"),
        (["--task-freq", "0.5,0.5"], "--task-freq"),
        (["--task-freq", "0.5,0.5,0,0,0,0.5"], "--task-freq"),
        (["--task-freq=-0.5,1.5,0,0,0,0"], ">= 0"),
        (["--task-freq", "often"], "--task-freq"),
        (["--top-k", "0"], "--top-k"),
        (["--top-k", "6"], "--top-k"),
        (["--top-k", "-1"], "--top-k"),
        (["--balance", "bias", "--bias-rate", "-1"], "--bias-rate"),
        (["--bias-rate", "0.1"], "--bias-rate"),
        (["--balance", "bias", "--bias-rate", "0.1", "--bias-window", "0"], "--bias-window"),
        (["--balance", "none", "--bias-window", "5"], "--bias-window"),
        (["--balance", "sometimes"], "--balance"),
        (["--new-task-at", "0"], "--new-task-at"),
        (["--new-task-at", "31"], "--new-task-at"),
        (["--freq-swap-at", "0"], "--freq-swap-at"),
        (["--freq-swap-at", "40"], "--freq-swap-at"),
        (["--task-freq", "0,0,0,0,0,1", "--new-task-at", "5"], "--new-task-at"),
        (["--router", "oracle", "--top-k", "2"], "--top-k"),
        (["--router", "oracle", "--balance", "bias"], "--balance"),
    ],
)
def test_bad_values_exit_2_with_one_line(capsys, args, name):
    assert main([*TINY, *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and name in err, err


@pytest.mark.parametrize("args", [["--top-k", "2"], ["--task-freq", "zipf:1"], ["--balance", "none"]])
def test_variants_need_the_moe_model(capsys, args):
    assert main(["simulate", "--model", "single", "--T", "5", "--replicates", "4", *args]) == 2
    assert args[0] in capsys.readouterr().err


def test_balance_choices_are_the_simulator_s():
    assert cli_simulate.BALANCES == moe.BALANCES


def test_engines_agree_and_the_complement_feature_model_is_single_expert_only(capsys):
    """--engine numpy and --engine numba run the same draws (equal to rounding); gaussian_complement runs the
    single expert and is refused in one line for Algorithm 1, whose gate reads sum_i X_t,i."""
    numba_run = run(capsys, "--engine", "numba")
    numpy_run = run(capsys, "--engine", "numpy")
    assert numba_run["config"]["engine"] == "numba" and numpy_run["config"]["engine"] == "numpy"
    for a, b in zip(numba_run["rounds"], numpy_run["rounds"]):
        for key, value in a.items():
            if isinstance(value, float):
                assert value == pytest.approx(b[key], rel=1e-9, abs=1e-12), key
    single = ["simulate", "--model", "single", "--T", "30", "--replicates", "20", "--json"]
    assert main([*single, "--features", "gaussian_complement"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["config"]["features"] == "gaussian_complement"
    assert main([*TINY, "--features", "gaussian_complement"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "gaussian_complement" in err[0]
