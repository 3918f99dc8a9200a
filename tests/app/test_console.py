"""An ASCII-only terminal: the commands finish, spelling the paper's symbols in ASCII."""

import os
import subprocess
import sys

import pytest

from moecl_verify.console import spell


def _ascii(*args, cwd=None):
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    return subprocess.run([sys.executable, "-m", "moecl_verify", *args], capture_output=True, cwd=cwd, env=env,
                          timeout=300)


def test_symbols_are_spelled():
    assert [spell(c) for c in "σ≤—é∀"] == ["sigma", "<=", "-", "e", "?"]


@pytest.mark.parametrize("args", [["show", "lemma3"], ["list", "--pack", "moe-chapter"], ["show", "prop2.t1"]])
def test_commands_finish_on_an_ascii_terminal(args):
    done = _ascii(*args)
    assert done.returncode == 0, done.stderr.decode("ascii", "replace")
    assert b"Traceback" not in done.stderr and done.stdout
    done.stdout.decode("ascii")  # nothing but ASCII reached the terminal


def test_run_finishes_on_an_ascii_terminal(tmp_path):
    done = _ascii("run", "--claims", "lemma4", "--budget", "smoke", "--no-cache", "--out", str(tmp_path / "out"),
                  cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode("ascii", "replace")
    assert b"Traceback" not in done.stderr and b"entries" in done.stdout
    # The files keep the paper's symbols: only the terminal's text is spelled.
    assert "σ" in (tmp_path / "out" / "report.md").read_text(encoding="utf-8") or \
        "\\sigma" in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
