"""The paper's order, so that reports follow the paper rather than the alphabet.

Section 4 (Lemma 1, Propositions 1-3), Section 5 (Proposition 4, Theorems 1-2
and the insights drawn from them; C2, the reviewer's reading of Proposition 2, after Proposition 3), Section 6 and Appendix A (Figures 2-5 and
the experiments' preconditions), then the appendices' lemmas in the order they
appear (Lemma 2 in B, Corollary 1 in C, Lemmas 3-6 in D, 7-13 in E, 14-15 in
F, 16 in I.1).  Experiments beyond the paper (``open.*``) come last.
"""

from __future__ import annotations

import re

PAPER_ORDER = (
    "lemma1", "prop1", "prop2", "prop3", "c2",
    "prop4", "thm1", "thm2", "c4", "c5",
    "fig2", "fig3", "fig4", "fig5", "audit",
    "lemma2", "cor1", "lemma3", "lemma4", "lemma5", "lemma6",
    "lemma7", "lemma8", "lemma9", "lemma10", "lemma11", "lemma12", "lemma13",
    "lemma14", "lemma15", "lemma16",
    "open",
)


def natural_key(text: str) -> tuple:
    """``lemma2`` before ``lemma10``."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def rank(claim_id: str) -> int:
    """Position of a claim id's group in the paper (unknown groups after every known one)."""
    prefix = claim_id.split(".")[0]
    return PAPER_ORDER.index(prefix) if prefix in PAPER_ORDER else len(PAPER_ORDER)


def paper_key(claim_id: str) -> tuple:
    """Sort key: the group's place in the paper, then natural order within the group
    (``lemma11`` before ``lemma11.step1``)."""
    return (rank(claim_id), natural_key(claim_id))


def in_paper_order(claim_ids) -> list[str]:
    return sorted(claim_ids, key=paper_key)
