"""How large a slip is at the paper's own configuration (``Slip.effect``).

A reviewer weighing a slip asks how much it matters where the paper works.  The paper's configuration is
Figure 2's (Appendix A.2): N = 7, d = 10, s = 6, sigma0 = 0.4, T = 2000 (so r = 1 - s/d = 0.4), M in
{5, 10, 20}.  The sentences here are built from the run's entries at that configuration
(:mod:`packs.moe_cl.entries.theorems_at_fig2`, the Figure 2 claims) or from a sympy expression evaluated
there; never from numbers typed by hand.
"""

from __future__ import annotations

import sympy as sp

from moecl_verify.checks.kinds.base import number
from moecl_verify.packs.moe_cl.experiments.fig2_runs import FIG2

SETTING = "Figure 2's configuration"
FIG2_PART = "Figure 2 configuration"
R_PAPER = sp.Rational(FIG2["d"] - FIG2["s"], FIG2["d"])


def at_figure2(results) -> list:
    """The refuted entries a claim made at Figure 2's configuration, by M then pool."""
    rows = [r for r in results if r.key.part.startswith(FIG2_PART) and r.verdict == "refuted"]
    return sorted(rows, key=lambda r: (r.config.get("M", 0), r.key.pool or 0))


def _span(values) -> str:
    lo, hi = min(values), max(values)
    return number(lo, 3) if number(lo, 3) == number(hi, 3) else f"{number(lo, 3)}–{number(hi, 3)}"


def _pools(n: int) -> str:
    return f"{n} task pool{'s' if n > 1 else ''}"


def bound_excess(results, quantity: str, bound: str) -> str:
    """For bound entries (criterion Delta = E[RHS - X], horizons carrying ``measured`` and ``rhs``): the
    measured quantity against the bound at each entry's decisive case, over M and the task pools."""
    cases, experts, pools = [], set(), set()
    for r in at_figure2(results):
        case = next((h for h in r.horizons or () if h.get("case") == r.config.get("decisive_horizon")), None)
        if case is not None and case.get("measured") is not None and case.get("rhs") is not None:
            cases.append(case)
            experts.add(r.config.get("M"))
            pools.add(r.key.pool)
    if not cases:
        return ""
    return (f"at {SETTING}, {quantity} = {_span([c['measured'] for c in cases])} against {bound}'s "
            f"{_span([c['rhs'] for c in cases])} (M = {' and '.join(map(str, sorted(experts)))}, {_pools(len(pools))})")


def identity_excess(results, quantity: str, identity: str) -> str:
    """For identity entries (horizons ``t``, observed = the quantity minus the identity's value): how far the
    quantity sits above the identity, over the horizons, M and the task pools."""
    excess, horizons, experts, pools = [], set(), set(), set()
    for r in at_figure2(results):
        for h in r.horizons or ():
            excess.append(h["observed"])
            horizons.add(h["t"])
        experts.add(r.config.get("M"))
        pools.add(r.key.pool)
    if not excess:
        return ""
    # the identity's test is two-sided: say "above" only when every horizon is above
    if min(excess) > 0 or max(excess) < 0:
        where = "above" if min(excess) > 0 else "below"
        said = f"{quantity} stays {_span([abs(e) for e in excess])} {where} {identity}"
    else:
        said = f"{quantity} minus {identity} ranges from {number(min(excess), 3)} to {number(max(excess), 3)}"
    return (f"at {SETTING}, {said} (t = {min(horizons)}–{max(horizons)}, "
            f"M = {' and '.join(map(str, sorted(experts)))}, {_pools(len(pools))})")


def _times_d(expr: sp.Expr, D: sp.Symbol, values: dict) -> float:
    return float(sp.nsimplify(expr.subs(values) / D))


def same_task_gaps(forgetting_gap: sp.Expr, generalization_gap: sp.Expr, t: sp.Symbol, T: sp.Symbol,
                   r: sp.Symbol, D: sp.Symbol) -> str:
    """Appendix H's same-task term evaluated at the paper's r and T: the forgetting it hides (``forgetting_gap``
    = derived - printed E[F_t]) and the generalization error it adds, as multiples of D (checked expressions
    from :mod:`theory.prop4`)."""
    f = _times_d(forgetting_gap, D, {r: R_PAPER, t: FIG2["T"]})
    return (f"at {SETTING} (r = {R_PAPER}, T = {FIG2['T']}), eq. (17) misses {f:.2f} D of forgetting (D the mean "
            "squared gap between tasks); "
            + generalization_excess(generalization_gap, T, r, D, lead=False))


def generalization_excess(generalization_gap: sp.Expr, T: sp.Symbol, r: sp.Symbol, D: sp.Symbol,
                          lead: bool = True) -> str:
    """Eq. (18)'s excess over the derived E[G_T] at the paper's r and T, as a multiple of D."""
    g = _times_d(generalization_gap, D, {r: R_PAPER, T: FIG2["T"]})
    text = f"eq. (18) is off by only {g:.2g} D, negligible"
    return f"at {SETTING} (r = {R_PAPER}, T = {FIG2['T']}), {text}" if lead else text


def _excess_by_error(rows) -> dict[str, list[float]]:
    """Figure 2's 'almost zero' margins past the threshold, by error ("F", "G"): only the cases with Delta < 0
    (a case below 'almost zero' is not an excess), as positive excesses."""
    by_error: dict[str, list[float]] = {}
    for r in rows:
        for h in r.horizons or ():
            error = str(h.get("case", "")).split(",")[0]
            if h.get("observed") is not None and h["observed"] < 0 and error in ("F", "G"):
                by_error.setdefault(error, []).append(-h["observed"])
    return by_error


def converges_excess(results) -> str:
    """Figure 2's 'almost zero' criterion (Delta = 0.1 E[X_T | M=1] - E[X_T | M]) at the paper's own
    configuration: by how much each error stays above a tenth of the single expert's, over M and pools."""
    refuted = [r for r in results if r.verdict == "refuted"]
    by_error = _excess_by_error(refuted)
    if not by_error:
        return ""
    names = {"F": "forgetting", "G": "generalization error"}
    said = [f"{names[e]} {_span(v)}" for e, v in sorted(by_error.items())]
    return (f"at {SETTING}, the final " + said[0] + (" stays" if len(said) == 1 else "")
            + "".join(f" and the {x}" for x in said[1:]) + (" stay" if len(said) > 1 else "")
        + " above 'almost zero', a tenth of one expert's (M = "
        + ", ".join(str(m) for m in sorted({m for r in refuted for m in r.config.get("experts", ()) if m > 1}))
        + ", " + _pools(len({r.key.pool for r in refuted})) + ")")


def converges_sweep(failed, held) -> str:
    """The convergence finding's size at Figure 2's configuration: by how much the final errors stay above 'almost
    zero' in the entries the run rejected at the default scale of v_n (``failed``, read whatever the reconciliation
    across scales made of their verdict: their margins are what was measured), and the scales at which the
    criterion was confirmed (``held``)."""
    by_error = _excess_by_error(failed)
    if not by_error:
        return ""
    scale = failed[0].key.constant
    names = {"F": "F_T", "G": "G_T"}
    text = (f"at {SETTING}" + (f" with v_n = {'' if scale == 1 else f'{scale:g} '}w_n" if scale is not None else "") + ", the final "
            + " and ".join(f"{names[e]} stays {_span(v)}" for e, v in sorted(by_error.items()))
            + f" above 'almost zero' ({_pools(len({r.key.pool for r in failed}))})")
    if held:
        scales = ", ".join(f"{c:g}" for c in sorted({r.key.constant for r in held}))
        text += f"; it falls below at v_n = c w_n for c in {{{scales}}} ({_pools(len({r.key.pool for r in held}))})"
    return text


__all__ = ["SETTING", "at_figure2", "bound_excess", "converges_excess", "converges_sweep", "generalization_excess",
           "identity_excess",
           "same_task_gaps"]
