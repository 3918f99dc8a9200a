"""Search for a regime in which the paper's gate specializes (the baseline of the open-question experiments).

At Figure 2's stated hyperparameters Algorithm 1 freezes the gate right after exploration, with routing
purity well below 1 (above chance, far from specialized), so an answer obtained there says little about a
gate that has learned to route. This script runs a small documented grid of Algorithm 1 (with termination,
and the same draws without) in the theory setting of the lemma checks (N = 3, M = 6, d = 10, s = 6,
Definition 1 features, sigma_t = 0.1, i.i.d. pools) and reports, per setting and pool, the eq. (11)
routing purity over the last quarter of the run, the share of replicates whose gate froze, the median
freeze round and E[G_T].

Grid: sigma0 in {0.4, 0.2, 0.1}; hidden constant c of eta = alpha = c sigma0^0.5 and lambda = c
sigma0^1.25 in {0.5, 1}; Gamma = g c sigma0^1.25 with g in {1, 4}; feature signal v_n = k w_n / sigma0
with k in {1, 2, 4, 8}; exploration T1 = x ceil(M / eta) with x in {1, 4}; run length T = T1 + 4 t2 with
t2 = ceil(M / (eta sigma0^0.75)) (Proposition 2). Pools 0-3 of the open-question experiments' pool stream
(generator_for(2024, "open", "pool", k)), 30 replicates each.

Selection rule (fixed before looking at the table): among the settings whose gate froze in at least 95% of
the replicates on every pool, the one with the largest mean purity over the pools. The experiments
(packs/moe_cl/experiments/open_questions.py) run only the chosen setting; this search stays out of the run.

    python bench/specializing_regime.py [--replicates 30] [--pools 4] [--top 12]
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from moecl_verify.numeric.moe import MoEConfig, simulate_moe  # noqa: E402
from moecl_verify.numeric.pool import make_pool  # noqa: E402
from moecl_verify.numeric.seeding import generator_for  # noqa: E402

N, M, D, S, SIGMA_T = 3, 6, 10, 6, 0.1
GRID = dict(sigma0=(0.4, 0.2, 0.1), c=(0.5, 1.0), g=(1.0, 4.0), k=(1.0, 2.0, 4.0, 8.0), x=(1, 4))
MIN_FROZEN = 0.95


def purity(run) -> np.ndarray:
    """(R, T) booleans: round t's routed expert lies in M_{n_t} (eq. 11) at the gate that routed round t."""
    sets = run.rounds["sets"]  # after round t's update: the gate that routes round t + 1
    before = np.concatenate([np.zeros_like(sets[:, :1]), sets[:, :-1]], axis=1)
    R, T = run.tasks.shape
    return before[np.arange(R)[:, None], np.arange(T)[None, :], run.chosen] == run.tasks


def one(sigma0, c, g, k, x, pool_index, R, termination):
    eta = c * sigma0**0.5
    T1 = x * int(math.ceil(M / eta - 1e-12))
    t2 = int(math.ceil(M / (eta * sigma0**0.75)))
    cfg = MoEConfig(M=M, eta=eta, alpha=eta, lam=c * sigma0**1.25, Gamma=g * c * sigma0**1.25,
                    termination=termination, T1=T1, record_rounds=True)
    pool = make_pool(generator_for(2024, "open", "pool", pool_index), N=N, d=D, sigma0=sigma0,
                     signal_scale=k / sigma0)
    T = T1 + 4 * t2
    run = simulate_moe(pool, cfg, R=R, T=T, s=S, features="definition1", sigma_t=SIGMA_T, seed=0,
                       key=("regime search", pool_index))
    late = purity(run)[:, T - T // 4:].mean()
    frozen = run.freeze_round > 0
    return dict(purity=float(late), frozen=float(frozen.mean()),
                freeze=float(np.median(run.freeze_round[frozen])) if frozen.any() else float("nan"),
                G=float(run.generalization[:, -1].mean()), T=T, T1=T1, t2=t2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=30)
    parser.add_argument("--pools", type=int, default=4)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    started = time.monotonic()
    rows = []
    for sigma0, c, g, k, x in itertools.product(*GRID.values()):
        on = [one(sigma0, c, g, k, x, p, args.replicates, True) for p in range(args.pools)]
        off = [one(sigma0, c, g, k, x, p, args.replicates, False) for p in range(args.pools)]
        row = dict(sigma0=sigma0, c=c, g=g, k=k, x=x, T=on[0]["T"], T1=on[0]["T1"], t2=on[0]["t2"],
                   purity=float(np.mean([r["purity"] for r in on])),
                   purity_pools=[r["purity"] for r in on], purity_off=float(np.mean([r["purity"] for r in off])),
                   frozen_min=min(r["frozen"] for r in on), freeze=[r["freeze"] for r in on],
                   G=float(np.mean([r["G"] for r in on])), G_off=float(np.mean([r["G"] for r in off])))
        rows.append(row)
        print(f"sigma0={sigma0:<4} c={c:<3} g={g:<3} k={k:<3} T1x{x} T={row['T']:<5} purity {row['purity']:.3f} "
              f"(pools {' '.join(f'{p:.2f}' for p in row['purity_pools'])}; no termination {row['purity_off']:.3f}) "
              f"frozen >= {row['frozen_min']:.2f} median freeze {' '.join(f'{f:.0f}' for f in row['freeze'])} "
              f"G_T {row['G']:.3g} / no termination {row['G_off']:.3g}", flush=True)
    eligible = [r for r in rows if r["frozen_min"] >= MIN_FROZEN]
    eligible.sort(key=lambda r: -r["purity"])
    print(f"\nchance level 1/N = {1 / N:.3f}; settings frozen in >= {MIN_FROZEN:.0%} of replicates on every pool, "
          f"by mean purity (top {args.top}):")
    for r in eligible[: args.top]:
        print(f"  sigma0={r['sigma0']} c={r['c']} g={r['g']} k={r['k']} T1x{r['x']}: purity {r['purity']:.3f} "
              f"(pools {' '.join(f'{p:.2f}' for p in r['purity_pools'])}), no termination {r['purity_off']:.3f}, "
              f"G_T {r['G']:.3g} / {r['G_off']:.3g}")
    best = max(rows, key=lambda r: r["purity"])
    print(f"largest purity without the freeze requirement: sigma0={best['sigma0']} c={best['c']} g={best['g']} "
          f"k={best['k']} T1x{best['x']}: {best['purity']:.3f}, frozen >= {best['frozen_min']:.2f}")
    print(f"{len(rows)} settings x {args.pools} pools x 2 in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
