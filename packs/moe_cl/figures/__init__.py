"""The paper's own figures, reproduced from a run's artifacts: Figures 2-5, the curves of the questions
beyond the paper, and the reviewer's claim C2 drawn from those curves (drawn before the per-kind figures every
pack gets)."""

from __future__ import annotations


def specs(run) -> list:
    from moecl_verify.packs.moe_cl.figures import artifact_figures, c2_figures, open_figures

    return artifact_figures.specs(run) + open_figures.specs(run) + c2_figures.specs(run)
