"""report.html shows the text of a results file as text: markup in it is never run, the report's own anchors
survive."""

from pathlib import Path

import pytest

from moecl_verify.reports import html

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
