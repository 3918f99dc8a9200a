"""Benchmark: Algorithm 1's batched engine vs its per-replicate reference loop.

Run from the repository root:

    python bench/bench_moe.py [--R 100] [--R-ref 2] [--T 2000] [--M 10]

1. Speed ratio on Figure 2's configuration (N = 7, K = 3, d = 10, s = 6,
   eta = alpha = 0.5, lambda = 0.3, Gamma = sigma0^1.25, T = 2000): the batched
   engine on R replicates against the reference loop on the first R_ref of the
   same draws, compared per replicate (target >= 50x).  The reference computes
   F_t and G_t by their O(t) definitions, so most of its cost is those sums.
2. All of Figure 2 (M in {1, 5, 10, 20}, with and without termination, 100
   replicates each, T = 2000): wall time (target < 60 s) and peak memory
   (target < 2 GiB, read from resource.getrusage).
Ratios and totals are measured in one run; the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from moecl_verify.numeric.moe import MoEConfig, MoEDraws, draw_moe, run_moe_batched, run_moe_reference, simulate_moe  # noqa: E402
from moecl_verify.numeric.pool import make_clustered_pool  # noqa: E402
from moecl_verify.numeric.seeding import generator_for  # noqa: E402

SIGMA0 = 0.4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--R", type=int, default=100)
    parser.add_argument("--R-ref", type=int, default=2)
    parser.add_argument("--T", type=int, default=2000)
    parser.add_argument("--M", type=int, default=10)
    args = parser.parse_args()
    print("how to run: python bench/bench_moe.py [--R 100] [--R-ref 2] [--T 2000] [--M 10]")

    pool = make_clustered_pool(generator_for(0, "bench", "pool"), N=7, K=3, d=10, sigma0=SIGMA0)
    cfg = MoEConfig(M=args.M, eta=0.5, alpha=0.5, lam=0.3, Gamma=SIGMA0**1.25)
    draws = draw_moe(generator_for(0, "bench", "draws"), pool, R=args.R, T=args.T, s=6, M=args.M)

    start = time.perf_counter()
    fast = run_moe_batched(pool, draws, cfg)
    batched = (time.perf_counter() - start) / args.R
    sub = MoEDraws(draws.tasks[: args.R_ref], draws.X[: args.R_ref], draws.noise[: args.R_ref])
    start = time.perf_counter()
    slow = run_moe_reference(pool, sub, cfg)
    reference = (time.perf_counter() - start) / args.R_ref
    agree = np.max(np.abs(fast.generalization[: args.R_ref] - slow.generalization)) / np.max(np.abs(slow.generalization))
    print(f"config: Figure 2, M={args.M}, T={args.T}, R={args.R}, R_ref={args.R_ref}")
    print(f"batched   : {batched * 1e3:9.2f} ms/replicate")
    print(f"reference : {reference * 1e3:9.2f} ms/replicate")
    print(f"speed ratio (reference / batched, per replicate): {reference / batched:.1f}x (target >= 50x)")
    print(f"max |G_batched - G_reference| / max |G|: {agree:.2e}")

    start = time.perf_counter()
    for termination in (True, False):
        for M in (1, 5, 10, 20):
            cfg = MoEConfig(M=M, eta=0.5, alpha=0.5, lam=0.3, Gamma=SIGMA0**1.25, termination=termination)
            simulate_moe(pool, cfg, R=100, T=2000, s=6, seed=0, key=("bench-fig2", M), chunk_size=100)
    total = time.perf_counter() - start
    peak_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # ru_maxrss is KiB on Linux
    print(f"all of Figure 2 (8 curves x 100 replicates x T=2000): {total:.1f} s (target < 60 s), "
          f"peak RSS {peak_gib:.2f} GiB (target < 2 GiB)")


if __name__ == "__main__":
    main()
