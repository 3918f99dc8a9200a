"""report.html: the report as one self-contained page that works offline.

The page is the main body (report.md) followed by each detail section (report-details.md) collapsed under
its title; a link into a section opens it.  The layout keeps the bottom line and the first table of
"What stands and what falls" on the first screen of a 1400 x 1000 window (checked in Chromium by
tests/reports/test_report_browser.py).

The markdown is converted by markdown-it-py (CommonMark plus tables and the
``$``/``$$`` math syntax of mdit-py-plugins); each formula becomes MathML with
latex2mathml, which browsers render natively, so no math engine is fetched
from the network; figures are embedded as ``data:`` URIs.  A formula that
cannot be converted is shown as its source inside a ``math-error`` element,
which the tests look for.  Reads report.md's text and the figure files; computes
nothing.  Formulas in table cells arrive as ``$...$`` with their ``|`` escaped for the table (the table
rule takes the escape off before the math sees them).
"""

from __future__ import annotations

import base64
import html as html_escape
import re
from dataclasses import dataclass
from pathlib import Path

from latex2mathml.converter import convert as latex_to_mathml
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

# latex2mathml keeps a command it does not know as the text of an <mi>/<mo>: that is an error here.
_UNKNOWN_COMMAND = re.compile(r"<m[io][^>]*>\\[A-Za-z]+</m[io]>")

STYLE = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1a1a1a; margin: 0 auto;
       max-width: 1320px; padding: .6em 2em 4em; }
h1 { font-size: 1.6em; margin: .2em 0 .3em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: .15em; margin: .9em 0 .4em; }
h1 + p, h2 + ul, h2 + p { margin-top: .4em; }
li { line-height: 1.35; }
h3 { font-size: 1.05em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: .8em 0; font-size: 13px; display: block; overflow-x: auto; }
th, td { border: 1px solid #d0d0d0; padding: 2px 6px; vertical-align: top; text-align: left; line-height: 1.35; }
td > strong[class^="v-"] { white-space: nowrap; }
th { background: #f3f3f3; }
code { background: #f4f4f4; padding: 0 3px; border-radius: 3px; font-size: 90%; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
details.section > summary { cursor: pointer; list-style: none; }
details.section > summary::-webkit-details-marker { display: none; }
details.section > summary h2 { display: inline-block; }
details.section > summary h2::before { content: "▸ "; color: #888; }
details.section[open] > summary h2::before { content: "▾ "; }
blockquote { color: #444; border-left: 3px solid #ccc; margin-left: 0; padding-left: 1em; }
math { font-size: 1.08em; }
math[display="block"] { margin: .6em 0; overflow-x: auto; }
.math-error { color: #b00020; background: #fde7ea; font-family: monospace; }
strong.v-falls, strong.v-refuted { color: #b00020; }
strong.v-stands, strong.v-confirmed { color: #1b7a2e; }
strong.v-depends, strong.v-partly, strong.v-inconclusive, strong.v-open { color: #8a5a00; }
strong.v-not-checkable { color: #555; }
"""

VERDICT_CLASSES = {"falls": "v-falls", "refuted": "v-refuted", "stands": "v-stands", "confirmed": "v-confirmed",
                   "depends on the reading": "v-depends", "partly confirmed": "v-partly",
                   "inconclusive": "v-inconclusive", "open": "v-open", "not checkable": "v-not-checkable"}


@dataclass(frozen=True)
class FormulaError:
    latex: str
    reason: str


# Standard TeX operator names latex2mathml does not know, written the way it does.
_OPERATOR_NAMES = re.compile(r"\\(arg)(?![A-Za-z])")


def to_mathml(latex: str, display: str = "inline") -> str:
    return latex_to_mathml(_OPERATOR_NAMES.sub(r"\\operatorname{\1}", latex), display=display)


def formula_error(latex: str) -> str | None:
    """Why a formula does not render, or None when it does."""
    try:
        mathml = to_mathml(latex)
    except Exception as exc:  # latex2mathml raises several exception types on malformed input
        return f"{type(exc).__name__}: {exc}"
    unknown = _UNKNOWN_COMMAND.search(mathml)
    if unknown:
        return f"unknown command {unknown.group(0)}"
    if re.search(r"(?<!\\)%", latex):
        return "unescaped % (TeX reads the rest of the line as a comment)"
    return None


def _render_math(latex: str, options: dict) -> str:
    display = "block" if options.get("display_mode") else "inline"
    error = formula_error(latex)
    if error:
        return f'<span class="math-error" title="{html_escape.escape(error)}">{html_escape.escape(latex)}</span>'
    return to_mathml(latex, display=display)


def _parser(math_renderer=_render_math) -> MarkdownIt:
    # No raw HTML: the report quotes text from results files, which may come from anywhere; the report's own
    # anchors pass through :func:`_hold_anchors` instead.
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    dollarmath_plugin(md, double_inline=True, renderer=math_renderer)
    return md


def formula_errors(markdown_text: str) -> list[FormulaError]:
    """Every formula of a markdown text that does not render, found by the same parser the page uses."""
    errors: list[FormulaError] = []

    def check(latex: str, options: dict) -> str:
        reason = formula_error(latex)
        if reason:
            errors.append(FormulaError(latex, reason))
        return ""

    _parser(check).render(markdown_text)
    return errors


def _embed_images(body: str, base: Path) -> str:
    def embed(match: re.Match) -> str:
        src = html_escape.unescape(match.group(2))
        path = base / src
        if src.startswith(("data:", "http:", "https:")) or not path.is_file():
            return match.group(0)
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return f'{match.group(1)}data:image/png;base64,{data}{match.group(3)}'

    return re.sub(r'(<img src=")([^"]+)(")', embed, body)


def _mark_verdicts(body: str) -> str:
    def mark(match: re.Match) -> str:
        word = match.group(1)
        return f'<strong class="{VERDICT_CLASSES[word]}">{word}</strong>'

    words = "|".join(re.escape(w) for w in VERDICT_CLASSES)
    return re.sub(rf"<strong>({words})</strong>", mark, body)


# The one piece of HTML the report's markdown writes: a link target on a line of its own.
_ANCHOR_LINE = re.compile(r'^<a id="([A-Za-z0-9_.-]+)"></a>$', re.M)
_HELD = re.compile(r"(?:<p>)?\x02anchor(\d+)\x03(?:</p>)?")


def _hold_anchors(markdown_text: str) -> tuple[str, list[str]]:
    """The markdown with each anchor line replaced by a placeholder no text can contain (its control
    characters are removed from the text first), and the anchors' ids."""
    ids: list[str] = []
    markdown_text = markdown_text.replace("\x02", "").replace("\x03", "")  # no text may forge a placeholder

    def hold(match: re.Match) -> str:
        ids.append(match.group(1))
        return f"\x02anchor{len(ids) - 1}\x03"

    return _ANCHOR_LINE.sub(hold, markdown_text), ids


def _body(markdown_text: str, base: Path) -> str:
    held, ids = _hold_anchors(markdown_text)
    body = _HELD.sub(lambda m: f'<a id="{ids[int(m.group(1))]}"></a>', _parser().render(held))
    return _mark_verdicts(_embed_images(body, base))


# A link into a closed section opens it (browsers open <details> for a fragment they hold in most cases; this
# covers the rest, and a link followed within the page).
OPEN_TARGET = """<script>
function openTarget() {
  var id = decodeURIComponent(location.hash.slice(1)), el = id && document.getElementById(id);
  for (var p = el; p; p = p.parentElement) { if (p.tagName === 'DETAILS') { p.open = true; } }
  if (el) { el.scrollIntoView(); }
}
window.addEventListener('hashchange', openTarget);
window.addEventListener('DOMContentLoaded', openTarget);
</script>"""


def _page(body: str, title: str, script: str = "") -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html_escape.escape(title)}</title>\n<style>{STYLE}</style>\n{script}</head>\n<body>\n"
            f"{body}</body>\n</html>\n")


def render(markdown_text: str, base: Path, title: str = "moecl-verify report") -> str:
    """The page for a report's markdown; images are read relative to ``base``.  Any HTML in the text is shown
    as text, never run."""
    return _page(_body(markdown_text, base), title)


def render_report(report, base: Path, title: str = "moecl-verify report") -> str:
    """The page for a report in parts (:class:`moecl_verify.reports.markdown.Report`): the main body, then each
    detail section collapsed under its title, so the page opens on the findings and the details are one click
    away."""
    parts = [_body(report.main, base)]
    for section in report.details:
        text = section.text.replace(f"## {section.title}\n", "", 1)
        parts.append(f'<details class="section">\n<summary><h2>{html_escape.escape(section.title)}</h2></summary>\n'
                     f"{_body(text, base)}</details>\n")
    return _page("".join(parts), title, OPEN_TARGET)


def write_page(markdown_text, base: Path, path: Path) -> Path:
    """report.html from the report (its markdown, or a :class:`~moecl_verify.reports.markdown.Report` in
    parts); figures are read relative to ``base`` and embedded."""
    page = render(markdown_text, base) if isinstance(markdown_text, str) else render_report(markdown_text, base)
    path.write_text(page, encoding="utf-8")
    return path


def write(markdown_path: Path, path: Path) -> Path:
    """report.html from a report.md on disk (figures next to it)."""
    return write_page(markdown_path.read_text(encoding="utf-8"), markdown_path.parent, path)
