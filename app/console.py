"""Output to a terminal that cannot show the tool's characters degrades to ASCII instead of failing.

The reports and messages use a document's symbols (Greek letters, ≤, —).  Where standard output or standard error
cannot encode them (``PYTHONIOENCODING=ascii``, a C locale, a log of another code page), the streams are
reconfigured with an error handler that spells each symbol in ASCII (σ -> sigma, ≤ -> <=, — -> -) and writes
``?`` for anything else, so ``show``, ``list`` and ``run`` finish and say what they have to say.
"""

from __future__ import annotations

import codecs
import sys
import unicodedata

HANDLER = "moecl-ascii"
SAMPLE = "σ ≤ 1 — θ"

# Spelled as ASCII transcriptions of mathematics spell them.
SPELLED = {
    "σ": "sigma", "Σ": "Sigma", "θ": "theta", "Θ": "Theta", "η": "eta", "τ": "tau", "λ": "lambda", "Λ": "Lambda",
    "α": "alpha", "β": "beta", "γ": "gamma", "Γ": "Gamma", "δ": "delta", "Δ": "Delta", "ε": "eps", "μ": "mu",
    "π": "pi", "ρ": "rho", "φ": "phi", "ψ": "psi", "ω": "omega", "Ω": "Omega", "χ": "chi", "ξ": "xi", "ζ": "zeta",
    "κ": "kappa", "ν": "nu",
    "≤": "<=", "≥": ">=", "≠": "!=", "≈": "~", "±": "+/-", "×": "x", "·": "*", "−": "-", "–": "-", "—": "-",
    "→": "->", "←": "<-", "⇒": "=>", "∞": "inf", "‖": "||", "∈": " in ", "∉": " not in ", "√": "sqrt", "∑": "sum",
    "∏": "prod", "∂": "d", "∇": "grad", "…": "...", "‘": "'", "’": "'", "“": '"', "”": '"', "⌈": "ceil(",
    "⌉": ")", "⌊": "floor(", "⌋": ")", "²": "^2", "³": "^3", "⁻": "^-", "¹": "^1", "⁰": "^0", "½": "1/2",
    "✓": "ok", "✗": "x", "•": "*", "█": "#", "░": "-", "━": "-", "│": "|", " ": " ",
}


def spell(char: str) -> str:
    """``char`` in ASCII: its spelling above, else its letters without accents, else ``?``."""
    if char in SPELLED:
        return SPELLED[char]
    plain = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode("ascii")
    return plain or "?"


def _handler(error: UnicodeError):
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return "".join(spell(c) for c in error.object[error.start:error.end]), error.end


codecs.register_error(HANDLER, _handler)


def _can_encode(stream) -> bool:
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        SAMPLE.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def configure_streams() -> None:
    """Give stdout and stderr the ASCII spelling handler where they cannot encode the tool's symbols."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and not _can_encode(stream) and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors=HANDLER)
            except (ValueError, OSError):  # a stream that does not allow it keeps its own behaviour
                pass
