"""One spelling of each symbol in prose (reports/symbols.py), code, math, tags and link targets untouched."""

import pytest

from moecl_verify.reports.symbols import spell

pytestmark = pytest.mark.app

SYMBOLS = {"sigma0": "σ0", "sigma_t": "σ_t"}


def test_prose_words_are_respelled_and_nothing_else():
    text = ("gap O(sigma0^1.5) at sigma_t = sigma0 / 4; `sigma0` and $\\sigma0 + sigma0$ stay; "
            "calibration_sigma0=0.05, sigma0_range, xsigma0 stay; [link](#slip-notation-sigma0) <a id=\"sigma0\"></a> "
            "P(gap <= C sigma0) >= 0.75")
    out = spell(text, SYMBOLS)
    assert out == ("gap O(σ0^1.5) at σ_t = σ0 / 4; `sigma0` and $\\sigma0 + sigma0$ stay; "
                   "calibration_sigma0=0.05, sigma0_range, xsigma0 stay; [link](#slip-notation-sigma0) "
                   "<a id=\"sigma0\"></a> P(gap <= C σ0) >= 0.75")


def test_a_word_with_an_underscore_is_spelled_in_its_markdown_escaped_form_too():
    symbols = {"sigma_0": "σ0"}
    assert spell(r"sigma\_0 is a scale, sigma_0 too; `sigma\_0` and calibration\_sigma\_0 stay", symbols) == (
        r"σ0 is a scale, σ0 too; `sigma\_0` and calibration\_sigma\_0 stay")


def test_without_symbols_the_text_is_unchanged():
    assert spell("sigma0", {}) == "sigma0"


def test_the_report_spells_the_packs_symbol_one_way_in_prose(smoke_run):
    import re

    from moecl_verify.reports import markdown

    text = markdown.render(smoke_run.result())
    prose = re.sub(r"```.*?```|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]+\$|<[A-Za-z/!][^<>\n]*>|\]\([^)\n]*\)", "", text,
                   flags=re.S)
    assert re.findall(r"(?<![\w\\])sigma0(?!\w)", prose) == []
    assert re.findall(r"(?<![\w\\])sigma\\?_0(?!\w)", prose) == []  # the paper's own spelling, sigma_0
    assert prose.count("σ0") > 100
