"""Benchmark: Figure 3's deep-network engines, the per-replicate reference loop against the engine that
advances every replicate together.

Run from the repository root (needs the ``dnn`` extra):

    python bench/bench_dnn.py [--R 2,20,100] [--rounds 4] [--epochs 8] [--ref-max 20]

On Figure 3's configuration (scikit-learn's 8 x 8 digits, 'mirrors' tasks, M = 4 with termination, the
widths, s = 100, minibatches of 10, learning rate 0.2) at fewer rounds and epochs than a run uses, so that
the benchmark takes a minute or two: the cost per replicate-round of

* the reference (``numeric/dnn_moe.py``: one replicate after another, one compiled call per round), on the
  first ``min(R, --ref-max)`` replicates (its cost per replicate does not depend on R);
* the batched engine (``numeric/dnn_batch.py``: one compiled call per round for all R replicates), on R;

their ratio, how far the two agree on the shared replicates (the same routing; test errors equal to
float32 rounding, except where SGD amplifies a rounding difference over a round's steps), and the share of the batched engine's time
spent outside its compiled call (the host's gate and routing).  Also what sets the cost on this device:
one network's cost per SGD step against minibatch size, and the cost per replicate per step of 1, 20 and
100 networks trained together.  Each engine is compiled (run once
on two rounds) before it is timed.  Ratios are measured in one run; the machine may be shared and noisy.
The device is JAX's default one (``JAX_PLATFORMS=cpu`` forces the CPU).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402


def _per_step(dnn, shape, batch: int, rng) -> float:
    """Seconds per SGD step of one network at minibatch ``batch`` (800 steps, compiled first)."""
    import jax
    import jax.numpy as jnp

    params = tuple(jnp.asarray(a) for a in dnn.init_params(rng, shape))
    s = 100
    x = jnp.asarray(rng.random((s, shape.d, shape.d)).astype(np.float32))
    y = jnp.asarray(np.eye(shape.classes, dtype=np.float32)[rng.integers(shape.classes, size=s)])
    epochs = 8 * batch  # 800 steps whatever the minibatch
    orders = jnp.asarray(np.stack([rng.permutation(s) for _ in range(epochs)]).astype(np.int32))
    train = jax.jit(lambda p: dnn.train(p, x, y, orders, np.float32(0.2), batch))
    jax.block_until_ready(train(params))
    start = time.perf_counter()
    jax.block_until_ready(train(params))
    return (time.perf_counter() - start) / (epochs * s // batch)


def _per_replicate_step(dnn, shape, R: int, rng, steps: int = 200) -> float:
    """Seconds per replicate per SGD step (minibatch 10) of R networks trained together under ``jax.vmap``."""
    import jax
    import jax.numpy as jnp

    s, batch = 100, 10
    params = tuple(jnp.asarray(np.stack(a)) for a in zip(*(dnn.init_params(rng, shape) for _ in range(R))))
    x = jnp.asarray(rng.random((R, s, shape.d, shape.d)).astype(np.float32))
    y = jnp.asarray(np.eye(shape.classes, dtype=np.float32)[rng.integers(shape.classes, size=(R, s))])
    orders = jnp.asarray(np.stack([[rng.permutation(s) for _ in range(steps * batch // s)] for _ in range(R)])
                         .astype(np.int32))
    train = jax.jit(jax.vmap(lambda p, xs, ys, o: dnn.train(p, xs, ys, o, np.float32(0.2), batch)))
    jax.block_until_ready(train(params, x, y, orders))
    start = time.perf_counter()
    jax.block_until_ready(train(params, x, y, orders))
    return (time.perf_counter() - start) / (R * steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--R", default="2,20,100", help="replicate counts, comma-separated")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--ref-max", type=int, default=20, help="most replicates the reference is timed on")
    args = parser.parse_args()
    print("how to run: python bench/bench_dnn.py [--R 2,20,100] [--rounds 4] [--epochs 8] [--ref-max 20]")

    from moecl_verify.numeric import digit_tasks, dnn, dnn_batch, dnn_moe
    from moecl_verify.numeric.seeding import generator_for
    from moecl_verify.packs.moe_cl.experiments import fig3_runs

    data = digit_tasks.sklearn_digits(generator_for(fig3_runs.DATA_SEED, "fig3", "digits", "split"),
                                      test=fig3_runs.DIGITS_TEST)
    tasks = digit_tasks.make_tasks(data, "mirrors", fig3_runs.TEST_SIZE["digits"])
    shape = fig3_runs.net_shape(tasks)
    cfg = fig3_runs.engine_config(tasks, 4, args.rounds, args.epochs)
    counts = [int(v) for v in args.R.split(",")]
    print(f"device: {dnn.device()}; network of {shape.size} parameters, {tasks.d} x {tasks.d} images; M = 4, "
          f"{args.rounds} rounds of {args.epochs} epochs x {cfg.s // cfg.batch} minibatches of {cfg.batch}")

    rng = np.random.default_rng(0)
    steps = {b: _per_step(dnn, shape, b, rng) for b in (10, 20, 50, 100)}
    print("one network, cost per SGD step against minibatch size: "
          + ", ".join(f"{b}: {v * 1e6:.0f} us" for b, v in steps.items())
          + f" ({steps[100] / steps[10]:.1f}x from 10 to 100)")
    together = {R: _per_replicate_step(dnn, shape, R, rng) for R in (1, 20, 100)}
    print("networks trained together (jax.vmap), cost per replicate per SGD step: "
          + ", ".join(f"{R}: {v * 1e6:.0f} us" for R, v in together.items())
          + f" ({together[1] / together[20]:.2f}x less per replicate at 20 than alone)")

    def draws(R):
        return [dnn_moe.draw_replicate(generator_for(0, "bench-dnn", "replicate", r), tasks, shape, cfg.T, cfg.s,
                                       7, cfg.epochs) for r in range(R)]

    warm = dataclasses.replace(cfg, T=2)
    rows = []
    for R in counts:
        sample = draws(R)
        warm_draws = [dnn_moe.ReplicateDraws(d.tasks[:2], d.picks[:2], d.noise[:2], d.init, d.orders[:2]) for d in sample]
        dnn_batch.run_batch(tasks, shape, warm, warm_draws)  # compile for this R
        calls = {"seconds": 0.0}
        compiled = dnn_batch.routed_round

        def timed(*a, **k):
            import jax

            start = time.perf_counter()
            out = jax.block_until_ready(compiled(*a, **k))
            calls["seconds"] += time.perf_counter() - start
            return out

        dnn_batch.routed_round = timed
        try:
            start = time.perf_counter()
            fast = dnn_batch.run_batch(tasks, shape, cfg, sample)
            batched = time.perf_counter() - start
        finally:
            dnn_batch.routed_round = compiled
        R_ref = min(R, args.ref_max)
        dnn_moe.run_dnn_moe(tasks, shape, warm, warm_draws[:1])  # compile
        start = time.perf_counter()
        slow = dnn_moe.run_dnn_moe(tasks, shape, cfg, sample[:R_ref])
        reference = time.perf_counter() - start
        routing = np.array_equal(fast["chosen"][:R_ref], slow["chosen"]) and np.array_equal(
            fast["freeze_round"][:R_ref], slow["freeze_round"])
        gap = np.abs(fast["errors"][:R_ref] - slow["errors"])
        drifted = int(np.sum(np.nanmax(gap.reshape(R_ref, -1), axis=1) > 1e-4))
        per_ref = reference / (R_ref * cfg.T)
        per_fast = batched / (R * cfg.T)
        rows.append((R, per_ref, per_fast))
        print(f"R = {R:4d}: reference {per_ref * 1e3:8.2f} ms/replicate-round (on {R_ref}), batched "
              f"{per_fast * 1e3:8.2f} ms/replicate-round, ratio {per_ref / per_fast:5.2f}x; host share of the "
              f"batched engine {1 - calls['seconds'] / batched:.1%}; on the {R_ref} shared replicates: routing "
              f"{'identical' if routing else 'DIFFERENT'}, test errors within 1e-4 in {R_ref - drifted} "
              f"(largest difference {np.nanmax(gap):.1e})")
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
    print(f"peak resident memory of this benchmark (both engines, up to {max(counts)} replicates): {peak:.2f} GiB "
          "(the full run is held to 4 GB)")
    at20 = [r for r in rows if r[0] == 20]
    if at20:
        print(f"ratio at 20 replicates: {at20[0][1] / at20[0][2]:.2f}x (target >= 8x)")


if __name__ == "__main__":
    main()
