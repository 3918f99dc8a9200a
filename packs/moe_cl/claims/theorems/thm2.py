"""Theorem 2 (Section 5.2, M < N with K clusters): forgetting and generalization bounds.

Statement.  If M < N and M = Omega(K ln K): for t <= T1, E[F_t] is as in eq.
(19); for some t > T1, eq. (21); and eq. (22):

  E[G_T] < 1/T sum_tau r^{L_T} ( S + 1/T1 sum_{tau<=T1} r^{L_T - L_T1} (1 - r^{L_T1}) D )
           + Psi2 1/T sum_{tau=T1+1}^{T} (1 - r^{L_T - L_T1}) + Psi1 1/T sum_{tau=T1+1}^{T} (1 - r^{L_T - L_T1}),

with L_x = L_x^(m_tau), Psi1 = (1/N) sum_n (1/|W_k(n)|) sum_{n' in W_k(n)} ||w_n' - w_n||^2
and Psi2 = (1/N) sum_n (1/K) sum_k (1/|W_k|) sum_{n' in W_k} ||w_n' - w_n||^2.

Readings.  Eq. (22) reuses tau for the inner sum inside the outer sum over
tau; we read the inner index as a separate tau' (the inner average is then a
constant).  Eq. (21) is not checkable as printed: its Psi1 term has the
exponents "(1 - r^{L_t} - L_tau) r^{L_t} - L_T1 - 1" with no recoverable
grouping, its second term sums over tau inside the outer sum over tau and uses
an undefined index i (r^{L_i^(m_tau)}), and it is claimed only "for some t".

Check of eq. (22): as Theorem 1's, in expectation over the whole run at the
realized counts (paired), N = 6, K = 2 clusters, M = 4 (K ln K = 1.4),
sigma0 = 0.4, T1 = 8, T = 200, both feature models (simulated in
:mod:`packs.moe_cl.experiments.thm2_runs`; Psi1, Psi2 and the right-hand side in
:mod:`packs.moe_cl.experiments.theorem_bounds`): criterion evidence (a
``Measurement`` with rule ``positive``) per pool of the budget (part ``pool k``,
:mod:`packs.moe_cl.experiments.pools`, pools drawn independently of the replicate
seed), decided by the run's error control (:mod:`checks.decide`).  Also read
conditionally on the routing (:mod:`packs.moe_cl.entries.conditional_reading`,
an exact entry scanning pool 0's realized sequences) and at Figure 2's
configuration with M = 5 (:mod:`packs.moe_cl.entries.theorems_at_fig2`).
Eq. (22) given the tasks and the routing is also searched over pools
(:mod:`packs.moe_cl.entries.worst_case`, part ``worst case searched``) inside
Theorem 2's premises (K < M < N, M >= K ln K at the constant 1, clustered
ground truths, T1 >= M, every expert explored, every later round inside its
task's cluster); its counterexample is stored as the paper's instance.
"""

from __future__ import annotations

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.entries import conditional_reading, theorems_at_fig2, worst_case
from moecl_verify.packs.moe_cl.experiments import thm2_runs
from moecl_verify.packs.moe_cl.experiments.theorem_bounds import eq22_rhs, psi
from moecl_verify.packs.moe_cl.experiments.thm2_runs import CONFIG
from moecl_verify.checks.model import Slip, exact_result, keys_of
from moecl_verify.checks.kinds.mean import Measurement, bound_case
from moecl_verify.checks.registry import Claim, register
from moecl_verify.numeric.conditional_oracle import conditional_errors

SOURCE = "Section 5.2, Theorem 2, eq. (21)-(22); proof Appendix J"
# The conditional reading scans the realized sequences of pool 0's gaussian run (an exact evaluation).
CONDITIONAL_POOL = 0


def measure_generalization(ctx: Context) -> list:
    out = []
    r = 1 - CONFIG["s"] / CONFIG["d"]
    for k in thm2_runs.pools(ctx):
        for features in ("gaussian", "definition1"):
            pool, cfg, run = thm2_runs.run(ctx, features, k)
            T1 = cfg.exploration_rounds
            psi1, psi2 = psi(pool.W, CONFIG["K"])
            case = bound_case(f"pool {k}, T={CONFIG['T']}",
                              eq22_rhs(run.chosen, CONFIG["M"], T1, r, pool.S, pool.D, psi1, psi2),
                              run.generalization[:, -1])
            config = {"features": features, "reading": conditional_reading.IN_EXPECTATION, **thm2_runs.pool_config(k),
                      **CONFIG, "T1": T1, "r": r, "S": pool.S,
                      "D": pool.D, "Psi1": psi1, "Psi2": psi2, "replicates": ctx.sizes.thm2_replicates,
                      "seed": ctx.seed}
            out.append(Measurement(claim_id="thm2.generalization", source=SOURCE, kind="bound", form="stated",
                                   config=config,
                                   tests=(case,),
                                   scale=pool.S + pool.D,
                                   formula="E[G_T] < E[eq. (22) RHS at the realized counts, inner tau read as tau']: "
                                   "Delta = E[RHS - G_T] > 0",
                                   rule="positive", horizon_name="case"))
    k = CONDITIONAL_POOL
    pool, cfg, run = thm2_runs.run(ctx, "gaussian", k)
    psi1, psi2 = psi(pool.W, CONFIG["K"])
    lhs = conditional_errors(pool.W, run.tasks, run.chosen, CONFIG["M"], r)["generalization"][:, -1]
    rhs = eq22_rhs(run.chosen, CONFIG["M"], cfg.exploration_rounds, r, pool.S, pool.D, psi1, psi2)
    count, text = conditional_reading.realized(lhs, rhs, pool.S + pool.D, False,
                                               f"N = 6, K = 2, M = 4, gaussian, pool {k}, T = {CONFIG['T']}")
    pool_ids = thm2_runs.pool_config(k)
    out.append(conditional_reading.entry(
        "thm2.generalization", SOURCE, "bound", "E[G_T | routing] < eq. (22) RHS(routing) for every sequence", None,
        count, text, exhaustive=False, features="gaussian", **pool_ids, **CONFIG, T1=cfg.exploration_rounds, r=r, S=pool.S, D=pool.D,
        Psi1=psi1, Psi2=psi2, replicates=ctx.sizes.thm2_replicates, seed=ctx.seed))
    searched = worst_case.run_search(worst_case.EQ22_GIVEN_ROUTING, ctx.seed, "thm2.generalization",
                                     ctx.sizes.search_evaluations)
    out.append(worst_case.entry("thm2.generalization", SOURCE, worst_case.EQ22_GIVEN_ROUTING, searched,
                                r"\mathbb{E}[G_T \mid n_{1:T}, m_{1:T}] < \text{eq. (22) RHS}(m_{1:T})\ "
                                r"\text{for every sequence and pool}", conditional_reading.READING))
    return out + theorems_at_fig2.thm2_generalization(ctx)


def measure_forgetting(ctx: Context) -> list:
    return [
        exact_result(
            "thm2.forgetting", SOURCE, "bound", "eq. (21) as printed", "not_checkable",
            "not a checkable proposition as printed: the Psi1 term's exponents '(1 - r^{L_t} - L_tau) r^{L_t} - L_T1 - 1' "
            "admit no unique grouping; the second term sums over tau inside the outer sum over tau and uses an "
            "undefined index i (r^{L_i^(m_tau)}); and the bound is asserted only 'for some t in {T1+1, ..., T}', "
            "which names no t to test. Any repaired version would be ours, not the paper's",
            r"\text{eq. (21)}",
        )
    ]


def generalization_slips(results) -> list[Slip]:
    """Eq. (22) read given the tasks and the routing, where the worst-case search found an exact violation."""
    searched = [r for r in results if r.key.part == worst_case.PART and r.verdict == "refuted"]
    if not searched:
        return []
    fig2 = [r for r in results if r.key.part.startswith("Figure 2 configuration")]
    held = [r for r in fig2 if r.verdict == "confirmed"]
    effect = (f"in expectation over the run at Figure 2's configuration (M = 5 < N = 7) eq. (22) holds on "
              f"{len(held)} of {len(fig2)} task pools; the failure is of the bound read given the sequence"
              if fig2 else "")
    cex = searched[0].config["counterexample"]
    return [Slip(
        id="thm2.eq22.fails_given_routing",
        summary="Theorem 2's eq. (22) fails given the task sequence and the routing, inside its premises (K < M < N, "
        "clustered ground truths, every expert explored, later rounds inside their task's cluster)",
        entries=keys_of(searched),
        location="Section 5.2, Theorem 2, eq. (22)",
        slip_class="false statement",
        stated="E[G_T] < eq. (22)'s right-hand side, a function of the routing counts L^(m), for M < N with K "
        "clusters",
        holds="read given the task sequence and the routing, as a bound on the routing counts invites, eq. (22) "
        "fails on an instance satisfying every premise the tool checks ("
        + "; ".join(f"{p['name']}: {p['text']}" for p in cex["premises"]) + "): "
        + worst_case.describe_instance(cex) + " (exact, A1)",
        evidence=" | ".join(r.evidence for r in searched),
        effect=effect,
    )]


register(__name__, Claim(
    id="thm2.generalization", source=SOURCE, kind="bound",
    statement=r"\mathbb{E}[G_T] < \text{eq. (22)}",
    preconditions=("M < N", "M = Omega(K ln K)", "K clusters with intra-cluster gaps O(sigma0^1.5)"),
    measure=measure_generalization, slips=generalization_slips,
    summary="Generalization bound with clusters (M < N).",
    notes="Checked in expectation over the whole run at the realized routing counts (paired), N = 6, K = 2, M = 4, "
    "sigma0 = 0.4; the inner sum's index is read as separate from the outer one. A second entry reads the bound "
    "conditionally on the routing (exact under A1 via eq. (42)'s recursion) on the run's realized sequences; a "
    "finite search cannot confirm a universal bound, so without a violation it stays inconclusive. "
    + thm2_runs.POOL_NOTE,
    shares=("fig2", "thm2"),
))
register(__name__, Claim(
    id="thm2.forgetting", source=SOURCE, kind="bound",
    statement=r"\mathbb{E}[F_t] < \text{eq. (21)}\ \text{for some } t > T_1",
    preconditions=("M < N", "M = Omega(K ln K)"),
    measure=measure_forgetting,
    summary="Forgetting bound with clusters (M < N).",
    notes="Eq. (21) is garbled beyond a unique reading; the entry says why instead of inventing a version.",
))
