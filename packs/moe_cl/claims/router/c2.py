"""Claim C2 of an independent reviewer's reading: continued gate training under the load-balancing loss destroys
the specialization (Section 4, "Key design II"; Proposition 2 is the paper's theory of it).

The reading has two parts.  "Errors rise without termination" is Figure 2's criterion
(``fig2.no_termination_higher``).  "The specialization is destroyed" is a statement about routing, and is
checked here as it reads, by a hypothesis stated before the test:

    with the paper's gate (auxiliary loss in the gate's gradient), late-window routing purity with early
    termination exceeds the purity of the same gate trained on without termination, on the same draws:
    Delta = purity(aux, with termination) - purity(aux, no termination) > 0.

Purity is the fraction of the last quarter's rounds whose routed expert lies in the task's expert set
(eq. (11)), as in :mod:`packs.moe_cl.experiments.open_questions`; the runs are those of
``open.balance_outside_gradient`` (:mod:`packs.moe_cl.experiments.balance_rules`), in the paper's regime (Figure 2's
stated hyperparameters, where the gate barely specializes) and in a regime where the paper's gate specializes,
on the budget's pools.  One positive-rule entry per regime and pool, decided by the run's error control
(:mod:`checks.decide`): refuted where purity without termination is significantly the higher.
"""

from __future__ import annotations

import numpy as np

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments import open_questions as oq
from moecl_verify.packs.moe_cl.experiments.balance_rules import QUESTION, VARIANTS, label
from moecl_verify.packs.moe_cl.experiments.pools import POOL_SEED, pool_indices
from moecl_verify.checks.kinds.mean import Measurement
from moecl_verify.checks.model import Slip, keys_of
from moecl_verify.packs.moe_cl import texts
from moecl_verify.checks.registry import Claim, register
from moecl_verify.checks.kinds.base import number

CLAIM_ID = "c2"
SOURCE = "Section 4, Key design II (Proposition 2); an independent reviewer's reading of the paper, claim C2"
CRITERION = ("continued training with the auxiliary loss lowers late-window routing purity: Delta = "
             "purity(aux, with termination) - purity(aux, no termination) (paired draws)")


def _late(bins: np.ndarray) -> float:
    """The mean over replicates and the last quarter's round bins (the purity's window)."""
    return float(np.mean(np.asarray(bins)[:, -(oq.BINS // 4):]))


def measure(ctx: Context) -> list[Measurement]:
    runs = oq.simulate(ctx, QUESTION, VARIANTS)
    out = []
    for regime in oq.REGIMES.values():
        for k in pool_indices(ctx.sizes):
            with_term = runs[(regime.name, k, label("aux", True))]["purity_window"]
            without = runs[(regime.name, k, label("aux", False))]["purity_window"]
            test = oq.paired_margin("purity: with - without termination", with_term, without)
            if test is None:
                raise RuntimeError(f"c2 ({regime.name}, pool {k}): fewer than two replicates")
            config = {"part": f"specialization destroyed, {regime.name} regime", "pool": k,
                      "pool_seed": POOL_SEED, "replicates": ctx.sizes.open_replicates, "seed": ctx.seed,
                      **regime.as_config(),
                      "purity_with_termination": oq.mean_se(with_term), "purity_without_termination": oq.mean_se(without),
                      "chance_purity": _late(runs[(regime.name, k, label("aux", True))]["chance_bins"])}
            out.append(Measurement(claim_id=CLAIM_ID, source=SOURCE, kind="qualitative", form="stated", config=config,
                                   tests=(test,), scale=1.0, formula=CRITERION, rule="positive", horizon_name="case"))
    return out


def _purity(r, name: str) -> float:
    return r.config[name]["mean"]


def _span(values) -> str:
    lo, hi = number(min(values), 3), number(max(values), 3)
    return lo if lo == hi else f"{lo}–{hi}"


def slips(results) -> list[Slip]:
    """The paper's reason for termination, tested: where continued training routes significantly *more*
    purely than the terminated gate, the paper's "the router selects wrong experts after continuing to update
    Theta_t" is false in that regime.  No slip while every entry is undecided or confirmed."""
    against = [r for r in results if r.verdict == "refuted"]
    if not against:
        return []
    regimes = sorted({r.config["regime"] for r in against})
    by_regime = "; ".join(
        f"{regime} regime: with termination {_span([_purity(r, 'purity_with_termination') for r in rows])}, "
        f"without {_span([_purity(r, 'purity_without_termination') for r in rows])} "
        f"(chance {number(rows[0].config['chance_purity'], 3)})"
        for regime in regimes for rows in ([r for r in results if r.config["regime"] == regime],))
    paper = [r for r in results if r.config["regime"] == "paper"]
    effect = ("" if not paper else
              f"at Figure 2's stated hyperparameters (paper regime), late-window routing purity is "
              f"{_span([_purity(r, 'purity_with_termination') for r in paper])} with termination and "
              f"{_span([_purity(r, 'purity_without_termination') for r in paper])} without, against a chance "
              f"level of {number(paper[0].config['chance_purity'], 3)}")
    return [Slip(
        id="c2.routing_not_worse_without_termination",
        strength="reading", strength_note=texts.READING_TERMINATION,
        summary="Measured against the current gate's expert sets, a gate that keeps training routes at least as "
        "purely as a terminated one (no run removed the routing to test whether it is why errors rise without "
        "termination)",
        entries=keys_of(against),
        location="Section 6 (discussion of Figure 2(b), (d)); Section 4 after Proposition 2",
        slip_class="false statement",
        stated="without termination performance is poor 'because the router selects wrong experts for new task "
        "arrivals after continuing to update Theta_t'; termination is necessary to keep the between-set output "
        "gaps, 'ensuring expert diversity'",
        holds="with the paper's auxiliary loss in the gate's gradient, continued training does not route less "
        f"purely: late-window purity without termination is significantly higher in {len(against)} of "
        f"{len(results)} regime and pool cases and lower in none ({by_regime}). Whether the errors rise without "
        "termination is Figure 2's criterion (fig2.no_termination_higher). Purity against the current gate's eq. (11) "
        "sets cannot see an expert reassigned to a task other than the one it was trained on, and no run here "
        "forced the routing to measure its share of the errors, so the comparison does not say why they rise",
        evidence=" | ".join(f"{r.key.label}: {r.evidence}" for r in against),
        effect=effect,
    )] if not any(r.verdict == "confirmed" for r in results) else []


SUMMARY = "Continued gate training under the balancing loss destroys the specialization (routing purity falls)."
register(__name__, Claim(
    id=CLAIM_ID, source=SOURCE, kind="qualitative",
    statement=r"\text{" + SUMMARY + "}",
    preconditions=("Algorithm 1 with the auxiliary loss, with and without termination", "regimes of open.regimes"),
    measure=measure, summary=SUMMARY, slips=slips,
    interpretations=oq.INTERPRETATIONS,
    notes="The routing part of C2, checked as it reads, with the hypothesis stated before it was tested and "
    "decided under the run's error control; its error part is Figure 2's fig2.no_termination_higher. Measured on "
    "the runs of open.balance_outside_gradient. " + oq.regime_notes(),
    shares=("open",),
))
