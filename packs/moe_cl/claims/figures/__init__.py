"""The paper's synthetic experiments: Figure 2 (Section 6) and Figures 4-5 (Appendix A.4)."""
