"""Top-2 routing against top-1: specialization, balance and errors.

The paper routes each task to one expert and leaves top-k routing out of scope. An independent reviewer's
reading asks how its conclusions carry over to top-2 routing, the common choice in practice.

Experiment (:mod:`packs.moe_cl.experiments.open_questions`): Algorithm 1 with top-1 and with top-2 routing, with and
without termination, uniform tasks, on the same draws. The engine's top-2 model: each of the two routed
experts takes the eq. (5) step on the round's data; the round is served by the combination of their models
with the renormalized softmax weights pi_m / (pi_a + pi_b); E_t, F_t, G_t (eq. 14-16) use that combination;
the gate gradient generalizes the top-1 one through the softmax Jacobian; termination compares with the
top-1 member. Hypotheses, with and without termination, decided by :mod:`checks.decide`:

* top-2 specializes less: late-window routing purity (share of the two routed experts inside the task's
  eq. (11) set) is lower than top-1's;
* top-2 forgets more: E[F_T] is higher;
* top-2 generalizes worse: E[G_T] is higher.
"""

from __future__ import annotations

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments import open_questions as oq
from moecl_verify.packs.moe_cl.experiments.open_questions import (
    INTERPRETATIONS, QUANTITIES, Variant, common_notes, curves_panels, paired_margin, simulate, variant_rows)
from moecl_verify.packs.moe_cl.entries.open_questions import measurement
from moecl_verify.packs.moe_cl.experiments.pools import pool_indices
from moecl_verify.checks.model import Interpretation
from moecl_verify.checks.kinds.mean import Measurement
from moecl_verify.checks.registry import Claim, register

CLAIM_ID = "open.top2"
QUESTION = "top2"


def _label(k: int, termination: bool) -> str:
    return f"top-{k}, {'with' if termination else 'no'} termination"


VARIANTS = tuple(Variant(_label(k, term), termination=term, top_k=k) for term in (True, False) for k in (1, 2))
LABELS = [v.label for v in VARIANTS]

PURITY = ("top-2 specializes less: Delta = late-window purity (top-1) - late-window purity (top-2), paired draws")
FORGETTING = "top-2 forgets more: Delta = E[F_T | top-2] - E[F_T | top-1], paired draws"
GENERALIZATION = "top-2 generalizes worse: Delta = E[G_T | top-2] - E[G_T | top-1], paired draws"


def measure(ctx: Context) -> list[Measurement]:
    runs = simulate(ctx, QUESTION, VARIANTS)
    out = []
    for regime in oq.REGIMES.values():
        for k in pool_indices(ctx.sizes):
            def get(top, term, field):
                return runs[(regime.name, k, _label(top, term))][field]

            extra = dict(variants=variant_rows(runs, regime, k, LABELS))
            cases = [(term, "with termination" if term else "no termination") for term in (True, False)]
            out.append(measurement(ctx, CLAIM_ID, regime, k, "purity", PURITY,
                                   [paired_margin(name, get(1, term, "purity_window"), get(2, term, "purity_window"))
                                    for term, name in cases], **extra))
            out.append(measurement(ctx, CLAIM_ID, regime, k, "forgetting", FORGETTING,
                                   [paired_margin(name, get(2, term, "forgetting_T"), get(1, term, "forgetting_T"))
                                    for term, name in cases], **extra))
            out.append(measurement(ctx, CLAIM_ID, regime, k, "generalization", GENERALIZATION,
                                   [paired_margin(name, get(2, term, "generalization_T"),
                                                  get(1, term, "generalization_T")) for term, name in cases], **extra))
    return out


def curves(ctx: Context) -> dict:
    runs = simulate(ctx, QUESTION, VARIANTS)
    return {"claim": CLAIM_ID, **curves_panels(runs, [("top-1 and top-2 routing", LABELS)], QUANTITIES)}


TOP2_READING = Interpretation(
    id="open.top2_model",
    location="Beyond the paper (the paper routes top-1); numeric/moe.py MoEConfig.top_k",
    issue="How Algorithm 1 runs with top-2 routing.",
    choice="The two experts of largest h_m + lambda r_m form the routed set S_t (ties toward the smaller index); "
    "each takes the eq. (5) minimum-norm step on (X_t, y_t); round tau's task is served by sum_{m in S_tau} g_m "
    "w^(m) with g_m = pi_m / sum_{j in S_tau} pi_j fixed at tau and the experts' current models, and E_t, F_t, "
    "G_t use that combination; the gate gradient is the softmax-Jacobian chain with dL/dpi_j = Delta_j + alpha M "
    "f_j / t for j in S_t (f_j = counts_j / (2t)), 0 otherwise; termination compares with the top-1 member; "
    "purity counts each routed expert (the share of the two inside M_{n_t}); loads count both.",
)

register(__name__, Claim(
    id=CLAIM_ID,
    source="Beyond the paper: Algorithm 1 with top-2 instead of top-1 routing",
    kind="experiment",
    statement="Hypothesis, stated before the test, with and without termination, uniform tasks, on the same "
    "draws: (1) top-2 routing specializes less, Delta = late-window routing purity(top-1) - purity(top-2) > 0; (2) "
    "top-2 forgets more, Delta = E[F_T | top-2] - E[F_T | top-1] > 0; (3) top-2 generalizes worse, Delta = "
    "E[G_T | top-2] - E[G_T | top-1] > 0.",
    preconditions=("Algorithm 1 with top-k routing (open.top2_model)", "regimes of open.regimes"),
    measure=measure,
    interpretations=INTERPRETATIONS + (TOP2_READING,),
    summary="Does top-2 routing change specialization, balance and errors against the paper's top-1?",
    notes=common_notes() + " Load balance within the sets and experts ever used are reported per variant beside "
    "the criteria.",
    artifacts=(("open_top2", curves),),
    shares=("open",),
))
