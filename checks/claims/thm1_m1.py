"""Theorem 1 at M = 1 (Section 5.1): "eq. (19) and (20) specialize to eq. (17) and (18)".

Statement (after Theorem 1): if M = 1, L_t^(m_tau) becomes t, so eq. (19) and
eq. (20) specialize to eq. (17) and eq. (18).

Check (symbolic, exact): substitute the single expert's counts into the
printed summands of eq. (19) and (20) (:mod:`theory.thm1`) and compare with
the printed eq. (17) and (18) and with eq. (17) as Appendix H derives it.  Also
recorded: eq. (19)-(20) are strict bounds and eq. (17)-(18) identities, so a
literal specialization would read E[F_t] < E[F_t]; and the derived E[F_t]
(:mod:`theory.prop4`) exceeds eq. (19) at M = 1.
"""

from __future__ import annotations

import sympy as sp

from moecl_verify.checks.context import Context
from moecl_verify.checks.model import ClaimResult, Slip, exact_result
from moecl_verify.checks.registry import Claim, register
from moecl_verify.theory import prop4, thm1
from moecl_verify.theory.symbols import T

SOURCE = "Section 5.1, remark after Theorem 1 (eq. 19-20 vs eq. 17-18)"


def _entry(part: str, holds: bool, evidence: str, formula: str) -> ClaimResult:
    verdict = "confirmed" if holds else "refuted"
    return exact_result("thm1.m1_specialization", SOURCE, "symbolic identity", part, verdict, evidence, formula)


def measure(ctx: Context) -> list[ClaimResult]:
    at_m1 = thm1.eq19_at_one_expert()
    gap_printed = sp.factor(sp.simplify(at_m1 - prop4.forgetting_summand_stated()))
    gap_corrected = sp.simplify(at_m1 - prop4.forgetting_summand_corrected())
    gap20 = sp.factor(sp.simplify(thm1.eq20_at_one_expert() - thm1.eq18_summand()))
    derived_excess = sp.factor(sp.simplify(prop4.forgetting_derived().expr - prop4.forgetting_corrected().expr))
    return [
        _entry(
            "eq19 -> eq17 as printed",
            gap_printed == 0,
            f"sympy: eq. (19)'s summand with L_t = t, L_tau = tau minus eq. (17)'s printed summand = "
            f"{sp.sstr(gap_printed)}; eq. (19) gives (r^t - r^tau) S where eq. (17) prints r^(t-tau) S",
            r"(r^{t}-r^{\tau})S+(r^{\tau}-r^{t})D \overset{?}{=} r^{t-\tau}S+(r^{\tau}-r^{t})D",
        ),
        _entry(
            "eq19 -> eq17 with Appendix H's coefficient",
            gap_corrected == 0,
            f"sympy: eq. (19) at L_t = t, L_tau = tau minus eq. (17) with the coefficient r^t - r^tau = "
            f"{sp.sstr(gap_corrected)}: the specialization holds for the repaired eq. (17), as an identity of "
            f"right-hand sides. But eq. (19) is a strict bound, and the derived E[F_t] exceeds that right-hand side by "
            f"{sp.sstr(derived_excess)} > 0 for t >= 2 (theory.prop4), so at M = 1 the bound itself fails",
            r"(r^{t}-r^{\tau})S+(r^{\tau}-r^{t})D",
        ),
        _entry(
            "eq20 -> eq18",
            gap20 == 0,
            f"sympy: eq. (20)'s summand with L_T1 = T1 (one expert explores for T1 = ceil(1/eta) rounds) minus eq. "
            f"(18) = {sp.sstr(gap20)}, zero only if T1 = T; the remark's 'L_t becomes t' does not turn L_T1 into "
            f"{sp.sstr(T)}",
            r"r^{T_1}S+(1-r^{T_1})D \overset{?}{=} r^{T}S+(1-r^{T})D",
        ),
    ]


def slips(results: list[ClaimResult]) -> list[Slip]:
    failed = [r for r in results if r.verdict == "refuted"]
    if not failed:
        return []
    return [
        Slip(
            id="thm1.m1_specialization",
            location="Section 5.1, remark after Theorem 1",
            slip_class="inconsistency between sections",
            stated="with M = 1, eq. (19) and eq. (20) specialize to eq. (17) and eq. (18)",
            holds="eq. (19) specializes to eq. (17) only with Appendix H's coefficient r^t - r^tau (not the printed "
            "r^(t-tau)); eq. (20) gives r^T1 S + (1 - r^T1) D, not eq. (18), unless T1 = T; and strict bounds cannot "
            "specialize to identities",
            evidence=" | ".join(f"{r.config['part']}: {r.evidence}" for r in failed),
        )
    ]


register(
    Claim(
        id="thm1.m1_specialization",
        source=SOURCE,
        kind="symbolic identity",
        statement=r"M=1:\ \text{eq. (19)} \to \text{eq. (17)},\ \text{eq. (20)} \to \text{eq. (18)}",
        preconditions=("M = 1", "L_t^(m_tau) = t"),
        measure=measure,
        slips=slips,
        summary="With one expert, Theorem 1's bounds reduce to Proposition 4.",
        notes="Exact substitution in sympy of the single expert's routing counts into the printed bounds.",
    )
)
