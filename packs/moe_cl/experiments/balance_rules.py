"""The balancing rules compared with and without termination, shared by ``open.balance_outside_gradient`` and
the reviewer's claim C2 (both read the same runs, :func:`packs.moe_cl.experiments.open_questions.simulate` under the
question ``balance_outside_gradient``, so they must ask for the same variants).

Rules: the paper's auxiliary loss in the gate's gradient (``aux``), no balancing term (``none``), and loss-free
bias balancing at rates u = 0.01, 0.1 and 1 times lambda; each with and without early termination.
"""

from __future__ import annotations

from moecl_verify.packs.moe_cl.experiments.open_questions import BIAS_RATES, Variant

QUESTION = "balance_outside_gradient"
RULES = [("aux", "aux", 0.0), ("none", "none", 0.0)] + [(f"bias u={u:g}λ", "bias", u) for u in BIAS_RATES]


def label(rule: str, termination: bool) -> str:
    return f"{rule}, {'with' if termination else 'no'} termination"


VARIANTS = tuple(Variant(label(rule, term), termination=term, balance=balance, bias_rate=u)
                 for term in (True, False) for rule, balance, u in RULES)
LABELS = [v.label for v in VARIANTS]
