"""What each budget buys in this paper's own terms: one table, :data:`BUDGETS`, of :class:`Sizes`.

A run names its budget ("smoke", "standard" or "full"); the machinery hands a claim this pack's entry for
it as ``ctx.sizes`` (``Pack.budgets``, ``checks.context.context_for``).  Every size an experiment of the pack
uses is a field here, so no claim or experiment reads the budget's name and no other module keeps a table
by budget.  The smoke budget is the smallest run of every claim and may end in ``inconclusive``, never in a
wrong verdict; standard and full resolve more.

Sizes only grow from smoke to standard to full (tests/unit/checks/test_pack_budgets.py checks it): a larger
budget never measures less.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from moecl_verify.numeric.digit_tasks import DEFINITIONS as FIG3_DEFINITIONS


@dataclass(frozen=True)
class Sizes:
    """The sizes of every experiment of the pack at one budget.

    ``*_replicates`` fields are numbers of independent replicates of each simulated configuration; along a
    sigma0 sweep (:mod:`packs.moe_cl.experiments.sweep_design`) they are the total over the sweep's pools,
    shared equally among them."""

    # -- designs shared by many claims
    # Task pools of the claims stated for every admissible pool of ground truths (experiments/pools.py):
    # Theorems 1-2 and their settings, Figures 2, 4, 5, Theorems 1-2 at Figure 2's configuration, C4-C5, C2,
    # the open questions.
    task_pools: int
    # Pools of every sigma0 sweep (experiments/sweep_design.py): Proposition 2, Lemma 6, Corollary 1, the
    # exploration sweep (Lemmas 1, 5, 7, 8, 9), Lemmas 11 and 12, the router-phase runs.
    sweep_pools: int

    # -- single expert (claims/single_expert) and Lemma 16 (claims/theorems/lemma16.py)
    lemma3_replicates: int  # Lemma 3's single-expert runs
    prop4_replicates: int  # Proposition 4's forgetting and generalization runs (shared by both claims)
    lemma16_replicates: int  # Lemma 16's runs, per router and feature model

    # -- Theorems 1 and 2 at their own configurations (experiments/thm1_runs.py, thm2_runs.py), per pool;
    # also the reruns with other numbers of experts of the insights C4 and C5 (experiments/theorem_variants.py)
    thm1_replicates: int
    thm2_replicates: int

    # -- the figures
    fig2_replicates: int  # Figure 2's runs per configuration and pool (experiments/fig2_runs.py), also
    # Theorems 1-2 at Figure 2's configuration (entries/theorems_at_fig2.py, on the runs of experiments/fig2_runs.py)
    fig45_replicates: int  # Figures 4 and 5's runs per Gamma and pool (experiments/fig45_runs.py)
    fig3_rounds: int  # T of every Figure 3 run (experiments/fig3_runs.py; the paper does not state it)
    fig3_replicates: int  # Figure 3's deep-network runs per task definition and M
    fig3_check_replicates: int  # the epochs check's runs at twice the epochs (at most fig3_replicates)
    fig3_check_definitions: tuple[str, ...]  # the task definitions the epochs check runs on

    # -- the router claims (claims/router)
    search_evaluations: int  # each worst-case search's evaluations, float and exact (entries/worst_case.py)
    lemma2_grid: tuple[Fraction, ...]  # Lemma 2's exact grid of relative gate outputs (experiments/smooth_router.py)
    prop2_sweep_depth: int  # how many sigma0 of gate_training.SWEEP_SIGMA0 Proposition 2 sweeps (0.4 down)
    prop2_replicates: int  # Proposition 2's runs per sigma0 and hidden constant (experiments/gate_training.py),
    # also the router-phase runs without termination that replay them (Proposition 1, Lemmas 13-15)
    router_algorithm1_replicates: int  # Algorithm 1's runs with termination of Propositions 1 and 3
    # (experiments/router_phase.py)
    cor1_replicates: int  # Corollary 1's sweep, per sigma0 and hidden constant
    lemma11_replicates: int  # Lemma 11's expert sets at T1, per sigma0 and hidden constant
    lemma11_task_counts: tuple[int, ...]  # the numbers of tasks N of Lemma 11's exact grid
    lemma12_gt_replicates: int  # Lemma 12's run with M > N
    lemma12_lt_replicates: int  # Lemma 12's sweep with M < N, per sigma0 and hidden constant

    # -- the exploration claims
    lemma6_replicates: int  # Lemma 6's sweep, per sigma0 and hidden constant
    exploration_replicates: int  # the exploration sweep of Lemmas 1, 5, 7, 8, 9 (experiments/exploration_sweep.py)

    # -- beyond the paper
    open_replicates: int  # the open questions' runs per regime and pool (experiments/open_questions.py), also C2


# Lemma 2's grid: each larger budget's grid holds the smaller one's points (x_m = h_m / lambda).
_LEMMA2_SMOKE = (Fraction(-1, 2), Fraction(0), Fraction(1, 3))
_LEMMA2_STANDARD = (Fraction(-1), Fraction(-1, 2), Fraction(0), Fraction(1, 3), Fraction(1))
_LEMMA2_FULL = tuple(Fraction(k, 4) for k in range(-6, 7)) + (Fraction(1, 3),)

BUDGETS = {
    "smoke": Sizes(
        task_pools=2, sweep_pools=2,
        lemma3_replicates=2_000, prop4_replicates=2_000, lemma16_replicates=2_000,
        thm1_replicates=500, thm2_replicates=500,
        fig2_replicates=20, fig45_replicates=20,
        # 24 rounds: smoke ends before M = 7's gate freezes
        fig3_rounds=24, fig3_replicates=2, fig3_check_replicates=2, fig3_check_definitions=("mirrors",),
        lemma2_grid=_LEMMA2_SMOKE,
        search_evaluations=300, prop2_sweep_depth=5, prop2_replicates=30, router_algorithm1_replicates=30,
        cor1_replicates=30, lemma11_replicates=200, lemma11_task_counts=tuple(range(2, 21)),
        lemma12_gt_replicates=60, lemma12_lt_replicates=40,
        lemma6_replicates=40, exploration_replicates=100,
        open_replicates=30,
    ),
    "standard": Sizes(
        task_pools=2, sweep_pools=4,
        lemma3_replicates=20_000, prop4_replicates=20_000, lemma16_replicates=20_000,
        thm1_replicates=4000, thm2_replicates=4000,
        fig2_replicates=100, fig45_replicates=100,
        fig3_rounds=50, fig3_replicates=6, fig3_check_replicates=4, fig3_check_definitions=("mirrors",),
        lemma2_grid=_LEMMA2_STANDARD,
        search_evaluations=3000, prop2_sweep_depth=9, prop2_replicates=300, router_algorithm1_replicates=200,
        cor1_replicates=150, lemma11_replicates=2000, lemma11_task_counts=tuple(range(2, 51)),
        lemma12_gt_replicates=400, lemma12_lt_replicates=200,
        lemma6_replicates=200, exploration_replicates=600,
        open_replicates=200,
    ),
    "full": Sizes(
        task_pools=4, sweep_pools=8,
        lemma3_replicates=200_000, prop4_replicates=200_000, lemma16_replicates=200_000,
        thm1_replicates=40000, thm2_replicates=40000,
        fig2_replicates=400, fig45_replicates=400,
        fig3_rounds=60, fig3_replicates=20, fig3_check_replicates=8, fig3_check_definitions=FIG3_DEFINITIONS,
        lemma2_grid=_LEMMA2_FULL,
        search_evaluations=10000, prop2_sweep_depth=9, prop2_replicates=1000, router_algorithm1_replicates=1000,
        cor1_replicates=600, lemma11_replicates=10000, lemma11_task_counts=tuple(range(2, 51)),
        lemma12_gt_replicates=2000, lemma12_lt_replicates=1000,
        lemma6_replicates=1000, exploration_replicates=3000,
        open_replicates=1000,
    ),
}
