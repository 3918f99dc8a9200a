"""`moecl-verify simulate`: run the single-expert or the MoE simulator directly.

Prints, per round, the Monte Carlo mean ± standard error of F_t and G_t over
replicates (``--json`` for machines), and for the MoE model a summary of the
gate (freeze rounds, loads, expert sets).  ``--plot FILE`` draws the curves (its path is checked before
the simulation starts: commands/plot.py).
"""

from __future__ import annotations

import json
import math
import os
import sys

import numpy as np

from moecl_verify.errors import UsageError
from moecl_verify.numeric.streams import BLOCK_ROUNDS
from moecl_verify.parsing import finite_float, int_at_least, nonneg_int


DRAWS_PER_CHUNK_BYTES = 64 * 2**20  # one chunk's block of feature matrices (draws are streamed by round)
BALANCES = ("aux", "none", "bias")  # numeric.moe.BALANCES, spelled out so building the parser imports no simulator


HELP = "run a simulator and print mean ± s.e. of F_t and G_t per round"


def add_arguments(sim) -> None:
    sim.add_argument("--config", default=None,
                     help="JSON file of option values (keys are option names, e.g. {\"M\": 10, \"no-termination\": true}); "
                     "options given on the command line win")
    sim.add_argument("--model", default="single", choices=["single", "moe"])
    sim.add_argument("--features", default="definition1", choices=["definition1", "gaussian", "gaussian_complement"],
                     help="gaussian_complement (single expert only): draw a basis of span(X_t)'s complement, d - s "
                     "normals per round instead of d s, the same law of the trajectories (numeric/streams.py)")
    sim.add_argument("--engine", default=None, choices=["numba", "numpy"],
                     help="numba (compiled kernels) or numpy (the reference engine); default: numba where the "
                     "kernels cover the configuration, numpy otherwise")
    sim.add_argument("--d", type=int_at_least("--d", 2), default=10)
    sim.add_argument("--s", type=int_at_least("--s", 1), default=6)
    sim.add_argument("--N", type=int_at_least("--N", 1), default=6)
    sim.add_argument("--T", type=int_at_least("--T", 2), default=20)
    sim.add_argument("--sigma0", type=finite_float("--sigma0"), default=0.4)
    sim.add_argument("--sigma0-is", default="std", choices=["std", "variance"])
    sim.add_argument("--sigma-t", type=finite_float("--sigma-t"), default=0.1)
    sim.add_argument("--beta-max", type=finite_float("--beta-max"), default=1.0)
    sim.add_argument("--signal-scale", type=finite_float("--signal-scale"), default=1.0)
    sim.add_argument("--replicates", type=int_at_least("--replicates", 2), default=1000)
    sim.add_argument("--seed", type=nonneg_int("--seed"), default=0)
    sim.add_argument("--every", type=int_at_least("--every", 1), default=1, help="print every k-th round")
    sim.add_argument("--json", action="store_true", help="machine-readable output")
    sim.add_argument("--plot", default=None,
                     help="draw the F_t and G_t curves into this file, in the format of its suffix (.png, .pdf, "
                     ".svg, ...; PNG without one); its folder must exist and be writable")
    moe = sim.add_argument_group("MoE model (--model moe; Algorithm 1)")
    moe.add_argument("--M", type=int_at_least("--M", 1), default=5)
    moe.add_argument("--eta", type=finite_float("--eta"), default=0.5)
    moe.add_argument("--alpha", type=finite_float("--alpha"), default=0.5)
    moe.add_argument("--lam", type=finite_float("--lam"), default=0.3, help="routing noise level lambda")
    moe.add_argument("--Gamma", type=finite_float("--Gamma"), default=0.4**1.25, help="termination threshold")
    moe.add_argument("--no-termination", action="store_true", help="keep training the gate forever")
    moe.add_argument("--T1", type=nonneg_int("--T1"), default=None, help="exploration rounds (default ceil(M/eta))")
    moe.add_argument("--marks", default="sticky", choices=["sticky", "per-round"])
    moe.add_argument("--flag-timing", default="before_update", choices=["before_update", "after_update"])
    moe.add_argument("--aux-factor", default="1/t", choices=["1/t", "t"], help="'t' reproduces Lemma 4's printed factor")
    moe.add_argument("--router", default="learned", choices=["learned", "oracle"])
    moe.add_argument("--pool", default="iid", choices=["iid", "clustered"])
    moe.add_argument("--K", type=int_at_least("--K", 1), default=3, help="clusters for --pool clustered")
    var = sim.add_argument_group("MoE variants outside the paper (--model moe; the defaults are the paper's)")
    var.add_argument("--top-k", type=int_at_least("--top-k", 1), default=1,
                     help="experts routed per round; each learns the round's data, and a task is served by their "
                     "models weighted by the renormalized softmax of the gate")
    var.add_argument("--balance", default="aux", choices=list(BALANCES),
                     help="load balancing: the auxiliary loss (aux, the paper), none, or a loss-free routing bias "
                     "(bias)")
    var.add_argument("--bias-rate", type=finite_float("--bias-rate"), default=0.0,
                     help="--balance bias: step u of b_m <- b_m + u sign(1/M - load_m)")
    var.add_argument("--bias-window", type=int_at_least("--bias-window", 1), default=None,
                     help="--balance bias: measure the load over the last W rounds (default: since round 1)")
    var.add_argument("--task-freq", default="uniform",
                     help="task frequencies: uniform (the paper), zipf:A (p_n proportional to n^-A), rare:S (task N "
                     "has probability S, the others share the rest), or p1,...,pN")
    var.add_argument("--freq-swap-at", type=int_at_least("--freq-swap-at", 1), default=None,
                     help="from round t on, the task probabilities reversed: frequent and rare tasks swap")
    var.add_argument("--new-task-at", type=int_at_least("--new-task-at", 1), default=None,
                     help="task N first arrives at round t (probability 0 before)")


# The variants' options and their defaults (the paper's setting): used with --model single, they are an error.
VARIANT_DEFAULTS = {"top_k": 1, "balance": "aux", "bias_rate": 0.0, "bias_window": None, "task_freq": "uniform",
                    "freq_swap_at": None, "new_task_at": None}


def _validate(args) -> None:
    if args.d < 2:
        raise UsageError(f"--d must be an integer >= 2, got {args.d}")
    if not 1 <= args.s < args.d:
        raise UsageError(f"--s must satisfy 1 <= s < d = {args.d} (overparameterized), got {args.s}")
    if args.N < 1:
        raise UsageError(f"--N must be an integer >= 1, got {args.N}")
    if args.T < 2:
        raise UsageError(f"--T must be an integer >= 2 (F_t needs t >= 2), got {args.T}")
    if args.sigma0 <= 0:
        raise UsageError(f"--sigma0 must be > 0, got {args.sigma0}")
    if args.sigma_t < 0:
        raise UsageError(f"--sigma-t must be >= 0, got {args.sigma_t}")
    if args.beta_max <= 0:
        raise UsageError(f"--beta-max must be > 0, got {args.beta_max}")
    if args.signal_scale <= 0:
        raise UsageError(f"--signal-scale must be > 0, got {args.signal_scale}")
    if args.replicates < 2:
        raise UsageError(f"--replicates must be an integer >= 2, got {args.replicates}")
    if args.every < 1:
        raise UsageError(f"--every must be an integer >= 1, got {args.every}")
    if args.model == "moe":
        if args.M < 1:
            raise UsageError(f"--M must be an integer >= 1, got {args.M}")
        if args.eta <= 0:
            raise UsageError(f"--eta must be > 0, got {args.eta}")
        for name in ("alpha", "lam", "Gamma"):
            if getattr(args, name) < 0:
                raise UsageError(f"--{name} must be >= 0, got {getattr(args, name)}")
        if args.pool == "clustered" and not 1 <= args.K <= args.N:
            raise UsageError(f"--K must be in [1, N = {args.N}], got {args.K}")
        _validate_variants(args)
    else:
        for dest, default in VARIANT_DEFAULTS.items():
            if getattr(args, dest) != default:
                raise UsageError(f"--{dest.replace('_', '-')} applies to --model moe only")


def _validate_variants(args) -> None:
    """The MoE variants' options (each error names its option, as the others do)."""
    if not 1 <= args.top_k <= args.M:
        raise UsageError(f"--top-k must be an integer in [1, M = {args.M}], got {args.top_k}")
    if args.bias_rate < 0:
        raise UsageError(f"--bias-rate must be >= 0, got {args.bias_rate}")
    if args.bias_window is not None and args.bias_window < 1:
        raise UsageError(f"--bias-window must be an integer >= 1, got {args.bias_window}")
    if args.balance != "bias" and (args.bias_rate != 0 or args.bias_window is not None):
        option = "--bias-rate" if args.bias_rate != 0 else "--bias-window"
        raise UsageError(f"{option} applies to --balance bias only, got --balance {args.balance}")
    if args.router == "oracle" and (args.top_k != 1 or args.balance == "bias"):
        option = "--top-k" if args.top_k != 1 else "--balance"
        raise UsageError(f"{option}: --router oracle routes each task to one expert (needs --top-k 1, "
                         "no --balance bias)")
    for option, value in (("--freq-swap-at", args.freq_swap_at), ("--new-task-at", args.new_task_at)):
        if value is not None and not 1 <= value <= args.T:
            raise UsageError(f"{option} must be a round in [1, T = {args.T}], got {value}")
    task_schedule(args)  # parse errors of --task-freq now, before any simulation


def task_schedule(args):
    """The TaskSchedule of --task-freq, then --freq-swap-at, then --new-task-at, or None for the paper's
    uniform tasks (drawn exactly as without these options)."""
    from moecl_verify.numeric.draws import TaskSchedule

    spec = str(args.task_freq).strip()
    kind, colon, value = spec.partition(":")
    try:
        if spec == "uniform":
            late = args.freq_swap_at is not None or args.new_task_at is not None
            schedule = TaskSchedule.uniform(args.N) if late else None
        elif colon and kind in ("zipf", "rare"):
            number = _spec_number(spec, value)
            schedule = TaskSchedule.zipf(args.N, number) if kind == "zipf" else TaskSchedule.with_rare(args.N, number)
        elif colon:
            raise UsageError(f"--task-freq must be uniform, zipf:A, rare:S or p1,...,pN, got {spec!r}")
        else:
            probs = [_spec_number(spec, p) for p in spec.split(",")]
            if len(probs) != args.N:
                raise UsageError(f"--task-freq must list N = {args.N} probabilities, got {len(probs)} in {spec!r}")
            schedule = TaskSchedule(((1, tuple(probs)),))
    except ValueError as exc:
        raise UsageError(f"--task-freq {spec}: {exc}") from None
    for option, step in (("--freq-swap-at", "swap_at"), ("--new-task-at", "new_task_at")):
        t = getattr(args, option[2:].replace("-", "_"))
        if t is not None:
            try:
                schedule = getattr(schedule, step)(t)
            except ValueError as exc:
                raise UsageError(f"{option} {t}: {exc}") from None
    return schedule


def _spec_number(spec: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"--task-freq must be uniform, zipf:A, rare:S or p1,...,pN with numbers, "
                         f"got {spec!r}") from None
    if not math.isfinite(value):
        raise UsageError(f"--task-freq needs finite numbers, got {spec!r}")
    return value


def _warnings(args) -> list[str]:
    """Legal but unusual settings, handled as documented; said once on stderr."""
    out = []
    if args.sigma0 >= 1:
        out.append(f"--sigma0 {args.sigma0:g} >= 1 lies outside the paper's regime sigma0 in (0, 1) (Section 3.2): the "
                   "model is well defined, but no claim's asymptotics in sigma0 apply")
    if args.sigma_t == 0 and args.features == "definition1" and args.s > 1:
        out.append("--sigma-t 0 makes Definition 1's s - 1 noise columns vanish, so X_t^T X_t is singular: each step is "
                   "the minimum-norm step through the pseudo-inverse (the expert moves only along beta_t v_n)")
    if args.model == "moe" and args.lam == 0:
        out.append("--lam 0: no routing noise, top-1 routing is the plain argmax of the gate outputs")
    if args.model == "moe" and args.freq_swap_at is not None and args.task_freq.strip() == "uniform":
        out.append("--freq-swap-at with uniform task frequencies: reversing them changes nothing")
    if args.model == "moe" and args.new_task_at == 1:
        out.append("--new-task-at 1: the last task is there from round 1, the schedule is unchanged")
    if args.model == "moe" and args.balance == "bias" and args.bias_rate == 0:
        out.append("--balance bias with --bias-rate 0: the bias stays 0, the same as --balance none")
    return out


def memory_plan(R: int, T: int, d: int, s: int, moe: bool, limit: int | None = None) -> int:
    """The chunk size (replicates per chunk) that keeps one chunk's features under
    DRAWS_PER_CHUNK_BYTES; raises UsageError when the per-round results alone
    (R x T float64 per series) or one replicate's features exceed ``limit``
    (default: half of this machine's memory)."""
    if limit is None:
        limit = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    series = 5 if moe else 4
    results = R * T * 8 * series
    # Draws are streamed BLOCK_ROUNDS rounds at a time; Definition 1 transiently holds two copies of a block.
    per_replicate = BLOCK_ROUNDS * d * s * 8 * 2
    if results + per_replicate > limit:
        raise UsageError(
            f"--T {T} with --replicates {R} needs about {(results + per_replicate) / 2**30:.1f} GiB for per-round "
            f"results and features, over this machine's limit of {limit / 2**30:.1f} GiB; lower --T or --replicates"
        )
    return max(1, min(1000, DRAWS_PER_CHUNK_BYTES // per_replicate))


def apply_config(parser, argv: list[str], path: str):
    """Parse ``argv`` with the values of the JSON file ``path`` as defaults."""
    import argparse

    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except OSError as exc:
        raise UsageError(f"--config: cannot read {path!r} ({exc.strerror})") from None
    except ValueError as exc:
        raise UsageError(f"--config: {path!r} is not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise UsageError(f"--config: {path!r} must hold a JSON object of option values")
    actions = {a.dest: a for a in parser._actions if a.dest not in ("help", "config", "command")}
    defaults = {}
    for key, value in doc.items():
        dest = str(key).lstrip("-").replace("-", "_")
        action = actions.get(dest)
        if action is None:
            known = ", ".join(sorted(a.option_strings[0].lstrip("-") for a in actions.values() if a.option_strings))
            raise UsageError(f"--config: unknown key {key!r} in {path!r} (known: {known})")
        if isinstance(action, argparse._StoreTrueAction):
            if not isinstance(value, bool):
                raise UsageError(f"--config: {key!r} must be true or false, got {value!r}")
        elif isinstance(value, (dict, list)) or value is None:
            raise UsageError(f"--config: {key!r} must be a number or a string, got {value!r}")
        else:
            value = action.type(str(value)) if action.type else str(value)
            if action.choices and value not in action.choices:
                raise UsageError(f"--config: {key!r} must be one of {', '.join(map(str, action.choices))}, got {value!r}")
        defaults[dest] = value
    parser.set_defaults(**defaults)
    return parser.parse_args(argv)


def _rows(run, every: int) -> list[dict]:
    rows = []
    sqrt_r = math.sqrt(run.R)
    for t in range(1, run.T + 1, every):
        row = {"t": t}
        for name in ("forgetting", "generalization"):
            x = getattr(run, name)[:, t - 1]
            if np.all(np.isnan(x)):
                row[name] = row[name + "_stderr"] = None
            else:
                row[name] = float(x.mean())
                row[name + "_stderr"] = float(x.std(ddof=1) / sqrt_r)
        rows.append(row)
    return rows


def run(args, invocation) -> int:
    """The command: ``--config`` values become the parser's defaults, then the command line is read again
    (options given on it win)."""
    if args.config:
        args = apply_config(invocation.parser, list(invocation.argv), args.config)
    return cmd_simulate(args)


def cmd_simulate(args) -> int:
    from moecl_verify.progress import Progress
    from moecl_verify.numeric.pool import make_clustered_pool, make_pool
    from moecl_verify.numeric.seeding import generator_for

    _validate(args)
    if args.plot:
        # Refused now, not after a simulation that may take minutes.
        from moecl_verify.packs.moe_cl.commands.plot import check_path

        check_path(args.plot)
    chunk_size = memory_plan(args.replicates, args.T, args.d, args.s, args.model == "moe")
    for warning in _warnings(args):
        print(f"moecl-verify: note: {warning}", file=sys.stderr)
    rng = generator_for(args.seed, "simulate", "pool")
    if args.model == "moe" and args.pool == "clustered":
        pool = make_clustered_pool(
            rng, N=args.N, K=args.K, d=args.d, sigma0=args.sigma0, sigma0_is=args.sigma0_is, signal_scale=args.signal_scale
        )
    else:
        pool = make_pool(rng, N=args.N, d=args.d, sigma0=args.sigma0, sigma0_is=args.sigma0_is, signal_scale=args.signal_scale)
    progress = Progress()
    common = dict(
        R=args.replicates,
        T=args.T,
        s=args.s,
        features=args.features,
        sigma_t=args.sigma_t,
        beta_max=args.beta_max,
        seed=args.seed,
        chunk_size=chunk_size,
        progress=lambda done, total: progress("simulate", done, total),
        engine=args.engine,
    )
    header = {
        "model": args.model,
        "features": args.features,
        "d": args.d,
        "s": args.s,
        "N": args.N,
        "T": args.T,
        "r": 1 - args.s / args.d,
        "S": pool.S,
        "D": pool.D,
        "sigma0": args.sigma0,
        "sigma0_is": args.sigma0_is,
        "sigma_t": args.sigma_t,
        "signal_scale": args.signal_scale,
        "replicates": args.replicates,
        "seed": args.seed,
        "engine": args.engine or "numba where the kernels cover the configuration, numpy otherwise",
    }
    summary = {}
    try:
        if args.model == "single":
            from moecl_verify.numeric.single_expert import simulate_single_expert

            run = simulate_single_expert(pool, key=("simulate", args.features), **common)
        else:
            run, summary = _simulate_moe(args, pool, common, header)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    finally:
        progress.close()
    rows = _rows(run, args.every)
    if args.plot:
        from moecl_verify.packs.moe_cl.commands.plot import write as write_plot

        write_plot(rows, args.plot, title=", ".join(f"{k}={v}" for k, v in header.items() if k in ("model", "features", "N", "T", "M")))
    if args.json:
        print(json.dumps({"config": header, "summary": summary, "rounds": rows}, indent=2))
        return 0
    print("# " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in header.items()))
    for key, value in summary.items():
        print(f"# {key}: {value}")
    print(f"{'t':>6}  {'E[F_t] ± s.e.':>22}  {'E[G_t] ± s.e.':>22}")
    for row in rows:
        f = "—" if row["forgetting"] is None else f"{row['forgetting']:.5f} ± {row['forgetting_stderr']:.5f}"
        g = f"{row['generalization']:.5f} ± {row['generalization_stderr']:.5f}"
        print(f"{row['t']:>6}  {f:>22}  {g:>22}")
    return 0


def _simulate_moe(args, pool, common, header):
    from moecl_verify.numeric.moe import MoEConfig, simulate_moe

    oracle = None
    if args.router == "oracle":
        # Each task (or cluster) to the experts congruent to it: a fixed, balanced reference routing.
        groups = args.K if args.pool == "clustered" else args.N
        if args.M < groups:
            raise UsageError(f"--router oracle needs --M >= {groups} (one expert per task or cluster), got {args.M}")
        oracle = tuple(
            tuple(m for m in range(args.M) if m % groups == (n % groups)) for n in range(args.N)
        )
    cfg = MoEConfig(
        M=args.M,
        eta=args.eta,
        alpha=args.alpha,
        lam=args.lam,
        Gamma=args.Gamma,
        termination=not args.no_termination,
        T1=args.T1,
        sticky_marks=args.marks == "sticky",
        flag_timing=args.flag_timing,
        aux_factor=args.aux_factor,
        router=args.router,
        oracle_sets=oracle,
        top_k=args.top_k,
        balance=args.balance,
        bias_rate=args.bias_rate,
        bias_window=args.bias_window,
    )
    schedule = task_schedule(args)
    header.update(
        M=args.M, eta=args.eta, alpha=args.alpha, lam=args.lam, Gamma=args.Gamma, termination=not args.no_termination,
        T1=cfg.exploration_rounds, marks=args.marks, flag_timing=args.flag_timing, aux_factor=args.aux_factor,
        router=args.router, pool=args.pool, top_k=args.top_k, balance=args.balance, task_freq=args.task_freq,
    )
    if args.balance == "bias":
        header.update(bias_rate=args.bias_rate, bias_window=args.bias_window)
    for name in ("freq_swap_at", "new_task_at"):
        if getattr(args, name) is not None:
            header[name] = getattr(args, name)
    run = simulate_moe(pool, cfg, key=("simulate", "moe"), task_probs=schedule, **common)
    frozen = run.freeze_round > 0
    summary = {
        "frozen_fraction": float(frozen.mean()),
        "median_freeze_round": float(np.median(run.freeze_round[frozen])) if frozen.any() else None,
        "mean_load_per_expert": [float(x) for x in run.loads.mean(axis=0)],
        "expert_sets_replicate_0": [int(x) + 1 for x in run.expert_sets[0]],
    }
    if run.bias is not None:
        summary["mean_final_bias_per_expert"] = [float(x) for x in run.bias.mean(axis=0)]
    if schedule is not None:
        # Realized task shares (over all replicates and rounds), next to the schedule's phases.
        summary["task_schedule"] = [[start, [float(p) for p in probs]] for start, probs in schedule.phases]
        shares = np.bincount(run.tasks.ravel(), minlength=args.N) / run.tasks.size
        summary["observed_task_share"] = [float(x) for x in shares]
    return run, summary
