"""Lemma 11 (Appendix E): with M = Omega(N ln N) experts every expert set is non-empty, w.p. 1 - o(1).

Statement.  If M = Omega(N ln N), |M_n| >= 1 for all n in [N] with probability at least 1 - o(1)
(M_n = {m : n = argmax_j theta_m^T v_j}, eq. 11).  If M < N and M = Omega(K ln K), |M_k| >= 1 for all
clusters k, w.p. 1 - o(1).

Proof (E.5), transcribed as a chain; each link is an entry of its own id:

* step1: by symmetry, P(m in M_n) = 1/N for all n in [N], m in [M];
* step2: P(|M_n| >= 1) >= 1 - (1 - 1/N)^M;
* step3: "by the union bound", P(|M_n| >= 1 for all n) >= (1 - (1 - 1/N)^M)^N;
* step4: (1 - (1 - 1/N)^M)^N >= 1 - N exp(-M/N) ("(1 - 1/N)^M is small enough");
* step5: 1 - N exp(-M/N) >= 1 - delta "because M = Omega(N ln(N) / delta)".
  (The M < N case: "the same method" with K and P(m in M_k) = 1/K; the combinatorics are those of
  N -> K, covered by the same grid.)

Readings.  The proof's model: each expert's set uniform on [N], independently across experts (step 2
needs the independence; "symmetry" gives only the marginal).  "M = Omega(N ln N)" is read as "there is a
constant c with M >= c N ln N" (Section 3.1's definition), and "1 - o(1)" as N -> infinity; under
Algorithm 1, whose expert sets are not uniform, the decidable content at fixed (N, M) is the proof's own
guarantee P(all |M_n| >= 1) >= 1 - N exp(-M/N).

How it is checked.  Exactly (integers and fractions; mpmath at 60 digits for exp): the probability that
M uniform independent sets cover all N tasks, P_all = sum_k (-1)^k C(N, k) (1 - k/N)^M
(inclusion-exclusion), against each link of the chain, over N = 2..50 and M = N and M = ceil(c N ln N),
c in {0.5, 1, 1.5, 2, 3}.  Under Algorithm 1 (N = 3, M in {6, 12}, Algorithm 1's scalings, sigma0 sweep
0.4..0.025 on the sweep design's pools (:mod:`packs.moe_cl.experiments.sweep_design`: several standard-normal pools
from the pool seed, each scaled by sigma0, the same draws at every sigma0, v_n = w_n / sigma0; the budget's
replicates shared among the pools), two hidden constants), the expert sets at t = T1 (end of exploration):
P(m in M_n) per task and pool (step 1, z-tests of the per-replicate fraction, each pool on its own since the
symmetry is a statement about one pool's tasks; a :class:`checks.kinds.mean.Measurement`), and, pooled over the
pools (a pooled rate below a bound puts some pool below it), P(|M_n| = 0) against (1 - 1/N)^M (step 2,
exact one-sided binomial tests per sigma0 and task; :class:`checks.kinds.proportion.ProportionEvidence`, "at most"),
and P(all non-empty) against the proof's bound (the statement; ``ProportionEvidence``, "at least" at every
sigma0), with Wilson intervals and their trend in sigma0.  The simulated entries, one per (M, hidden
constant), are decided by the run's error control (:mod:`checks.decide`); the grid entries are exact.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from moecl_verify.checks import stats
from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments.sweep_design import (SWEEP_CHUNK, design_config, replicate_key,
                                                           replicates_per_pool, sweep_pool, sweep_pools)
from moecl_verify.checks.kinds.proportion import ProportionEvidence, ProportionRow
from moecl_verify.checks.model import ClaimResult, Interpretation, Slip, exact_result, keys_of
from moecl_verify.packs.moe_cl import texts
from moecl_verify.checks.kinds.mean import HorizonTest, Measurement
from moecl_verify.checks.registry import Claim, register
from moecl_verify.numeric.moe import MoEConfig, simulate_moe

SOURCE = "Appendix E, Lemma 11 and its proof (E.5)"
# The exact grid's numbers of tasks N and the simulations' replicates are the budget's lemma11_task_counts and
# lemma11_replicates (packs/moe_cl/budgets.py).
CS = (0.5, 1.0, 1.5, 2.0, 3.0)  # M = ceil(c N ln N)
DPS = 60

SIGMA0 = (0.4, 0.2, 0.1, 0.05, 0.025)
CONSTANTS = (1.0, 0.5)
SIM = dict(N=3, d=10, s=6, sigma_t=0.1, features="definition1")
SIM_MS = (6, 12)

INTERPRETATIONS = (
    Interpretation(
        id="lemma11.model",
        location="Appendix E, proof of Lemma 11 (E.5)",
        issue="'By symmetry, P(m in M_n) = 1/N' gives the marginal only; (1 - 1/N)^M for 'no expert in M_n' needs "
        "the experts' sets to be independent.",
        choice="The proof's model: sets i.i.d. uniform on [N]. Algorithm 1's sets are measured separately, on a fixed "
        "task pool (the paper's setting: W is fixed, so the tasks are not exchangeable).",
    ),
    Interpretation(
        id="lemma11.omega_constant",
        location="Appendix E, Lemma 11",
        issue="'M = Omega(N ln N)' with an unspecified constant, and 'w.p. 1 - o(1)' with an unspecified limit.",
        choice="Some constant c with M >= c N ln N, and o(1) as N -> infinity; the exact threshold c = 1 "
        "(coupon collector) is reported. Under Algorithm 1 at fixed (N, M): the proof's bound 1 - N e^{-M/N}.",
    ),
    Interpretation(
        id="lemma11.when",
        location="Appendix E, Lemma 11 and its use in E.8",
        issue="The round at which the sets M_n (eq. 11, on theta_t) are taken.",
        choice="t = T1, the end of exploration, where Proposition 1's proof (E.8) needs every set non-empty.",
    ),
)


# ---------------------------------------------------------------------------------------------- exact combinatorics


def m_values(N: int) -> list[tuple[str, int]]:
    """(label, M) of the grid: M = N and M = max(N, ceil(c N ln N)) (the lemma's regime M >= N)."""
    out = [("M = N", N)]
    out += [(f"c = {c:g}", max(N, math.ceil(c * N * math.log(N)))) for c in CS]
    return out


def p_all_uniform(N: int, M: int) -> Fraction:
    """P(every one of N sets receives at least one of M experts), sets i.i.d. uniform: inclusion-exclusion."""
    return Fraction(sum((-1) ** k * math.comb(N, k) * (N - k) ** M for k in range(N + 1)), N**M)


def q_empty(N: int, M: int) -> Fraction:
    """P(|M_n| = 0) = (1 - 1/N)^M under the proof's model."""
    return Fraction((N - 1) ** M, N**M)


def binomial_nonempty(N: int, M: int) -> Fraction:
    """P(|M_n| >= 1) summed over the Binomial(M, 1/N) count of experts in set n (an independent route to step 2)."""
    # sum_{j >= 1} C(M, j) (1/N)^j (1 - 1/N)^(M - j) = sum_{j >= 1} C(M, j) (N - 1)^(M - j) / N^M, in integers
    return Fraction(sum(math.comb(M, j) * (N - 1) ** (M - j) for j in range(1, M + 1)), N**M)


def product_bound(N: int, M: int) -> Fraction:
    """Step 3's right-hand side (1 - (1 - 1/N)^M)^N."""
    return (1 - q_empty(N, M)) ** N


def union_bound(N: int, M: int) -> Fraction:
    """The union bound the text names: 1 - N (1 - 1/N)^M."""
    return 1 - N * q_empty(N, M)


def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / mpmath.mpf(x.denominator)


def exp_bound(N: int, M: int) -> mpmath.mpf:
    """Step 4's right-hand side 1 - N exp(-M/N)."""
    with mpmath.workdps(DPS):
        return 1 - N * mpmath.exp(-mpmath.mpf(M) / N)


def grid(Ns: tuple[int, ...]) -> list[dict]:
    """The exact quantities of every (N, M) with N in ``Ns`` and M = ceil(c N ln N) (:func:`m_values`)."""
    rows = []
    with mpmath.workdps(DPS):
        for N in Ns:
            for label, M in m_values(N):
                pa, pr, ub = p_all_uniform(N, M), product_bound(N, M), union_bound(N, M)
                eb = exp_bound(N, M)
                rows.append(dict(N=N, M=M, label=label, p_all=pa, product=pr, union=ub, exp=eb,
                                 step2_equal=binomial_nonempty(N, M) == 1 - q_empty(N, M),
                                 step3_holds=pa >= pr, step4_holds=_mp(pr) >= eb, union_holds=pa >= ub,
                                 union_exp_holds=_mp(ub) >= eb))
    return rows


def step5_constant() -> tuple[float, float]:
    """Smallest c such that M = c N ln(N) / delta gives N exp(-M/N) <= delta for all N >= 2, delta in (0, 1):
    sup over N, delta of delta ln(N/delta) / ln N, attained at N = 2 (returns (c*, delta*))."""
    with mpmath.workdps(30):
        f = lambda dl: dl * (mpmath.log(2) - mpmath.log(dl)) / mpmath.log(2)  # noqa: E731
        # f'(delta) = (ln 2 - ln delta - 1)/ln 2 = 0 at delta = 2/e
        d_star = 2 / mpmath.e
        return float(f(d_star)), float(d_star)


def step5_holds(N: int, delta: float, c: float) -> bool:
    """N exp(-M/N) <= delta with M = c N ln(N)/delta (real M, as the Omega reads)."""
    with mpmath.workdps(DPS):
        M = c * N * mpmath.log(N) / delta
        return N * mpmath.exp(-M / N) <= delta


def smallest_step3_counterexample() -> dict:
    for N in range(2, 10):
        for M in range(N, 4 * N):
            pa, pr = p_all_uniform(N, M), product_bound(N, M)
            if pa < pr:
                return dict(N=N, M=M, p_all=pa, product=pr)
    raise AssertionError("no counterexample")  # pragma: no cover


# ---------------------------------------------------------------------------------------------- Algorithm 1 sets


def _sets_at_T1(ctx: Context, M: int, sigma0: float, c: float) -> np.ndarray:
    """Expert sets (R, M) at t = T1 under Algorithm 1, on the sweep design's pools (each one standard-normal draw
    from the pool seed, scaled by sigma0): the budget's replicates shared equally among the pools, pool k's
    replicates in rows k R_k .. (k + 1) R_k - 1.  Keys without sigma0: every sigma0 replays the same draws."""
    cfg = MoEConfig(M=M, eta=c * sigma0**0.5, alpha=c * sigma0**0.5, lam=c * sigma0**1.25, Gamma=c * sigma0**1.25)
    per_pool = replicates_per_pool(ctx.sizes.lemma11_replicates, ctx.sizes)
    out = []
    for k in sweep_pools(ctx.sizes):
        pool = sweep_pool("lemma11", k, N=SIM["N"], d=SIM["d"], sigma0=sigma0)
        run = simulate_moe(pool, cfg, R=per_pool, T=cfg.exploration_rounds, s=SIM["s"], features=SIM["features"],
                           sigma_t=SIM["sigma_t"], seed=ctx.seed, key=replicate_key("lemma11", str(M), str(c), pool=k),
                           chunk_size=SWEEP_CHUNK,
                           progress=lambda done, total: ctx.progress(
                               f"lemma11 M={M} sigma0={sigma0:g} c={c:g} pool {k}", done, total),
                           runner=ctx.runner)
        out.append(run.expert_sets)
    return np.concatenate(out)


def by_pool(ctx: Context, S: np.ndarray) -> list[np.ndarray]:
    """The rows of :func:`sets` split by pool (pool k's replicates are consecutive)."""
    return np.split(S, len(sweep_pools(ctx.sizes)))


def replicates(ctx: Context) -> int:
    """Replicates per sigma0, over all pools."""
    return replicates_per_pool(ctx.sizes.lemma11_replicates, ctx.sizes) * len(sweep_pools(ctx.sizes))


def sets(ctx: Context, M: int, sigma0: float, c: float) -> np.ndarray:
    return ctx.shared(("lemma11", M, sigma0, c, ctx.budget.name, ctx.seed), lambda: _sets_at_T1(ctx, M, sigma0, c))


def _counts(S: np.ndarray, N: int) -> np.ndarray:
    """(R, N): how many experts each task's set holds."""
    return np.stack([(S == n).sum(axis=1) for n in range(N)], axis=1)


def _trend(values: list[float]) -> str:
    return "rises" if values[-1] > values[0] else ("falls" if values[-1] < values[0] else "is flat")


# ---------------------------------------------------------------------------------------------- entries


def _exact(claim_id: str, part: str, verdict: str, evidence: str, formula: str, form: str = "stated",
           kind: str = "bound", **config) -> ClaimResult:
    return exact_result(claim_id, SOURCE, kind, part, verdict, evidence, formula, form=form, **config)


def _grid_rows(ctx: Context) -> list[dict]:
    return ctx.shared(("lemma11", "grid", ctx.budget.name), lambda: grid(ctx.sizes.lemma11_task_counts))


def measure_statement(ctx: Context) -> list:
    rows = _grid_rows(ctx)
    N_max = max(ctx.sizes.lemma11_task_counts)
    out = []
    # (a) The proof's model, exactly.
    by_c = {lab: [(r["N"], r["p_all"]) for r in rows if r["label"] == lab] for lab in [f"c = {c:g}" for c in CS]}
    with mpmath.workdps(DPS):
        tail_ok = all(
            1 - _mp(r["p_all"]) <= r["N"] ** (1 - mpmath.mpf(r["M"]) / (r["N"] * mpmath.log(r["N"])))
            for r in rows if r["label"] != "M = N"
        )
    union_ok = all(r["union_holds"] and r["union_exp_holds"] for r in rows)
    ends = {lab: (float(v[0][1]), float(v[-1][1])) for lab, v in by_c.items()}
    confirmed = tail_ok and union_ok and all(ends[f"c = {c:g}"][1] >= 1 - N_max ** (1 - c) for c in CS if c > 1)
    ev = (
        f"exact P_all (M sets i.i.d. uniform on [N], inclusion-exclusion) for N = 2..{N_max}, M = ceil(c N ln N): "
        + "; ".join(f"{lab}: P_all = {a:.4f} at N = 2 -> {b:.4f} at N = {N_max}" for lab, (a, b) in ends.items())
        + f". The union bound P_all >= 1 - N (1 - 1/N)^M >= 1 - N e^(-M/N) holds at every grid point ({union_ok}), "
        f"and 1 - P_all <= N^(1 - M/(N ln N)) ({tail_ok}), so for any c > 1, P_all >= 1 - N^(1-c) -> 1: the "
        "statement holds in the proof's model when the hidden constant exceeds 1. It fails below the coupon-collector "
        "threshold: with c < 1, P_all -> 0 (c = 0.5 above; for small N the grid uses M = N "
        "when c N ln N < N), and c = 1 gives about e^-1; 'M = Omega(N ln N)' is "
        "enough only with c > 1"
    )
    out.append(_exact("lemma11", "uniform model", "confirmed" if confirmed else "refuted", ev,
                      r"P(|\mathcal M_n|\ge 1\ \forall n) = 1-o(1),\ M \ge cN\ln N,\ c>1", kind="probability",
                      N=[min(ctx.sizes.lemma11_task_counts), N_max], c=list(CS)))

    # (b) Algorithm 1's sets against the proof's guarantee 1 - N e^{-M/N}: at every sigma0, P(all |M_n| >= 1)
    # >= the bound, one entry per (M, c); decide.py tests it under the run's error control.
    N = SIM["N"]
    R = replicates(ctx)
    for M in SIM_MS:
        bound = float(exp_bound(N, M))
        unif = float(p_all_uniform(N, M))
        for c in CONSTANTS:
            rows = []
            for s0 in SIGMA0:
                S = sets(ctx, M, s0, c)
                rows.append(ProportionRow(s0, int((_counts(S, N) >= 1).all(axis=1).sum()), R))
            ks = [r.probability for r in rows]
            out.append(ProportionEvidence(
                parameter="sigma0",
                claim_id="lemma11", source=SOURCE + " (Algorithm 1's expert sets)", kind="probability",
                config={"features": SIM["features"], "part": f"Algorithm 1 M = {M}", **SIM, "M": M,
                        "sigma0": list(SIGMA0), "hidden_constant": c, "replicates": R, "seed": ctx.seed,
                        "round": "T1", **design_config(ctx.sizes, ctx.sizes.lemma11_replicates)},
                formula=r"P(|\mathcal M_n|\ge 1\ \forall n) \ge 1 - N e^{-M/N}",
                what=f"Algorithm 1, N = {N}, M = {M} (M / (N ln N) = {M / (N * math.log(N)):.2f}), hidden constant "
                f"c = {c:g}, expert sets at t = T1, {R} replicates per sigma0: every |M_n| >= 1",
                rows=tuple(rows), claim="at_least", bound=bound, resolution=0.0,
                note=f"The proof guarantees >= 1 - N e^(-M/N) = {bound:.4f}; uniform independent sets would give "
                f"{unif:.4f}. The estimate {_trend(ks)} as sigma0 shrinks ({ks[0]:.3f} -> {ks[-1]:.3f}).",
            ))
    return out


def measure_step1(ctx: Context) -> list:
    N = SIM["N"]
    out = []
    for M in SIM_MS:
        for c in CONSTANTS:
            tests = []
            for s0 in SIGMA0:
                # "By symmetry" is a statement about one pool's tasks, so each pool is tested on its own: pooling
                # would average asymmetries of opposite sign away.
                for k, S in enumerate(by_pool(ctx, sets(ctx, M, s0, c))):
                    frac = _counts(S, N) / M  # per replicate: fraction of experts in each set
                    tests += [HorizonTest(f"sigma0={s0:g}, pool {k}, n={n}", stats.mean_test(frac[:, n], 1.0 / N))
                              for n in range(N)]
            out.append(Measurement(
                claim_id="lemma11.step1", source=SOURCE + ", step 1 ('by symmetry')", kind="probability",
                form="stated",
                config={"features": SIM["features"], "part": f"M = {M}", "role": "proof step", **SIM, "M": M,
                        "sigma0": list(SIGMA0), "hidden_constant": c, "replicates": replicates(ctx),
                        "seed": ctx.seed, "round": "T1",
                        **design_config(ctx.sizes, ctx.sizes.lemma11_replicates)},
                tests=tuple(tests), scale=1.0 / N, resolution=0.2,
                formula=r"P(m\in\mathcal M_n) = 1/N",
                horizon_name="case",
            ))
    return out


def measure_step2(ctx: Context) -> list:
    rows = _grid_rows(ctx)
    out = [_exact("lemma11.step2", "proof's model", "confirmed" if all(r["step2_equal"] for r in rows) else "refuted",
                  "with sets i.i.d. uniform, the Binomial(M, 1/N) count of experts in set n gives P(|M_n| >= 1) = "
                  "1 - (1 - 1/N)^M exactly, so step 2 holds with equality on the "
                  f"whole grid ({len(rows)} (N, M) points). It needs the experts' sets to be independent, which "
                  "'symmetry' (step 1) does not give",
                  r"P(|\mathcal M_n|\ge 1) \ge 1-(1-1/N)^M", kind="probability", role="proof step")]
    # Algorithm 1's sets: P(|M_n| = 0) <= (1 - 1/N)^M for every task n and sigma0, one entry per (M, c).
    N = SIM["N"]
    R = replicates(ctx)
    for M in SIM_MS:
        q = float(q_empty(N, M))
        for c in CONSTANTS:
            rows, cells, dev, dev_z = [], [], 0.0, 0.0
            for s0 in SIGMA0:
                counts = _counts(sets(ctx, M, s0, c), N)
                marg = (counts / M).mean(axis=0)  # P(m in M_n): the experts are exchangeable
                emp, ind = [], []
                for n in range(N):
                    k = int((counts[:, n] == 0).sum())
                    rows.append(ProportionRow(s0, k, R))
                    indep = float((1 - marg[n]) ** M)
                    if abs(k / R - indep) > dev:
                        dev = abs(k / R - indep)
                        dev_z = dev / math.sqrt(max(k / R * (1 - k / R), 1 / R) / R)
                    emp.append(f"{k / R:.3f}")
                    ind.append(f"{indep:.3f}")
                cells.append(f"sigma0 = {s0:g}: {'/'.join(emp)} (independent experts with the measured marginals: "
                             f"{'/'.join(ind)})")
            out.append(ProportionEvidence(
                parameter="sigma0",
                claim_id="lemma11.step2", source=SOURCE + ", step 2 (Algorithm 1's sets)", kind="probability",
                config={"features": SIM["features"], "part": f"Algorithm 1 M = {M}", "role": "proof step", **SIM, "M": M,
                        "sigma0": list(SIGMA0), "hidden_constant": c, "replicates": R, "seed": ctx.seed},
                formula=r"P(|\mathcal M_n| = 0) \le (1-1/N)^M",
                what=f"N = {N}, M = {M}, c = {c:g}, sets at T1, {R} replicates: |M_n| = 0, one row per sigma0 and "
                f"task n = 0..{N - 1} (step 2 needs P(|M_n| = 0) <= (1 - 1/N)^M = {q:.4f} for each n)",
                rows=tuple(rows), claim="at_most", bound=q, resolution=0.0,
                note="Measured P(|M_n| = 0) for n = 0/1/2: " + "; ".join(cells)
                + f". Largest |P(|M_n| = 0) - independent-experts value| = {dev:.3f} "
                f"({dev_z:.1f} standard errors of the estimate): where this is large, the unequal marginals (step 1) "
                "do not account for the empty sets alone.",
            ))
    return out


def measure_step3(ctx: Context) -> list:
    rows = _grid_rows(ctx)
    ce = smallest_step3_counterexample()
    fails = [r for r in rows if not r["step3_holds"]]
    worst = max(rows, key=lambda r: float(r["product"] - r["p_all"]))
    ev = (
        f"exact: P_all < (1 - (1 - 1/N)^M)^N at {len(fails)} of {len(rows)} grid points (N = "
        f"{min(ctx.sizes.lemma11_task_counts)}..{max(ctx.sizes.lemma11_task_counts)}); smallest counterexample N = {ce['N']}, M = {ce['M']}: "
        f"P_all = {ce['p_all']} < {ce['product']}. Largest gap at N = {worst['N']}, M = {worst['M']}: "
        f"{float(worst['p_all']):.4f} < {float(worst['product']):.4f}. The events {{|M_n| >= 1}} are negatively "
        "associated (occupancy of bins), so P(all) <= prod P(each), the opposite direction; nor is the step a union "
        "bound. The union bound the text names, P_all >= 1 - N (1 - 1/N)^M, is true (entry lemma11 'uniform model') "
        "and reaches step 4's right-hand side directly"
    )
    return [_exact("lemma11.step3", "exact grid", "refuted" if fails else "confirmed", ev,
                   r"P(|\mathcal M_n|\ge 1\ \forall n) \ge \big(1-(1-1/N)^M\big)^N", kind="probability",
                   counterexample={"N": ce["N"], "M": ce["M"], "p_all": str(ce["p_all"]), "product": str(ce["product"])}, role="proof step")]


def measure_step4(ctx: Context) -> list:
    rows = _grid_rows(ctx)
    ok = [r for r in rows if r["step4_holds"]]
    with mpmath.workdps(DPS):
        margin = min(float(_mp(r["product"]) - r["exp"]) for r in rows)
    ev = (
        f"exact (integers, mpmath at {DPS} digits for exp): (1 - (1 - 1/N)^M)^N >= 1 - N e^(-M/N) at {len(ok)} of "
        f"{len(rows)} grid points (smallest margin {margin:.3g}). Reason: (1 - x)^N >= 1 - N x (Bernoulli) with "
        "x = (1 - 1/N)^M <= e^(-M/N); it needs no smallness of x"
    )
    return [_exact("lemma11.step4", "exact grid", "confirmed" if len(ok) == len(rows) else "refuted", ev,
                   r"\big(1-(1-1/N)^M\big)^N \ge 1-Ne^{-M/N}", role="proof step")]


def measure_step5(ctx: Context) -> list:
    c_star, d_star = step5_constant()
    Ns = ctx.sizes.lemma11_task_counts
    deltas = (0.01, 0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99)
    at_one = [(N, d) for N in Ns for d in deltas if not step5_holds(N, d, 1.0)]
    at_star = [(N, d) for N in Ns for d in deltas if not step5_holds(N, d, c_star * (1 + 1e-9))]
    ev = (
        f"1 - N e^(-M/N) >= 1 - delta iff M >= N ln(N/delta). With M = c N ln(N)/delta this holds for all N >= 2 and "
        f"delta in (0, 1) iff c >= sup delta ln(N/delta)/ln N = {c_star:.4f} (at N = 2, delta = 2/e = {d_star:.4f}). "
        f"Grid N = {Ns[0]}..{Ns[-1]}, delta in {list(deltas)}: with c = 1 it fails at {len(at_one)} points "
        f"{at_one[:4]}; with c = {c_star:.4f} at {len(at_star)}. Under the reading 'M >= c N ln(N)/delta for some "
        "constant c' the step holds; the requirement M = Omega(N ln N / delta) is far more than needed "
        "(N ln(N/delta) suffices) and differs from the statement's M = Omega(N ln N)"
    )
    return [_exact("lemma11.step5", "exact", "confirmed" if not at_star else "refuted", ev,
                   r"1-Ne^{-M/N} \ge 1-\delta\ \text{if}\ M = \Omega(N\ln N/\delta)", c_star=c_star, role="proof step")]


def slips(results: list[ClaimResult]) -> list[Slip]:
    out = []
    s3 = next((r for r in results if r.id == "lemma11.step3"), None)
    if s3 is not None and s3.verdict == "refuted":
        out.append(Slip(
            id="lemma11.step3_direction",
            entries=keys_of(s3),
            location="Appendix E, proof of Lemma 11 (E.5), 'by applying the union bound'",
            slip_class="inequality direction",
            stated="P(|M_n| >= 1 for all n) >= (1 - (1 - 1/N)^M)^N",
            holds="P(|M_n| >= 1 for all n) <= prod_n P(|M_n| >= 1) (negative association); the union bound gives "
            "P(all) >= 1 - N (1 - 1/N)^M >= 1 - N e^(-M/N), so the chain's conclusion survives",
            evidence=s3.evidence,
        ))
    return out


def slips_statement(results: list[ClaimResult]) -> list[Slip]:
    sim = [r for r in results if r.key.part.startswith("Algorithm 1 M = ")]
    refuted = [r for r in sim if r.verdict == "refuted"]
    if not refuted:
        return []
    return [Slip(
        id="lemma11.sets_not_uniform",
        strength="reading", strength_note=texts.READING_GATE,
        entries=keys_of(refuted),
        location="Appendix E, proof of Lemma 11 (E.5), 'by symmetry'",
        slip_class="unstated assumption",
        stated="P(m in M_n) = 1/N independently across experts, hence P(all |M_n| >= 1) >= 1 - N e^(-M/N)",
        holds="under Algorithm 1 the experts' sets at the end of exploration are neither uniform (for a fixed task "
        "pool the marginals P(m in M_n) are far from 1/N) nor independent; the probability that every set is "
        "non-empty falls below the proof's bound and decreases as sigma0 shrinks",
        evidence=" | ".join(r.evidence for r in refuted),
    )]


_PRE = ("M = Omega(N ln N)", "expert sets by eq. (11) at t = T1")

register(__name__, Claim(
    id="lemma11", source=SOURCE, kind="probability",
    statement=r"M = \Omega(N\ln N) \Rightarrow |\mathcal M_n| \ge 1\ \forall n\ \text{w.p.}\ 1-o(1)",
    preconditions=_PRE, measure=measure_statement, slips=slips_statement, interpretations=INTERPRETATIONS,
    summary="With enough experts every expert set is non-empty.",
    notes="Exact coupon-collector probabilities under the proof's model (sets i.i.d. uniform), and Algorithm 1's "
    "sets at T1 over a sigma0 sweep with Wilson intervals against the proof's bound 1 - N e^(-M/N).",
    shares=("lemma11",),
))
register(__name__, Claim(
    id="lemma11.step1", source=SOURCE + ", step 1", kind="probability",
    statement=r"P(m\in\mathcal M_n) = 1/N\ \text{(by symmetry)}", preconditions=_PRE, measure=measure_step1,
    summary="Each expert lands in each set with probability 1/N.",
    notes="Per-replicate fraction of experts in each set at T1 under Algorithm 1 (fixed pool), z-tests against 1/N.",
    shares=("lemma11",),
))
register(__name__, Claim(
    id="lemma11.step2", source=SOURCE + ", step 2", kind="probability",
    statement=r"P(|\mathcal M_n|\ge 1) \ge 1-(1-1/N)^M", preconditions=_PRE, measure=measure_step2,
    summary="A given set is non-empty with probability at least 1 - (1 - 1/N)^M.",
    notes="Exact under the proof's model; under Algorithm 1, exact one-sided binomial tests of P(|M_n| = 0).",
    shares=("lemma11",),
))
register(__name__, Claim(
    id="lemma11.step3", source=SOURCE + ", step 3", kind="probability",
    statement=r"P(|\mathcal M_n|\ge 1\ \forall n) \ge \big(1-(1-1/N)^M\big)^N", preconditions=_PRE,
    measure=measure_step3, slips=slips,
    summary="The product step of the proof ('by the union bound').",
    notes="Exact inclusion-exclusion against the product over the (N, M) grid.",
    shares=("lemma11",),
))
register(__name__, Claim(
    id="lemma11.step4", source=SOURCE + ", step 4", kind="bound",
    statement=r"\big(1-(1-1/N)^M\big)^N \ge 1-Ne^{-M/N}", preconditions=(), measure=measure_step4,
    summary="Bernoulli's inequality step.", notes="Exact integers and 60-digit mpmath over the (N, M) grid.",
    shares=("lemma11",),
))
register(__name__, Claim(
    id="lemma11.step5", source=SOURCE + ", step 5", kind="bound",
    statement=r"1-Ne^{-M/N} \ge 1-\delta\ \text{when}\ M = \Omega(N\ln N/\delta)", preconditions=(),
    measure=measure_step5,
    summary="The sample-size step.", notes="Exact threshold M >= N ln(N/delta) and the smallest sufficient constant.",
    shares=("lemma11",),
))
