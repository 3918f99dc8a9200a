"""Does specialization survive continued gate training when balance is imposed outside the gradient?

The paper proves, in its own model, that the gate must stop training: the auxiliary load-balancing loss,
inside the gate's gradient, eventually pulls every gate output together (Proposition 2), and early
termination is the fix (Proposition 3). An independent reviewer's reading asks whether termination is
still needed when balance is imposed outside the gradient, by loss-free bias balancing, or not at all.

Experiment (:mod:`packs.moe_cl.experiments.open_questions`): each gate with and without termination, well past
t2 = ceil(M / (eta sigma0^0.75)): (a) the paper's gate (auxiliary loss in the gradient); (b) no balancing
term; (c) loss-free bias balancing at rates u = 0.01, 0.1 and 1 times lambda, load counted since round 1.
Hypotheses, each a criterion with a direction decided by :mod:`checks.decide`:

* specialization: without termination, the late-window routing purity with no balancing term and with bias
  balancing at each rate exceeds the purity of the paper's gate without termination;
* termination still needed: for every balancing rule, E[G_T] without termination exceeds E[G_T] with it.

Also reported per variant: purity, load balance within the sets, experts ever used, E[F_T], E[G_T].
"""

from __future__ import annotations

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments import open_questions as oq
from moecl_verify.packs.moe_cl.experiments.balance_rules import LABELS, QUESTION, RULES, VARIANTS
from moecl_verify.packs.moe_cl.experiments.balance_rules import label as _label
from moecl_verify.packs.moe_cl.experiments.open_questions import (
    INTERPRETATIONS, QUANTITIES, common_notes, curves_panels, paired_margin, simulate, variant_rows)
from moecl_verify.packs.moe_cl.entries.open_questions import measurement
from moecl_verify.packs.moe_cl.experiments.pools import pool_indices
from moecl_verify.checks.model import Interpretation
from moecl_verify.checks.kinds.mean import Measurement
from moecl_verify.checks.registry import Claim, register

CLAIM_ID = "open.balance_outside_gradient"

SPECIALIZATION = ("without termination, late-window routing purity with balance outside the gradient exceeds the "
                  "paper's gate's: Delta = purity(rule, no termination) - purity(aux, no termination)")
TERMINATION = ("termination still lowers the final generalization error for every balancing rule: Delta = "
               "E[G_T | rule, no termination] - E[G_T | rule, with termination] (paired draws)")


def measure(ctx: Context) -> list[Measurement]:
    runs = simulate(ctx, QUESTION, VARIANTS)
    out = []
    for regime in oq.REGIMES.values():
        for k in pool_indices(ctx.sizes):
            def get(label, field):
                return runs[(regime.name, k, label)][field]

            table = variant_rows(runs, regime, k, LABELS)
            base = get(_label("aux", False), "purity_window")
            spec = [paired_margin(rule, get(_label(rule, False), "purity_window"), base) for rule, _, _ in RULES[1:]]
            out.append(measurement(ctx, CLAIM_ID, regime, k, "specialization", SPECIALIZATION, spec, variants=table))
            term = [paired_margin(rule, get(_label(rule, False), "generalization_T"),
                                  get(_label(rule, True), "generalization_T")) for rule, _, _ in RULES]
            out.append(measurement(ctx, CLAIM_ID, regime, k, "termination still needed", TERMINATION, term,
                                   variants=table))
    return out


def curves(ctx: Context) -> dict:
    runs = simulate(ctx, QUESTION, VARIANTS)
    groups = [("with termination", [_label(r, True) for r, _, _ in RULES]),
              ("no termination", [_label(r, False) for r, _, _ in RULES])]
    return {"claim": CLAIM_ID, **curves_panels(runs, groups, QUANTITIES)}


BIAS_READING = Interpretation(
    id="open.bias_balancing",
    location="Beyond the paper (loss-free balancing, Wang et al. 2024); numeric/moe.py MoEConfig.balance",
    issue="How loss-free bias balancing enters Algorithm 1 and what 'load' it balances.",
    choice="A per-expert bias b (starting at 0) is added to the routing scores for the top-1 choice only, never "
    "to the softmax; after each round b_m += u sign(1/M - load_m) with load_m = expert m's share of all routings "
    "since round 1 including round t (cumulative, as eq. 7's f_t), u in {0.01, 0.1, 1} x lambda; the gradient "
    "then carries the locality loss only; termination freezes the bias with the gate. 'No balancing' drops the "
    "auxiliary term of the gradient whatever alpha is.",
)

register(__name__, Claim(
    id=CLAIM_ID,
    source="Beyond the paper: Propositions 2-3 (why the gate must stop) under other balancing rules",
    kind="experiment",
    statement="Hypothesis, stated before the test, in two parts. (1) Balance imposed outside the gradient keeps "
    "the gate specialized while it keeps training: without termination, the routing purity over the last quarter "
    "of the run with no balancing term, and with loss-free bias balancing at each rate u in {0.01, 0.1, 1} x "
    "lambda, exceeds the purity of the paper's gate (auxiliary loss in the gradient) without termination, Delta "
    "> 0 in every case. (2) Termination is still needed: for each of the five balancing rules, E[G_T] without "
    "termination exceeds E[G_T] with termination on the same draws, Delta > 0 in every case.",
    preconditions=("Algorithm 1 and its balancing variants", "regimes of open.regimes"),
    measure=measure,
    interpretations=INTERPRETATIONS + (BIAS_READING,),
    summary="Is termination needed when balance is imposed outside the gate's gradient (bias balancing) or not at all?",
    notes=common_notes() + " Runs go to T = 500 (paper regime, 12 t2) and T = 468 = T1 + 4 t2 (specializing "
    "regime), well past t2; the bias rates are multiples of each regime's routing-noise level lambda so that they "
    "are commensurate with the gate-output gaps.",
    artifacts=(("open_balance_outside_gradient", curves),),
    shares=("open",),
))
