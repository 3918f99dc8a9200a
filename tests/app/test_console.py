"""Output to a terminal that cannot show the tool's notation (app/console.py): with ``PYTHONIOENCODING=ascii``
(or a C locale, an old console) printing σ0, ≤ or — raised ``UnicodeEncodeError`` in the middle of a command,
e.g. ``list --pack moe-chapter`` at its first line, or ``run`` after every file was written.  After
``configure_streams()`` such streams write ASCII spellings instead (σ0 as sigma0, ≤ as <=), and streams that can
show everything are left alone.  The progress display (app/progress.py) spells its lines in ASCII itself on
such a stream, so that they keep their width.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moecl_verify.console import ERRORS, ascii_spelling, can_encode, configure_streams
from moecl_verify.execution import CACHE_ENV
from moecl_verify.progress import LOG_WIDTH, RunDisplay

pytestmark = pytest.mark.app

CONFIGURE = "from moecl_verify.console import configure_streams; configure_streams(); "
SAMPLE = "print('σ0 ≤ 1 — ok')"


def _python(code: str, encoding: str | None = "ascii", env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -c code`` with stdout and stderr encoded as ``encoding`` (PYTHONIOENCODING), as bytes."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONIOENCODING"}
    if encoding is not None:
        environment["PYTHONIOENCODING"] = encoding
    environment.update(env or {})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, env=environment, timeout=300)


def test_without_it_an_ascii_stdout_fails_on_the_papers_notation():
    # The fault itself: Python's default for stdout is to raise.
    ran = _python(SAMPLE)
    assert ran.returncode == 1 and b"UnicodeEncodeError" in ran.stderr


def test_an_ascii_stdout_and_stderr_write_ascii_spellings():
    ran = _python(CONFIGURE + SAMPLE + "; import sys; print('η = 0.5 ± 0.1', file=sys.stderr)")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == b"sigma0 <= 1 - ok\n"
    assert ran.stderr == b"eta = 0.5 +/- 0.1\n"  # not Python's default for stderr, \u03b7 = 0.5 \xb1 0.1


def test_a_latin_1_stdout_keeps_what_it_can_show():
    ran = _python(CONFIGURE + "print('σ0 × 2 ≤ ½')", encoding="latin-1")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "sigma0 × 2 <= ½\n".encode("latin-1")


def test_a_utf_8_stream_is_left_alone():
    ran = _python(CONFIGURE.replace("configure_streams(); ", "print(configure_streams()); ") + SAMPLE,
                  encoding="utf-8")
    assert ran.returncode == 0 and ran.stdout == "[]\nσ0 ≤ 1 — ok\n".encode()


def test_an_error_handler_the_user_chose_is_kept():
    ran = _python(CONFIGURE.replace("configure_streams(); ", "print(configure_streams()); ") + SAMPLE,
                  encoding="ascii:replace")
    assert ran.returncode == 0 and ran.stdout == b"['stderr']\n?0 ? 1 ? ok\n"


def test_undecodable_file_name_bytes_are_written_back_as_bytes():
    # Under a C locale, a file name's undecodable bytes are carried as lone surrogates (surrogateescape).
    assert "\udcff-\udc80".encode("ascii", ERRORS) == b"\xff-\x80"


@pytest.mark.parametrize("text, spelt", [
    ("σ", "sigma"), ("—", "-"), ("≤", "<="), ("≥", ">="), ("×", "x"), ("∞", "inf"), ("θ", "theta"), ("η", "eta"),
    ("τ", "tau"), ("λ", "lambda"), ("‖", "||"), ("→", "->"), ("≈", "~"), ("±", "+/-"), ("Γ", "Gamma"),
    ("Δ", "Delta"), ("…", "..."), ("–", "-"), ("−", "-"), ("·", "*"), ("ς", "sigma"), ("ά", "alpha"),
    ("σ0 ≤ 1 — ok", "sigma0 <= 1 - ok"), ("10⁻¹²", "10^-12"), ("σ₀²", "sigma_0^2"), ("Xᵀ", "X^T"),
    ("1[i ∈ TopK]", "1[i in TopK]"), ("Σ_{j∈TopK}", "Sigma_{j in TopK}"), ("w̃", "w"), ("½", "1/2"),
    ("（，：；）", "(,:;)"), ("✓ ✗", "ok x"), ("的专家 i", "??? i"), ("plain ascii", "plain ascii"),
])
def test_the_spellings(text, spelt):
    assert ascii_spelling(text) == spelt
    assert text.encode("ascii", ERRORS) == spelt.encode("ascii")  # the codec error handler, on whole strings


@given(st.text())
def test_every_text_is_spelt_in_ascii(text):
    assert ascii_spelling(text).isascii()


def test_can_encode():
    assert can_encode(io.StringIO())  # text kept as text
    assert not can_encode(io.TextIOWrapper(io.BytesIO(), encoding="ascii"))
    assert can_encode(io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))


# -- the command line on an ASCII terminal (configure_streams, then the command line's entry point) ----------------

MAIN = CONFIGURE + "from moecl_verify.cli import main; raise SystemExit(main({args!r}))"


@pytest.mark.heavy
def test_list_of_a_pack_written_in_chinese_on_an_ascii_stdout():
    ran = _python(MAIN.format(args=["list", "--pack", "moe-chapter"]))
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.isascii() and b"aux.frequencies" in ran.stdout and b"Chapter 1.5" in ran.stdout


@pytest.mark.heavy
def test_run_into_a_folder_with_greek_in_its_name_ends_normally(tmp_path):
    # Before: every file was written, then the closing line ("all outputs in .../σ-run/") raised.
    out = tmp_path / "σ-run"
    args = ["run", "--pack", "moe-chapter", "--claims", "aux.frequencies", "--format", "json", "--out", str(out)]
    ran = _python(MAIN.format(args=args), env={CACHE_ENV: str(tmp_path / "cache")})
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.isascii() and ran.stderr.isascii()
    assert f"all outputs in {tmp_path}/sigma-run/".encode() in ran.stdout
    assert (out / "results.json").is_file()


# -- the progress display --------------------------------------------------------------------------------------------

LONG = "fig2 runs σ0 = 0.4 — η ≤ 1, λ = 0.3 " + "x" * 120


def _ascii_stream() -> io.TextIOWrapper:
    """A stream that raises on anything ASCII cannot hold (Python's default for stdout)."""
    return io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="strict", write_through=True)


def test_the_log_display_on_an_ascii_stream_spells_and_keeps_its_width():
    stream = _ascii_stream()
    with RunDisplay(stream=stream) as display:
        assert display.mode == "log"
        display.claim(1, 1, "lemma2", "start")
        display.step(LONG)
        display.claim(1, 1, "lemma2", "done")
    lines = stream.buffer.getvalue().decode("ascii").splitlines()
    assert lines[0].startswith("fig2 runs sigma0 = 0.4 - eta <= 1, lambda = 0.3 xxx") and lines[0].endswith("...")
    assert all(len(line) <= LOG_WIDTH for line in lines) and lines[1].startswith("[1/1] lemma2 done")


def test_the_terminal_display_on_an_ascii_stream_spells_and_keeps_its_width(monkeypatch):
    import re

    from rich.console import Console

    monkeypatch.setenv("TERM", "xterm")  # a terminal that draws frames (under TERM=dumb rich draws only the last)
    stream = _ascii_stream()
    console = Console(file=stream, force_terminal=True, width=100, color_system=None)
    with RunDisplay(console=console) as display:
        display.claim(1, 2, "lemma2", "start")
        display.work(LONG, 3, 10)
        display._rich.refresh()  # the periodic refresh, drawn now
        display.claim(1, 2, "lemma2", "done")
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", stream.buffer.getvalue().decode("ascii"))
    frames = [f for f in re.split(r"[\r\n]", text) if f.strip()]
    assert any("lemma2 * fig2 runs sigma0 = 0.4 - eta <=" in f for f in frames), frames
    assert all(len(f) <= 100 for f in frames), frames  # cut to the width, after spelling
