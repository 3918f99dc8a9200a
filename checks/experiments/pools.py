"""Task pools as an outer level of the design.

A claim stated for every admissible pool of ground truths is measured on several pools, drawn from
their own seed (POOL_SEED), not from the replicate seed: changing ``--seed`` redraws the replicates,
never the pools, so a verdict cannot flip because one random pool happened to suit the claim. Each pool
is its own entry (config ``pool``, ``pool_seed``): a refutation names the pool it was found on, and the
pool can be rebuilt from the recorded seed and index; a claim is confirmed only on the pools tried.
"""

POOL_SEED = 2024
POOLS = {"smoke": 2, "standard": 2, "full": 4}


def pool_indices(budget: str) -> range:
    return range(POOLS[budget])
