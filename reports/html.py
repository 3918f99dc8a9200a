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
which the tests look for.  Nothing a results file holds reaches the page as markup: the markdown is read with
raw HTML off and links limited to safe schemes (:func:`safe_link`), and each formula's MathML is written from
the converter's tree by :func:`to_mathml`, known elements and attributes only, every text escaped.  Reads report.md's text and the figure files; computes
nothing.  Formulas in table cells arrive as ``$...$`` with their ``|`` escaped for the table (the table
rule takes the escape off before the math sees them).
"""

from __future__ import annotations

import base64
import html as html_escape
import re
from dataclasses import dataclass
from pathlib import Path

from latex2mathml.converter import convert_to_element as latex_to_element
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
#bottom-line + h2 + ul li { font-size: 14px; line-height: 1.3; margin-bottom: .15em; }
h3 { font-size: 1.05em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: .6em 0; font-size: 13px; display: block; overflow-x: auto; }
th, td { border: 1px solid #d0d0d0; padding: 2px 6px; vertical-align: top; text-align: left; line-height: 1.28; }
td { overflow-wrap: break-word; }
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
math[display="block"] { margin: .6em 0; padding: .2em 0; overflow-x: auto; overflow-y: hidden; }
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


MATHML_NAMESPACE = "http://www.w3.org/1998/Math/MathML"
# What a formula's MathML may hold: MathML Core's presentation elements (and menclose, which latex2mathml writes
# for \cancel and \boxed, and browsers lay out as an mrow), with the attributes that only lay them out.  Not
# href (\href, a link that could be javascript:), style (\style, any CSS), id, class or an event handler.
MATHML_ELEMENTS = frozenset({
    "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msub", "msup", "msubsup", "munder", "mover",
    "munderover", "mmultiscripts", "mprescripts", "none", "mfrac", "msqrt", "mroot", "mstyle", "merror",
    "mpadded", "mphantom", "mtable", "mtr", "mtd", "semantics", "annotation", "menclose"})
MATHML_ATTRIBUTES = frozenset({
    "display", "mathvariant", "mathcolor", "mathbackground", "mathsize", "displaystyle", "scriptlevel", "form",
    "fence", "separator", "stretchy", "symmetric", "largeop", "movablelimits", "accent", "accentunder", "lspace",
    "rspace", "minsize", "maxsize", "linebreak", "width", "height", "depth", "voffset", "linethickness",
    "bevelled", "numalign", "denomalign", "notation", "align", "columnalign", "rowalign", "columnlines",
    "rowlines", "columnspacing", "rowspacing", "frame", "framespacing", "equalrows", "equalcolumns", "side",
    "columnspan", "rowspan", "encoding"})


class UnsafeMathML(ValueError):
    """A formula that would become an element outside :data:`MATHML_ELEMENTS`."""


def _text(value: str) -> str:
    # latex2mathml writes a symbol as a character reference in the element's text (``&#x0003D;``) and copies
    # \text{...} as it stands: the text as a browser would read it, then escaped, so that it shows the same and
    # is never markup.
    return html_escape.escape(html_escape.unescape(value), quote=False)


def _serialise(element, out: list[str]) -> None:
    tag = element.tag
    if not isinstance(tag, str) or tag not in MATHML_ELEMENTS:
        raise UnsafeMathML(f"the formula would become a <{tag}> element, which a formula may not hold")
    attributes = [("xmlns", MATHML_NAMESPACE)] if tag == "math" else []
    attributes += [(name, value) for name, value in element.attrib.items() if name in MATHML_ATTRIBUTES]
    out.append(f"<{tag}" + "".join(f' {name}="{html_escape.escape(html_escape.unescape(str(value)))}"'
                                   for name, value in attributes))
    if element.text is None and not len(element):
        out.append(" />")
    else:
        out.append(">" + _text(element.text or ""))
        for child in element:
            _serialise(child, out)
        out.append(f"</{tag}>")
    if element.tail:
        out.append(_text(element.tail))


def to_mathml(latex: str, display: str = "inline") -> str:
    """The formula as MathML, written from latex2mathml's tree rather than its own serialisation, which
    unescapes the text it copied (a ``\\text{<script>...</script>}`` came out as a script that runs): known
    elements and attributes only, every text and value escaped; :class:`UnsafeMathML` for any other element."""
    tree = latex_to_element(_OPERATOR_NAMES.sub(r"\\operatorname{\1}", latex), display=display)
    out: list[str] = []
    _serialise(tree, out)
    return "".join(out)


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


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_SAFE_SCHEMES = ("http", "https", "mailto")
_IMAGE_DATA = re.compile(r"data:image/(?:png|gif|jpeg|webp);", re.I)
# What a browser skips before a URL's scheme.
_LEADING = "".join(map(chr, range(0x21)))


def safe_link(url: str) -> bool:
    """Whether a markdown link or image may keep its target: a fragment, a relative path, a web or mail address
    or an image's ``data:`` URI, never javascript:, vbscript:, file: or any other scheme (an allowlist, where
    markdown-it's own check lists the schemes it refuses).  The URL is read as a browser reads it: tabs and
    newlines dropped, leading spaces and control characters skipped."""
    bare = re.sub(r"[\t\n\r]", "", url).lstrip(_LEADING)
    scheme = _SCHEME.match(bare)
    if scheme is None:
        return True
    name = scheme.group(1).lower()
    return name in _SAFE_SCHEMES or (name == "data" and _IMAGE_DATA.match(bare) is not None)


def _parser(math_renderer=_render_math) -> MarkdownIt:
    # No raw HTML: the report quotes text from results files, which may come from anywhere; the report's own
    # anchors pass through :func:`_hold_anchors` instead.  A link whose target is refused stays as its text.
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    md.validateLink = safe_link
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


def _embed_images(body: str, base: Path, seen: dict | None = None) -> str:
    """Each of the report's own figures embedded as a data URI; its first occurrence on the page (``seen``:
    the names met so far, each with its id, figure-1, figure-2, ...) gets an id, so that a link to the file can
    point inside the page instead.  The page keeps no file name: it is self-contained."""
    seen = {} if seen is None else seen

    def embed(match: re.Match) -> str:
        src = html_escape.unescape(match.group(2))
        path = base / src
        if src.startswith(("data:", "http:", "https:")) or not path.is_file():
            return match.group(0)
        # Only the report's own figures are embedded: a results file naming /etc/passwd or ../secret must not
        # copy that file into a page that is sent around.
        try:
            path.resolve().relative_to(Path(base).resolve())
        except ValueError:
            return match.group(0)
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        anchor = "" if src in seen else f'id="figure-{len(seen) + 1}" '
        seen.setdefault(src, f"figure-{len(seen) + 1}")
        return f'<img {anchor}src="data:image/png;base64,{data}{match.group(3)}'

    return re.sub(r'(<img src=")([^"]+)(")', embed, body)


def _links_inside(page: str, seen: dict) -> str:
    """A link to one of the page's embedded figures points at the figure in the page (it opens the section that
    holds it), so the page works when it is sent alone."""
    def point(match: re.Match) -> str:
        src = html_escape.unescape(match.group(1))
        return f'<a href="#{seen[src]}"' if src in seen else match.group(0)

    return re.sub(r'<a href="([^"#:]+\.png)"', point, page)


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


def _body(markdown_text: str, base: Path, seen: set | None = None) -> str:
    held, ids = _hold_anchors(markdown_text)
    body = _HELD.sub(lambda m: f'<a id="{ids[int(m.group(1))]}"></a>', _parser().render(held))
    return _mark_verdicts(_embed_images(body, base, seen))


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
    seen: dict = {}
    return _page(_links_inside(_body(markdown_text, base, seen), seen), title)


def render_report(report, base: Path, title: str = "moecl-verify report") -> str:
    """The page for a report in parts (:class:`moecl_verify.reports.markdown.Report`): the main body, then each
    detail section collapsed under its title, so the page opens on the findings and the details are one click
    away."""
    seen: dict = {}
    parts = [_body(report.main, base, seen)]
    for section in report.details:
        text = section.text.replace(f"## {section.title}\n", "", 1)
        parts.append(f'<details class="section">\n<summary><h2>{html_escape.escape(section.title)}</h2></summary>\n'
                     f"{_body(text, base, seen)}</details>\n")
    return _page(_links_inside("".join(parts), seen), title, OPEN_TARGET)


def write_page(markdown_text, base: Path, path: Path) -> Path:
    """report.html from the report (its markdown, or a :class:`~moecl_verify.reports.markdown.Report` in
    parts); figures are read relative to ``base`` and embedded."""
    page = render(markdown_text, base) if isinstance(markdown_text, str) else render_report(markdown_text, base)
    path.write_text(page, encoding="utf-8")
    return path


def write(markdown_path: Path, path: Path) -> Path:
    """report.html from a report.md on disk (figures next to it)."""
    return write_page(markdown_path.read_text(encoding="utf-8"), markdown_path.parent, path)
