"""report.html shows the text of a results file as text: markup in it is never run, the report's own anchors
survive."""

from pathlib import Path

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
