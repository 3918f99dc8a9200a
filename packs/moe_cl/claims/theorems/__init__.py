"""The MoE's forgetting and generalization error: Theorems 1 and 2, Lemma 16 (eq. 42), and the
insights drawn from them (C4, C5)."""
