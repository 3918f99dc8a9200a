"""The questions beyond the paper answered in words (``Pack.answers``, ``Pack.answer_facts``).

Each hypothesis of ``packs/moe_cl/claims/beyond`` is tested aspect by aspect (an entry's part: "aspect, regime");
for each aspect, what the report says when the stated direction held, and when the opposite held significantly.
The machinery picks the sentence from the decided entries and fills in the size of the differences
(:func:`moecl_verify.reports.headline.answer_sentence`); nothing here says which way a result went.  A question
that asks *where* gets :func:`unseen_task_where`, read from the measurements of its entries.
"""

from __future__ import annotations

from moecl_verify.checks.kinds.base import number

ANSWERS = {
    "open.balance_outside_gradient": {
        "termination still needed": ("termination still lowers G_T under every balancing rule (by {span})",
                                     "termination raises G_T under some balancing rule (by {span})"),
        "specialization": ("balance outside the gradient routes more purely than the paper's gate (by {span})",
                           "balance outside the gradient routes less purely than the paper's gate (by {span})"),
    },
    "open.drift": {
        "robustness": ("the frozen gate's models err less after the swap (by {span})",
                       "the frozen gate's models err more after the swap (by {span})"),
        "no adaptation": ("the newly frequent task is served worse by the frozen gate (by {span})",
                          "the newly frequent task is served better by the frozen gate (by {span})"),
        "routing": ("the frozen gate routes more purely after the swap (by {span})",
                    "the frozen gate routes less purely than a gate that keeps training (by {span})"),
    },
    "open.rare_task": {
        "own expert": ("the rare task gets an expert set of its own less often than under equal frequencies "
                       "(by {span})",
                       "the rare task gets an expert set of its own more often (by {span})"),
        "served error": ("the rare task is served worse, relative to the frequent one (by {span})",
                         "the rare task is served better, relative to the frequent one (by {span})"),
        "forgetting": ("the rare task is forgotten more, relative to the frequent one (by {span})",
                       "the rare task is forgotten less, relative to the frequent one (by {span})"),
    },
    "open.top2": {
        "purity": ("top-2 routes less purely than top-1 (by {span})", "top-2 routes more purely than top-1 (by {span})"),
        "forgetting": ("top-2 forgets more (F_T higher by {span})", "top-2 forgets less (F_T lower by {span})"),
        "generalization": ("top-2 generalizes worse (G_T higher by {span})",
                           "top-2 generalizes better (G_T lower by {span})"),
    },
    "open.unseen_task": {
        "frozen vs spare expert": ("old tasks are forgotten more than with a spare expert (by {span})",
                                   "old tasks are forgotten less than with a spare expert (by {span})"),
        "frozen vs training": ("a gate that keeps training forgets old tasks less (by {span})",
                               "a gate that keeps training forgets old tasks more (by {span})"),
        "new task": ("the new task is served worse than by a spare expert (error higher by {span})",
                     "the new task is served better than by a spare expert (by {span})"),
    },
}


def _span(values: list[float]) -> str:
    lo, hi = number(min(values), 2), number(max(values), 2)
    return lo if lo == hi else f"{lo}–{hi}"


def _percent(values: list[float]) -> str:
    lo, hi = f"{100 * min(values):.0f}", f"{100 * max(values):.0f}"
    return f"{lo}%" if lo == hi else f"{lo}–{hi}%"


def unseen_task_where(entries) -> str:
    """Where the frozen gate sends a task that first arrives after termination, from the routers' records
    (``receivers``): the share of its rounds given to experts used before, to experts of another task's
    expert set, and how many experts take it, over regimes and pools."""
    rows = []
    seen = set()
    for r in entries:
        key = (r.config.get("regime"), r.key.pool)
        if key in seen:
            continue
        seen.add(key)
        frozen = next((x for x in r.config.get("receivers", ()) if x.get("router", "").startswith("frozen")), None)
        if frozen is not None:
            rows.append(frozen)
    values = {name: [row[name]["mean"] for row in rows if row.get(name, {}).get("mean") is not None]
              for name in ("new_to_expert_used_before", "new_to_expert_of_other_set", "experts_receiving_new_task")}
    if not all(values.values()):
        return ""
    return (f"The frozen gate sends the new task to experts it has already trained ({_percent(values['new_to_expert_used_before'])} of its "
            f"rounds), mostly experts of another task's set ({_percent(values['new_to_expert_of_other_set'])}), "
            f"spread over {_span(values['experts_receiving_new_task'])} experts.")


ANSWER_FACTS = {"open.unseen_task": unseen_task_where}
