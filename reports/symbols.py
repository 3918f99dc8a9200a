"""One spelling of each symbol in what a reader reads.

The claims write their sentences in ASCII (they also go to results.json, JUnit and terminals); a pack
declares how its symbols are spelled in a report (``Pack.symbols``: an ASCII word and its symbol), and the
renderers of report.md and report.html respell every whole word of prose with it.  Code spans, formulas,
HTML tags and link targets are left alone, so ids, configuration keys and LaTeX keep their spelling.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# What is not prose: fenced and inline code, display and inline math, HTML tags, link targets.
_PROTECTED = re.compile(r"(```.*?```|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]+\$|<[A-Za-z/!][^<>\n]*>|\]\([^)\n]*\))", re.S)


def spell(text: str, symbols: Mapping[str, str]) -> str:
    """``text`` with every whole word of prose that ``symbols`` names replaced by its symbol."""
    if not symbols:
        return text
    # prose escapes "_" for markdown (sigma\_0), so a word with one is also matched in its escaped form
    symbols = {**symbols, **{w.replace("_", "\\_"): s for w, s in symbols.items() if "_" in w}}
    words = sorted(symbols, key=len, reverse=True)
    word = re.compile(r"(?<![\w\\])(" + "|".join(map(re.escape, words)) + r")(?!\w)")
    pieces = _PROTECTED.split(text)
    # split() with one capturing group alternates prose (even indices) and protected spans (odd indices)
    return "".join(piece if i % 2 else word.sub(lambda m: symbols[m.group(1)], piece)
                   for i, piece in enumerate(pieces))


__all__ = ["spell"]
