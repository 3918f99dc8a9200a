"""report.html shows the text of a results file as text: markup in it is never run, the report's own anchors
survive."""

import re
from pathlib import Path
from xml.etree.ElementTree import Element, SubElement

import pytest

from moecl_verify.reports import html, markdown

pytestmark = pytest.mark.app


def test_markup_in_quoted_text_is_escaped_and_anchors_survive(tmp_path: Path):
    text = ('<a id="slip-x"></a>\n\n### x\n\n- **Evidence**: <script>alert(1)</script> <img src=x onerror=alert(2)> '
            "<theta_{t+1} - theta_t, v_n> \x02anchor0\x03\n\n"
            '| a |\n|---|\n| <b onmouseover="x">bold</b> |\n')
    page = html.render(text, tmp_path)
    body = page.split("<body>", 1)[1]
    assert '<a id="slip-x"></a>' in body
    assert "<script" not in body and "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<img" not in body and "<b " not in body and "&lt;b onmouseover" in body
    assert "&lt;theta_{t+1} - theta_t, v_n&gt;" in body
    assert body.count("<a id=") == 1  # the forged placeholder made no anchor


def test_a_detail_section_is_collapsed_under_its_title_shows_its_text_as_text_and_keeps_its_anchors(tmp_path: Path):
    hostile = ('<script>alert(1)</script> <img src=x onerror=alert(2)> <details open><summary>s</summary></details> '
               '</details><b onmouseover="x">out</b> \x02anchor0\x03')
    title = 'Slip <i>audit</i> & "more"'
    section = markdown.Section("slip-audit", title, f'<a id="slip-audit"></a>\n\n## {title}\n\n<a id="slip-x"></a>\n\n'
                               f"### x\n\n- **Evidence**: {hostile}\n\n| a |\n|---|\n| {hostile} |\n")
    report = markdown.Report('# Report\n\n<a id="bottom-line"></a>\n\n## Bottom line\n\nSee [x](#slip-x).\n', (section,))
    page = html.render_report(report, tmp_path)
    head, body = page.split("<body>", 1)
    # the page's own script (it opens the section a link points into) is the only one, and it is in the head
    assert page.count("<script") == 1 and "<script>\nfunction openTarget()" in head
    assert "<script" not in body and "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<img" not in body and "<b " not in body and "&lt;b onmouseover" in body
    # one section, collapsed (no "open"), its title as the summary, escaped; the title is not repeated inside
    assert body.count("<details") == 1 and '<details class="section">' in body and "<details open" not in body
    summary = '<summary><h2>Slip &lt;i&gt;audit&lt;/i&gt; &amp; &quot;more&quot;</h2></summary>'
    assert body.count("<summary>") == 1 and summary in body
    assert body.count("<h2>") == 2  # the main body's heading and the summary's
    # the hostile closing tag did not end the section early: everything of the section is inside it
    inside = body.split('<details class="section">', 1)[1].rsplit("</details>", 1)[0]
    assert "&lt;/details&gt;&lt;b onmouseover" in inside and body.count("</details>") == 1
    # the anchors survive, in their part of the page; the forged placeholders made none
    main = body.split("<details", 1)[0]
    assert '<a id="bottom-line"></a>' in main and 'href="#slip-x"' in main
    assert '<a id="slip-audit"></a>' in inside and '<a id="slip-x"></a>' in inside
    assert body.count("<a id=") == 3


def test_text_inside_a_formula_is_escaped_in_its_mathml():
    mathml = html.to_mathml(r'E[F_t] = 1/t \text{<script>document.title="PWNED"</script><img src=x onerror=alert(1)>}')
    assert "<script" not in mathml and "<img" not in mathml
    # (the converter writes the text's spaces as no-break spaces)
    assert '<mtext>&lt;script&gt;document.title="PWNED"&lt;/script&gt;&lt;img\xa0src=x\xa0onerror=alert(1)&gt;' \
           '</mtext>' in mathml
    # a symbol the converter writes as a character reference shows as that character, and "<" stays text
    assert html.to_mathml(r"a < b \le c").count("&lt;") == 1 and "≤" in html.to_mathml(r"a \le c")
    assert html.to_mathml(r"\text{a & b}").count("&amp;") == 1


def test_a_formula_keeps_no_link_style_or_handler_and_no_unknown_element():
    for latex in (r"\href{javascript:alert(1)}{x}", r"\style{background:url(javascript:alert(1))}{x}",
                  r'\color{red" onload="alert(1)}{x}', r"\fcolorbox{red}{blue}{x}"):
        mathml = html.to_mathml(latex)
        assert "href" not in mathml and "style=" not in mathml and "border-color" not in mathml, mathml
        assert not re.search(r'\son\w*="', mathml), mathml  # a quote in a value is escaped: no attribute added
        assert "<mi>x</mi>" in mathml or "<mtext>x</mtext>" in mathml
    # the converter's tree is written element by element: one outside MathML is refused, never written
    tree = Element("math")
    SubElement(SubElement(tree, "mrow"), "script").text = "alert(1)"
    with pytest.raises(html.UnsafeMathML, match="<script>"):
        html._serialise(tree, [])


@pytest.mark.parametrize("url, kept", [
    ("#slip-x", True), ("figures/fig_x.png", True), ("report-details.md#claim-x", True), ("https://x.org", True),
    ("mailto:a@b.c", True), ("data:image/png;base64,AAAA", True),
    ("javascript:alert(1)", False), ("JaVaScRiPt:alert(1)", False), ("\x01javascript:alert(1)", False),
    (" java\tscript:alert(1)", False), ("vbscript:x", False), ("file:///etc/passwd", False),
    ("data:text/html,<script>alert(1)</script>", False), ("ftp://x", False),
])
def test_links_keep_only_safe_targets(url, kept):
    assert html.safe_link(url) is kept


def test_markdown_links_with_script_targets_stay_text(tmp_path: Path):
    page = html.render("[a](javascript:alert(1)) [b](&#106;avascript:alert(1)) <javascript:alert(1)> "
                       "![c](javascript:alert(1)) [d](#ok)\n\n[ref]\n\n[ref]: javascript:alert(1)\n", tmp_path)
    body = page.split("<body>", 1)[1]
    assert "javascript:" not in re.sub(r">[^<]*<", "><", body)  # in no attribute: only in the text
    assert body.count("<a ") == 1 and '<a href="#ok">d</a>' in body and "<img" not in body


def test_only_the_reports_own_files_are_embedded(tmp_path):
    """A results text naming a file outside the report's folder (../secret, /etc/...) leaves it a link; the
    report's own figures are embedded."""
    import base64

    from moecl_verify.reports import html

    base = tmp_path / "report"
    base.mkdir()
    (base / "fig.png").write_bytes(b"\x89PNG figure bytes")
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"the user's secret")
    (base / "link.png").symlink_to(secret)
    page = html.render(f"![a](../secret.txt)\n\n![b]({secret})\n\n![c](link.png)\n\n![d](fig.png)\n", base)
    assert base64.b64encode(b"the user's secret").decode() not in page
    assert base64.b64encode(b"\x89PNG figure bytes").decode() in page
