"""The gate in its exploration phase (t <= T1): Lemmas 1, 5, 6, 7, 8 and 9."""
