"""The router after exploration: Lemma 2 and Corollary 1 (smooth routing), Lemma 4 (gate gradients),
Lemmas 10-15 (router learning), Propositions 1-3 (stability, continued training, termination)."""
