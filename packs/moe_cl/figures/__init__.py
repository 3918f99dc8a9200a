"""The paper's own figures, reproduced from a run's artifacts: Figures 2-5 and the curves of the questions
beyond the paper (drawn before the per-kind figures every pack gets)."""

from __future__ import annotations


def specs(run) -> list:
    from moecl_verify.packs.moe_cl.figures import artifact_figures, open_figures

    return artifact_figures.specs(run) + open_figures.specs(run)
