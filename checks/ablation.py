"""Effects measured by ablation: a counterfactual run with one cause removed, on common random numbers.

A slip's size at the document's configuration says how large a discrepancy is; it does not say which cause
produces it.  Where a discrepancy has several causes (two false steps that both feed it), the number
belongs to a cause only as far as removing that cause changes it.  An :class:`Ablation` records one such
measurement: the quantity with everything as in the document's configuration (the baseline) and with one
cause removed and everything else kept (the ablated run), replicate by replicate on the same random numbers,
so that their difference is paired and its interval narrow.

The rule the reports apply (:func:`effect_for`):

* a cause with ablations quotes a number only if an ablation moved it (its interval excludes 0); a cause
  whose ablations change nothing gets no effect;
* a discrepancy with ablations says how much of it each ablated cause explains (the share removed, with its
  interval);
* a cause without an ablation of its own, of a discrepancy that other causes' ablations explain in part,
  quotes only what remains once they are removed (the ablated value), never the whole baseline as its own;
  and nothing if what remains is not distinguishable from 0.

Intervals are two-sided t intervals of paired means (:func:`scipy.stats.ttest_1samp`) at :data:`LEVEL`, the
complement of the run's default family-wise false-fail rate (``checks.runner.DEFAULT_FAMILY_RATE``, a test
keeps the two in step): an ablation is said to move a quantity only at the confidence at which the run decides
a verdict.  The share's interval is the delta method's for a ratio of paired means.  These are descriptions of
a measured effect, not verdicts: no entry is decided here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

# 1 - the run's default family-wise false-fail rate (checks/runner.py, DEFAULT_FAMILY_RATE = 1e-3).
LEVEL = 1 - 1e-3


@dataclass(frozen=True)
class Ablation:
    """One cause removed, one quantity measured with and without it, on paired replicates.

    ``cause``: the id of the slip whose cause was removed (it may be a slip of another claim, or one a run did
    not establish); ``together``: the ids of other causes removed in the same run (a joint removal, which says
    how much the causes explain between them, not what ``cause`` explains alone); ``removed``: what was removed, in words, which the sentences quote after "removing" and
    "with ... removed"; ``quantity``: what was measured; ``case``: where (the setting's
    parameters, the horizon); ``baseline`` and ``ablated``: the quantity's mean without and with the removal;
    ``difference`` = baseline - ablated, with its ``interval`` at ``level``; ``ablated_interval``: the
    ablated mean's interval (what remains); ``share_interval``: the interval of difference / baseline (None
    where the baseline is 0); ``replicates``: the number of paired replicates."""

    cause: str
    removed: str
    quantity: str
    baseline: float
    ablated: float
    difference: float
    interval: tuple[float, float]
    replicates: int
    case: str = ""
    level: float = LEVEL
    ablated_interval: tuple[float, float] | None = None
    share_interval: tuple[float, float] | None = None
    together: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.cause, str) or not self.cause:
            raise ValueError(f"ablation: cause must be a slip id, got {self.cause!r}")
        object.__setattr__(self, "together", tuple(self.together))
        if not all(isinstance(c, str) and c and c != self.cause for c in self.together):
            raise ValueError(f"ablation of {self.cause}: together must name other causes, got {self.together!r}")
        for name in ("interval", "ablated_interval", "share_interval"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, tuple(float(v) for v in value))
                if len(getattr(self, name)) != 2:
                    raise ValueError(f"ablation of {self.cause}: {name} must be (low, high), got {value!r}")
        for name in ("baseline", "ablated", "difference", "level"):
            object.__setattr__(self, name, float(getattr(self, name)))
        if isinstance(self.replicates, bool) or int(self.replicates) != self.replicates or self.replicates < 1:
            raise ValueError(f"ablation of {self.cause}: replicates must be an integer >= 1, got {self.replicates!r}")
        object.__setattr__(self, "replicates", int(self.replicates))
        if not 0 < self.level < 1:
            raise ValueError(f"ablation of {self.cause}: level must be in (0, 1), got {self.level!r}")

    @property
    def moved(self) -> bool:
        """Whether removing the cause changed the quantity: the difference's interval excludes 0."""
        low, high = self.interval
        return low > 0 or high < 0

    @property
    def share(self) -> float | None:
        """The part of the baseline the removal takes away (difference / baseline); None at a zero baseline."""
        return self.difference / self.baseline if self.baseline != 0 else None

    @property
    def remains(self) -> bool:
        """Whether something measurable remains with the cause removed: the ablated mean's interval excludes 0
        on the baseline's side (a remainder of the opposite sign is not a part of the discrepancy)."""
        low, high = self.ablated_interval if self.ablated_interval is not None else (self.ablated, self.ablated)
        return low > 0 if self.baseline > 0 else high < 0 if self.baseline < 0 else False

    @property
    def alone(self) -> bool:
        """Whether this run removed its cause alone (its effect is that cause's), not together with others."""
        return not self.together

    def to_json(self) -> dict:
        return {"cause": self.cause, **({"together": list(self.together)} if self.together else {}),
                "removed": self.removed, "quantity": self.quantity, "case": self.case,
                "baseline": self.baseline, "ablated": self.ablated, "difference": self.difference,
                "interval": list(self.interval), "replicates": self.replicates, "level": self.level,
                "ablated_interval": None if self.ablated_interval is None else list(self.ablated_interval),
                "share_interval": None if self.share_interval is None else list(self.share_interval)}

    @staticmethod
    def from_json(data: dict) -> "Ablation":
        return Ablation(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})


def _mean_interval(x: np.ndarray, level: float) -> tuple[float, float]:
    mean = float(np.mean(x))
    if x.size < 2 or float(np.ptp(x)) == 0.0:
        return mean, mean  # no spread: the paired mean is exact
    ci = sps.ttest_1samp(x, 0.0).confidence_interval(confidence_level=level)
    return float(ci.low), float(ci.high)


def paired(cause: str, removed: str, quantity: str, baseline, ablated, *, case: str = "",
           level: float = LEVEL, together: tuple[str, ...] = ()) -> Ablation:
    """The ablation record of per-replicate values ``baseline`` and ``ablated`` drawn on common random numbers
    (replicate i of both from the same draws).  Difference and share intervals are paired: the replicates'
    differences carry the common noise away."""
    b, a = np.asarray(baseline, dtype=float).ravel(), np.asarray(ablated, dtype=float).ravel()
    if b.shape != a.shape or b.size < 1:
        raise ValueError(f"ablation of {cause}: baseline and ablated need the same number (>= 1) of paired "
                         f"replicates, got {b.size} and {a.size}")
    if not (np.all(np.isfinite(b)) and np.all(np.isfinite(a))):
        raise ValueError(f"ablation of {cause}: non-finite replicate values")
    diff = b - a
    mb, md = float(np.mean(b)), float(np.mean(diff))
    share_interval = None
    if mb != 0 and b.size >= 2:
        # Delta method for mean(diff) / mean(b): the ratio's error is that of mean(diff - ratio * b) / mean(b).
        ratio = md / mb
        residual = diff - ratio * b
        sd = float(np.std(residual, ddof=1))
        q = float(sps.t.ppf(0.5 + level / 2, b.size - 1))
        half = q * sd / math.sqrt(b.size) / abs(mb)
        share_interval = (ratio - half, ratio + half)
    return Ablation(cause=cause, removed=removed, quantity=quantity, case=case, baseline=mb, ablated=float(np.mean(a)),
                    difference=md, interval=_mean_interval(diff, level), replicates=int(b.size), level=level,
                    ablated_interval=_mean_interval(a, level), share_interval=share_interval, together=together)


# ----------------------------------------------------------------------------- what a sentence may say


def _num(x: float) -> str:
    return f"{x:.3g}"


def _span(values) -> str:
    lo, hi = min(values), max(values)
    if _num(lo) == _num(hi):
        return _num(lo)
    return f"{_num(lo)} to {_num(hi)}" if lo < 0 else f"{_num(lo)}–{_num(hi)}"


def _pct(values) -> str:
    lo, hi = min(values), max(values)
    a, b = f"{100 * lo:.0f}%", f"{100 * hi:.0f}%"
    return a if a == b else f"{100 * lo:.0f}–{b}"


def _cases(records) -> str:
    n = len(records)
    return f"{n} case{'s' if n > 1 else ''}"


def _level(records) -> str:
    return f"{100 * records[0].level:g}%"


def explained(records, *, moved_only: bool = False) -> str:
    """How much of a discrepancy each ablated cause explains, one clause per cause (no semicolons: a sentence
    cut at its first clause keeps them all), the cause that explains most first.  Only the ablations that moved
    the quantity are quoted; a cause none of whose ablations moved it is said to change nothing measurable
    (``moved_only``: left out)."""
    by_cause: dict[tuple, list[Ablation]] = {}
    for a in records:
        by_cause.setdefault((a.cause, a.together, a.quantity), []).append(a)

    def weight(group) -> float:
        shares = [abs(a.share) for a in group if a.moved and a.share is not None]
        return -max(shares) if shares else 0.0

    clauses = []
    for group in sorted(by_cause.values(), key=weight):
        moved = [a for a in group if a.moved]
        if not moved and moved_only:
            continue
        if not moved:
            clauses.append(f"removing {group[0].removed} changes {group[0].quantity} by nothing measurable "
                           f"({_level(group)} intervals, {_cases(group)})")
            continue
        shares = [a.share for a in moved if a.share is not None]
        bounds = [b for a in moved if a.share_interval is not None for b in a.share_interval]
        verb = "lowers" if all(a.difference > 0 for a in moved) else "raises" if all(
            a.difference < 0 for a in moved) else "changes"
        text = (f"removing {moved[0].removed} {verb} {moved[0].quantity} from {_span([a.baseline for a in moved])} "
                f"to {_span([a.ablated for a in moved])}")
        if shares:
            inner = [f"{_level(moved)} intervals of the share {_pct(bounds)}"] if bounds else []
            inner.append(_cases(moved) + (f" of {len(group)}" if len(moved) < len(group) else ""))
            if min(shares) > 1 and bounds and min(bounds) > 1:
                # past the whole the percentage says nothing a reader needs: the removal turns a failure into room
                text += f", all of it and more: the statement then holds with room ({_cases(moved)})"
            else:
                text += f", {_pct(shares)} of it ({', '.join(inner)})"
        else:
            text += f" ({_cases(moved)})"
        clauses.append(text)
    return " and ".join(clauses)


def remainder(records) -> str:
    """What remains of a discrepancy once the ablated causes are removed: the ablated values of the cases where
    something measurable remains (:attr:`Ablation.remains`), with their intervals and baselines; empty where
    nothing does.  Of several removals, the one that leaves least (smallest mean absolute ablated value) speaks:
    what remains after it is the most the causes no run removed can explain."""
    groups: dict[tuple, list[Ablation]] = {}
    for a in records:
        groups.setdefault((a.cause, a.together, a.quantity), []).append(a)
    if not groups:
        return ""
    records = min(groups.values(), key=lambda g: float(np.mean([abs(a.ablated) for a in g])))
    left = [a for a in records if a.remains]
    if not left:
        return ""
    bounds = [b for a in left if a.ablated_interval is not None for b in a.ablated_interval]
    text = (f"with {left[0].removed} removed, {left[0].quantity} is still {_span([a.ablated for a in left])}"
            + (f" ({_level(left)} intervals {_span(bounds)}, {_cases(left)}" if bounds else f" ({_cases(left)}")
            + (f" of {len(records)}" if len(left) < len(records) else "")
            + f"), down from {_span([a.baseline for a in left])} (at most what this cause can explain: no run "
            "removed it alone)")
    return text


def effect_for(cause_id: str, slip) -> str | None:
    """What a root cause ``cause_id`` may quote of ``slip`` (itself or a slip that follows from it):

    * the slip has ablations of ``cause_id`` removed alone: none moved the quantity -> ``""`` (no effect, and
      none to borrow from other slips); some did -> the share this cause explains (:func:`explained` of its own
      records: a number other causes produce is never quoted for it);
    * the slip has ablations of other causes only -> what remains with them removed (:func:`remainder`), the
      most this cause can claim of it; ``""`` where nothing measurable remains; where the slip is the root
      itself (the discrepancy, not a cause of it), the share of the ablated cause that explains most of it;
    * no ablations -> the slip's own effect text (a size, not an attribution), None where it has none.

    ``None`` means "nothing here, look further"; ``""`` means "no effect for this cause"."""
    records = tuple(getattr(slip, "ablation", ()) or ())
    own = [a for a in records if a.cause == cause_id and a.alone]
    if own:
        if not any(a.moved for a in own):
            return ""
        return explained(own)
    if records and cause_id == slip.id:
        # the discrepancy itself is the root: its causes' shares are its effect, where any moved it
        # the cause that explains most speaks here; every cause's share is in the slip's own audit entry
        alone = [a for a in records if a.alone and a.moved]
        if not alone:
            return slip.effect or None
        top = max(alone, key=lambda a: abs(a.share) if a.share is not None else 0.0)
        share = explained([a for a in records if (a.cause, a.together, a.quantity) == (top.cause, (), top.quantity)])
        # its own size first (a sentence cut at the semicolon keeps only that), then the other cause's share
        # said as another cause's, so that the share is never read as this slip's own effect
        whose = "most of it has another cause" if (top.share or 0) > 0.5 else "part of it has another cause"
        return f"{slip.effect}; {whose}: {share}" if slip.effect else f"{whose}: {share}"
    if records:
        return remainder(records)
    return slip.effect or None


__all__ = ["LEVEL", "Ablation", "effect_for", "explained", "paired", "remainder"]
