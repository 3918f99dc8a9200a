"""Formulas as the report shows them: display math for mathematics, text for prose.

Several statements are English sentences (the paper's qualitative claims) and a
few formulas are plain-text descriptions; putting those inside ``$$ ... $$``
renders prose as italic math with its spaces lost.  ``%`` begins a comment in
TeX, so an unescaped one silently cuts off the rest of its line.
"""

from __future__ import annotations

import re

_WHOLE_TEXT = re.compile(r"\\text\{([^{}]*)\}")


def is_prose(formula: str) -> bool:
    """True when the "formula" is a sentence: one ``\\text{...}`` block, or words with no TeX command."""
    text = formula.strip()
    if _WHOLE_TEXT.fullmatch(text):
        return True
    return "\\" not in text and len(re.findall(r"[A-Za-z]{3,}", text)) >= 4


def prose(formula: str) -> str:
    """A prose "formula" as a sentence (the ``\\text{}`` wrapper removed)."""
    text = formula.strip()
    match = _WHOLE_TEXT.fullmatch(text)
    return match.group(1) if match else text


def escape_percent(latex: str) -> str:
    """``%`` as ``\\%`` unless already escaped."""
    return re.sub(r"(?<!\\)%", r"\\%", latex)


def display(formula: str) -> str:
    """Markdown for a formula: ``$$ ... $$`` for mathematics, an italic sentence for prose."""
    if is_prose(formula):
        return f"*{prose(formula).strip()}*"
    return f"$$ {escape_percent(formula.strip())} $$"


def inline(formula: str) -> str:
    """Markdown for a formula in running text or a table cell: ``$ ... $`` for mathematics, the sentence for
    prose."""
    if is_prose(formula):
        return prose(formula)
    return f"${escape_percent(formula.strip())}$"
