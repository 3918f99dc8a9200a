"""What happens when task frequencies drift after the gate is frozen?

Algorithm 1 freezes the gate once it judges it converged; the paper's tasks arrive uniformly, so nothing
changes afterwards. An independent reviewer's reading asks about drifting frequencies: a frozen gate
cannot adapt to a change of which tasks are frequent, one that keeps training can.

Experiment (:mod:`packs.moe_cl.experiments.open_questions`): tasks Zipf with exponent 2 (task 0 the most frequent,
task N-1 the rarest); from the regime's event round (after the gate has frozen in the termination runs) the
probabilities are reversed, so the rarest task becomes the most frequent. The frozen gate (Algorithm 1 with
termination) against a gate that keeps training (no termination), on the same draws. Hypotheses, decided by
:mod:`checks.decide`:

* robustness: after the change the frozen gate's mean model error (eq. 14) is lower than the training gate's;
* no adaptation: after the change the newly frequent task's model error is higher under the frozen gate;
* routing: after the change the frozen gate's routing purity is higher than the training gate's.
"""

from __future__ import annotations

import numpy as np

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments import open_questions as oq
from moecl_verify.packs.moe_cl.experiments.open_questions import (
    INTERPRETATIONS, Variant, common_notes, curves_panels, mean_se, paired_margin, simulate, variant_rows)
from moecl_verify.packs.moe_cl.entries.open_questions import measurement
from moecl_verify.packs.moe_cl.experiments.pools import pool_indices
from moecl_verify.checks.model import Interpretation
from moecl_verify.checks.kinds.mean import Measurement
from moecl_verify.checks.registry import Claim, register

CLAIM_ID = "open.drift"
QUESTION = "drift"
EXPONENT = 2.0
FROZEN, TRAINING = "frozen gate (termination)", "gate keeps training"
VARIANTS = (Variant(FROZEN, termination=True, schedule=("zipf swap", EXPONENT), window="event"),
            Variant(TRAINING, termination=False, schedule=("zipf swap", EXPONENT), window="event"))
LABELS = [v.label for v in VARIANTS]

ROBUST = ("after the change the frozen gate's mean model error is lower: Delta = mean E_t after the change "
          "(gate keeps training) - mean E_t after the change (frozen gate), paired draws")
ADAPT = ("after the change the newly frequent task (formerly the rarest, task N-1) has a higher model error under "
         "the frozen gate: Delta = its mean E_t (frozen) - its mean E_t (keeps training)")
ROUTING = ("after the change the frozen gate routes more purely: Delta = purity (frozen) - purity (keeps "
           "training), rounds from the change to T")


def window_error(summary: dict) -> np.ndarray:
    """Per replicate: the mean model error over all rounds of the window (tasks weighted by their rounds)."""
    err, count = summary["task_error_window"], summary["task_rounds_window"]
    total = np.where(count > 0, err * count, 0.0).sum(axis=1)
    return total / count.sum(axis=1)


def measure(ctx: Context) -> list[Measurement]:
    runs = simulate(ctx, QUESTION, VARIANTS)
    out = []
    for regime in oq.REGIMES.values():
        new = regime.N - 1
        for k in pool_indices(ctx.sizes):
            frozen, training = runs[(regime.name, k, FROZEN)], runs[(regime.name, k, TRAINING)]
            extra = dict(variants=variant_rows(runs, regime, k, LABELS),
                         newly_frequent_error={label: mean_se(runs[(regime.name, k, label)]["task_error_window"][:, new])
                                               for label in LABELS},
                         window_error={label: mean_se(window_error(runs[(regime.name, k, label)])) for label in LABELS})
            out.append(measurement(ctx, CLAIM_ID, regime, k, "robustness", ROBUST,
                                   [paired_margin("all tasks", window_error(training), window_error(frozen))], **extra))
            out.append(measurement(ctx, CLAIM_ID, regime, k, "no adaptation", ADAPT,
                                   [paired_margin("newly frequent task", frozen["task_error_window"][:, new],
                                                  training["task_error_window"][:, new])], **extra))
            out.append(measurement(ctx, CLAIM_ID, regime, k, "routing", ROUTING,
                                   [paired_margin("purity", frozen["purity_window"], training["purity_window"])],
                                   **extra))
    return out


def curves(ctx: Context) -> dict:
    runs = simulate(ctx, QUESTION, VARIANTS)
    quantities = [("purity", "routing purity (eq. 11 sets)"), ("model_error", "E_t"), ("generalization", "G_t")]
    return {"claim": CLAIM_ID, **curves_panels(runs, [("Zipf a=2, frequencies swapped", LABELS)], quantities,
                                               event="swap")}


DRIFT_READING = Interpretation(
    id="open.drift_schedule",
    location="Beyond the paper; numeric/draws.py TaskSchedule.swap_at",
    issue="What drift is simulated and when.",
    choice="Tasks Zipf with exponent 2 until the regime's event round (250 in the paper regime, 288 = T1 + 2 t2 "
    "in the specializing regime), reversed from then on (task n takes task N-1-n's probability), so the rarest "
    "task becomes the most frequent. The termination runs' share of replicates frozen before the change is "
    "reported with each entry (variants, frozen_before_event); every replicate enters the comparison.",
)

register(__name__, Claim(
    id=CLAIM_ID,
    source="Beyond the paper: termination (Algorithm 1, lines 7-13) under drifting task frequencies",
    kind="experiment",
    statement="Hypothesis, stated before the test, for tasks Zipf with exponent 2 whose frequent and rare tasks "
    "swap after the gate has frozen, comparing the frozen gate (Algorithm 1 with termination) with a gate that "
    "keeps training, on the same draws, over the rounds after the change: (1) the frozen gate's mean model error "
    "is lower, Delta = E(keeps training) - E(frozen) > 0; (2) the newly frequent task (formerly the rarest) has a "
    "higher model error under the frozen gate, Delta = E_new(frozen) - E_new(keeps training) > 0; (3) the frozen "
    "gate's routing purity is higher, Delta = purity(frozen) - purity(keeps training) > 0.",
    preconditions=("Algorithm 1 with and without termination", "regimes of open.regimes"),
    measure=measure,
    interpretations=INTERPRETATIONS + (DRIFT_READING,),
    summary="After the gate is frozen, frequent and rare tasks swap: how do routing and errors fare, frozen vs training?",
    notes=common_notes() + " The hypotheses pull in opposite directions on purpose: (1) and (3) are the paper's "
    "case for termination, (2) the reviewer's concern that a frozen gate cannot adapt.",
    artifacts=(("open_drift", curves),),
    shares=("open",),
))
