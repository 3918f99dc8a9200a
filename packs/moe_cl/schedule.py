"""What running the paper's claims costs: seconds per claim (to start the costliest lanes first) and the
run's peak memory (to warn before a run that would not fit)."""

from __future__ import annotations

# Seconds each claim took at the standard budget on two cores (numba's compilation included where the
# claim triggers it).  Used only to start the costliest groups first; a claim missing here counts 1 s.
COST_HINT = {
    "fig3.moe_beats_single": 280.0, "prop2.t2": 58.0, "c4": 32.0, "lemma1": 27.0, "prop1": 13.0,
    "open.balance_outside_gradient": 12.0, "lemma8": 11.0, "prop2.t1": 9.0, "fig2.termination_converges": 8.0,
    "lemma13": 7.0, "open.top2": 5.5, "lemma16": 5.0, "open.rare_task": 4.6, "lemma11": 4.5,
    "prop4.forgetting": 4.0, "open.unseen_task": 3.7, "c5": 3.7, "fig5.forgetting_robust": 3.5,
    "thm2.generalization": 3.4, "thm1.forgetting_early": 3.4, "fig4.balance": 3.2, "fig2.moe_beats_single": 3.0,
    "lemma2": 2.9, "fig2.no_termination_higher": 2.7, "lemma4": 2.7, "cor1": 2.6, "open.drift": 2.3,
    "lemma9": 2.2, "lemma3": 2.2, "lemma12": 1.9,
}

# Measured peak resident memory in GB (10^9 bytes) of a run of every claim (bench/bench_memory.py, two cores,
# fresh cache, summed over the command and its lanes), by (budget, claim lanes), rounded up.
PEAK_GB = {
    ("smoke", 1): 0.4, ("smoke", 2): 0.8,
    ("standard", 1): 0.9, ("standard", 2): 1.2,
    ("full", 1): 2.1, ("full", 2): 3.2,
}
