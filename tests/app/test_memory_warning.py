"""A run that may not fit in the machine's free memory says so before it starts, and what needs less."""

import pytest

from moecl_verify import cli, memory

# Peaks as a pack declares them (GB by budget and claim lanes).
PEAKS = {("smoke", 1): 0.4, ("smoke", 2): 0.8, ("standard", 1): 0.9, ("standard", 2): 1.2,
         ("full", 1): 2.1, ("full", 2): 3.2}


def test_no_warning_when_the_run_fits():
    assert memory.warning("full", 2, available=64.0, peaks=PEAKS) is None
    assert memory.warning("full", 2, available=None, peaks=PEAKS) is None


def test_fewer_lanes_are_named_when_they_fit():
    need_two, need_one = memory.need_gb("full", 2, PEAKS), memory.need_gb("full", 1, PEAKS)
    assert need_one < need_two
    text = memory.warning("full", 2, available=(need_one + need_two) / 2, peaks=PEAKS)
    assert text is not None and "2 claim lanes" in text and "--jobs 1" in text
    assert f"{need_two:.1f} GB" in text and f"{need_one:.1f} GB" in text


def test_a_smaller_budget_is_named_when_no_lane_count_fits():
    text = memory.warning("full", 2, available=0.5, peaks=PEAKS)
    assert "--budget standard --jobs 1" in text


def test_a_budget_the_pack_did_not_measure_gets_no_warning():
    assert memory.need_gb("full", 1, {}) is None
    assert memory.warning("full", 2, available=0.01, peaks={}) is None


def test_more_lanes_need_more():
    assert memory.need_gb("standard", 4, PEAKS) > memory.need_gb("standard", 2, PEAKS) > memory.need_gb("standard", 1, PEAKS)


def test_run_prints_the_warning_before_any_claim(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(memory, "available_gb", lambda: 0.01)

    class Stop(Exception):
        pass

    def refuse(*args, **kwargs):
        raise Stop  # the run would start here; the warning must already be out

    from moecl_verify.checks import runner

    monkeypatch.setattr(runner, "run", refuse)
    with pytest.raises(Stop):
        cli.main(["run", "--budget", "full", "--claims", "lemma4", "--out", str(tmp_path / "out"), "--quiet",
                  "--jobs", "2", "--no-cache"])
    err = capsys.readouterr().err.strip().splitlines()
    # One claim selected: one lane is busy, and the need measured on every claim is an upper bound.
    assert len(err) == 1 and err[0].startswith("moecl-verify: warning: a run of 1 claim at the full budget with 1 "
                                               "claim lane needs at most about")
    assert "--budget standard --jobs 1" in err[0]


def test_the_lanes_that_fit_are_solved_not_searched():
    """The largest lane count that fits agrees with a search wherever a search is cheap, and is found at once
    for any --jobs."""
    for budget in ("smoke", "standard", "full"):
        for available in (0.3, 0.5, 1.0, 1.4, 2.0, 3.0, 5.0, 10.0, 40.0):
            for below in range(1, 40):
                searched = next((n for n in range(below - 1, 0, -1)
                                 if memory.need_gb(budget, n, PEAKS) <= available), None)
                assert memory.most_lanes(budget, available, PEAKS, below) == searched, (budget, available, below)
    assert memory.most_lanes("full", 5.0, PEAKS, 10**20) == memory.most_lanes("full", 5.0, PEAKS, 100)
