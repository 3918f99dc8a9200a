"""Does a rare task get an expert of its own before termination, and how is it served afterwards?

The paper draws every task uniformly (Section 3.1). An independent reviewer's reading asks what happens with
non-uniform task frequencies: Algorithm 1 freezes the gate after a fixed exploration, and a task that seldom
arrives before then may have no expert set of its own (eq. 11) when the gate stops learning.

Experiment (:mod:`packs.moe_cl.experiments.open_questions`): Algorithm 1 with termination under task frequencies
Zipf with exponent 0 (uniform, the control), 1 and 2 (task 0 the most frequent, task N-1 the rarest), and with
one task (N-1) at 1.5% and the others sharing the rest equally. The schedules share their draws (the same
uniforms mapped through each schedule's inverse CDF, the same features and routing noise), so each replicate
compares the same tasks under unequal and under equal frequencies: the control removes what the pool's
geometry alone does to task N-1 against task 0. Hypotheses, per schedule with a rare task, decided by
:mod:`checks.decide`:

* own expert: the rarest task has an expert set of its own (|M_{N-1}| >= 1 at the final gate, eq. 11) less
  often than under equal frequencies;
* error: after termination, the rarest task's served error exceeds the most frequent task's by more than
  under equal frequencies;
* forgetting: the rarest task's forgetting (eq. 15 over its rounds) exceeds the most frequent task's by more
  than under equal frequencies.

The observed task shares, P(own set) and the per-task errors of every schedule are reported with each entry.
"""

from __future__ import annotations

import numpy as np

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments import open_questions as oq
from moecl_verify.packs.moe_cl.experiments.open_questions import (
    INTERPRETATIONS, QUANTITIES, RARE_SHARE, ZIPF_EXPONENTS, Variant, common_notes, curves_panels, mean_se,
    paired_margin, simulate, variant_rows)
from moecl_verify.packs.moe_cl.entries.open_questions import measurement
from moecl_verify.packs.moe_cl.experiments.pools import pool_indices
from moecl_verify.checks.model import Interpretation
from moecl_verify.checks.kinds.mean import Measurement
from moecl_verify.checks.registry import Claim, register

CLAIM_ID = "open.rare_task"
QUESTION = "rare_task"
# One draw group for every schedule: common random numbers, so the comparisons with the control are paired.
VARIANTS = tuple(Variant(f"Zipf a={a:g}", schedule=("zipf", a), window="event", draws="frequencies")
                 for a in ZIPF_EXPONENTS) + (
    Variant(f"rare {RARE_SHARE:.1%}", schedule=("rare", RARE_SHARE), window="event", draws="frequencies"),)
LABELS = [v.label for v in VARIANTS]
CONTROL = LABELS[0]  # Zipf exponent 0: every task equally frequent
WITH_RARE = LABELS[1:]

OWN = ("the rarest task has an eq. (11) expert set of its own less often than under equal frequencies: Delta = "
       "P(|M_(N-1)| >= 1 | equal) - P(|M_(N-1)| >= 1 | schedule) at the final gate (common random numbers)")
ERROR = ("after termination the rarest task is served worse than the most frequent by more than under equal "
         "frequencies: Delta = [e_(N-1) - e_0 | schedule] - [e_(N-1) - e_0 | equal], e_n the served error over "
         "the rounds from the event round to T (common random numbers)")
FORGETTING = ("the rarest task is forgotten more than the most frequent by more than under equal frequencies: "
              "Delta = [F_(N-1) - F_0 | schedule] - [F_(N-1) - F_0 | equal], F_n eq. (15) over task n's rounds")


def own_set(sets: np.ndarray, n: int) -> np.ndarray:
    """Per replicate 1.0 if some expert's eq. (11) set is task n, else 0.0."""
    return (sets == n).any(axis=1).astype(float)


def schedule_rows(runs: dict, regime, pool: int) -> list[dict]:
    """Per schedule: the tasks' observed shares in the window (mean over replicates) against their probabilities,
    P(own set) of the most frequent and the rarest task, and their served errors and forgetting."""
    rows = []
    for v in VARIANTS:
        s = runs[(regime.name, pool, v.label)]
        counts = s["task_rounds_window"]
        share = counts / counts.sum(axis=1, keepdims=True)
        probs = v.task_schedule(regime).probabilities_at(regime.T)
        last = regime.N - 1
        rows.append({"schedule": v.label, "probabilities": [float(p) for p in probs],
                     "observed_share": [float(x) for x in share.mean(axis=0)],
                     "own_set_frequent": float(own_set(s["sets"], 0).mean()),
                     "own_set_rarest": float(own_set(s["sets"], last).mean()),
                     "served_error_frequent": mean_se(s["served_error"][:, 0]),
                     "served_error_rarest": mean_se(s["served_error"][:, last]),
                     "forgetting_frequent": mean_se(s["task_forgetting"][:, 0]),
                     "forgetting_rarest": mean_se(s["task_forgetting"][:, last])})
    return rows


def measure(ctx: Context) -> list[Measurement]:
    runs = simulate(ctx, QUESTION, VARIANTS)
    out = []
    for regime in oq.REGIMES.values():
        last = regime.N - 1
        for k in pool_indices(ctx.sizes):
            extra = dict(schedules=schedule_rows(runs, regime, k), variants=variant_rows(runs, regime, k, LABELS))
            s = {label: runs[(regime.name, k, label)] for label in LABELS}

            def gap(label, field):
                return s[label][field][:, last] - s[label][field][:, 0]

            own = [paired_margin(label, own_set(s[CONTROL]["sets"], last), own_set(s[label]["sets"], last))
                   for label in WITH_RARE]
            err = [paired_margin(label, gap(label, "served_error"), gap(CONTROL, "served_error")) for label in WITH_RARE]
            fgt = [paired_margin(label, gap(label, "task_forgetting"), gap(CONTROL, "task_forgetting"))
                   for label in WITH_RARE]
            out.append(measurement(ctx, CLAIM_ID, regime, k, "own expert", OWN, own, **extra))
            out.append(measurement(ctx, CLAIM_ID, regime, k, "served error", ERROR, err, **extra))
            out.append(measurement(ctx, CLAIM_ID, regime, k, "forgetting", FORGETTING, fgt, **extra))
    return out


def curves(ctx: Context) -> dict:
    runs = simulate(ctx, QUESTION, VARIANTS)
    return {"claim": CLAIM_ID, **curves_panels(runs, [("task frequencies, with termination", LABELS)], QUANTITIES,
                                               event="window")}


SCHEDULE_READING = Interpretation(
    id="open.task_frequencies",
    location="Section 3.1 (tasks uniform over [N]); numeric/draws.py TaskSchedule",
    issue="How unequal task frequencies are drawn and which tasks are compared.",
    choice="Each round's task is drawn independently by inverse CDF of the schedule (one uniform per replicate "
    "and round): Zipf p_n proportional to (n + 1)^-a for a in {0, 1, 2} (task 0 the most frequent, task N-1 "
    "the rarest; a = 0 is the uniform control), or task N-1 at 1.5% and the others at (1 - 0.015) / (N - 1). "
    "The comparison is always task N-1 (rarest) against task 0 (most frequent); with N = 7 and a = 2 the rarest "
    "has p = 1.35%, with N = 3 and a = 2, 7.3%.",
)

register(__name__, Claim(
    id=CLAIM_ID,
    source="Beyond the paper: Section 3.1's uniform task arrivals relaxed",
    kind="experiment",
    statement="Hypothesis, stated before the test, for each schedule with a rare task (Zipf exponent 1, Zipf "
    "exponent 2, one task at 1.5%), under Algorithm 1 with termination and against the same tasks at equal "
    "frequencies on common random numbers: (1) the rarest task (task N-1) has an eq. (11) expert set of its own "
    "at the final gate less often, Delta = P(|M_(N-1)| >= 1 | equal) - P(|M_(N-1)| >= 1 | schedule) > 0; (2) "
    "after termination its served error exceeds the most frequent task's (task 0) by more, Delta = [e_(N-1) - "
    "e_0 | schedule] - [e_(N-1) - e_0 | equal] > 0; (3) its forgetting exceeds the most frequent task's by more, "
    "Delta = [F_(N-1) - F_0 | schedule] - [F_(N-1) - F_0 | equal] > 0.",
    preconditions=("Algorithm 1 with termination", "regimes of open.regimes", "task schedules of open.task_frequencies"),
    measure=measure,
    interpretations=INTERPRETATIONS + (SCHEDULE_READING,),
    summary="Does a rare task get an expert of its own before termination, and is it served and remembered worse?",
    notes=common_notes() + " Every criterion is taken against the uniform control (Zipf exponent 0), because "
    "the pool's geometry alone can favour one task over another (in the paper regime's pool 0 the last task has "
    "an eq. (11) set in few replicates even at equal frequencies). "
    "'After termination' is the window from the regime's event round (250, 288) to T; replicates in which the "
    "rare task did not arrive there are left out of the error comparison (n per case says how many remain).",
    artifacts=(("open_rare_task", curves),),
    shares=("open",),
))
