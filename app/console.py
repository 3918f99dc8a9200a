"""Output to a terminal that cannot show every character the tool prints.

The tool's text speaks its documents' notation (Greek letters, ≤, —, ±, ...), and a document may be written in
another script altogether.  Printed to a stream whose encoding cannot hold them (``PYTHONIOENCODING=ascii``, a C
locale without UTF-8, an old console), Python raises ``UnicodeEncodeError`` in the middle of a command, often
after its work is done.  :func:`configure_streams` makes such streams degrade instead: each character the
encoding lacks is written as a readable ASCII spelling (:func:`ascii_spelling`: σ as sigma, ≤ as <=, ² as ^2),
or '?' where there is none.  Streams that can encode the tool's text are left as they are, and so is an error
handler the user chose (``PYTHONIOENCODING=ascii:replace``).
"""

from __future__ import annotations

import codecs
import sys
import unicodedata

ERRORS = "moecl-ascii"
"""The name of the codec error handler :func:`transliterate`, registered with :func:`codecs.register_error`."""

SAMPLE = "σ—≤"
"""Characters of the tool's output: a stream whose encoding cannot hold them is configured to degrade."""

# Error handlers a stream gets without being asked for one (stdout: strict, or surrogateescape under a C locale;
# stderr: backslashreplace): replaced by ERRORS. Any other is the user's choice and kept.
DEFAULT_HANDLERS = {"strict", "surrogateescape"}
STDERR_DEFAULT_HANDLERS = DEFAULT_HANDLERS | {"backslashreplace"}

FALLBACK = "?"

SPELLINGS = {
    # dashes, quotes, spaces and marks
    "—": "-", "–": "-", "−": "-", "‐": "-", "‑": "-", "‒": "-", "―": "-",
    "‘": "'", "’": "'", "‚": ",", "“": '"', "”": '"', "„": '"', "′": "'", "″": "''",
    "«": "<<", "»": ">>", "•": "*", "·": "*", "…": "...", "\u00a0": " ", "\u2009": " ", "\u202f": " ",
    "✓": "ok", "✔": "ok", "✗": "x", "✘": "x", "▸": ">", "▶": ">", "▾": "v", "▼": "v", "∎": "QED",
    "°": " deg", "§": "S", "¶": "P", "©": "(c)",
    # relations and operators
    "≤": "<=", "≥": ">=", "≦": "<=", "≧": ">=", "≠": "!=", "≈": "~", "≃": "~=", "≅": "~=", "∼": "~", "≡": "==",
    "≪": "<<", "≫": ">>", "±": "+/-", "∓": "-/+", "×": "x", "÷": "/", "⋅": "*", "∗": "*",
    "∘": "o", "⊙": "(.)", "⊗": "(x)", "⊕": "(+)", "√": "sqrt", "∞": "inf", "∂": "d", "∇": "grad",
    "∑": "sum", "∏": "prod", "∫": "int", "∅": "{}", "‖": "||", "∣": "|", "⟨": "<", "⟩": ">",
    "⌈": "ceil(", "⌉": ")", "⌊": "floor(", "⌋": ")",
    "⊤": "T", "⊥": "_|_", "ℝ": "R", "ℕ": "N", "ℤ": "Z", "𝔼": "E", "ℓ": "l", "⁄": "/",
    # arrows
    "→": "->", "←": "<-", "↔": "<->", "⇒": "=>", "⇐": "<=", "⇔": "<=>", "↦": "|->", "↑": "^", "↓": "v",
    # box drawing (tables, bars)
    "─": "-", "━": "-", "│": "|", "┃": "|", "┌": "+", "┐": "+", "└": "+", "┘": "+", "├": "+", "┤": "+",
    "┬": "+", "┴": "+", "┼": "+", "█": "#", "▌": "#", "░": ".", "▒": ":", "▓": "#",
}
"""ASCII spellings of the characters the tool prints (or might), beyond Greek letters (spelt by their names),
super- and subscripts (``^2``, ``_0``) and what Unicode's compatibility decomposition gives (``…`` as ``...``,
fullwidth ``，`` as ``,``)."""

WORDS = {"∈": "in", "∉": "not in", "⊂": "subset", "⊆": "subseteq", "∪": "union", "∩": "intersect", "∝": "propto",
         "∀": "for all", "∃": "exists", "¬": "not", "∧": "and", "∨": "or"}
"""Operators spelt as words: set apart by a space from what they would otherwise run into (i∈S -> i in S)."""
OPENING, CLOSING = "([{", ")]},;:."

SUPERSCRIPTS = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱᵀ", "0123456789+-=()niT"))
SUBSCRIPTS = dict(zip("₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₒₓₜᵢⱼₖₘₙ", "0123456789+-=()aeoxtijkmn"))


def _greek(ch: str) -> str | None:
    """A Greek letter's name, e.g. σ -> sigma, Γ -> Gamma, λ -> lambda (Unicode spells it LAMDA), ά -> alpha;
    None for a character that is not one."""
    base = unicodedata.normalize("NFD", ch)[0]
    name = unicodedata.name(base, "")
    words = None
    for prefix, capital in (("GREEK SMALL LETTER ", False), ("GREEK CAPITAL LETTER ", True)):
        if name.startswith(prefix):
            words = name[len(prefix):].lower().split()
            break
    else:
        if not (name.startswith("GREEK ") and name.endswith(" SYMBOL")):  # ϵ, ϑ, ϕ: variant forms
            return None
        words, capital = name[len("GREEK "):-len(" SYMBOL")].lower().split(), False
    if words[:1] == ["final"]:  # ς
        words = words[1:]
    if len(words) != 1 and not (len(words) == 2 and words[0] in ("lunate", "kai")):
        return None
    word = {"lamda": "lambda"}.get(words[-1], words[-1])
    return word.capitalize() if capital else word


def _one(ch: str) -> str:
    """The ASCII spelling of one character that is not ASCII."""
    if ch in SPELLINGS:
        return SPELLINGS[ch]
    greek = _greek(ch)
    if greek is not None:
        return greek
    if unicodedata.category(ch) == "Mn":  # a combining accent (w̃): the base letter stands alone
        return ""
    decomposed = unicodedata.normalize("NFKD", ch)
    if decomposed != ch:
        spelt = "".join(c if c.isascii() else SPELLINGS.get(c, "") for c in decomposed
                        if unicodedata.category(c) != "Mn")
        if spelt:
            return spelt
    return FALLBACK


def ascii_spelling(text: str, before: str = "", after: str = "") -> str:
    """``text`` with every character that is not ASCII spelt in ASCII: runs of superscripts as ``^...``
    (10⁻¹² -> 10^-12), of subscripts as ``_...`` (σ₀ -> sigma_0), operators as words set apart by spaces
    (:data:`WORDS`; ``before`` and ``after``: the characters around ``text``, for the spaces at its ends), others
    by :func:`_one`; '?' where no spelling is known (e.g. Chinese characters)."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch.isascii():
            out.append(ch)
            i += 1
            continue
        if ch in WORDS:
            left = out[-1][-1:] if out and out[-1] else before
            right = text[i + 1] if i + 1 < len(text) else after
            pad_left = " " if left and not left.isspace() and left not in OPENING else ""
            pad_right = " " if right and not right.isspace() and right not in CLOSING else ""
            out.append(pad_left + WORDS[ch] + pad_right)
            i += 1
            continue
        for table, mark in ((SUPERSCRIPTS, "^"), (SUBSCRIPTS, "_")):
            if ch in table:
                j = i
                while j < len(text) and text[j] in table:
                    j += 1
                out.append(mark + "".join(table[c] for c in text[i:j]))
                i = j
                break
        else:
            out.append(_one(ch))
            i += 1
    return "".join(out)


def transliterate(exc: UnicodeError) -> tuple[str | bytes, int]:
    """The codec error handler ``moecl-ascii``: the characters an encoding cannot hold, spelt in ASCII
    (:func:`ascii_spelling`).  Undecodable bytes that Python carries as lone surrogates (file names under a C
    locale, the ``surrogateescape`` convention) are written back as those bytes."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    chunk = exc.object[exc.start:exc.end]
    if all("\udc80" <= c <= "\udcff" for c in chunk):
        return bytes(ord(c) - 0xDC00 for c in chunk), exc.end
    text = exc.object
    return ascii_spelling(chunk, text[exc.start - 1] if exc.start else "", text[exc.end:exc.end + 1]), exc.end


codecs.register_error(ERRORS, transliterate)


def can_encode(stream, sample: str = SAMPLE) -> bool:
    """Whether ``stream``'s encoding holds ``sample``: yes for a stream with none (an ``io.StringIO`` keeps the
    text as text), no for an encoding Python does not know."""
    encoding = getattr(stream, "encoding", None)
    if encoding is None:
        return True
    try:
        sample.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def configure_streams() -> list[str]:
    """Make ``sys.stdout`` and ``sys.stderr`` write characters their encoding lacks as ASCII spellings
    (:func:`transliterate`) instead of raising ``UnicodeEncodeError``, where the encoding cannot hold the
    tool's notation (:data:`SAMPLE`) and the stream's error handler is Python's default; returns the names of
    the streams it configured.  Streams that are not text files with ``reconfigure`` (replaced by a test or an
    embedding program) are left alone.  Call once, first thing in the command line's entry point."""
    configured = []
    for name, defaults in (("stdout", DEFAULT_HANDLERS), ("stderr", STDERR_DEFAULT_HANDLERS)):
        stream = getattr(sys, name, None)
        if stream is None or not hasattr(stream, "reconfigure") or can_encode(stream):
            continue
        if getattr(stream, "errors", "strict") not in defaults:
            continue
        try:
            stream.reconfigure(errors=ERRORS)
        except (ValueError, OSError):  # a closed or detached stream: nothing will be written to it
            continue
        configured.append(name)
    return configured
