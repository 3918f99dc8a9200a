"""report.html and the report's formulas: math that renders without a network, figures embedded.

The browser check of the full page is in test_report_browser.py; here the
converter itself, on hand-made text, and every formula of the smoke run's report.
"""

import re
from pathlib import Path

import pytest

from moecl_verify.checks.model import ClaimResult, RunResult
from moecl_verify.reports import html, markdown, math_text

pytestmark = pytest.mark.app

# Visible text that is TeX: a backslash and a command name, or one of TeX's spacing commands.
RAW_TEX = re.compile(r"\\(?:[A-Za-z]+|[,!;:])")


def _visible_text(page: str) -> str:
    """The text of a page's body outside its formulas (tags dropped, entities left as they are)."""
    body = page.split("<body>", 1)[1]
    body = re.sub(r"<math\b.*?</math>", " ", body, flags=re.S)
    return re.sub(r"<[^>]+>", " ", body)


def _formulas_seen(markdown_text: str) -> list[str]:
    """The formulas the page's parser hands to the converter, in order."""
    seen: list[str] = []
    html._parser(lambda latex, options: seen.append(latex) or "").render(markdown_text)
    return seen


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
    # every exact entry's statement is math (or a sentence), not TeX shown as text
    from moecl_verify.reports import results_json

    run = results_json.load(smoke_run.out / "results.json")
    stated = [r.formula for r in run.results if r.evidence_type == "exact" and r.formula
              and not math_text.is_prose(r.formula)]
    seen = {f.strip() for f in _formulas_seen(text)}
    assert len(stated) > 10 and [f for f in stated if math_text.escape_percent(f.strip()) not in seen] == []


# Formulas of the kind the exact-entries table states: absolute values and norms (a table cell splits at
# ``|``), TeX's spacing commands (markdown takes ``\,`` and ``\!`` for escapes), ``%``, a trailing ``\\``.
CELL_FORMULAS = [
    r"|\textstyle\sum_{i\ge2}\theta^\top X_{t,i}| \le \max_j \theta_j \,|\sum_{i\ge2}\sum_j X_{t,(i,j)}|",
    r"2\exp\!\big(-\sigma_0^2 s^2 d^2 / \|X_{t,i}\|_\infty\big) = o(1)",
    r"M^2\|\hat h-h\|_\infty \;\Rightarrow\; \frac{\lambda}{M^2}\|\hat h-h\|_\infty\ ?",
    r"\Pr(|\mathcal M_n| = 0) \le 10% \text{ of } \|w\|_2^2",
    r"a_{1} = b \\",
]


@pytest.mark.parametrize("formula", CELL_FORMULAS)
def test_a_formula_in_a_table_cell_reaches_the_converter_as_written(formula):
    text = f"| claim | statement checked |\n|---|---|\n| `x` | {markdown.statement_cell(formula)} |\n"
    seen = _formulas_seen(text)
    assert [f.strip() for f in seen] == [math_text.escape_percent(formula)]
    assert html.formula_errors(text) == []
    page = html.render(text, Path("."))
    assert page.count("<td>") == 2  # one row of two cells: no | of the formula split the cell
    assert page.count("<math ") == 1 and not RAW_TEX.search(_visible_text(page))


def test_a_sentence_in_a_table_cell_stays_text():
    for sentence, shown in [("E[F_t | routing] < eq. (19) RHS(routing) for every sequence",
                             "E[F_t | routing] &lt; eq. (19) RHS(routing) for every sequence"),
                            (r"\text{eq. (21)}", "eq. (21)"),
                            ("costs $5 to $6 for every single item", "costs $5 to $6 for every single item")]:
        text = f"| claim | statement checked |\n|---|---|\n| `x` | {markdown.statement_cell(sentence)} |\n"
        page = html.render(text, Path("."))
        assert "<math" not in page and f"<td>{shown}</td>" in page, page
    assert markdown.statement_cell("") == "—"


def test_the_exact_entries_table_states_formulas_as_math():
    entries = tuple(ClaimResult(id="demo", source="-", kind="symbolic identity", form="stated", verdict="refuted",
                                expected=None, observed=None, stderr=None, p_value=None, false_fail_rate=None,
                                min_detectable=None, config={"part": f"part {i}"}, evidence="sympy",
                                formula=formula, evidence_type="exact")
                    for i, formula in enumerate([*CELL_FORMULAS, "E[F_t | routing] < eq. (19) RHS for every sequence"]))
    lines: list[str] = []
    markdown._evidence_tables(lines.append, RunResult(entries, (), (), {}, ()))
    text = "\n".join(lines)
    assert [f.strip() for f in _formulas_seen(text)] == [math_text.escape_percent(f) for f in CELL_FORMULAS]
    page = html.render(text, Path("."))
    assert page.count("<tr>") == 1 + len(entries) and page.count("<math ") == len(CELL_FORMULAS)
    assert not RAW_TEX.search(_visible_text(page))
    assert "E[F_t | routing] &lt; eq. (19) RHS for every sequence" in page


def test_a_link_to_a_figure_points_inside_the_page(tmp_path):
    """The bottom line links a figure's file; in the page (sent alone, without the files) the link must open the
    embedded figure instead, in whatever collapsed section holds it."""
    from matplotlib.figure import Figure

    from moecl_verify.reports.markdown import Report, Section

    for name in ("fig_a.png", "fig_b.png"):
        fig = Figure(figsize=(1, 1))
        fig.add_subplot().plot([0, 1])
        fig.savefig(tmp_path / name)
    report = Report("# T\n\n- a finding ([figure](fig_b.png)); and a file that is not a figure ([x](notes.png)).\n",
                    (Section("claims", "Claims", "## Claims\n\n![a](fig_a.png)\n\n![b](fig_b.png)\n\n![b again](fig_b.png)\n"),))
    page = html.render_report(report, tmp_path)
    assert '<a href="#figure-2">figure</a>' in page  # fig_b is the page's second figure
    assert page.count('id="figure-2"') == 1 and 'id="figure-1"' in page  # the first occurrence holds the id
    assert '<a href="notes.png">' in page  # not embedded, left alone
    body = page.split("<body>", 1)[1]
    assert "fig_a.png" not in body and "fig_b.png" not in body.replace('alt="b again"', "")
    # the page's script opens the section holding a link's target
    assert "p.open = true" in page
