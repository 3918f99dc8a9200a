"""What the report says about the paper's text and the simulation, beside the verdicts."""

from __future__ import annotations

NAME = "moe-cl"
TITLE = "Theory on Mixture-of-Experts in Continual Learning"
SOURCE = ("a Chinese rendering of the paper with damaged inline LaTeX (linear-regression experts, a softmax gate "
          "with noisy top-1 routing, locality and load-balancing losses, Algorithm 1 with early termination of gate "
          "training)")

SIMULATION = ("draws streamed by round from one keyed stream per kind (numeric/streams.py), the normals by numba's "
              "compilation of numpy's own sampler (the same numbers, checked in every process; numpy's fill where "
              "they would differ); the single expert and Algorithm 1 with every option of its configuration "
              "(top-k, balancing rule, router, per-round records) by the compiled numba kernels of "
              "numeric/kernels.py, the per-round traces some lemmas read (an observer of every round) by the numpy "
              "engine; the two engines agree to rounding (tested to 1e-9 relative)")

# The text the tool transcribed is not the typeset paper: a reader must know that before trusting a notation slip.
SOURCE_NOTE = ("> **The source.** The paper's text checked here is a Chinese rendering whose inline LaTeX is damaged in "
               "places (subscripts and superscripts displaced, some appendix headings mislabelled). Every reading the "
               "tool chose where the text is garbled is listed under the readings, and a slip of class *notation* or "
               "*transcription* may be an artifact of that rendering: check it against the original before citing "
               "it.")
# Where the slips' effects are stated (Slip.effect, packs/moe_cl/claims/effects.py): Figure 2's settings, as
# packs/moe_cl/experiments/fig2_runs.py::FIG2 holds them (a test checks that the two agree).
CONFIGURATION = ("Figure 2's configuration (Appendix A.2): N = 7 tasks in K = 3 clusters, d = 10, s = 6 "
                 "(r = 1 - s/d = 0.4), σ0 = 0.4, η = α = 0.5, λ = 0.3, T = 2000, M in {1, 5, 10, 20}, Definition 1 "
                 "features")
SOURCE_CAVEAT = "May be an artifact of the source's damaged LaTeX; check against the original."

# Section 4 (Lemma 1, Propositions 1-3), Section 5 (Proposition 4, Theorems 1-2 and the insights drawn from them;
# C2, the reviewer's reading of Proposition 2, after Proposition 3), Section 6 and Appendix A (Figures 2-5 and the
# experiments' preconditions), then the appendices' lemmas in the order they appear (Lemma 2 in B, Corollary 1 in
# C, Lemmas 3-6 in D, 7-13 in E, 14-15 in F, 16 in I.1).  Experiments beyond the paper (``open.*``) come last.
ORDER = (
    "lemma1", "prop1", "prop2", "prop3", "c2",
    "prop4", "thm1", "thm2", "c4", "c5",
    "fig2", "fig3", "fig4", "fig5", "audit",
    "lemma2", "cor1", "lemma3", "lemma4", "lemma5", "lemma6",
    "lemma7", "lemma8", "lemma9", "lemma10", "lemma11", "lemma12", "lemma13",
    "lemma14", "lemma15", "lemma16",
    "open",
)

# The readings findings rest on (Slip.strength_note): where the text is silent, a finding holds under the tool's
# reconstruction only, and says which.
READING_TERMINATION = "Algorithm 1's termination rule and gate, eqs. (1)-(2), absent from the text"
READING_GATE = "Algorithm 1's gate, eqs. (1)-(2), absent from the text, and the auxiliary gradient's 1/t"
READING_FACTOR = "the auxiliary gradient's 1/t, from eq. (7) (Lemma 4's proof prints t)"
READING_SIGNAL_SCALE = "the unstated scale of v_n (v_n = w_n here) and the termination rule"


def steps(c: float) -> str:
    """Algorithm 1's scalings at hidden constant c (eta = alpha = c sigma0^0.5, lambda = Gamma = c sigma0^1.25), in
    the paper's symbols, as the slips say which setting a number belongs to."""
    return "eta = alpha = sigma0^0.5" if c == 1 else f"eta = alpha = {c:g} sigma0^0.5"
