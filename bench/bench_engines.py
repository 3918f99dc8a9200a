"""Benchmark: the numba and numpy engines against the random-number floor and a plain per-replicate loop.

Run from the repository root:

    python bench/bench_engines.py [--R 2000] [--T 2000] [--chunk 1000] [--repeat 2] [--plain-R 3] [--json PATH]

For each model (the single expert with features gaussian, definition1 and gaussian_complement at d=10,
s=6, N=6; Algorithm 1 at M=10, N=6, d=10, s=6, definition1, eta=alpha=0.5, lambda=0.3,
Gamma=sigma0^1.25, a clustered pool with K=3, sigma0=0.4, and the same with loss-free bias balancing at
u = 0.1 lambda, ``moe-bias``, and with top-2 routing, ``moe-top2``) and engine (numpy, numba), in one run:

* sim: the cost per replicate-round of the whole simulation, ``simulate_single_expert`` /
  ``simulate_moe`` through their chunks (in this process), draws included;
* floor: the cost per replicate-round of drawing the same random numbers alone (every chunk's
  ``DrawStream.blocks()``, iterated and discarded), the normals through the compiled sampler of
  :mod:`numeric.sampling`;
* sim / floor (target: numba within 1.3x);
* numpy floor: the same random numbers drawn by numpy's Generator array methods, as the streams drew them
  before the compiled sampler (:func:`numpy_draws`; identical numbers), and sim / numpy floor;
* plain / sim: a straightforward numpy loop over replicates and rounds (eq. 5 by np.linalg.solve per
  round, the O(N) bookkeeping of eq. 14-16; for Algorithm 1 the same per replicate with the gate), timed
  on --plain-R replicates of the same draws and scaled per replicate-round, over the engine's cost
  (target: numba at least 15x).  The plain loop is timed on draws made beforehand, so its cost leaves the
  draws out while the engine's includes them: the ratio is conservative.

Costs are CPU seconds of this process (everything runs in it, single-threaded), each the minimum over
--repeat runs, the floor and the two engines timed in turn within a repeat (the machine is shared and
noisy); ratios compare numbers measured in the same run.  Wall times are in the JSON too.  JIT compilation is done (or loaded from numba's cache) before timing and
reported separately.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from moecl_verify.numeric import kernels  # noqa: E402
from moecl_verify.numeric.chunks import chunk_sizes  # noqa: E402
from moecl_verify.numeric.draws import TaskSchedule  # noqa: E402
from moecl_verify.numeric.moe import MoEConfig, run_moe_batched, simulate_moe, stream_moe_chunk  # noqa: E402
from moecl_verify.numeric.pool import make_clustered_pool, make_pool  # noqa: E402
from moecl_verify.numeric.seeding import generator_for  # noqa: E402
from moecl_verify.numeric.single_expert import run_batched, simulate_single_expert  # noqa: E402
from moecl_verify.numeric.streams import DrawStream  # noqa: E402

D, S, N, M = 10, 6, 6, 10
SIGMA0 = 0.4
SINGLE_FEATURES = ("gaussian", "definition1", "gaussian_complement")
ENGINES = ("numpy", "numba")
FLOOR_TARGET, PLAIN_TARGET = 1.3, 15.0


def _timed(fn) -> tuple[float, float]:
    """(CPU seconds of this process, wall seconds) of fn()."""
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - cpu, time.perf_counter() - wall


# --- plain per-replicate loops (no batching, no compiled code) ---------------------------------------------

def plain_single(pool, draws, complement: bool) -> np.ndarray:
    """Generalization G_t of each replicate by a plain loop: eq. 5 with np.linalg.solve, O(N) metrics."""
    W = pool.W
    R, T = draws.tasks.shape
    out = np.empty((R, T))
    for r in range(R):
        w = np.zeros(pool.d)
        counts = np.zeros(pool.N)
        past_self = 0.0
        for j in range(T):
            n = draws.tasks[r, j]
            X = draws.X[r, j]
            if complement:
                w = W[n] + X @ np.linalg.solve(X.T @ X, X.T @ (w - W[n]))
            else:
                w = w + X @ np.linalg.solve(X.T @ X, X.T @ W[n] - X.T @ w)
            err = ((w - W) ** 2).sum(axis=1)
            past = counts @ err
            out[r, j] = (past + err[n]) / (j + 1)
            counts[n] += 1.0
            past_self += err[n]
    return out


def plain_moe(pool, draws, cfg: MoEConfig) -> np.ndarray:
    """Generalization G_t of Algorithm 1 (top-1, auxiliary loss, termination) by a plain per-replicate loop."""
    W = pool.W
    R, T = draws.tasks.shape
    Mx, T1 = cfg.M, cfg.exploration_rounds
    out = np.empty((R, T))
    for r in range(R):
        theta = np.zeros((Mx, pool.d))
        w = np.zeros((Mx, pool.d))
        counts = np.zeros(Mx)
        err = np.broadcast_to((W * W).sum(axis=1), (Mx, pool.N)).copy()
        pair = np.zeros((Mx, pool.N))
        marks = np.zeros(Mx, dtype=bool)
        frozen = False
        for j in range(T):
            t = j + 1
            n = draws.tasks[r, j]
            X = draws.X[r, j]
            xbar = X.sum(axis=1)
            h = theta @ xbar
            m = int(np.argmax(h + cfg.lam * draws.noise[r, j]))
            z = np.exp(h - h.max())
            pi = z / z.sum()
            old = w[m].copy()
            w[m] = old + X @ np.linalg.solve(X.T @ X, X.T @ W[n] - X.T @ old)
            delta = float(((w[m] - old) ** 2).sum())
            counts[m] += 1.0
            err[m] = ((w[m] - W) ** 2).sum(axis=1)
            out[r, j] = ((pair * err).sum() + err[m, n]) / t
            pair[m, n] += 1.0
            if frozen:
                continue
            if cfg.termination and t > T1:
                marks |= np.abs(h - h[m]) <= cfg.Gamma
                if marks.all():
                    frozen = True
                    continue
            coef = pi[m] * (delta + cfg.alpha * Mx * counts[m] / t / t)
            direction = -pi
            direction[m] += 1.0
            theta -= cfg.eta * (coef * direction)[:, None] * xbar[None, :]
    return out


def plain_moe_variant(pool, draws, cfg: MoEConfig) -> np.ndarray:
    """Generalization G_t of Algorithm 1 with a routing bias (``balance="bias"``, load since round 1) or top-k
    routing, by a plain per-replicate loop: the routed set by a stable sort of the scores, each routed expert's
    eq. 5 step, the served model sum_{m in S} g_m w^(m) (g the softmax of h on S) and its errors by the sums
    of :func:`numeric.moe.run_moe_batched`, the softmax-chain gradient, termination, the bias step."""
    W = pool.W
    R, T = draws.tasks.shape
    Mx, T1, k = cfg.M, cfg.exploration_rounds, cfg.top_k
    norms = (W * W).sum(axis=1)
    out = np.empty((R, T))
    for r in range(R):
        theta = np.zeros((Mx, pool.d))
        w = np.zeros((Mx, pool.d))
        counts = np.zeros(Mx)
        bias = np.zeros(Mx)
        pgg, pgn, pnn = np.zeros((Mx, Mx)), np.zeros((Mx, pool.N)), 0.0
        marks = np.zeros(Mx, dtype=bool)
        frozen = False
        for j in range(T):
            t = j + 1
            n = draws.tasks[r, j]
            X = draws.X[r, j]
            xbar = X.sum(axis=1)
            h = theta @ xbar
            S = np.argsort(-(h + bias + cfg.lam * draws.noise[r, j]), kind="stable")[:k]
            z = np.exp(h - h.max())
            pi = z / z.sum()
            dL = np.zeros(Mx)
            for m in S:
                old = w[m].copy()
                w[m] = old + X @ np.linalg.solve(X.T @ X, X.T @ W[n] - X.T @ old)
                dL[m] = float(((w[m] - old) ** 2).sum())
                counts[m] += 1.0
            zS = np.exp(h[S] - h[S].max())
            g = zS / zS.sum()
            u = g @ w[S] - W[n]
            past = (pgg * (w @ w.T)).sum() - 2.0 * (pgn * (w @ W.T)).sum() + pnn
            out[r, j] = (past + u @ u) / t
            pgg[np.ix_(S, S)] += np.outer(g, g)
            pgn[S, n] += g
            pnn += norms[n]
            if frozen:
                continue
            if cfg.termination and t > T1:
                marks |= np.abs(h - h[S[0]]) <= cfg.Gamma
                if marks.all():
                    frozen = True
                    continue
            if cfg.balance == "aux":
                dL[S] += cfg.alpha * Mx * counts[S] / (k * t) / t
            coef = pi * dL
            theta -= cfg.eta * (coef - pi * coef.sum())[:, None] * xbar[None, :]
            if cfg.balance == "bias":
                bias += cfg.bias_rate * np.sign(1.0 / Mx - counts / (k * t))
    return out


# --- the same draws with numpy's array methods (the floor before numeric.sampling) ------------------------------

def numpy_draws(stream: DrawStream) -> None:
    """Every random number ``stream.blocks()`` draws, drawn (and discarded) by numpy's Generator array methods
    as the streams drew them before the compiled sampler (:mod:`numeric.sampling`): the same numbers from the
    same keyed generators, in the same order, with Definition 1's scale-then-overwrite in numpy."""
    R, d, k = stream.R, stream.d, stream.columns
    gens = {kind: stream._generator(kind) for kind in ("tasks", "features", "positions", "beta", "noise")}
    for start in range(0, stream.T, stream.block):
        size = min(stream.block, stream.T - start)
        tasks = TaskSchedule.uniform(stream.pool.N).tasks_from_uniforms(gens["tasks"].random((size, R)).T, start)
        X = gens["features"].standard_normal((size, R, d, k))
        if stream.features == "definition1":
            X *= stream.sigma_t
            positions = np.minimum((stream.s * gens["positions"].random((size, R))).astype(np.int64), stream.s - 1)
            beta = stream.beta_max * (1.0 - gens["beta"].random((size, R)))
            b_idx, r_idx = np.indices((size, R), sparse=True)
            X[b_idx, r_idx, :, positions] = beta[..., None] * stream.pool.V[tasks.T]
        if stream.M is not None:
            gens["noise"].random((size, R, stream.M))


# --- one model ----------------------------------------------------------------------------------------------

def measure(name: str, args, simulate, streams, plain, engine_run) -> dict:
    """simulate(engine) runs the whole simulation; streams() the chunks' DrawStreams; plain(draws) the plain
    loop on materialised draws; engine_run(draws, engine) the engine on them (for the agreement check).

    The floor and both engines are timed in turn within each repeat (so a slow spell of the machine hits
    them alike), and each keeps its minimum."""
    RT = args.R * args.T
    # The plain loop: the first --plain-R replicates of the first chunk, on materialised draws.
    first = streams()[0]
    sub = DrawStream(**{**{f: getattr(first, f) for f in ("pool", "T", "s", "seed", "key", "index", "features",
                                                          "sigma_t", "beta_max", "M")}, "R": args.plain_R})
    draws = sub.materialize()
    reference = plain(draws)
    plain_cpu = min(_timed(lambda: plain(draws))[0] for _ in range(max(1, args.repeat))) / (args.plain_R * args.T)
    cost = {"floor": [math.inf, math.inf], "numpy_floor": [math.inf, math.inf],
            **{engine: [math.inf, math.inf] for engine in ENGINES}}
    for _ in range(max(1, args.repeat)):
        runs = [("floor", lambda: [None for stream in streams() for _ in stream.blocks()]),
                ("numpy_floor", lambda: [numpy_draws(stream) for stream in streams()])]
        runs += [(engine, lambda engine=engine: simulate(engine)) for engine in ENGINES]
        for key, fn in runs:
            cpu, wall = _timed(fn)
            cost[key] = [min(cost[key][0], cpu / RT), min(cost[key][1], wall / RT)]
    floor, numpy_floor = cost["floor"][0], cost["numpy_floor"][0]
    row = {"model": name, "floor_ns": floor * 1e9, "floor_wall_ns": cost["floor"][1] * 1e9,
           "numpy_floor_ns": numpy_floor * 1e9,
           "plain_ns": plain_cpu * 1e9, "engines": {}}
    for engine in ENGINES:
        sim = cost[engine][0]
        agree = float(np.max(np.abs(engine_run(sub, engine) - reference)) / np.max(np.abs(reference)))
        row["engines"][engine] = {"sim_ns": sim * 1e9, "sim_wall_ns": cost[engine][1] * 1e9,
                                  "ratio_to_floor": sim / floor, "ratio_to_numpy_floor": sim / numpy_floor,
                                  "ratio_plain_over_sim": plain_cpu / sim,
                                  "max_rel_diff_vs_plain": agree}
        print(f"  {name:30s} {engine:6s} sim {sim * 1e9:9.1f} ns  floor {floor * 1e9:7.1f} ns  "
              f"sim/floor {sim / floor:6.2f}  sim/numpy floor {sim / numpy_floor:5.2f}  "
              f"plain/sim {plain_cpu / sim:7.1f}x  (|G - G_plain| / max G "
              f"{agree:.1e})", flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--R", type=int, default=2000, help="replicates of each simulation")
    parser.add_argument("--T", type=int, default=2000, help="rounds")
    parser.add_argument("--chunk", type=int, default=1000, help="replicates per chunk")
    parser.add_argument("--repeat", type=int, default=2, help="timing repeats; the minimum is kept")
    parser.add_argument("--plain-R", type=int, default=3, help="replicates the plain loop is timed on")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--models", default="single-gaussian,single-definition1,single-gaussian_complement,moe,"
                                            "moe-bias,moe-top2",
                        help="comma-separated subset of the models")
    parser.add_argument("--json", type=Path, default=None, help="write the numbers to this JSON file")
    args = parser.parse_args(argv)
    if args.plain_R > min(args.R, args.chunk):
        parser.error("--plain-R must not exceed min(--R, --chunk)")
    print("how to run: python bench/bench_engines.py [--R 2000] [--T 2000] [--chunk 1000] [--repeat 2] "
          "[--plain-R 3] [--json PATH]")
    print(f"config: R={args.R} T={args.T} chunk={args.chunk} repeat={args.repeat} plain_R={args.plain_R} "
          f"d={D} s={S} N={N}; MoE M={M}")

    start = time.perf_counter()
    kernels.compile_kernels()
    tiny = make_pool(generator_for(0, "bench-engines", "jit"), N=2, d=3, sigma0=1.0)
    run_batched(tiny, DrawStream(pool=tiny, R=2, T=2, s=1, seed=0, key=("jit",)), engine="numba")
    run_moe_batched(tiny, DrawStream(pool=tiny, R=2, T=2, s=1, seed=0, key=("jit",), M=2),
                    MoEConfig(M=2, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.1), engine="numba")
    jit_seconds = time.perf_counter() - start
    print(f"JIT compile (or load from numba's cache): {jit_seconds:.2f} s")

    rows = []
    wanted = set(args.models.split(","))
    single_pool = make_pool(generator_for(args.seed, "bench-engines", "pool"), N=N, d=D, sigma0=1.0)
    for features in SINGLE_FEATURES:
        name = f"single-{features}"
        if name not in wanted:
            continue
        common = dict(T=args.T, s=S, features=features, seed=args.seed, key=("bench-engines", features))
        complement = features == "gaussian_complement"
        rows.append(measure(
            name, args,
            simulate=lambda engine: simulate_single_expert(single_pool, R=args.R, chunk_size=args.chunk,
                                                           engine=engine, **common),
            streams=lambda: [DrawStream(pool=single_pool, R=size, index=i, **common)
                             for i, size in enumerate(chunk_sizes(args.R, args.chunk))],
            plain=lambda draws: plain_single(single_pool, draws, complement),
            engine_run=lambda stream, engine: run_batched(single_pool, stream, engine=engine).generalization,
        ))
    pool = make_clustered_pool(generator_for(args.seed, "bench-engines", "moe-pool"), N=N, K=3, d=D, sigma0=SIGMA0)
    paper = MoEConfig(M=M, eta=0.5, alpha=0.5, lam=0.3, Gamma=SIGMA0**1.25)
    # Algorithm 1 as the paper runs it, with loss-free bias balancing (u = 0.1 lambda), and with top-2 routing.
    moe_models = {"moe": (paper, plain_moe),
                  "moe-bias": (dataclasses.replace(paper, balance="bias", bias_rate=0.1 * paper.lam), plain_moe_variant),
                  "moe-top2": (dataclasses.replace(paper, top_k=2), plain_moe_variant)}
    for name, (cfg, plain) in moe_models.items():
        if name not in wanted:
            continue
        common = dict(T=args.T, s=S, features="definition1", sigma_t=0.1, beta_max=1.0, seed=args.seed,
                      key=("bench-engines", "moe"))
        rows.append(measure(
            name, args,
            simulate=lambda engine, cfg=cfg, common=common: simulate_moe(pool, cfg, R=args.R, chunk_size=args.chunk,
                                                                         engine=engine, **common),
            streams=lambda common=common: [stream_moe_chunk(pool, M=M, size=size, index=i, **common)
                                           for i, size in enumerate(chunk_sizes(args.R, args.chunk))],
            plain=lambda draws, cfg=cfg, plain=plain: plain(pool, draws, cfg),
            engine_run=lambda stream, engine, cfg=cfg: run_moe_batched(pool, stream, cfg, engine=engine).generalization,
        ))

    print()
    print(f"{'model':30s} {'engine':6s} {'sim ns/rr':>10s} {'floor ns/rr':>11s} {'sim/floor':>9s} "
          f"{'numpy floor':>11s} {'sim/np fl':>9s} {'plain ns/rr':>11s} {'plain/sim':>9s}")
    met = True
    for row in rows:
        for engine, e in row["engines"].items():
            print(f"{row['model']:30s} {engine:6s} {e['sim_ns']:10.1f} {row['floor_ns']:11.1f} "
                  f"{e['ratio_to_floor']:9.2f} {row['numpy_floor_ns']:11.1f} {e['ratio_to_numpy_floor']:9.2f} "
                  f"{row['plain_ns']:11.1f} {e['ratio_plain_over_sim']:8.1f}x")
    print()
    for row in rows:
        e = row["engines"]["numba"]
        floor_ok = e["ratio_to_floor"] <= FLOOR_TARGET
        plain_ok = e["ratio_plain_over_sim"] >= PLAIN_TARGET
        met = met and floor_ok and plain_ok
        numpy_ok = e["ratio_to_numpy_floor"] <= FLOOR_TARGET
        print(f"{row['model']:30s} numba: sim/floor {e['ratio_to_floor']:.2f} (target <= {FLOOR_TARGET}: "
              f"{'met' if floor_ok else 'NOT met'}), sim/numpy floor {e['ratio_to_numpy_floor']:.2f} "
              f"({'within' if numpy_ok else 'not within'} {FLOOR_TARGET}), plain/sim {e['ratio_plain_over_sim']:.1f}x "
              f"(target >= {PLAIN_TARGET:.0f}x: {'met' if plain_ok else 'NOT met'})")
    counts = {name: sum(ok(r["engines"]["numba"]) for r in rows) for name, ok in (
        ("plain", lambda e: e["ratio_plain_over_sim"] >= PLAIN_TARGET),
        ("floor", lambda e: e["ratio_to_floor"] <= FLOOR_TARGET),
        ("numpy", lambda e: e["ratio_to_numpy_floor"] <= FLOOR_TARGET))}
    print(f"numba, of {len(rows)} models: plain loop / engine >= {PLAIN_TARGET:.0f}x on {counts['plain']}; "
          f"within {FLOOR_TARGET}x of the stream's floor on {counts['floor']}; within {FLOOR_TARGET}x of numpy's "
          f"floor on {counts['numpy']}")
    if args.json is not None:
        args.json.write_text(json.dumps({"config": {k: (str(v) if isinstance(v, Path) else v)
                                                    for k, v in vars(args).items()},
                                         "jit_seconds": jit_seconds, "targets": {"ratio_to_floor": FLOOR_TARGET,
                                                                                 "plain_over_sim": PLAIN_TARGET},
                                         "rows": rows, "all_met": met}, indent=2))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
