"""Benchmark: batched single-expert engine vs the per-replicate reference loop.

Run from the repository root:

    python bench/bench_single_expert.py [--R 1000] [--R-ref 20] [--T 2000] [--chunk 500] [--repeat 3]

Both engines run on identical draws (d=10, s=6, N=6, features=definition1).
The batched engine runs all R replicates, in chunks of --chunk replicates so
that only one chunk's draws (~480 MB at the defaults, ~0.75 GB peak RSS) is
alive at a time.  Per-round Python overhead is fixed, so larger chunks
amortise it better (chunk 250: ~0.4 GB peak, ratio ~49x on the reference machine); the
reference loop runs on the first R_ref replicates of the first chunk.  What
is compared is the time per replicate (minimum over --repeat runs, to damp
machine noise).  Draw generation is not timed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

# Running as a script puts bench/ (not the repo root) on sys.path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from moecl_verify.numeric.draws import SingleExpertDraws, draw_single_expert  # noqa: E402
from moecl_verify.numeric.pool import make_pool  # noqa: E402
from moecl_verify.numeric.seeding import generator_for  # noqa: E402
from moecl_verify.numeric.single_expert import run_batched, run_reference  # noqa: E402

D, S, N = 10, 6, 6


def _best_of(repeat, engine, pool, draws):
    """Minimum wall time over ``repeat`` runs: the least noise-inflated estimate."""
    best, result = float("inf"), None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        result = engine(pool, draws)
        best = min(best, time.perf_counter() - t0)
    return best, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--R", type=int, default=1000, help="replicates for the batched engine")
    parser.add_argument("--R-ref", type=int, default=20, help="replicates for the reference loop")
    parser.add_argument("--T", type=int, default=2000, help="rounds")
    parser.add_argument("--chunk", type=int, default=500, help="replicates per batched chunk")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="timing repeats; the minimum is kept")
    args = parser.parse_args(argv)
    if args.R_ref > min(args.chunk, args.R):
        parser.error("--R-ref must not exceed min(--chunk, --R)")

    print("how to run: python bench/bench_single_expert.py [--R 1000] [--R-ref 20] [--T 2000] [--chunk 500] [--repeat 3]")
    print(f"config: d={D} s={S} N={N} T={args.T} features=definition1 R={args.R} R_ref={args.R_ref} chunk={args.chunk}")

    pool = make_pool(generator_for(args.seed, "bench", "pool"), N=N, d=D, sigma0=1.0)

    batched_seconds = 0.0
    ref_seconds = None
    max_rel_diff = None
    for i, start in enumerate(range(0, args.R, args.chunk)):
        size = min(args.chunk, args.R - start)
        draws = draw_single_expert(
            generator_for(args.seed, "bench", "chunk", i), pool, R=size, T=args.T, s=S, features="definition1"
        )
        seconds, batched = _best_of(args.repeat, run_batched, pool, draws)
        batched_seconds += seconds

        if i == 0:
            subset = SingleExpertDraws(draws.tasks[: args.R_ref], draws.X[: args.R_ref])
            ref_seconds, reference = _best_of(args.repeat, run_reference, pool, subset)
            # Scale by the largest value: early G_t can be ~1e-32, so entrywise
            # relative differences would be meaningless there.
            a, b = batched.generalization[: args.R_ref], reference.generalization
            max_rel_diff = float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
        # Drop every view of this chunk's draws so only one chunk is alive at a time.
        del draws, batched
        if i == 0:
            del subset, reference

    per_batched = batched_seconds / args.R
    per_ref = ref_seconds / args.R_ref
    print(f"batched   : {batched_seconds:8.3f} s total, {per_batched * 1e3:9.4f} ms/replicate")
    print(f"reference : {ref_seconds:8.3f} s total, {per_ref * 1e3:9.4f} ms/replicate")
    print(f"speed ratio (reference / batched, per replicate): {per_ref / per_batched:.1f}x (target >= 50x)")
    print(f"max |G_batched - G_reference| / max |G| on shared replicates: {max_rel_diff:.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
