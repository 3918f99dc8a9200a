"""Where the paper's conclusions survive: the bottom line's sentence on the regime where the gate specializes
(``Pack.survives``).

At Figure 2's stated hyperparameters the gate barely specializes and the figure's convergence is not reproduced
(``fig2.convergence_not_reproduced``).  The Figure 2 convergence claim also measures the figure's three conclusions
in a regime where the paper's gate does specialize (:mod:`packs.moe_cl.experiments.specializing`), as sensitivity
entries; the reviewer's claim C2 measures the routing purity there.  This sentence says, from those decided
entries, which conclusions hold there (confirmed on every task pool), which fail (refuted on some pool) and which
the run does not settle, with the measured means.
"""

from __future__ import annotations

from moecl_verify.checks.kinds.base import number

CLAIM = "fig2.termination_converges"
# the conclusion's claim -> (what holds, what fails), in the bottom line's words
SAID = {
    "fig2.no_termination_higher": ("termination lowers the errors", "termination does not lower the errors"),
    "fig2.moe_beats_single": ("MoE beats one expert", "MoE does not beat one expert"),
    "fig2.termination_converges": ("the errors fall to near zero", "the errors do not fall to near zero"),
}


def _span(values) -> str:
    lo, hi = number(min(values), 2), number(max(values), 2)
    return lo if lo == hi else f"{lo}–{hi}"


def _numbers(conclusion: str, rows) -> str:
    def errors(name, label):
        return _span([r.config["errors"][name][label] for r in rows])

    if conclusion == "fig2.no_termination_higher":
        return f"G_T {errors('G_T', 'with termination')} with termination against {errors('G_T', 'without termination')} without"
    if conclusion == "fig2.moe_beats_single":
        return f"G_T {errors('G_T', 'with termination')} against one expert's {errors('G_T', 'one expert')}"
    return (f"F_T {errors('F_T', 'with termination')} against 'almost zero', "
            f"{number(rows[0].config['near_zero'], 2)} x one expert's: "
            f"{_span([r.config['near_zero'] * r.config['errors']['F_T']['one expert'] for r in rows])}")


def sentences(run) -> list[tuple[str, tuple]]:
    rows = [r for r in run.results if r.id == CLAIM and r.config.get("conclusion") in SAID and r.config.get("errors")]
    if not rows:
        return []
    held, failed, open_ = [], [], []
    for conclusion, (yes, no) in SAID.items():
        mine = [r for r in rows if r.config["conclusion"] == conclusion]
        if not mine:
            continue
        verdicts = {r.verdict for r in mine}
        said = f"({_numbers(conclusion, mine)})"
        if verdicts == {"confirmed"}:
            held.append(f"{yes} {said}")
        elif "refuted" in verdicts:
            failed.append(f"{no} {said}")
        else:
            open_.append(yes)
    if not (held or failed):
        return []
    cfg = rows[0].config
    # the regime in the paper's symbols only; its threshold, T1 and purity are in the entries' details
    where = f"N = {cfg['N']}, M = {cfg['M']}, σ0 = {cfg['sigma0']:g}, v_n = {cfg['signal_scale']:g} w_n"
    text = f"Where the gate specializes ({where}, a regime the tool found; not Figure 2's configuration"
    text += "), of Figure 2's conclusions, "
    if held:
        text += " and ".join(held) + " on every task pool tried" + (", but " if failed else "")
    text += " and ".join(failed)
    if open_:
        text += "; not settled: " + " and ".join(open_)
    text += "."
    return [(text, tuple(r.key for r in rows))]


__all__ = ["sentences"]
