"""Figure 2 (Section 6; details Appendix A.2): early termination, synthetic data.

The paper's statements about Figure 2 (Section 6):

* with termination, forgetting and generalization error of every MoE model
  first rise (expert exploration) and then converge to almost zero;
* without termination, learning is poor with large oscillations;
* MoE improves markedly on the single expert (M = 1);
* M = 20 converges later than M = 10 without learning better.

Configuration as stated: T = 2000, N = 7, K = 3, M in {1, 5, 10, 20},
sigma0 = 0.4, sigma_t = 0.1, d = 10, s = 6, eta = 0.5, alpha = 0.5,
lambda = 0.3.  Unstated, with our defaults (report interpretations): Gamma =
sigma0^1.25 (Algorithm 1's scaling with constant 1), v_n = 1.0 * w_n, beta_t
~ Uniform(0, 1], clustered pool with intra-cluster offsets sigma0^1.5.  The
simulations are in :mod:`packs.moe_cl.experiments.fig2_runs` (shared with Theorems
1-2 at this configuration and with Figures 4-5's readings).

Each statement becomes a criterion "Delta > 0 in every case" on Monte Carlo
means over replicates at the final round T (``Measurement``, rule
``positive``), decided by the run's error control (:mod:`checks.decide`).

Reproduction sweep.  The scale c of the feature signals (v_n = c w_n) is not
given and decides whether the gate can separate tasks, so the convergence
criterion is measured at every c of ``SIGNAL_SCALES``, each its own entry with
c as its hidden constant (config ``hidden_constant``); the entry at c = 1 is
the default reading.  The decision module reconciles them
(:func:`checks.scaling.reconcile_entries`): a refutation at one c that another
c confirms becomes inconclusive, since the paper leaves c free.  The noise
level sigma_t is stated (0.1); the same criterion at the other noise levels of
``NOISE_LEVELS`` are ``sensitivity`` entries, decided and reported but never a
verdict on the statement.  Every grid point replays the same draws (common
random numbers: :func:`packs.moe_cl.experiments.fig2_runs.run`).  One more
sensitivity entry per pool asks, with a direction fixed before the run,
whether the errors depend on c at all (E[X_T | M = 10] at c = 1 against the
largest c).  Where the criterion holds at some c and fails at others, or fails
everywhere while the errors move with c, the failure is a reproduction
finding (slip class "unstated assumption"), not a false statement.

Specializing regime.  The same three criteria of Figure 2 (near zero with
termination, higher without, MoE beats one expert) are also measured, as
sensitivity entries, in the regime where the paper's gate specializes
(:data:`packs.moe_cl.experiments.open_questions.REGIMES`, ``specializing``), so
the report can say which of the figure's conclusions survive there.

The statements are made for the setting, not for one draw of the ground
truths, so each is measured on several task pools drawn independently of the
replicate seed (:mod:`packs.moe_cl.experiments.pools`), one entry per pool (its key's
pool k; config ``pool`` and ``pool_seed``): a refutation names its pool, a
confirmation holds on the pools tried.  The curves artifact shows pool 0.
"""

from __future__ import annotations

import math

import numpy as np

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.entries import ablations, effects
from moecl_verify.packs.moe_cl.experiments import fig2_runs
from moecl_verify.packs.moe_cl.experiments.fig2_runs import FIG2, INTERPRETATIONS
from moecl_verify.packs.moe_cl.experiments import specializing
from moecl_verify.packs.moe_cl.experiments.pools import POOL_NOTE
from moecl_verify.packs.moe_cl.experiments.pools import POOL_SEED, pool_indices
from moecl_verify.checks.model import ClaimResult, Slip, keys_of
from moecl_verify.packs.moe_cl import texts
from moecl_verify.checks.kinds.mean import HorizonTest, Measurement
from moecl_verify.checks.registry import Claim, register
from moecl_verify.checks.stats import MeanTest

EXPERTS = (1, 5, 10, 20)
MOE_EXPERTS = (5, 10, 20)
# The reproduction sweep: v_n = c w_n for c in SIGNAL_SCALES (2.5 = 1/sigma0 makes ||v_n||_inf = O(1) as
# Section 3.2 requires), and sigma_t in NOISE_LEVELS around the stated 0.1.
SIGNAL_SCALES = (1.0, 2.5, 5.0, 10.0)
NOISE_LEVELS = (0.05, fig2_runs.FIG2["sigma_t"], 0.2)
SWEEP_M = 10  # the number of experts the dependence entry and the sweep figure read
SENSITIVITY = "sensitivity"
DEPENDENCE_PART = "sensitivity: the errors depend on the scale of v_n"
NEAR_ZERO = 0.1  # "almost zero": below 10% of the single expert's level at T
NOT_BETTER_MARGIN = 0.05  # "no better": within 5% of the single expert's level


def _final(run, metric: str) -> np.ndarray:
    return getattr(run, metric)[:, -1]


def _mean_se(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def _margin(label, terms) -> HorizonTest:
    """Delta = sum_k c_k E[X_k] over independent samples X_k; terms = [(c_k, samples_k)]."""
    est = sum(c * float(np.mean(x)) for c, x in terms)
    var = sum(c * c * float(np.var(x, ddof=1)) / x.size for c, x in terms)
    n = min(x.size for _, x in terms)
    return HorizonTest(label, MeanTest(expected=0.0, observed=est, stderr=math.sqrt(var), n=n))


def _paired_margin(label, a: np.ndarray, b: np.ndarray) -> HorizonTest:
    """Delta = E[a - b] for paired samples (same draws)."""
    diff = a - b
    est, se = _mean_se(diff)
    return HorizonTest(label, MeanTest(expected=0.0, observed=est, stderr=se, n=diff.size))


def _common_config(ctx: Context, pool: int, **extra) -> dict:
    cfg = {k: v for k, v in FIG2.items()}
    cfg.update(pool=pool, pool_seed=POOL_SEED, replicates=ctx.sizes.fig2_replicates,
               seed=ctx.seed, experts=list(EXPERTS))
    cfg.update(extra)
    return cfg


def _measurement(ctx, claim_id, criterion, tests, pool: int, **extra) -> Measurement:
    return Measurement(
        claim_id=claim_id,
        source="Section 6, Figure 2; Appendix A.2",
        kind="qualitative",
        form="stated",
        config=_common_config(ctx, pool, **extra),
        tests=tuple(tests),
        scale=1.0,
        formula=f"{criterion} [task pool {pool}, pool seed {POOL_SEED}]",
        rule="positive",
        horizon_name="case",
    )


def _noise_part(sigma_t: float) -> str:
    return f"sensitivity, reproduction sweep off the stated sigma_t: sigma_t = {sigma_t:g}"


def _is_stated(sigma_t: float) -> bool:
    return sigma_t == FIG2["sigma_t"]


# The criteria below measure both errors, F_T and G_T, each a case of its own ("F, M=10"): X names the case's.
X_NOTE = " (X = F or G, as each case names)"

CONVERGES = (
    f"with termination, E[F_T] and E[G_T] at T = {FIG2['T']} fall below {NEAR_ZERO:g} x the single expert's "
    f"('almost zero'): Delta = {NEAR_ZERO:g} E[X_T | M=1] - E[X_T | M]{X_NOTE}"
)


def converges_tests(ctx: Context, pool: int, scale: float, sigma_t: float,
                    experts: tuple[int, ...] = MOE_EXPERTS) -> list[HorizonTest]:
    """The convergence criterion's cases at one grid point (F and G for each M of ``experts``: every M of the
    figure at the stated sigma_t, where the entries are the statement's)."""
    tests = []
    for metric, short in (("forgetting", "F"), ("generalization", "G")):
        single = _final(fig2_runs.run(ctx, 1, True, scale, pool=pool, sigma_t=sigma_t), metric)
        for M in experts:
            moe = _final(fig2_runs.run(ctx, M, True, scale, pool=pool, sigma_t=sigma_t), metric)
            tests.append(_margin(f"{short}, M={M}", [(NEAR_ZERO, single), (-1.0, moe)]))
    return tests


def measure_converges(ctx: Context) -> list[Measurement]:
    """Per pool: the criterion at every (sigma_t, c) of the sweep (the stated sigma_t first, c = 1 first), the
    dependence on c, then the specializing regime."""
    out = []
    for k in pool_indices(ctx.sizes):
        for sigma_t in sorted(NOISE_LEVELS, key=lambda x: (not _is_stated(x), x)):
            for scale in SIGNAL_SCALES:
                extra = dict(signal_scale=scale, sigma_t=sigma_t, hidden_constant=scale)
                # off the stated sigma_t the entries only show the sensitivity: M = SWEEP_M, as the sweep figure
                experts = MOE_EXPERTS if _is_stated(sigma_t) else (SWEEP_M,)
                if not _is_stated(sigma_t):
                    extra.update(part=_noise_part(sigma_t), role=SENSITIVITY, experts=[1, SWEEP_M])
                elif scale == FIG2["signal_scale"]:
                    # the figure as stated, with the routing Proposition 3 describes forced (entries/ablations.py;
                    # it needs an expert set per task, M >= N)
                    near_zero = {metric: NEAR_ZERO * float(_final(fig2_runs.run(ctx, 1, True, scale, pool=k),
                                                                  metric).mean())
                                 for metric in ("forgetting", "generalization")}
                    extra["ablation"] = [a for M in MOE_EXPERTS if M >= FIG2["N"]
                                         for a in ablations.convergence(ctx, M, k, near_zero)]
                criterion = CONVERGES + f" [v_n = {scale:g} w_n, sigma_t = {sigma_t:g}]"
                out.append(_measurement(ctx, "fig2.termination_converges", criterion,
                                        converges_tests(ctx, k, scale, sigma_t, experts), k, **extra))
        out.append(_dependence(ctx, k))
        out += [_specializing_converges(ctx, k), _specializing_no_termination(ctx, k),
                _specializing_beats_single(ctx, k)]
    return out


def _dependence(ctx: Context, pool: int) -> Measurement:
    """Whether the errors move with the unstated scale c at the stated sigma_t: E[X_T | M = 10] at c = 1 minus at
    the largest c of the sweep, paired (the same draws at every c), X = F and G.  The direction (a larger signal
    separates the tasks better, so lower errors) is fixed before the run."""
    lo, hi = SIGNAL_SCALES[0], SIGNAL_SCALES[-1]
    tests = []
    for metric, short in (("forgetting", "F"), ("generalization", "G")):
        small = _final(fig2_runs.run(ctx, SWEEP_M, True, lo, pool=pool), metric)
        large = _final(fig2_runs.run(ctx, SWEEP_M, True, hi, pool=pool), metric)
        tests.append(_paired_margin(f"{short}, M={SWEEP_M}", small, large))
    criterion = (f"the errors depend on the unstated scale of v_n: Delta = E[X_T | M={SWEEP_M}, v_n = {lo:g} w_n] - "
                 f"E[X_T | M={SWEEP_M}, v_n = {hi:g} w_n] (paired draws)")
    return _measurement(ctx, "fig2.termination_converges", criterion, tests, pool, part=DEPENDENCE_PART,
                        role=SENSITIVITY, scales=[lo, hi])


def sweep(ctx: Context) -> dict:
    """The reproduction sweep's data for its figure: E[F_T] and E[G_T] at M = SWEEP_M with and without
    termination at every (sigma_t, c), over every replicate of every pool of the design (mean and s.e.), and the
    'almost zero' level (NEAR_ZERO x the single expert's) at each point."""
    pools = list(pool_indices(ctx.sizes))
    rows = []
    for sigma_t in NOISE_LEVELS:
        for scale in SIGNAL_SCALES:
            row = {"sigma_t": sigma_t, "signal_scale": scale, "stated": _is_stated(sigma_t)}
            for metric in ("forgetting", "generalization"):
                single = np.concatenate([_final(fig2_runs.run(ctx, 1, True, scale, pool=k, sigma_t=sigma_t), metric)
                                         for k in pools])
                row[f"{metric}_near_zero"] = NEAR_ZERO * float(single.mean())
                for termination in (True, False):
                    x = np.concatenate([_final(fig2_runs.run(ctx, SWEEP_M, termination, scale, pool=k,
                                                             sigma_t=sigma_t), metric) for k in pools])
                    name = f"{metric}_{'term' if termination else 'no_term'}"
                    row[name], row[name + "_stderr"] = _mean_se(x)
            rows.append(row)
    return {"M": SWEEP_M, "pools": pools, "pool_seed": POOL_SEED, "near_zero": NEAR_ZERO,
            "stated_sigma_t": FIG2["sigma_t"], "rows": rows}


# Figure 2's three conclusions read in the specializing regime, as sensitivity entries of the convergence claim
# (whose reproduction finding says which of them survive where the gate specializes; a slip reads its own
# claim's entries only).
SPECIALIZING = {
    "fig2.termination_converges": "sensitivity, specializing regime: errors near zero with termination",
    "fig2.no_termination_higher": "sensitivity, specializing regime: errors higher without termination",
    "fig2.moe_beats_single": "sensitivity, specializing regime: MoE beats one expert",
}


def _specializing_measurement(conclusion: str, criterion: str, tests, ctx: Context, pool: int) -> Measurement:
    """A sensitivity entry of the convergence claim: the criterion of Figure 2's claim ``conclusion`` in the regime
    where the gate specializes (not Figure 2's configuration, so never a verdict on the statement)."""
    r = specializing.REGIME
    errors = {}
    for metric, name in (("forgetting", "F_T"), ("generalization", "G_T")):
        errors[name] = {label: float(_final(specializing.run(ctx, M, term, pool), metric).mean())
                        for label, M, term in (("one expert", 1, True), ("with termination", r.M, True),
                                               ("without termination", r.M, False))}
    config = {"part": SPECIALIZING[conclusion], "role": SENSITIVITY, "conclusion": conclusion, "errors": errors,
              "near_zero": NEAR_ZERO, "pool": pool, "pool_seed": POOL_SEED,
              "replicates": ctx.sizes.fig2_replicates, "seed": ctx.seed, **r.as_config(),
              "experts": [1, r.M], "T1": r.T1}
    return Measurement(claim_id="fig2.termination_converges", source="Section 6, Figure 2; Appendix A.2",
                       kind="qualitative",
                       form="stated", config=config, tests=tuple(tests), scale=1.0,
                       formula=f"{criterion} [{specializing.describe()}; task pool {pool}, pool seed {POOL_SEED}]",
                       rule="positive", horizon_name="case")


def _specializing_converges(ctx: Context, pool: int) -> Measurement:
    M = specializing.REGIME.M
    tests = [_margin(f"{short}, M={M}", [(NEAR_ZERO, _final(specializing.run(ctx, 1, True, pool), metric)),
                                         (-1.0, _final(specializing.run(ctx, M, True, pool), metric))])
             for metric, short in (("forgetting", "F"), ("generalization", "G"))]
    return _specializing_measurement("fig2.termination_converges", CONVERGES.replace(f"T = {FIG2['T']}", "T"),
                                     tests, ctx, pool)


def _specializing_no_termination(ctx: Context, pool: int) -> Measurement:
    M = specializing.REGIME.M
    tests = [_paired_margin(f"{short}, M={M}", _final(specializing.run(ctx, M, False, pool), metric),
                            _final(specializing.run(ctx, M, True, pool), metric))
             for metric, short in (("forgetting", "F"), ("generalization", "G"))]
    criterion = ("without termination the final errors stay higher: Delta = E[X_T | no termination] - "
                 "E[X_T | termination]" + X_NOTE + " (paired draws)")
    return _specializing_measurement("fig2.no_termination_higher", criterion, tests, ctx, pool)


def _specializing_beats_single(ctx: Context, pool: int) -> Measurement:
    M = specializing.REGIME.M
    tests = [_margin(f"{short}, M={M}", [(1.0, _final(specializing.run(ctx, 1, True, pool), metric)),
                                         (-1.0, _final(specializing.run(ctx, M, True, pool), metric))])
             for metric, short in (("forgetting", "F"), ("generalization", "G"))]
    criterion = "MoE with termination beats one expert at T: Delta = E[X_T | M=1] - E[X_T | M]" + X_NOTE
    return _specializing_measurement("fig2.moe_beats_single", criterion, tests, ctx, pool)


def measure_no_termination(ctx: Context) -> list[Measurement]:
    criterion = ("without termination the final errors stay higher: Delta = E[X_T | no termination] - "
                 "E[X_T | termination]" + X_NOTE + " (paired draws)")
    out = []
    for k in pool_indices(ctx.sizes):
        tests = []
        for metric, short in (("forgetting", "F"), ("generalization", "G")):
            for M in MOE_EXPERTS:
                off = _final(fig2_runs.run(ctx, M, False, pool=k), metric)
                on = _final(fig2_runs.run(ctx, M, True, pool=k), metric)
                tests.append(_paired_margin(f"{short}, M={M}", off, on))
        out.append(_measurement(ctx, "fig2.no_termination_higher", criterion, tests, k))
    return out


def measure_moe_beats_single(ctx: Context) -> list[Measurement]:
    criterion = "MoE with termination beats one expert at T: Delta = E[X_T | M=1] - E[X_T | M]" + X_NOTE
    out = []
    for k in pool_indices(ctx.sizes):
        tests = []
        for metric, short in (("forgetting", "F"), ("generalization", "G")):
            single = _final(fig2_runs.run(ctx, 1, True, pool=k), metric)
            for M in MOE_EXPERTS:
                moe = _final(fig2_runs.run(ctx, M, True, pool=k), metric)
                tests.append(_margin(f"{short}, M={M}", [(1.0, single), (-1.0, moe)]))
        out.append(_measurement(ctx, "fig2.moe_beats_single", criterion, tests, k))
    return out


def measure_more_experts(ctx: Context) -> list[Measurement]:
    criterion = (
        "M = 20 converges later than M = 10 (Delta = E[freeze round | 20] - E[freeze round | 10]) without doing "
        f"better (Delta = E[G_T | 20] - E[G_T | 10] + {NOT_BETTER_MARGIN:g} E[G_T | 1])"
    )
    never = np.float64(FIG2["T"] + 1)
    out = []
    for k in pool_indices(ctx.sizes):
        r10, r20 = fig2_runs.run(ctx, 10, True, pool=k), fig2_runs.run(ctx, 20, True, pool=k)
        f10 = np.where(r10.freeze_round > 0, r10.freeze_round, never).astype(float)
        f20 = np.where(r20.freeze_round > 0, r20.freeze_round, never).astype(float)
        g1 = _final(fig2_runs.run(ctx, 1, True, pool=k), "generalization")
        tests = [
            _margin("gate freezes later", [(1.0, f20), (-1.0, f10)]),
            _margin(
                "G not better",
                [(1.0, _final(r20, "generalization")), (-1.0, _final(r10, "generalization")), (NOT_BETTER_MARGIN, g1)],
            ),
        ]
        out.append(_measurement(ctx, "fig2.more_experts_no_gain", criterion, tests, k))
    return out


def curves(ctx: Context) -> dict:
    """Mean and standard error of F_t and G_t per configuration on task pool 0, at the rounds
    ``fig2_runs.CURVE_ROUNDS`` (T thinned to ``CURVE_POINTS``; for the figure)."""
    idx = np.array(fig2_runs.CURVE_ROUNDS)
    out = {"pool": 0, "pool_seed": POOL_SEED, "rounds": idx.tolist(), "series": []}
    for termination in (True, False):
        for M in EXPERTS:
            run = fig2_runs.run(ctx, M, termination, pool=0)
            entry = {"M": M, "termination": termination}
            for metric in ("forgetting", "generalization"):
                x = getattr(run, metric)[:, idx - 1]
                if metric == "forgetting":
                    x = np.where(idx[None, :] >= 2, x, 0.0)  # F_1 is undefined; kept as None below
                mean = x.mean(axis=0)
                se = x.std(axis=0, ddof=1) / math.sqrt(run.R)
                if metric == "forgetting":
                    mean = np.where(idx >= 2, mean, np.nan)
                entry[metric] = [None if not np.isfinite(v) else float(v) for v in mean]
                entry[metric + "_stderr"] = [None if not np.isfinite(v) else float(v) for v in se]
            out["series"].append(entry)
    return out


def _rejected(r: ClaimResult) -> bool:
    """Whether the run's error control rejected the entry's criterion (some margin significantly negative), read
    off its recorded p-value and threshold, so also where the reconciliation across hidden constants withdrew
    the refutation."""
    return r.p_value is not None and r.false_fail_rate is not None and r.p_value <= r.false_fail_rate


def _scales(rows) -> str:
    values = sorted({r.key.constant for r in rows})
    return ", ".join(f"{c:g}" for c in values)


def _pool_list(rows) -> str:
    pools = sorted({r.key.pool for r in rows})
    return f"task pool{'s' if len(pools) > 1 else ''} {', '.join(str(k) for k in pools)}"


def _case_mean(r: ClaimResult, case: str) -> float | None:
    return next((h["observed"] for h in r.horizons or () if h.get("case") == case), None)


def _survival(rows: list[ClaimResult]) -> str:
    """The specializing regime's entries, one verdict per pool for each of Figure 2's conclusions (the bottom line's
    own sentence on them is the pack's ``survives``)."""
    if not rows:
        return ""
    bits = []
    for part in SPECIALIZING.values():
        entries = [r for r in rows if r.key.part == part]
        if entries:
            cases = "; ".join(f"pool {r.key.pool}: {r.verdict}" for r in entries)
            bits.append(f"{part.split(': ', 1)[1]} ({cases})")
    return f"in a regime where the gate specializes ({specializing.describe()}): " + "; ".join(bits)


def converges_slips(results: list[ClaimResult]) -> list[Slip]:
    """The reproduction finding on Figure 2's convergence, when the run rejects the criterion at the stated
    sigma_t for some scale c of v_n.

    Its class: "unstated assumption" where the criterion holds at another c (some statement entry confirmed), or
    where it fails at every c tried while the errors measurably move with c (the dependence entry confirmed on
    some pool): the figure then rests on a constant the paper does not state.  "false statement" only where it
    fails at every c and the errors do not move with it.  The text says where it holds and where not, with the
    numbers, and which of the figure's conclusions survive in the specializing regime."""
    stated = [r for r in results if r.key.is_statement]
    failed = [r for r in stated if _rejected(r)]
    if not failed:
        return []
    held = [r for r in stated if r.verdict == "confirmed"]
    noise = [r for r in results if r.key.role == SENSITIVITY and r.key.constant is not None]
    dependence = [r for r in results if r.key.part == DEPENDENCE_PART]
    depends = [r for r in dependence if r.verdict == "confirmed"]
    spec_text = _survival([r for r in results if r.key.part in SPECIALIZING.values()])
    sigma = f"sigma_t = {FIG2['sigma_t']:g}"
    holds = (f"at the stated hyperparameters ({sigma}) forgetting and generalization error with termination do not "
             f"fall to near zero for v_n = c w_n with c in {{{_scales(failed)}}} (refuted on {_pool_list(failed)})")
    if held:
        holds += (f"; they do for c in {{{_scales(held)}}} ({_pool_list(held)}): the figure's convergence depends on "
                  "the scale of v_n, which the paper does not state")
    else:
        holds += "; it holds at no c tried"
        closest = max(((h["observed"], r, h) for r in failed for h in r.horizons or ()
                       if isinstance(h.get("observed"), (int, float)) and h["observed"] < 0),
                      key=lambda x: x[0], default=None)
        if closest is not None:
            margin, r, h = closest
            holds += (f" (the closest, at c = {r.key.constant:g} on pool {r.key.pool}, case {h.get('case')}, misses "
                      f"'almost zero' by {-margin:.3g})")
        if depends:
            holds += ", but the errors depend on that unstated scale"
    for r in dependence:
        lo, hi = r.config.get("scales", [SIGNAL_SCALES[0], SIGNAL_SCALES[-1]])
        drop = _case_mean(r, f"F, M={SWEEP_M}")
        if drop is not None:
            holds += (f" (pool {r.key.pool}: E[F_T | M = {SWEEP_M}] is {drop:.3g} lower at c = {hi:g} than at "
                      f"c = {lo:g}, {r.verdict})")
    if noise:
        by_noise = {}
        for r in noise:
            by_noise.setdefault(r.config.get("sigma_t"), []).append(r)
        holds += "; at the other noise levels tried " + "; ".join(
            f"sigma_t = {level:g}: " + (f"holds for c in {{{_scales(ok)}}}" if ok else "holds at no c")
            for level, rows in sorted(by_noise.items()) for ok in ([r for r in rows if r.verdict == "confirmed"],))
    measured = ablations.records(results)
    routed = ablations.lowering_causes(measured)
    if routed:
        below = all(a.ablated < 0 for a in measured if a.alone)
        holds += ("; with each task routed inside its expert set after T1 (the same draws, the rest of Algorithm 1 "
                  "as it is) the final errors are " + _forced_levels(measured)
                  + (", as the figure shows: the routing outside the sets keeps them up" if below else
                     ": the routing outside the sets explains part of the gap"))
    if spec_text:
        holds += "; " + spec_text
    if noise or spec_text:
        holds += " (the entries off the stated sigma_t and in that regime are sensitivity entries: decided and reported, " \
                 "never a verdict on the statement)"
    reproduction = bool(held or depends)
    summary = ("Figure 2's convergence to almost zero error with termination "
               + (f"holds only at some scales of the feature signals v_n (c in {{{_scales(held)}}}, not "
                  f"{_scales(failed)}), which the paper does not state" if held else
                  f"is not reproduced at its stated hyperparameters for any scale of v_n tried (c = {_scales(stated)})"
                  + (", though the errors depend on that unstated scale" if depends else "")))
    default = [r for r in failed if r.key.constant == SIGNAL_SCALES[0]] or failed
    evidence = " ".join(f"{r.key.label}: {r.evidence}" for r in default + held + depends)
    return [
        Slip(
            id="fig2.convergence_not_reproduced",
            strength="reading", strength_note=texts.READING_SIGNAL_SCALE,
            summary=summary,
            entries=keys_of(default, [r for r in failed if r not in default], held, depends,
                            [r for r in results if r.key.part in SPECIALIZING.values() and r.verdict == "confirmed"]),
            location="Section 6, Figure 2(a), (c); Appendix A.2",
            slip_class="unstated assumption" if reproduction else "false statement",
            stated="with termination, forgetting and generalization error of all MoE models converge to almost zero",
            holds=holds,
            evidence=evidence,
            effect=effects.converges_sweep(default, held),
            causes=routed,
            ablation=measured,
        )
    ]


def _forced_levels(records) -> str:
    """How far below (or above) 'almost zero' the forced run's final errors are, over M and pools."""
    by_quantity: dict[str, list[float]] = {}
    for a in records:
        if a.alone:
            by_quantity.setdefault(a.quantity.split("'", 1)[0].removeprefix("E[").removesuffix("]"), []).append(a.ablated)

    def span(v):
        lo, hi = f"{min(abs(x) for x in v):.3g}", f"{max(abs(x) for x in v):.3g}"
        return lo if lo == hi else f"{lo}–{hi}"

    return " and ".join(f"{name} {'below' if max(v) < 0 else 'above' if min(v) > 0 else 'within'} 'almost zero' "
                        f"by {span(v)}" for name, v in by_quantity.items())


SOURCE = "Section 6, Figure 2; Appendix A.2"
for claim_id, measure, summary, slips in (
    ("fig2.termination_converges", measure_converges, "With termination, errors fall to almost zero.", converges_slips),
    ("fig2.no_termination_higher", measure_no_termination, "Without termination, errors stay higher.", None),
    ("fig2.moe_beats_single", measure_moe_beats_single, "MoE beats a single expert.", None),
    ("fig2.more_experts_no_gain", measure_more_experts, "M = 20 converges later than M = 10, no better.", None),
):
    register(__name__, 
        Claim(
            id=claim_id,
            source=SOURCE,
            kind="qualitative",
            statement=r"\text{" + summary + "}",
            preconditions=("Algorithm 1", "Figure 2 configuration (Appendix A.2)"),
            measure=measure,
            slips=slips,
            interpretations=INTERPRETATIONS,
            summary=summary,
            notes="Qualitative statement about Figure 2, decided by the criterion in the evidence; a run at the "
            "paper's 100 replicates (standard budget). " + POOL_NOTE + " The curves figure shows pool 0."
            + (" Reproduction sweep: the criterion at every scale c of v_n = c w_n in "
               f"{', '.join(f'{c:g}' for c in SIGNAL_SCALES)} (the entry's hidden constant c, reconciled across c) at "
               f"the stated sigma_t, and as sensitivity entries at sigma_t in "
               f"{', '.join(f'{x:g}' for x in NOISE_LEVELS if not _is_stated(x))} and in the regime where the gate "
               "specializes; the sweep figure shows M = 10 on every pool." if claim_id == "fig2.termination_converges"
               else ""),
            artifacts=((("fig2_curves", curves), ("fig2_sweep", sweep)) if claim_id == "fig2.termination_converges"
                       else ()),
            shares=("fig2",),
        )
    )
