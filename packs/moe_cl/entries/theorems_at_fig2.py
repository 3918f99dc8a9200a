"""Theorems 1 and 2 at the paper's own Figure 2 configuration.

Figure 2 (Appendix A): N = 7 tasks in K = 3 clusters, d = 10, s = 6, T = 2000,
sigma0 = 0.4, eta = alpha = 0.5, lambda = 0.3, Gamma = sigma0^1.25,
Definition 1 features, Algorithm 1 with early termination; M in {5, 10, 20}.
M = 10 and 20 exceed N (Theorem 1's case; N ln N = 13.6, so M = 20 meets
M = Omega(N ln N) with constant 1.5, M = 10 with 0.7); M = 5 < N with K = 3
(Theorem 2's case; K ln K = 3.3).  The simulations are those of the Figure 2
claims (shared within a run), so these entries cost nothing extra when both run.

Each bound is checked in expectation over the run, paired at the realized
routing counts (rule ``positive``: Delta = E[RHS - X] > 0), and the late
identity by a paired two-sided test, exactly as at the theorems' own
configurations in the claim modules thm1.py / thm2.py.  The late identity's
and bound entries also carry their ablations (:mod:`packs.moe_cl.entries.ablations`:
the same draws with one cause of the failure removed, such as each task routed
inside its expert set after T1), which measure how much of each failure each
cause explains.  The right-hand
sides are those of :mod:`packs.moe_cl.experiments.theorem_bounds`; the simulations
those of :mod:`packs.moe_cl.experiments.fig2_runs`.  Each task pool of the budget
(:mod:`packs.moe_cl.experiments.pools`, the pools Figure 2's claims use) gives its
own entries (part "Figure 2 configuration, M = ..., pool k"; config ``pool``,
``pool_seed``).  The entries are evidence (``Measurement``: criterion or mean),
decided by the run's error control (:mod:`checks.decide`).
"""

from __future__ import annotations

from moecl_verify.checks import stats
from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.entries import ablations, conditional_reading
from moecl_verify.packs.moe_cl.experiments import fig2_runs
from moecl_verify.packs.moe_cl.experiments.fig2_runs import EARLY, FIG2, LATE
from moecl_verify.packs.moe_cl.experiments.pools import POOL_SEED, pool_indices
from moecl_verify.packs.moe_cl.experiments.theorem_bounds import eq19_rhs, eq20_rhs, eq22_rhs, psi
from moecl_verify.checks.kinds.mean import HorizonTest, Measurement, bound_case

THM1_EXPERTS = (10, 20)
THM2_EXPERTS = (5,)
R_RATIO = 1 - FIG2["s"] / FIG2["d"]


def _settings(ctx: Context, M: int):
    """(pool index, pool, configuration, run) for each task pool of the budget."""
    cfg = fig2_runs.moe_config(M, True)
    for k in pool_indices(ctx.sizes):
        yield k, fig2_runs.pool(ctx, FIG2["signal_scale"], True, pool=k), cfg, fig2_runs.run(ctx, M, True, pool=k)


def _config(ctx, pool, cfg, M, horizons, k: int) -> dict:
    return {"features": FIG2["features"], "part": f"Figure 2 configuration, M = {M}", "pool": k,
            "reading": conditional_reading.IN_EXPECTATION,
            "pool_seed": POOL_SEED,
            **{key: v for key, v in FIG2.items() if key != "features"}, "M": M, "T1": cfg.exploration_rounds,
            "t": list(horizons), "r": R_RATIO, "S": pool.S, "D": pool.D,
            "replicates": ctx.sizes.fig2_replicates, "seed": ctx.seed}


def _measurement(claim_id, kind, config, tests, scale, formula, positive: bool) -> Measurement:
    return Measurement(claim_id=claim_id, source="Appendix A, Figure 2 configuration; " + claim_id, kind=kind,
                       form="stated", config=config, tests=tests, scale=scale, formula=formula,
                       rule="positive" if positive else "identity", horizon_name="case" if positive else "t")


def thm1_early(ctx: Context) -> list[Measurement]:
    out = []
    for M in THM1_EXPERTS:
        for k, pool, cfg, run in _settings(ctx, M):
            horizons = [t for t in EARLY if t <= cfg.exploration_rounds]
            tests = tuple(bound_case(f"pool {k}, t={t}", eq19_rhs(run.chosen, M, t, R_RATIO, pool.S, pool.D),
                                     run.forgetting[:, t - 1]) for t in horizons)
            # the ablations on the same draws (entries/ablations.py): descriptive, not decided
            config = {**_config(ctx, pool, cfg, M, horizons, k), "ablation": ablations.early_bound(ctx, M, k)}
            out.append(_measurement("thm1.forgetting_early", "bound", config, tests,
                                    pool.S + pool.D, "E[F_t] < E[eq. (19) RHS at the realized counts]", True))
    return out


def thm1_late(ctx: Context) -> list[Measurement]:
    out = []
    for M in THM1_EXPERTS:
        for k, pool, cfg, run in _settings(ctx, M):
            T1 = cfg.exploration_rounds
            tests = tuple(HorizonTest(t, stats.mean_test(
                run.forgetting[:, t - 1] - (T1 - 1) / (t - 1) * run.forgetting[:, T1 - 1], 0.0)) for t in LATE)
            config = {**_config(ctx, pool, cfg, M, LATE, k), "ablation": ablations.late_identity(ctx, M, k)}
            out.append(_measurement("thm1.forgetting_late", "expected-value identity", config, tests, pool.S + pool.D,
                                    r"\mathbb{E}[F_t - \tfrac{T_1-1}{t-1}F_{T_1}] = 0", False))
    return out


def thm1_generalization(ctx: Context) -> list[Measurement]:
    out = []
    T = FIG2["T"]
    for M in THM1_EXPERTS:
        for k, pool, cfg, run in _settings(ctx, M):
            case = bound_case(f"pool {k}, T={T}", eq20_rhs(run.chosen, M, cfg.exploration_rounds, R_RATIO, pool.S,
                                                           pool.D), run.generalization[:, -1])
            config = {**_config(ctx, pool, cfg, M, (T,), k), "ablation": ablations.generalization_bound(ctx, M, k)}
            out.append(_measurement("thm1.generalization", "bound", config,
                                    (case,), pool.S + pool.D,
                                    "E[G_T] < E[eq. (20) RHS at the realized counts]", True))
    return out


def thm2_generalization(ctx: Context) -> list[Measurement]:
    out = []
    T = FIG2["T"]
    for M in THM2_EXPERTS:
        for k, pool, cfg, run in _settings(ctx, M):
            psi1, psi2 = psi(pool.W, FIG2["K"])
            case = bound_case(f"pool {k}, T={T}", eq22_rhs(run.chosen, M, cfg.exploration_rounds, R_RATIO, pool.S,
                                                           pool.D, psi1, psi2), run.generalization[:, -1])
            config = {**_config(ctx, pool, cfg, M, (T,), k), "Psi1": psi1, "Psi2": psi2}
            out.append(_measurement("thm2.generalization", "bound", config,
                                    (case,), pool.S + pool.D,
                                    "E[G_T] < E[eq. (22) RHS at the realized counts]", True))
    return out
