"""The second pack: a generic textbook chapter on the mathematics of mixture-of-experts models.

The chapter ("1.5 MoE模型的数学推导与理论证明": top-K routing, the load-balancing loss, gradients through top-K
and the softmax, three stated theorems, numerical stability) is checked claim by claim in its own order.  Its
display formulas did not survive in the source text: only the prose, the inline definitions and the
theorems' statements did, so every formula the checks need and the text lacks is a *reading* with its
source, recorded in the claim's interpretations and named in the entries that rest on it, never a silent repair.
The routing, the weights and the auxiliary loss the claims share are in ``model.py`` (exact and numpy).

The pack imports nothing from the paper's pack (``moe_cl``); it shares only the machinery.
"""

from __future__ import annotations

from moecl_verify.checks.pack import Pack
from moecl_verify.packs.moe_chapter import budgets, headline, requests, texts

PACK = Pack(
    name=texts.NAME,
    title=texts.TITLE,
    source=texts.SOURCE,
    claims="moecl_verify.packs.moe_chapter.claims",
    noun="chapter",
    order=texts.ORDER,
    headline=headline.ITEMS,
    statements=headline.STATEMENTS,
    requests=requests.requests,
    budgets=budgets.BUDGETS,
    symbols={"tau": "τ", "sigma2": "σ²"},
    source_note=texts.SOURCE_NOTE,
    slip_caveat=texts.SOURCE_CAVEAT,
    configuration=texts.CONFIGURATION,
)
