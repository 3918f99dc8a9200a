"""Task pools as an outer level of the design.

A claim stated for every admissible pool of ground truths is measured on several pools, drawn from
their own seed (POOL_SEED), not from the replicate seed: changing ``--seed`` redraws the replicates,
never the pools, so a verdict cannot flip because one random pool happened to suit the claim. Each pool
is its own entry (config ``pool``, ``pool_seed``): a refutation names the pool it was found on, and the
pool can be rebuilt from the recorded seed and index; a claim is confirmed only on the pools tried.
"""

from moecl_verify.packs.moe_cl.budgets import BUDGETS, Sizes

POOL_SEED = 2024


def pool_indices(sizes: Sizes) -> range:
    """The task pools of a run whose budget buys ``sizes`` (``ctx.sizes``): 0 .. task_pools - 1."""
    return range(sizes.task_pools)


def pool_config(k: int) -> dict:
    """What identifies pool k in an entry's config."""
    return {"pool": k, "pool_seed": POOL_SEED}


POOL_NOTE = (
    "Measured on " + ", ".join(f"{sizes.task_pools} task pools at the {budget} budget"
                               for budget, sizes in BUDGETS.items())
    + f", drawn independently of the replicate seed (pool seed {POOL_SEED}); each pool is its own entry (labelled "
    "'pool k'), a refutation names the pool it was found on, and confirmed means the statement holds on the "
    "pools tried."
)
