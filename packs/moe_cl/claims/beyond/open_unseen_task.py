"""A task first arrives after termination: which expert receives it, and what is forgotten?

The paper's tasks all arrive from round 1. An independent reviewer's reading notes that a frozen gate cannot
route an unseen task to a fresh expert: it sends the newcomer to whichever expert its frozen scores favour,
and that expert's old task may be overwritten.

Experiment (:mod:`packs.moe_cl.experiments.open_questions`): uniform tasks, the last task (N-1), with a fresh ground
truth and signal, first arrives at the regime's event round (after the gate has frozen in the termination
runs). Three routers on the same draws: the frozen gate (Algorithm 1 with termination), a gate that keeps
training (no termination), and the oracle router with one spare expert (tasks 0..N-2 on experts 0..M-2, the
new task alone on expert M-1). Hypotheses, decided by :mod:`checks.decide`:

* the frozen gate forgets old tasks more than the oracle with a spare expert;
* a gate that keeps training forgets old tasks less than the frozen gate;
* the new task is served worse by the frozen gate than by the spare expert.

Also reported: the share of the new task's rounds sent to an expert that had served old tasks, or whose eq. (11)
set at arrival was another task; how many experts received it; the forgetting of the receivers' old rounds.
"""

from __future__ import annotations

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments import open_questions as oq
from moecl_verify.packs.moe_cl.experiments.open_questions import (
    INTERPRETATIONS, QUANTITIES, Variant, common_notes, curves_panels, mean_se, paired_margin, simulate,
    variant_rows)
from moecl_verify.packs.moe_cl.entries.open_questions import measurement
from moecl_verify.packs.moe_cl.experiments.pools import pool_indices
from moecl_verify.checks.model import Interpretation
from moecl_verify.checks.kinds.mean import Measurement
from moecl_verify.checks.registry import Claim, register

CLAIM_ID = "open.unseen_task"
QUESTION = "unseen_task"
FROZEN, TRAINING, ORACLE = "frozen gate (termination)", "gate keeps training", "oracle, spare expert"
VARIANTS = (Variant(FROZEN, termination=True, schedule=("new task",), window="event", snapshot=True),
            Variant(TRAINING, termination=False, schedule=("new task",), window="event", snapshot=True),
            Variant(ORACLE, oracle_spare=True, schedule=("new task",), window="event", snapshot=True))
LABELS = [v.label for v in VARIANTS]

VS_ORACLE = ("old tasks are forgotten more under the frozen gate than with a spare expert: Delta = old-task "
             "forgetting (frozen) - old-task forgetting (oracle, spare expert), paired draws")
VS_TRAINING = ("a gate that keeps training forgets old tasks less: Delta = old-task forgetting (frozen) - old-task "
               "forgetting (keeps training)")
NEW_TASK = ("the new task is served worse by the frozen gate: Delta = served error of the new task (frozen) - "
            "(oracle, spare expert), rounds from its arrival to T")


def receiver_rows(runs: dict, regime, pool: int) -> list[dict]:
    """Per router: where the new task went and what its receivers forgot."""
    return [{"router": label,
             "new_to_expert_used_before": mean_se(runs[(regime.name, pool, label)]["new_to_used"]),
             "new_to_expert_of_other_set": mean_se(runs[(regime.name, pool, label)]["new_to_other_set"]),
             "experts_receiving_new_task": mean_se(runs[(regime.name, pool, label)]["new_experts"]),
             "old_forgetting": mean_se(runs[(regime.name, pool, label)]["old_forgetting"]),
             "old_forgetting_of_receivers": mean_se(runs[(regime.name, pool, label)]["old_forgetting_receivers"]),
             "served_error_new": mean_se(runs[(regime.name, pool, label)]["served_error"][:, regime.N - 1])}
            for label in LABELS]


def measure(ctx: Context) -> list[Measurement]:
    runs = simulate(ctx, QUESTION, VARIANTS)
    out = []
    for regime in oq.REGIMES.values():
        new = regime.N - 1
        for k in pool_indices(ctx.sizes):
            frozen, training, oracle = (runs[(regime.name, k, label)] for label in LABELS)
            extra = dict(variants=variant_rows(runs, regime, k, LABELS), receivers=receiver_rows(runs, regime, k))
            out.append(measurement(ctx, CLAIM_ID, regime, k, "frozen vs spare expert", VS_ORACLE,
                                   [paired_margin("old tasks", frozen["old_forgetting"], oracle["old_forgetting"])],
                                   **extra))
            out.append(measurement(ctx, CLAIM_ID, regime, k, "frozen vs training", VS_TRAINING,
                                   [paired_margin("old tasks", frozen["old_forgetting"], training["old_forgetting"])],
                                   **extra))
            out.append(measurement(ctx, CLAIM_ID, regime, k, "new task", NEW_TASK,
                                   [paired_margin("new task", frozen["served_error"][:, new],
                                                  oracle["served_error"][:, new])], **extra))
    return out


def curves(ctx: Context) -> dict:
    runs = simulate(ctx, QUESTION, VARIANTS)
    return {"claim": CLAIM_ID, **curves_panels(runs, [("a new task arrives", LABELS)], QUANTITIES,
                                               event="new task")}


NEW_TASK_READING = Interpretation(
    id="open.unseen_task",
    location="Beyond the paper; numeric/draws.py TaskSchedule.new_task_at; MoEConfig(router='oracle')",
    issue="How a task arriving after termination is simulated, and what 'forgotten' means for the old tasks.",
    choice="Tasks uniform over [N] with task N-1 absent (the others renormalized) before the regime's event round "
    "(250, 288) and at 1/N from then on; its ground truth and signal are drawn with the pool, unseen until then. "
    "Oracle with a spare expert: experts 0..M-2 dealt round-robin to tasks 0..N-2, expert M-1 to the new task "
    "alone, each round to a uniformly chosen expert of the task's set. Old-task forgetting: the mean over rounds "
    "tau before the arrival of ||w_T^(m_tau) - w_(n_tau)||^2 - ||w_a^(m_tau) - w_(n_tau)||^2, w_a the models "
    "after round event - 1 (the same draws cut there); of the receivers: the same over the old rounds served by "
    "experts that received the new task.",
)

register(__name__, Claim(
    id=CLAIM_ID,
    source="Beyond the paper: termination (Algorithm 1, lines 7-13) and a task unseen before it",
    kind="experiment",
    statement="Hypothesis, stated before the test, for a task with a fresh ground truth and signal that first "
    "arrives after termination (uniform tasks otherwise), comparing on the same draws the frozen gate, a gate "
    "that keeps training and the oracle router with one spare expert for the new task: (1) old tasks are "
    "forgotten more under the frozen gate than with the spare expert, Delta = forgetting(frozen) - "
    "forgetting(oracle) > 0; (2) a gate that keeps training forgets old tasks less than the frozen gate, Delta = "
    "forgetting(frozen) - forgetting(keeps training) > 0; (3) the new task's served error is higher under the "
    "frozen gate than with the spare expert, Delta > 0.",
    preconditions=("Algorithm 1 with and without termination", "oracle router", "regimes of open.regimes"),
    measure=measure,
    interpretations=INTERPRETATIONS + (NEW_TASK_READING,),
    summary="A task first arrives after termination: where does the frozen gate send it, and what is forgotten?",
    notes=common_notes() + " Where the new task goes (experts used before, experts of another eq. (11) set, how "
    "many receive it) is reported per router beside the criteria.",
    artifacts=(("open_unseen_task", curves),),
    shares=("open",),
))
