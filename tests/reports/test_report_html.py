"""report.html and the report's formulas: math that renders without a network, figures embedded.

The browser check of the full page is in test_report_browser.py; here the
converter itself, on hand-made text, and every formula of the smoke run's report.
"""

import re

import pytest

from moecl_verify.reports import html, math_text

pytestmark = pytest.mark.app


def test_formula_errors_are_caught():
    assert html.formula_error(r"\frac{1}{t-1}\sum_{\tau=1}^{t-1} \|w\|_2^2") is None
    assert html.formula_error(r"\arg\max_m h_m") is None  # TeX's \arg, rewritten for the converter
    assert "unknown command" in html.formula_error(r"\notacommand{x}")
    assert "%" in html.formula_error(r"10% of x")
    assert html.formula_error(r"10\% of x") is None


def test_prose_never_goes_into_display_math():
    assert math_text.display(r"\text{MoE beats a single expert.}") == "*MoE beats a single expert.*"
    assert math_text.display("forgetting is robust to Gamma: within 10% of its value") \
        == "*forgetting is robust to Gamma: within 10% of its value*"
    assert math_text.display(r"\mathbb{E}[F_t] < 10%") == r"$$ \mathbb{E}[F_t] < 10\% $$"
    # short text inside a formula is mathematics with words, not prose
    assert math_text.display(r"M=1:\ \text{eq. (19)} \to \text{eq. (17)}").startswith("$$")


def test_page_is_self_contained(tmp_path):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(1, 1))
    fig.add_subplot().plot([0, 1])
    fig.savefig(tmp_path / "fig_x.png")
    text = ("# Title\n\n## What stands and what falls\n\n| a | b |\n|---|---|\n| **falls** | $x^2$ |\n\n"
            "$$ \\frac{a}{b} $$\n\n![a figure](fig_x.png)\n\n$\\notacommand$\n")
    page = html.render(text, tmp_path)
    assert page.startswith("<!DOCTYPE html>")
    assert 'src="data:image/png;base64,' in page and "fig_x.png" not in page.split("<body>", 1)[1].replace(
        'alt="a figure"', "")
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in page
    assert '<strong class="v-falls">falls</strong>' in page
    assert page.count('class="math-error"') == 1  # the bad formula is shown as an error, not dropped
    # nothing refers to the network: no external scripts, stylesheets or images
    assert not re.search(r'<(script|link)\b', page)
    assert not re.search(r'src="https?:', page)


@pytest.mark.e2e
@pytest.mark.slow
def test_every_formula_of_the_smoke_report_renders(smoke_run):
    text = "".join((smoke_run.out / name).read_text(encoding="utf-8") for name in ("report.md", "report-details.md"))
    assert html.formula_errors(text) == []
    formulas = re.findall(r"\$\$(.+?)\$\$", text)
    assert len(formulas) > 50
    # no prose in display math: every display formula holds a TeX command, a sub/superscript or an operator
    assert [f for f in formulas if math_text.is_prose(f)] == []
