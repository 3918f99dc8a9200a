"""The default pack: the paper *Theory on Mixture-of-Experts in Continual Learning*.

Everything about the paper that the machinery reads is declared here, in one :class:`Pack`: the claims
(``claims/``, one module per claim id), the experiments they share (``experiments/``), the paper's order,
its headline results, the claims C1-C6 of an independent reviewer's reading, the questions it leaves open
(``open.*``), cost hints, what each budget buys (``budgets.py``, read as ``ctx.sizes``), its own figures
(``figures/``), the ``--mnist`` option and the ``simulate`` and ``figures`` commands (``commands/``).  The
paper's models live in the shared ``theory/`` and ``numeric/`` layers.
"""

from __future__ import annotations

from moecl_verify.checks.pack import Pack
from moecl_verify.packs.moe_cl import (answers, budgets, clusters, commands, headline, options, requests, schedule,
                                      survives, texts)


def _figures(run) -> list:
    from moecl_verify.packs.moe_cl import figures

    return figures.specs(run)


def _derived_bounds() -> tuple:
    from moecl_verify.packs.moe_cl.entries import derived_bounds

    return derived_bounds.bounds()


PACK = Pack(
    name=texts.NAME,
    title=texts.TITLE,
    source=texts.SOURCE,
    claims="moecl_verify.packs.moe_cl.claims",
    noun="paper",
    order=texts.ORDER,
    simulation=texts.SIMULATION,
    headline=headline.PAPER_ITEMS,
    reading_headline=headline.REVIEWER_ITEMS,
    chain=headline.LEMMA_CHAIN,
    statements=headline.STATEMENTS,
    proof_uses=headline.PROOF_USES,
    reading="an independent reviewer's reading",
    beyond="open",
    beyond_title="Beyond the paper",
    cost_hints=schedule.COST_HINT,
    budgets=budgets.BUDGETS,
    figures=_figures,
    options=(options.MNIST,),
    commands=commands.COMMANDS,
    peak_memory_gb=schedule.PEAK_GB,
    swept="sigma0",
    swept_symbol="σ0",
    symbols={"sigma0": "σ0", "sigma_0": "σ0", "sigma_t": "σ_t"},
    source_note=texts.SOURCE_NOTE,
    slip_caveat=texts.SOURCE_CAVEAT,
    configuration=texts.CONFIGURATION,
    answers=answers.ANSWERS,
    answer_facts=answers.ANSWER_FACTS,
    derived_bounds=_derived_bounds,
    survives=survives.sentences,
    requests=requests.requests,
    clusters=clusters.CLUSTERS,
    # three, so that the bottom line and the C1-C6 table fit report.html's first screen at 1400 x 1000
    bottom_line_causes=3,
    words={"definition1": "Definition 1's features", "gaussian": "Gaussian features"},
    default=True,
)
