"""Figure 3 (Section 6 'Real-data validation'; details Appendix A.3): the insights of the linear model on
deep networks.

The paper: "we extend Algorithm 1 and the insights from the linear model to DNNs by conducting experiments
on the MNIST dataset ... N = 3 and M in {1, 4, 7} ... Figure 3 shows that our theoretical insights from
the linear model also hold for DNNs, in terms of the impact of MoE and early termination on CL
performance."  Read against Figure 2's statements, Figure 3 shows:

* MoE (M = 4, 7, with termination) ends below the single network (M = 1) in forgetting and
  generalization error (``fig3.moe_beats_single``);
* with termination, forgetting and error rise and then settle (``fig3.termination_converges``);
* without termination they end higher and keep moving (``fig3.no_termination_higher``);
* M = 7 is no better than M = 4 (``fig3.more_experts_no_gain``).

The simulations are in :mod:`packs.moe_cl.experiments.fig3_runs` (JAX networks on the CPU, scaled down; every
reduction is a listed reading).  Each statement becomes a criterion "Delta > 0 in every case"
(``Measurement``, rule ``positive``) on per-replicate differences at the final round T, paired across M
and termination (they share every draw), decided by the run's error control (:mod:`checks.decide`).
Replicates are few, so each margin's standard error is the t-equivalent one (Student's t with R - 1
degrees of freedom, expressed as the standard error the run's normal test needs).
The tasks are not described in the paper: each of two task definitions is its own entry (part "tasks:
mirrors", "tasks: split"), so a verdict that depends on the definition shows as two verdicts.  Every
entry names the data set it was computed on and records the epochs check (final errors at the chosen
and at twice the epochs per round on one configuration).  Without the optional ``dnn`` extra (JAX, scikit-learn) the
entries are ``not_checkable`` and say how to install it.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as sps

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.experiments import fig3_runs
from moecl_verify.packs.moe_cl.experiments.fig3_runs import DEFINITIONS, INTERPRETATIONS, MOE_EXPERTS
from moecl_verify.checks.model import exact_result
from moecl_verify.checks.kinds.mean import HorizonTest, Measurement
from moecl_verify.checks.registry import Claim, register
from moecl_verify.checks.stats import MeanTest

SOURCE = "Section 6, Figure 3; Appendix A.3"
NEAR_ZERO = 0.1  # "settles": the final quarter climbs by less than 10% of the curve's peak
NOT_BETTER_MARGIN = 0.05  # "no better": within 5% of the single network's level
METRICS = (("forgetting", "F"), ("generalization", "G"))


def final(x: np.ndarray) -> np.ndarray:
    return x[:, -1]


def first_index(metric: str) -> int:
    """Round index (0-based) of the first value of a curve: F_t starts at t = 2, G_t at t = 1."""
    return 1 if metric == "forgetting" else 0


def rise(x: np.ndarray, metric: str) -> np.ndarray:
    """Per replicate: the curve's highest later value less its first value (> 0: it rose)."""
    k = first_index(metric)
    return np.max(x[:, k + 1:], axis=1) - x[:, k]


def climb(x: np.ndarray) -> np.ndarray:
    """Per replicate: the total of the curve's upward steps over the final quarter of rounds (0 for a curve
    that only falls or stays; large for one that keeps jumping up)."""
    T = x.shape[1]
    steps = np.diff(x[:, T - T // 4 - 1:], axis=1)
    return np.sum(np.maximum(steps, 0.0), axis=1)


def peak(x: np.ndarray, metric: str) -> np.ndarray:
    return np.max(x[:, first_index(metric):], axis=1)


def t_equivalent_stderr(mean: float, stderr: float, n: int) -> float:
    """The standard error that makes the run's normal test of ``mean`` as strict as Student's t-test with
    n - 1 degrees of freedom: mean / z, where z has the normal tail probability of t = mean / stderr.

    The network runs allow only a few replicates, and with them the sample standard error is itself
    uncertain: a normal test of the plain ratio would reject far too often (with n = 2, t = 30 has a
    one-sided p of 0.01, not 1e-197).  Under normal replicate values this is exact."""
    if not (np.isfinite(mean) and np.isfinite(stderr)) or stderr == 0.0 or mean == 0.0:
        return stderr
    tail = float(sps.t.sf(abs(mean) / stderr, df=n - 1))
    z = float(sps.norm.isf(tail)) if tail > 0.0 else math.inf
    return abs(mean) / z if z > 0.0 else math.inf


def paired(label: str, d: np.ndarray) -> HorizonTest:
    """Delta = E[d] for per-replicate values d (paired across configurations: same draws), with the
    t-equivalent standard error (:func:`t_equivalent_stderr`).  Replicates whose value is not finite (a
    network whose training diverged in one of the compared runs, listed in the entry's ``diverged``) are
    left out; with fewer than two left the case cannot be decided (infinite standard error)."""
    d = np.asarray(d, dtype=float)
    d = d[np.isfinite(d)]
    if d.size < 2:
        return HorizonTest(label, MeanTest(expected=0.0, observed=float(d.mean()) if d.size else 0.0,
                                           stderr=math.inf, n=int(d.size)))
    mean, se = float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size))
    return HorizonTest(label, MeanTest(expected=0.0, observed=mean, stderr=t_equivalent_stderr(mean, se, d.size),
                                       n=int(d.size)))


def diverged(runs: dict) -> dict:
    """Replicates (indices) whose forgetting or error curve is not finite somewhere, per run: a network whose
    SGD diverged at the stated learning rate.  Only runs with such replicates are listed."""
    out = {}
    for M, pair in runs.items():
        for key, name in (("on", "with termination"), ("off", "without termination")):
            if M == 1 and key == "off":
                continue
            x = pair[key]
            bad = ~(np.isfinite(x["generalization"]).all(axis=1) & np.isfinite(x["forgetting"][:, 1:]).all(axis=1))
            if bad.any():
                out[f"M={M}, {name}"] = np.flatnonzero(bad).tolist()
    return out


def _runs(ctx: Context, definition: str) -> dict:
    return {M: fig3_runs.run(ctx, definition, M) for M in fig3_runs.EXPERTS}


def _config(ctx: Context, definition: str, runs: dict, **extra) -> dict:
    cfg = fig3_runs.setting(ctx, definition)
    cfg["freeze_round_mean"] = {str(M): float(np.mean(runs[M]["on"]["freeze_round"])) for M in MOE_EXPERTS}
    cfg["never_frozen"] = {str(M): int(np.sum(runs[M]["on"]["freeze_round"] == 0)) for M in MOE_EXPERTS}
    cfg["diverged"] = diverged(runs)
    cfg["epoch_check"] = [{k: v for k, v in check.items() if k != "curves"} for check in fig3_runs.epoch_check(ctx)]
    cfg.update(extra)
    return cfg


def _measurement(ctx, claim_id: str, definition: str, criterion: str, tests: list, runs: dict) -> Measurement:
    data = fig3_runs.data(ctx).name
    return Measurement(
        claim_id=claim_id,
        source=SOURCE,
        kind="qualitative",
        form="stated",
        config=_config(ctx, definition, runs),
        tests=tuple(tests),
        scale=1.0,
        formula=f"{criterion} [tasks: {definition}; data: {data}; {fig3_runs.rounds(ctx)} rounds, "
                f"{fig3_runs.EPOCHS} epochs per round, on {fig3_runs.engine_record().get('device')}; {epochs_verdict(ctx)}]",
        rule="positive",
        horizon_name="case",
    )


def epochs_verdict(ctx: Context) -> str:
    """The epochs check in a few words, for the entry's criterion: each checked definition's status."""
    checks = fig3_runs.epoch_check(ctx)
    return "epochs check ({} vs {} epochs): {}".format(
        fig3_runs.EPOCHS, 2 * fig3_runs.EPOCHS, ", ".join(f"{c['definition']} {c['status']}" for c in checks))


def _unavailable(ctx: Context, claim_id: str, criterion: str) -> list | None:
    """One not-checkable entry per task definition, saying what to install, when the networks' libraries are
    missing; None when they are there."""
    missing = fig3_runs.missing_libraries(ctx)
    if not missing:
        return None
    return [exact_result(claim_id, SOURCE, "qualitative", f"tasks: {definition}", "not_checkable",
                         fig3_runs.unavailable_reason(missing), criterion, definition=definition,
                         install=fig3_runs.INSTALL)
            for definition in DEFINITIONS]


def measure_moe_beats_single(ctx: Context) -> list:
    criterion = "MoE with termination ends below the single network: Delta = E[X_T | M=1] - E[X_T | M] (paired)"
    out = _unavailable(ctx, "fig3.moe_beats_single", criterion)
    if out is not None:
        return out
    out = []
    for definition in DEFINITIONS:
        runs = _runs(ctx, definition)
        tests = [paired(f"{short}, M={M}", final(runs[1]["on"][metric]) - final(runs[M]["on"][metric]))
                 for metric, short in METRICS for M in MOE_EXPERTS]
        out.append(_measurement(ctx, "fig3.moe_beats_single", definition, criterion, tests, runs))
    return out


def measure_converges(ctx: Context) -> list:
    criterion = (
        "with termination the curves rise and then settle: 'rises' Delta = E[max_(t > t0) X_t - X_t0] (t0 the "
        f"first round of the curve); 'settles' Delta = {NEAR_ZERO:g} E[max_t X_t] - E[upward steps of X_t over "
        "the final quarter of rounds]"
    )
    out = _unavailable(ctx, "fig3.termination_converges", criterion)
    if out is not None:
        return out
    out = []
    for definition in DEFINITIONS:
        runs = _runs(ctx, definition)
        tests = []
        for metric, short in METRICS:
            for M in MOE_EXPERTS:
                x = runs[M]["on"][metric]
                tests.append(paired(f"{short}, M={M} rises", rise(x, metric)))
                tests.append(paired(f"{short}, M={M} settles", NEAR_ZERO * peak(x, metric) - climb(x)))
        out.append(_measurement(ctx, "fig3.termination_converges", definition, criterion, tests, runs))
    return out


def measure_no_termination(ctx: Context) -> list:
    criterion = (
        "without termination the curves end higher and keep climbing: 'ends higher' Delta = E[X_T | no "
        "termination] - E[X_T | termination]; 'climbs more' Delta = E[upward steps over the final quarter | no "
        "termination] - E[same | termination] (paired draws)"
    )
    out = _unavailable(ctx, "fig3.no_termination_higher", criterion)
    if out is not None:
        return out
    out = []
    for definition in DEFINITIONS:
        runs = _runs(ctx, definition)
        tests = []
        for metric, short in METRICS:
            for M in MOE_EXPERTS:
                on, off = runs[M]["on"][metric], runs[M]["off"][metric]
                tests.append(paired(f"{short}, M={M} ends higher", final(off) - final(on)))
                tests.append(paired(f"{short}, M={M} climbs more", climb(off) - climb(on)))
        out.append(_measurement(ctx, "fig3.no_termination_higher", definition, criterion, tests, runs))
    return out


def measure_more_experts(ctx: Context) -> list:
    criterion = (
        "M = 7 is no better than M = 4: Delta = E[X_T | M=7] - E[X_T | M=4] + "
        f"{NOT_BETTER_MARGIN:g} E[X_T | M=1] (paired, with termination)"
    )
    out = _unavailable(ctx, "fig3.more_experts_no_gain", criterion)
    if out is not None:
        return out
    out = []
    for definition in DEFINITIONS:
        runs = _runs(ctx, definition)
        tests = [paired(f"{short} not better", final(runs[7]["on"][metric]) - final(runs[4]["on"][metric])
                        + NOT_BETTER_MARGIN * final(runs[1]["on"][metric]))
                 for metric, short in METRICS]
        out.append(_measurement(ctx, "fig3.more_experts_no_gain", definition, criterion, tests, runs))
    return out


def _series(run: dict, M: int, termination: bool) -> dict:
    entry = {"M": M, "termination": termination,
             "freeze_round_mean": float(np.mean(run["freeze_round"])) if M > 1 else None}
    for metric, _ in METRICS:
        x = np.where(np.isfinite(run[metric]), run[metric], np.nan)  # diverged replicates leave their rounds
        n = np.sum(np.isfinite(x), axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.nansum(x, axis=0) / np.where(n > 0, n, np.nan)
            se = np.sqrt(np.nansum((x - mean) ** 2, axis=0) / np.where(n > 1, n - 1, np.nan)) / np.sqrt(n)
        entry[metric] = [None if not np.isfinite(v) else float(v) for v in mean]
        entry[metric + "_stderr"] = [None if not np.isfinite(v) else float(v) for v in se]
    return entry


def curves(ctx: Context) -> dict:
    """Mean and standard error of F_t and G_t per round, per task definition, M and termination (for the
    figure; M = 1 appears in both the with- and without-termination panels, as it has no gate)."""
    if fig3_runs.missing_libraries(ctx):
        return {"available": False, "reason": fig3_runs.unavailable_reason(fig3_runs.missing_libraries(ctx))}
    out = {"available": True, "data": fig3_runs.data(ctx).name, "rounds": list(range(1, fig3_runs.rounds(ctx) + 1)),
           "epochs": fig3_runs.EPOCHS, "replicates": ctx.sizes.fig3_replicates,
           "epoch_check": fig3_runs.epoch_check(ctx), "definitions": []}
    for definition in DEFINITIONS:
        runs = _runs(ctx, definition)
        series = [_series(runs[M]["on" if termination else "off"], M, termination)
                  for termination in (True, False) for M in fig3_runs.EXPERTS]
        out["definitions"].append({"definition": definition, "series": series})
    return out


NOTES = (
    "Qualitative statements about Figure 3, each decided by the criterion in the evidence on paired replicates "
    "at the final round. The networks and the data are scaled down to run on two CPU cores (every reduction is "
    "a reading below); each task definition is its own entry, and every entry names its data set and records "
    f"the epochs check (epoch_check: errors at {fig3_runs.EPOCHS} and {2 * fig3_runs.EPOCHS} epochs per round on "
    f"M = {fig3_runs.CHECK_M} with termination, same replicates, and whether the final values settled within "
    f"{fig3_runs.SETTLED_WITHIN:.0%}). Needs the optional extra: {fig3_runs.INSTALL}."
)
for claim_id, measure, summary in (
    ("fig3.moe_beats_single", measure_moe_beats_single, "Deep MoE ends below a single network."),
    ("fig3.termination_converges", measure_converges, "With termination, deep-MoE errors rise and then settle."),
    ("fig3.no_termination_higher", measure_no_termination, "Without termination, deep-MoE errors end higher and "
                                                           "keep moving."),
    ("fig3.more_experts_no_gain", measure_more_experts, "M = 7 deep experts are no better than M = 4."),
):
    register(__name__, 
        Claim(
            id=claim_id,
            source=SOURCE,
            kind="qualitative",
            statement=r"\text{" + summary + "}",
            preconditions=("Algorithm 1 with network experts", "Figure 3 configuration (Appendix A.3)"),
            measure=measure,
            interpretations=INTERPRETATIONS,
            summary=summary,
            notes=NOTES,
            artifacts=(("fig3_curves", curves),) if claim_id == "fig3.termination_converges" else (),
            shares=("fig3",),
        )
    )
