"""One expert trained on a sequence of tasks: Proposition 4 (eq. 17-18) and Lemma 3."""
