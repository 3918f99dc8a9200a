"""Lemma 2 (Appendix B, "smooth router").

Statement (Lemma 2).  For two inputs with gate outputs h and h_hat, the routing
probability vectors of eq. (1), p_m = P(argmax_m' (h_m' + r^(m')) = m) with
r^(m') i.i.d. Uniform[0, lambda], satisfy

    ||p - p_hat||_inf <= (lambda / M^2) ||h - h_hat||_inf.

Proof as printed (Appendix B), step by step:

1. if m1 = argmax(h + r) != m2 = argmax(h_hat + r), then
   h_hat_m2 - h_hat_m1 > r^(m1) - r^(m2) >= h_m2 - h_m1;
2. with C(m1, m2) = (h_hat_m2 - h_hat_m1 + h_m2 - h_m1) / 2,
   |r^(m1) - r^(m2) - C| <= (h_hat_m2 - h_hat_m1 - h_m2 + h_m1) / 2 <= ||h_hat - h||_inf;
3. P(argmax differs) <= P(exists m1 != m2 with |r1 - r2 - C| <= ||h_hat - h||) <= sum_{m1<m2} E[P(...|r2)]
   <= lambda M^2 ||h_hat - h||_inf  ("because r is Uniform[0, lambda]");
4. |p_hat_i - p_i| <= E|1(argmax = i) - 1(argmax_hat = i)| <= P(argmax differs) <= M^2 ||h_hat - h||_inf.

Readings.  Norms are l_inf; the lemma puts no condition on lambda > 0 or on h;
the proof's two routings share the noise r (a coupling; p depends only on the
marginals).  Step 4 prints the same indicator 1(argmax_m {h_hat_m + r} = i)
twice; it is read as one indicator for h and one for h_hat.

How it is checked (exact rational arithmetic, :mod:`theory.routing`; the grid audit in
:mod:`packs.moe_cl.experiments.smooth_router`).
p(h, lambda) is computed exactly as a piecewise-polynomial integral for
M = 2, 3, 4.  Because p(c h, c lambda) = p(h, lambda) while the right-hand
side scales by c^2, a bound proportional to lambda cannot hold for every
lambda.  The exact Jacobian gives dp_m/dh_m = (1/lambda) P(Y in [x_m, x_m+1])
<= 1/lambda (Y the largest competing scaled output plus noise) and
off-diagonal entries <= 0 summing to -dp_m/dh_m, so the sharp l_inf Lipschitz
constant is 2/lambda for every M >= 2 (approached at equal outputs).  Entries:
the statement (refuted by the smallest integer counterexample; the exact
region where it holds is lambda >= sqrt(2) M); the derived bound (2/lambda),
checked on an exact grid of pairs with its sharpness; each proof step on its
own; the proof's conclusion against the statement.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import sympy as sp

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments.smooth_router import MS, STEPS, grid_audit, inf_norm
from moecl_verify.packs.moe_cl.entries import worst_case
from moecl_verify.checks.model import ClaimResult, Interpretation, Slip, exact_result, keys_of
from moecl_verify.checks.registry import Claim, register
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.theory.routing import jacobian, lipschitz_lower_pair, routing_probabilities, switch_probability

SOURCE = "Appendix B, Lemma 2 and its proof"
LAMBDAS = (Fraction(1, 4), Fraction(1), Fraction(4))  # lambdas of the scale-invariance check
SHARP_EPS = (Fraction(1, 10), Fraction(1, 100), Fraction(1, 1000))

INTERPRETATIONS = (
    Interpretation(
        id="lemma2.indicator",
        location="Appendix B, proof of Lemma 2, last display",
        issue="The indicator 1(argmax_m {h_hat_m + r(m)} = i) is printed twice, so the difference is identically 0.",
        choice="One indicator for h and one for h_hat: |p_hat_i - p_i| <= E|1(argmax(h + r) = i) - 1(argmax(h_hat + r) = i)|.",
    ),
    Interpretation(
        id="lemma2.scope",
        location="Appendix B, Lemma 2",
        issue="The lemma states no condition on lambda or on the outputs h, h_hat.",
        choice="Read as a statement for every lambda > 0, M >= 2 and all h, h_hat in R^M; the exact region where it "
        "holds (lambda >= sqrt(2) M) is reported.",
    ),
)


# ---------------------------------------------------------------------------------------------- exact checks


def sharpness(M: int) -> list[tuple[Fraction, Fraction]]:
    """(eps, ratio) at h = 0, h_hat = eps (1, -1, ..., -1), lambda = 1: the ratio tends to 2 = 2/lambda."""
    out = []
    for eps in SHARP_EPS:
        h, hh = lipschitz_lower_pair(M, eps)
        p, ph = routing_probabilities(h, 1), routing_probabilities(hh, 1)
        out.append((eps, inf_norm([a - b for a, b in zip(p, ph)]) / eps))
    return out


def scale_invariant(M: int) -> bool:
    """p(c h, c lambda) = p(h, lambda) exactly, for a few c and h."""
    h = tuple(Fraction(k, 3) for k in range(M))
    base = routing_probabilities(h, 1)
    return all(routing_probabilities(tuple(lam * v for v in h), lam) == base for lam in LAMBDAS)


def smallest_counterexample(max_M: int = 4) -> dict | None:
    """First failure of the stated bound in the order M = 2, 3, ...; lambda = 1; h = 0; h_hat integer in {-1, 0, 1}^M
    by increasing l1 norm (a Hypothesis-style shrink to the simplest failing input)."""
    for M in range(2, max_M + 1):
        h = (Fraction(0),) * M
        cands = sorted(
            (v for v in itertools.product((0, 1, -1), repeat=M) if any(v)),
            key=lambda v: (sum(abs(x) for x in v), [-x for x in v]),
        )
        for v in cands:
            hh = tuple(Fraction(x) for x in v)
            p, ph = routing_probabilities(h, 1), routing_probabilities(hh, 1)
            lhs = inf_norm([a - b for a, b in zip(p, ph)])
            rhs = Fraction(1, M * M) * inf_norm(hh)
            if lhs > rhs:
                return dict(M=M, lam=Fraction(1), h=h, h_hat=hh, p=p, p_hat=ph, lhs=lhs, rhs=rhs)
    return None


def step_counterexample(bound) -> dict | None:
    """Smallest (M = 2) pair h = 0, h_hat = (eps, 0) where P(switch) exceeds ``bound(M, lam, eps)``."""
    M = 2
    for lam in (Fraction(1), Fraction(1, 2), Fraction(1, 4), Fraction(1, 8)):
        for eps in (lam, lam / 2, lam / 4):
            h, hh = (Fraction(0), Fraction(0)), (eps, Fraction(0))
            sw = switch_probability(h, hh, lam)
            if sw > bound(M, lam, eps):
                return dict(M=M, lam=lam, h=h, h_hat=hh, switch=sw, bound=bound(M, lam, eps))
    return None


def _fmt(v) -> str:
    if isinstance(v, (tuple, list)):
        return "(" + ", ".join(_fmt(x) for x in v) + ")"
    return str(v)


def _symbolic_steps_1_2() -> tuple[bool, bool]:
    """Steps 1 and 2 by sympy.  Step 1: the two argmax inequalities rearrange to A <= D <= B with
    A = h_m2 - h_m1, D = r1 - r2, B = h_hat_m2 - h_hat_m1.  Step 2: then |D - C| <= (B - A)/2 with
    C = (A + B)/2, and (B - A)/2 = ((hh2 - h2) - (hh1 - h1))/2 <= ||hh - h||_inf."""
    h1, h2, hh1, hh2, r1, r2 = sp.symbols("h1 h2 hh1 hh2 r1 r2", real=True)
    A, B, D = h2 - h1, hh2 - hh1, r1 - r2
    s1 = sp.simplify((h1 + r1 - (h2 + r2)) - (D - A)) == 0 and sp.simplify((hh2 + r2 - (hh1 + r1)) - (B - D)) == 0
    C = (A + B) / 2
    half = (B - A) / 2
    s2 = sp.simplify((A - C) + half) == 0 and sp.simplify((B - C) - half) == 0
    s3 = sp.simplify(half - ((hh2 - h2) - (hh1 - h1)) / 2) == 0
    return bool(s1), bool(s2 and s3)


def _steps_1_2_spot_check(seed: int, n: int = 20000) -> tuple[int, int, int]:
    """Random instances with m1 != m2: violations of step 1, of step 2, and how many instances (M = 4)."""
    rng = generator_for(seed, "lemma2", "steps12")
    M = 4
    h, hh = rng.normal(size=(n, M)), rng.normal(size=(n, M))
    r = rng.uniform(0, 1.5, size=(n, M))
    m1, m2 = np.argmax(h + r, axis=1), np.argmax(hh + r, axis=1)
    rows = np.nonzero(m1 != m2)[0]
    a = h[rows, m2[rows]] - h[rows, m1[rows]]
    b = hh[rows, m2[rows]] - hh[rows, m1[rows]]
    dr = r[rows, m1[rows]] - r[rows, m2[rows]]
    c = (a + b) / 2
    sup = np.abs(hh[rows] - h[rows]).max(axis=1)
    tol = 1e-12
    bad1 = ~((a <= dr + tol) & (dr <= b + tol))
    bad2 = ~((np.abs(dr - c) <= (b - a) / 2 + tol) & ((b - a) / 2 <= sup + tol))
    return int(bad1.sum()), int(bad2.sum()), int(rows.size)


# ---------------------------------------------------------------------------------------------- Lemma 2 entries


def _entry(part: str, verdict: str, evidence: str, formula: str, form: str = "stated", **config) -> ClaimResult:
    return exact_result("lemma2", SOURCE, "bound", part, verdict, evidence, formula, form=form, **config)


def measure(ctx: Context) -> list[ClaimResult]:
    grid = ctx.sizes.lemma2_grid
    audits = {M: grid_audit(M, grid, ctx.runner,
                            lambda done, total, M=M: ctx.progress(f"lemma2 exact grid M={M}", done, total))
              for M in MS}
    sharp = {M: sharpness(M) for M in MS}
    invariant = all(scale_invariant(M) for M in MS)
    ce = smallest_counterexample()
    out = []

    # The statement.
    region = ", ".join(f"M = {M}: lambda >= {math.sqrt(2) * M:.3f}" for M in MS)
    if ce is not None:
        ev = (
            f"smallest counterexample (M = {ce['M']}, lambda = {ce['lam']}): h = {_fmt(ce['h'])}, h_hat = "
            f"{_fmt(ce['h_hat'])} give exact p = {_fmt(ce['p'])}, p_hat = {_fmt(ce['p_hat'])}, ||p - p_hat||_inf = "
            f"{ce['lhs']} > (lambda / M^2) ||h - h_hat||_inf = {ce['rhs']}. More generally h = 0, h_hat = e_1 at "
            "lambda = 1 gives (M - 1)/M > 1/M^2 for every M >= 2. Scale: p(c h, c lambda) = p(h, lambda) exactly "
            f"({invariant}) while the right-hand side scales by c^2, so a bound proportional to lambda fails for "
            f"small lambda. With the sharp constant 2/lambda (entry derived.lipschitz) the printed bound holds exactly "
            f"when lambda / M^2 >= 2 / lambda, i.e. lambda >= sqrt(2) M ({region}); Algorithm 1's lambda = c "
            "sigma0^1.25 -> 0 is far outside"
        )
        out.append(_entry("statement", "refuted", ev, r"\|p-\hat p\|_\infty \le \frac{\lambda}{M^2}\|h-\hat h\|_\infty",
                          Ms=list(MS), counterexample={"M": ce["M"], "lambda": str(ce["lam"]),
                                                        "h": [str(v) for v in ce["h"]],
                                                        "h_hat": [str(v) for v in ce["h_hat"]],
                                                        "lhs": str(ce["lhs"]), "rhs": str(ce["rhs"])}))
    else:  # pragma: no cover - would mean the exact arithmetic found no failure
        out.append(_entry("statement", "inconclusive", "no counterexample on the integer grid",
                          r"\|p-\hat p\|_\infty \le \frac{\lambda}{M^2}\|h-\hat h\|_\infty"))

    # The derived bound 2/lambda, with its sharpness.
    ok = all(a["worst_ratio"] <= 2 and a["max_diag"] <= 1 and a["rows_ok"] for a in audits.values())
    tight = all(sh[-1][1] >= Fraction(2) * (1 - Fraction(1, 100)) for sh in sharp.values())
    at_equal = all(jacobian((Fraction(0),) * M, 1)[0][0] == 1 for M in MS)
    verdict = "confirmed" if ok and tight and at_equal and invariant else "refuted"
    ev = (
        "exact grid (lambda = 1; by exact scale invariance p(c h, c lambda) = p(h, lambda) this covers every lambda): "
        + "; ".join(
            f"M = {M}: {a['pairs']} pairs, max ||dp||/||dh|| = {float(a['worst_ratio']):.4f} <= 2, max dp_m/dh_m = "
            f"{a['max_diag']} <= 1, off-diagonal <= 0 with zero row sums: {a['rows_ok']}"
            for M, a in audits.items()
        )
        + f". dp_m/dh_m = 1/lambda exactly at equal outputs: {at_equal}. Sharpness at h = 0, h_hat = eps(1, -1, ..., -1): "
        + "; ".join(f"M = {M}: " + ", ".join(f"eps = {e}: {float(r):.4f}" for e, r in sh) for M, sh in sharp.items())
        + " -> 2. So ||p - p_hat||_inf <= (2/lambda) ||h - h_hat||_inf with 2/lambda sharp (checked exactly for "
        "M = 2, 3, 4; for every M >= 2 by dp_m/dh_m = P(Y in [x_m, x_m + 1]) / lambda, see theory.routing): the "
        "constant decreases in lambda and does not depend on M, unlike lambda/M^2"
    )
    out.append(_entry("derived.lipschitz", verdict, ev,
                      r"\|p-\hat p\|_\infty \le \frac{2}{\lambda}\|h-\hat h\|_\infty\ \text{(sharp)}", form="derived",
                      Ms=list(MS), grid=[str(v) for v in grid], steps=[str(e) for e in STEPS]))

    # Proof steps 1 and 2.
    sym1, sym2 = _symbolic_steps_1_2()
    bad1, bad2, total = _steps_1_2_spot_check(ctx.seed)
    out.append(_entry(
        "proof.step1", "confirmed" if sym1 and bad1 == 0 else "refuted",
        f"sympy: h_m1 + r1 >= h_m2 + r2 and h_hat_m2 + r2 >= h_hat_m1 + r1 rearrange to h_m2 - h_m1 <= r1 - r2 <= "
        f"h_hat_m2 - h_hat_m1 ({sym1}); numeric spot check on {total} random instances with m1 != m2 (M = 4): {bad1} "
        "violations. (The printed strict '>' is '>=' in general; ties have probability 0.)",
        r"\hat h_{m_2}-\hat h_{m_1} > r^{(m_1)}-r^{(m_2)} \ge h_{m_2}-h_{m_1}", role="proof step"))
    out.append(_entry(
        "proof.step2", "confirmed" if sym2 and bad2 == 0 else "refuted",
        f"sympy: with A <= D <= B, C = (A + B)/2, D - C lies in [-(B - A)/2, (B - A)/2], and (B - A)/2 = "
        f"((h_hat_m2 - h_m2) - (h_hat_m1 - h_m1))/2 <= ||h_hat - h||_inf ({sym2}); numeric spot check on {total} "
        f"instances: {bad2} violations",
        r"|r^{(m_1)}-r^{(m_2)}-C(m_1,m_2)| \le \tfrac12(\hat h_{m_2}-\hat h_{m_1}-h_{m_2}+h_{m_1}) \le \|\hat h-h\|_\infty", role="proof step"))

    # Step 3: the union bound's last inequality.
    ce3 = step_counterexample(lambda M, lam, eps: lam * M * M * eps)
    derived3 = all(a["worst_switch_ratio"] <= 1 for a in audits.values())
    ev3 = (
        "each pair term is P(r1 in an interval of length 2||dh||) <= 2||dh||/lambda (density 1/lambda), so the union "
        "bound gives M(M-1)||dh||/lambda, with lambda in the denominator. "
        + (
            f"Counterexample to the printed lambda M^2 ||dh||: M = {ce3['M']}, lambda = {ce3['lam']}, h = "
            f"{_fmt(ce3['h'])}, h_hat = {_fmt(ce3['h_hat'])}: exact P(argmax differs) = {ce3['switch']} > "
            f"lambda M^2 ||dh|| = {ce3['bound']}. "
            if ce3
            else "No counterexample found on the small grid. "
        )
        + "Derived bound P(switch) <= M(M-1)||dh||/lambda on the exact grid: "
        + ", ".join(f"M = {M}: max ratio {float(a['worst_switch_ratio']):.4f}" for M, a in audits.items())
        + f" (<= 1: {derived3})"
    )
    out.append(_entry("proof.step3", "refuted" if ce3 else "inconclusive", ev3,
                      r"P(\arg\max_m\{h_m+r\} \ne \arg\max_m\{\hat h_m+r\}) \le \lambda M^2\|\hat h-h\|_\infty", role="proof step"))

    # Step 4.
    first_ok = all(a["step4_first_ok"] for a in audits.values())
    ce4 = step_counterexample(lambda M, lam, eps: M * M * eps)
    ev4 = (
        f"|p_hat_i - p_i| <= P(argmax differs) holds on the exact grid: {first_ok}. The last inequality drops lambda: "
        + (
            f"M = {ce4['M']}, lambda = {ce4['lam']}, h = {_fmt(ce4['h'])}, h_hat = {_fmt(ce4['h_hat'])}: exact "
            f"P(argmax differs) = {ce4['switch']} > M^2 ||dh|| = {ce4['bound']}"
            if ce4
            else "no counterexample on the small grid"
        )
        + "; it follows from step 3 as printed only when lambda <= 1, and from the derived M(M-1)/lambda only when "
        "lambda >= (M-1)/M"
    )
    out.append(_entry("proof.step4", "refuted" if ce4 or not first_ok else "inconclusive", ev4,
                      r"|\hat p_i-p_i| \le P(\text{switch}) \le M^2\|\hat h-h\|_\infty", role="proof step"))

    # The proof's conclusion against the statement.
    lam_, M_ = sp.symbols("lambda M", positive=True)
    needed = sp.solve(sp.Eq(M_**2, lam_ / M_**2), lam_)
    # the proof's final bound implies the statement only if M^2 <= lambda / M^2; e.g. not at M = 2, lambda = 1
    implies = bool((M_**2 <= lam_ / M_**2).subs({M_: 2, lam_: 1}))
    out.append(_entry(
        "proof.conclusion", "confirmed" if implies else "refuted",
        f"the proof ends with ||p - p_hat||_inf <= M^2 ||h - h_hat||_inf (step 4; step 3 has lambda M^2), but the lemma "
        f"states lambda / M^2: M^2 <= lambda / M^2 only when lambda >= {sp.sstr(needed[0])}, so even granting every "
        "step the printed proof does not give the printed statement (the M^2 moved from numerator to denominator)",
        r"M^2\|\hat h-h\|_\infty \;\Rightarrow\; \frac{\lambda}{M^2}\|\hat h-h\|_\infty\ ?", role="proof step"))
    # The worst cases searched (entries/worst_case.py): the printed constant, and the sharp one derived here.
    for st, form, formula in ((worst_case.LEMMA2_STATED, "stated",
                               r"\|p-\hat p\|_\infty \le \frac{\lambda}{M^2}\|h-\hat h\|_\infty"),
                              (worst_case.LEMMA2_SHARP, "derived",
                               r"\|p-\hat p\|_\infty \le \frac{2}{\lambda}\|h-\hat h\|_\infty")):
        found = worst_case.run_search(st, ctx.seed, "lemma2", ctx.sizes.search_evaluations)
        out.append(worst_case.entry("lemma2", SOURCE, st, found, formula, None, form=form, pools=False))
    return out


def slips(results: list[ClaimResult]) -> list[Slip]:
    by = {r.key.part: r for r in results}
    out = []
    st, der = by.get("statement"), by.get("derived.lipschitz")
    if st is not None and st.verdict == "refuted":
        out.append(Slip(
            id="lemma2.statement",
            entries=keys_of(st, der),
            location="Appendix B, Lemma 2",
            slip_class="wrong constant or exponent",
            stated="||p - p_hat||_inf <= (lambda / M^2) ||h - h_hat||_inf",
            holds="||p - p_hat||_inf <= (2 / lambda) ||h - h_hat||_inf, sharp for every M >= 2 (the routing "
            "probabilities depend on h / lambda only, so the constant must scale like 1/lambda and cannot shrink "
            "with M); the printed bound holds only for lambda >= sqrt(2) M",
            evidence=st.evidence + (" | " + der.evidence if der is not None else ""),
        ))
    s3 = by.get("proof.step3")
    if s3 is not None and s3.verdict == "refuted":
        out.append(Slip(
            id="lemma2.union_bound_factor",
            entries=keys_of(s3),
            location="Appendix B, proof of Lemma 2 (union bound over pairs)",
            slip_class="wrong constant or exponent",
            stated="P(argmax differs) <= lambda M^2 ||h_hat - h||_inf ('because r is Uniform[0, lambda]')",
            holds="P(argmax differs) <= M (M - 1) ||h_hat - h||_inf / lambda: a Uniform[0, lambda] variable falls in "
            "an interval of length 2||dh|| with probability <= 2||dh||/lambda",
            evidence=s3.evidence,
        ))
    s4, conc = by.get("proof.step4"), by.get("proof.conclusion")
    if conc is not None and conc.verdict == "refuted":
        out.append(Slip(
            id="lemma2.proof_statement_mismatch",
            entries=keys_of(conc, s4),
            location="Appendix B, proof of Lemma 2 (last display) against the statement",
            slip_class="inconsistency between sections",
            stated="the proof's chain ends with lambda M^2 ||dh|| (step 3), then M^2 ||dh|| (step 4); the lemma states "
            "lambda / M^2 ||dh||",
            holds="three different constants for one bound; none is right (the sharp constant is 2 / lambda)",
            evidence=conc.evidence + (" | " + s4.evidence if s4 is not None else ""),
        ))
    return out


register(__name__, Claim(
    id="lemma2",
    source=SOURCE,
    kind="bound",
    statement=r"\|p-\hat p\|_\infty \le \frac{\lambda}{M^2}\,\|h-\hat h\|_\infty",
    preconditions=("routing of eq. (1) with r^(m) i.i.d. Uniform[0, lambda]", "M >= 2"),
    measure=measure,
    slips=slips,
    interpretations=INTERPRETATIONS,
    summary="The noisy router's probabilities are Lipschitz in the gate outputs.",
    notes="Decided in exact rational arithmetic: routing probabilities as piecewise-polynomial integrals "
    "(theory.routing) for M = 2, 3, 4; the sharp l_inf Lipschitz constant is 2/lambda for every M. Proof steps are "
    "separate entries.",
))
