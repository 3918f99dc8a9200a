"""Figures 4 and 5 (Appendix A.4): the termination threshold Gamma and load balance.

Statements (Appendix A.4), with lambda = sigma0^1.25, sigma0 = 0.4, M = 5,
N = 6, K = 3 clusters W1 = {1, 4}, W2 = {2, 5}, W3 = {3, 6}:

* Figure 4: if the gate stops with Gamma > lambda (Gamma in {sigma0^0.75,
  sigma0}), the small routing noise cannot change the router's choice inside a
  task cluster, so load within an expert set is unbalanced; with
  Gamma <= lambda (Gamma in {sigma0^1.25, sigma0^1.5}) the noise balances it.
* Figure 5 (N = 30, 100 runs): forgetting is robust to Gamma; generalization
  error is smaller for Gamma in {sigma0^1.25, sigma0^1.5} than in
  {sigma0^0.75, sigma0}.

Measured quantities, per replicate, over the rounds after the gate froze (or
the second half of the run if it never froze): for each task cluster, the share
of its tasks taken by its most used expert ("top share"; 1 = one expert does
everything, 1/|set| = perfectly balanced), averaged over clusters.  All Gamma
values share the same draws (paired comparisons).  Unstated and chosen: T =
2000, eta = 0.5, alpha = 0.5 (as Figure 2), v_n = w_n, M = 5 and K = 3 for
Figure 5 as for Figure 4.
"""

from __future__ import annotations

import math

import numpy as np

from moecl_verify.checks.claims.fig2 import INTERPRETATIONS as MOE_INTERPRETATIONS
from moecl_verify.checks.context import Context
from moecl_verify.checks.model import HorizonTest, Interpretation, Measurement
from moecl_verify.checks.registry import Claim, register
from moecl_verify.checks.stats import MeanTest
from moecl_verify.numeric.moe import MoEConfig, simulate_moe
from moecl_verify.numeric.pool import make_clustered_pool
from moecl_verify.numeric.seeding import generator_for

SIGMA0 = 0.4
GAMMAS = {"sigma0^0.75": SIGMA0**0.75, "sigma0": SIGMA0, "sigma0^1.25": SIGMA0**1.25, "sigma0^1.5": SIGMA0**1.5}
LARGE = ("sigma0^0.75", "sigma0")  # Gamma > lambda
SMALL = ("sigma0^1.25", "sigma0^1.5")  # Gamma <= lambda
BASE = dict(T=2000, M=5, K=3, d=10, s=6, sigma0=SIGMA0, sigma_t=0.1, eta=0.5, alpha=0.5, lam=SIGMA0**1.25)
FIG4_N, FIG5_N = 6, 30
REPLICATES = {"smoke": 20, "standard": 100, "full": 400}
EQUIVALENCE = 0.1  # "robust": within 10% of the small-Gamma level

INTERPRETATIONS = MOE_INTERPRETATIONS + (
    Interpretation(
        id="fig45.unstated",
        location="Appendix A.4",
        issue="T, eta, alpha for Figures 4-5 and M, K for Figure 5 are not given.",
        choice="T = 2000, eta = 0.5, alpha = 0.5 (Figure 2's values); Figure 5 keeps M = 5 and K = 3 clusters "
        "(task n in cluster n mod 3) with N = 30.",
    ),
    Interpretation(
        id="fig45.balance_measure",
        location="Appendix A.4, Figure 4",
        issue="'Balanced load within an expert set' is not quantified.",
        choice="Top share: per task cluster, the fraction of its post-freeze tasks taken by its most used "
        "expert, averaged over clusters (second half of the run when the gate never froze).",
    ),
)


def _run(ctx: Context, N: int, gamma_name: str):
    def compute():
        pool = make_clustered_pool(
            generator_for(ctx.seed, "fig45", "pool", N), N=N, K=BASE["K"], d=BASE["d"], sigma0=BASE["sigma0"]
        )
        cfg = MoEConfig(M=BASE["M"], eta=BASE["eta"], alpha=BASE["alpha"], lam=BASE["lam"], Gamma=GAMMAS[gamma_name])
        return simulate_moe(
            pool,
            cfg,
            R=REPLICATES[ctx.budget.name],
            T=BASE["T"],
            s=BASE["s"],
            sigma_t=BASE["sigma_t"],
            seed=ctx.seed,
            key=("fig45", N),  # the same draws for every Gamma: paired comparisons
            chunk_size=100,
            progress=lambda done, total: ctx.progress(f"fig{4 if N == FIG4_N else 5} Gamma={gamma_name}", done, total),
            runner=ctx.runner,
        )

    return ctx.shared(("fig45", N, gamma_name, ctx.seed, ctx.budget.name), compute)


def top_share(run, K: int) -> np.ndarray:
    """Per replicate: mean over clusters of the most used expert's share of that cluster's late tasks."""
    R, T = run.tasks.shape
    out = np.empty(R)
    for r in range(R):
        start = run.freeze_round[r] if run.freeze_round[r] > 0 else T // 2
        tasks = run.tasks[r, start:] % K
        chosen = run.chosen[r, start:]
        shares = []
        for k in range(K):
            picked = chosen[tasks == k]
            if picked.size:
                shares.append(np.bincount(picked, minlength=run.loads.shape[1]).max() / picked.size)
        out[r] = np.mean(shares) if shares else np.nan
    return out


def _paired(label: str, a: np.ndarray, b: np.ndarray, extra: np.ndarray | None = None) -> HorizonTest:
    diff = a - b if extra is None else a - b + extra
    diff = diff[np.isfinite(diff)]
    se = float(diff.std(ddof=1) / math.sqrt(diff.size))
    return HorizonTest(label, MeanTest(expected=0.0, observed=float(diff.mean()), stderr=se, n=int(diff.size)))


def _freeze_table(ctx: Context, N: int) -> list[dict]:
    """When the gate froze, per Gamma: the reason a Gamma comparison can or cannot show an effect."""
    rows = []
    T1 = MoEConfig(M=BASE["M"], eta=BASE["eta"], alpha=0, lam=0, Gamma=0).exploration_rounds
    for name in GAMMAS:
        fr = _run(ctx, N, name).freeze_round
        rows.append(
            {
                "Gamma": name,
                "T1": T1,
                "frozen_fraction": float((fr > 0).mean()),
                "median_freeze_round": float(np.median(fr[fr > 0])) if (fr > 0).any() else float("nan"),
            }
        )
    return rows


def _measurement(ctx, claim_id, source, criterion, tests, N) -> Measurement:
    config = dict(BASE)
    config.update(
        N=N, Gammas=GAMMAS, replicates=REPLICATES[ctx.budget.name], seed=ctx.seed, freeze=_freeze_table(ctx, N)
    )
    return Measurement(
        claim_id=claim_id,
        source=source,
        kind="qualitative",
        form="stated",
        config=config,
        tests=tuple(tests),
        scale=1.0,
        formula=criterion,
        rule="positive",
        horizon_name="case",
    )


def measure_fig4_balance(ctx: Context) -> list[Measurement]:
    shares = {g: top_share(_run(ctx, FIG4_N, g), BASE["K"]) for g in GAMMAS}
    tests = [_paired(f"{big} vs {small}", shares[big], shares[small]) for big, small in zip(LARGE, SMALL)]
    criterion = (
        "Gamma <= lambda balances load within expert sets better than Gamma > lambda: Delta = E[top share | "
        "Gamma > lambda] - E[top share | Gamma <= lambda] (paired draws)"
    )
    return [_measurement(ctx, "fig4.balance", "Appendix A.4, Figure 4", criterion, tests, FIG4_N)]


def _final(run, metric):
    return getattr(run, metric)[:, -1]


def measure_fig5_generalization(ctx: Context) -> list[Measurement]:
    g = {name: _final(_run(ctx, FIG5_N, name), "generalization") for name in GAMMAS}
    tests = [_paired(f"{big} vs {small}", g[big], g[small]) for big in LARGE for small in SMALL]
    criterion = "generalization error is smaller with Gamma <= lambda: Delta = E[G_T | Gamma large] - E[G_T | Gamma small] (paired)"
    return [_measurement(ctx, "fig5.generalization", "Appendix A.4, Figure 5(b)", criterion, tests, FIG5_N)]


def measure_fig5_forgetting(ctx: Context) -> list[Measurement]:
    f = {name: _final(_run(ctx, FIG5_N, name), "forgetting") for name in GAMMAS}
    ref = f["sigma0^1.5"]
    tests = []
    for name in ("sigma0^0.75", "sigma0", "sigma0^1.25"):
        tests.append(_paired(f"{name} not above", ref, f[name], EQUIVALENCE * ref))
        tests.append(_paired(f"{name} not below", f[name], ref, EQUIVALENCE * ref))
    criterion = (
        f"forgetting is robust to Gamma: within {EQUIVALENCE:.0%} of its value at Gamma = sigma0^1.5 for every Gamma "
        "(two one-sided margins per Gamma, paired)"
    )
    return [_measurement(ctx, "fig5.forgetting_robust", "Appendix A.4, Figure 5(a)", criterion, tests, FIG5_N)]


def fig4_routing(ctx: Context) -> dict:
    """Task and routed expert per round of replicate 0, per Gamma (Figure 4's picture)."""
    out = {"T": BASE["T"], "M": BASE["M"], "N": FIG4_N, "panels": []}
    for name in GAMMAS:
        run = _run(ctx, FIG4_N, name)
        out["panels"].append(
            {
                "Gamma": name,
                "freeze_round": int(run.freeze_round[0]),
                "tasks": run.tasks[0].tolist(),
                "chosen": run.chosen[0].tolist(),
            }
        )
    return out


def fig5_levels(ctx: Context) -> dict:
    rows = []
    for name in GAMMAS:
        run = _run(ctx, FIG5_N, name)
        row = {"Gamma": name, "value": GAMMAS[name]}
        for metric in ("forgetting", "generalization"):
            x = _final(run, metric)
            row[metric] = float(x.mean())
            row[metric + "_stderr"] = float(x.std(ddof=1) / math.sqrt(x.size))
        rows.append(row)
    return {"rows": rows}


for claim_id, measure, summary, source, artifacts in (
    ("fig4.balance", measure_fig4_balance, "Gamma <= lambda balances load within expert sets.",
     "Appendix A.4, Figure 4", (("fig4_routing", fig4_routing),)),
    ("fig5.generalization", measure_fig5_generalization, "Balanced load (Gamma <= lambda) lowers generalization error.",
     "Appendix A.4, Figure 5(b)", (("fig5_levels", fig5_levels),)),
    ("fig5.forgetting_robust", measure_fig5_forgetting, "Forgetting is robust to the threshold Gamma.",
     "Appendix A.4, Figure 5(a)", ()),
):
    register(
        Claim(
            id=claim_id,
            source=source,
            kind="qualitative",
            statement=r"\text{" + summary + "}",
            preconditions=("Algorithm 1 with termination", "lambda = sigma0^1.25, M = 5, K = 3"),
            measure=measure,
            interpretations=INTERPRETATIONS,
            summary=summary,
            notes="Qualitative statement about an Appendix A.4 figure, decided by the criterion in the evidence.",
            artifacts=artifacts,
        )
    )
