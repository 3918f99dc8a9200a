"""The report's link targets: one spelling of each anchor for every renderer that links to it."""

from __future__ import annotations


def slip_anchor(slip_id: str) -> str:
    return "slip-" + slip_id.replace(".", "-")


def anchor(claim_id: str) -> str:
    return "claim-" + claim_id.replace(".", "-")


def section_anchor(title: str) -> str:
    """``Beyond the paper`` -> ``beyond-the-paper``."""
    return "-".join(title.lower().split())
