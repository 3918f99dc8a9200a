"""Readings of the data model (Section 3.2, Definition 1, Appendix A.2) that several claims share.

Proposition 4's single-expert checks and the Figure 2 simulations (hence Figures 4-5) draw ground truths
and features the same way, so they report the same readings of the unstated parts: what sigma_0 is, and
how beta_t is distributed.
"""

from __future__ import annotations

from moecl_verify.checks.model import Interpretation

SIGMA0_CONVENTION = Interpretation(
    id="sigma0_convention",
    location="Section 3.2 ('sigma_0 > 0 denotes the variance'); Appendix A.2 ('N(0, sigma_0)')",
    issue="sigma_0 is called a variance but bounds ||w_n - w_n'||_inf, a standard-deviation scale.",
    choice="sigma_0 is a standard deviation: w_n ~ N(0, sigma_0^2 I_d).",
    option="sigma0_is=std|variance",
)
BETA_DISTRIBUTION = Interpretation(
    id="beta_distribution",
    location="Definition 1",
    issue="beta_t in (0, C] with C = O(1); its distribution is not given.",
    choice="beta_t ~ Uniform(0, 1]. It never affects an expert's update (only the span of X_t does) but it "
    "scales the signal part of the gate outputs h = theta^T sum_i X_t,i.",
    option="beta_max",
)
