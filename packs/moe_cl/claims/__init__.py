"""The paper's claims, one module per claim id (or id prefix), grouped as the paper is.

* ``single_expert/``: one expert trained on a task sequence (Proposition 4, Lemma 3).
* ``exploration/``: the gate in its exploration phase (Lemmas 1, 5-9).
* ``router/``: the router after exploration (Lemma 2, Corollary 1, Lemmas 4, 10-15, Propositions 1-3).
* ``theorems/``: the MoE's forgetting and generalization error (Theorems 1-2, Lemma 16, insights C4-C5).
* ``figures/``: the paper's synthetic experiments (Figures 2, 4, 5).
* ``audit``: the experiments against the theorems' preconditions.

Modules here are found by :func:`moecl_verify.checks.registry.all_claims`; nothing lists them.
A claim module imports theory, numeric and :mod:`moecl_verify.packs.moe_cl.experiments`, never another
claim module.
"""
