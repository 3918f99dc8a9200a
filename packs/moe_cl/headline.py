"""What the report judges in one line each: the paper's headline results, the lemma chain, and the claims
C1-C6 of an independent reviewer's reading of the paper (its table of claims and the evidence it names for
each)."""

from __future__ import annotations

from moecl_verify.checks.pack import HeadlineItem


def _fig3_scope() -> str:
    """Figure 3's experiment as the run does it, against the paper's (Section 6, Appendix A.3)."""
    from moecl_verify.packs.moe_cl.budgets import BUDGETS
    from moecl_verify.packs.moe_cl.experiments import fig3_runs as f

    replicates = "/".join(str(BUDGETS[b].fig3_replicates) for b in ("smoke", "standard", "full"))
    return (f"scikit-learn's 8 × 8 digits ({f.TEST_SIZE['digits']} test images per task), or MNIST averaged to "
            f"{f.MNIST_D} × {f.MNIST_D} with --mnist DIR ({f.TEST_SIZE['mnist']}); N = {f.N} tasks, "
            f"M = {', '.join(map(str, f.EXPERTS))}; a small CNN (conv {f.WIDTHS['conv1']}-{f.WIDTHS['conv2']}, "
            f"fc {f.WIDTHS['fc1']}-{f.WIDTHS['fc2']}), {f.EPOCHS} SGD epochs per round (paper: 600), {f.S} images per "
            f"round; {replicates} replicates at the smoke/standard/full budgets")

PAPER_ITEMS = (
    HeadlineItem("prop1", "Proposition 1", "after exploration (T1 rounds) the expert sets are fixed and experts stop "
                 "changing", ("prop1",), "paper"),
    HeadlineItem("prop2", "Proposition 2", "if the gate keeps training, gate-output gaps shrink to O(σ0^1.75) (the "
                 "specialization is lost)", ("prop2",), "paper"),
    HeadlineItem("prop3", "Proposition 3", "gate training terminates by T2 and then routes each task inside its set, "
                 "uniformly", ("prop3",), "paper"),
    HeadlineItem("prop4", "Proposition 4", "one expert's expected forgetting and generalization error, eq. (17)-(18)",
                 ("prop4",), "paper"),
    HeadlineItem("thm1", "Theorem 1", "MoE's forgetting and generalization error bounds, eq. (19)-(20), M ≥ N",
                 ("thm1",), "paper"),
    HeadlineItem("thm2", "Theorem 2", "the bounds with fewer experts than tasks, eq. (21)-(22), M < N",
                 ("thm2",), "paper"),
    HeadlineItem("fig2", "Figure 2", "termination drives errors to near zero; MoE beats one expert; M = 20 no "
                 "better than M = 10", ("fig2",), "paper"),
    HeadlineItem("fig3", "Figure 3", "the insights hold for deep networks on real data", ("fig3",), "paper"),
    HeadlineItem("fig4", "Figure 4", "a threshold Γ ≤ λ balances load within expert sets", ("fig4",), "paper"),
    HeadlineItem("fig5", "Figure 5", "errors are robust to the threshold Γ; balanced load lowers generalization error",
                 ("fig5",), "paper"),
)

LEMMA_CHAIN = HeadlineItem(
    "lemmas", "Lemmas 1-16, Corollary 1", "the proof chain behind Propositions 1-3 and Theorems 1-2",
    tuple(f"lemma{i}" for i in range(1, 17)) + ("cor1",), "paper", unit="lemmas")

# Every statement of the paper, for the per-statement status table: the propositions and theorems, then the lemmas
# in the paper's order (their one-line descriptions are the claims' summaries).
STATEMENTS = tuple(item for item in PAPER_ITEMS if not item.key.startswith("fig")) + tuple(
    HeadlineItem(f"lemma{i}", f"Lemma {i}", "", (f"lemma{i}",), "paper") for i in range(1, 17)) + (
    HeadlineItem("cor1", "Corollary 1", "", ("cor1",), "paper"),)

REVIEWER_ITEMS = (
    # Routing correctness (Proposition 3 (b)) before the experts' stillness (Proposition 1 (b)).
    HeadlineItem("C1", "C1", "experts specialize into task sets and routing becomes correct after O(M/η) rounds",
                 ("prop3", "prop1"), "reviewer",
                 parts=(("routing becomes correct (Proposition 3)", ("prop3",)),
                        ("the experts' sets are fixed and the experts settle (Proposition 1)", ("prop1",)))),
    # Two parts: what continued training does to the errors (Figure 2's criterion) and to the routing itself
    # (c2: purity with against without termination, both regimes).  Proposition 2's rates (its own row) are not
    # used here: a gap shrinking more slowly than sigma0^1.75 still shrinks, so a wrong exponent does not
    # refute "destroys the specialization".
    HeadlineItem("C2", "C2", "continued gate training under the balancing loss destroys the specialization",
                 ("c2", "fig2.no_termination_higher"), "reviewer",
                 parts=(("the specialization is destroyed (routing purity)", ("c2",)),
                        ("the errors rise without termination", ("fig2.no_termination_higher",)))),
    HeadlineItem("C3", "C3", "terminating gate updates gives correct routing with balanced load within each set",
                 ("prop3", "fig4.balance"), "reviewer",
                 parts=(("correct routing after termination (Proposition 3)", ("prop3",)),
                        ("balanced load within each set (Figure 4)", ("fig4.balance",)))),
    HeadlineItem("C4", "C4", "MoE lowers forgetting and generalization error relative to one expert",
                 ("c4", "fig2.moe_beats_single"), "reviewer"),
    HeadlineItem("C5", "C5", "experts beyond what the tasks need do not help and delay convergence",
                 ("c5", "fig2.more_experts_no_gain"), "reviewer"),
    HeadlineItem("C6", "C6", "the insights carry to deep networks", ("fig3",), "reviewer", scope=_fig3_scope()),
)

# Headline result -> the lemmas its proof uses (a slip there undercuts the result).  Appendix E (proof E.8 of Proposition 1) prepares
# Lemmas 7-13 and its final proof cites Lemmas 1, 6, 9, 10, 12 and 13, and Lemma 5 through the
# auxiliary loss; Appendix F (proof F.3 of Proposition 2) prepares Lemmas 14-15 and cites Lemmas 5
# and 13; Lemma 3 (an expert given its previous task again does not move) is what Proposition 1's
# "experts stop changing" and Theorem 1's late-phase identity rest on; eq. (42) of Lemma 16 is the
# recursion the proofs of Proposition 4 and Theorem 1 start from.
PROOF_USES = {
    "prop1": ("lemma1", "lemma3", "lemma5", "lemma6", "lemma7", "lemma8", "lemma9", "lemma10", "lemma11",
              "lemma12", "lemma13"),
    "prop2": ("lemma5", "lemma13", "lemma14", "lemma15"),
    "prop4": ("lemma16",),
    "thm1": ("lemma3", "lemma16"),
}
