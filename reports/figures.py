"""Every figure of the report, and which claim each belongs to.

The figure modules each draw one kind of picture from a RunResult (never
simulating):

* :mod:`reports.closed_form_figures`: each form's formula against the Monte
  Carlo mean over the horizon (``fig_<claim>.png``);
* :mod:`reports.estimate_figures`: paired differences, margins of bounds and
  criteria, other estimates, against the horizon or per case
  (``fig_<claim>_<kind>.png``);
* :mod:`reports.probability_figures`: probabilities per value of the swept parameter with Wilson
  intervals (``fig_<claim>_probability.png``);
* :mod:`reports.scaling_figures`: log-log scaling in the swept parameter
  (``fig_<claim>_scaling.png``);
* the pack's own figures (``Pack.figures``: a document's figures reproduced).

Together they give every claim with a measured number at least one figure.
:func:`figure_index` lists them per claim with a caption saying what each
draws; :func:`write` draws them all.  Deterministic: see
:mod:`reports.panel_figures`.
"""

from __future__ import annotations

from pathlib import Path

from moecl_verify.checks.model import RunResult
from moecl_verify.reports import (
    closed_form_figures,
    estimate_figures,
    probability_figures,
    scaling_figures,
)
from moecl_verify.reports.document import pack_of
from moecl_verify.reports import panel_figures as kit


def figure_name(claim_id: str) -> str:
    """File of the closed-form figure of ``claim_id``."""
    return kit.file_name(claim_id)


def plottable(run: RunResult) -> list[str]:
    """Claim ids (in run order) with a closed-form figure."""
    return closed_form_figures.claims(run)


def specs(run: RunResult) -> list[kit.FigureSpec]:
    """Every figure of ``run``: the pack's own figures first, then by kind."""
    pack = pack_of(run)
    return (
        (pack.figures(run) if pack.figures is not None else [])
        + closed_form_figures.specs(run)
        + estimate_figures.specs(run)
        + probability_figures.specs(run)
        + scaling_figures.specs(run)
    )


def figure_index(run: RunResult) -> dict[str, list[tuple[str, str]]]:
    """{claim id: [(PNG file name relative to the report, caption), ...]} in the order of ``run.claims``.

    A claim's figures come in the order of their first entries in the results (a reproduced figure of the document
    first); a figure shared by several claims (a reproduced figure's curves) is listed under each.
    """
    per_claim: dict[str, list[kit.FigureSpec]] = {}
    for spec in specs(run):
        for cid in spec.claims:
            per_claim.setdefault(cid, []).append(spec)
    order = [c["id"] for c in run.claims if c.get("id") in per_claim]
    order += [cid for cid in per_claim if cid not in order]
    return {
        cid: [(s.file, s.caption) for s in sorted(per_claim[cid], key=lambda s: s.first_entry)]
        for cid in order
    }


def relative_paths(run: RunResult) -> dict[str, str]:
    """{claim id: file name of its first figure} (for report links that show one figure per claim)."""
    return {cid: figures[0][0] for cid, figures in figure_index(run).items()}


def write(run: RunResult, out_dir: Path) -> list[Path]:
    """Draw every figure of ``run`` into ``out_dir``; returns the written paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return [kit.save(spec.build(), out_dir / spec.file) for spec in specs(run)]
