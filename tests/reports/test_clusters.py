"""Root causes that are one error seen from different sides (checks/causes.py::Cluster, Pack.clusters): tabled
once, under the cluster's sentence, with the other findings among its slips; and root causes ranked by how much
of the headline discrepancies their own ablations explain (reports/consequence.py)."""

import numpy as np
import pytest

from moecl_verify.checks import ablation
from moecl_verify.checks.causes import Cluster
from moecl_verify.checks.model import ClaimResult, RunResult, Slip
from moecl_verify.checks.pack import Pack
from moecl_verify.packs.moe_cl import PACK, clusters
from moecl_verify.reports import bottom_line, consequence, markdown

pytestmark = pytest.mark.app

ROUTING, LEMMA15, GAP = "prop3.routing_outside_sets", "lemma15.ordering_fails", "prop2.between_set_gap_update_bound"
LEMMA3, THM2, LATE = "lemma3.expert_moves", "thm2.eq22.fails_given_routing", "thm1.late_forgetting_identity"


def entry(claim_id):
    return ClaimResult(id=claim_id, source="-", kind="bound", form="stated", verdict="refuted", expected=0.0,
                       observed=0.1, stderr=0.01, p_value=1e-9, false_fail_rate=1e-3, min_detectable=None,
                       config={"features": "gaussian"}, evidence="z-test", evidence_type="criterion")


def slip(slip_id, claim, summary, **kw):
    return Slip(slip_id, claim, "false statement", "-", summary, "-", entries=(entry(claim).key,), summary=summary,
                **kw)


def shares(cause, share, n=3):
    """Paired replicates whose removal of ``cause`` lowers an excess of 2 by ``share`` of it (hand-made)."""
    noise = np.array([0.1, -0.1, 0.05, -0.05])
    return tuple(ablation.paired(cause, f"removing {cause}", "the excess", 2.0 + noise, 2.0 * (1 - share) + noise / 10,
                                 case=f"t = {10 * (i + 1)}") for i in range(n))


def run(*slips):
    claims_ids = sorted({s.entries[0].claim for s in slips} | {"thm1.forgetting_late"})
    results = tuple(entry(c) for c in claims_ids)
    claims = tuple({"id": i, "summary": i, "source": "-", "kind": "bound", "statement": "x", "preconditions": [],
                    "notes": ""} for i in claims_ids)
    return RunResult(results, tuple(slips), (), {"budget": "smoke", "seed": 0, "claims": list(claims_ids)}, claims, {})


def planted(lemma3_share=0.03, routing_share=0.9, with_members=True):
    """The paper's gate-separation cluster (three roots), Lemma 3 and Theorem 2's exact failure, with a late-identity
    slip following from Lemma 3 and from the misrouting that holds both causes' ablations."""
    members = [slip(LEMMA15, "lemma15", "Lemma 15's ordering fails"),
               slip(GAP, "prop2.t1", "the between-set gap is O(σ0 log(1/σ0))")] if with_members else []
    records = shares(ROUTING, routing_share) + shares(LEMMA3, lemma3_share)
    return run(slip(ROUTING, "prop3", "tasks keep being routed outside their sets"),
               *members,
               slip(LEMMA3, "lemma3", "Lemma 3 is false"),
               slip(THM2, "thm2.generalization", "eq. (22) fails given the routing"),
               slip(LATE, "thm1.forgetting_late", "the late identity fails", causes=(LEMMA3, ROUTING),
                    ablation=records))


def test_the_paper_declares_one_cluster_led_by_the_misrouting():
    assert PACK.clusters == clusters.CLUSTERS
    (gate,) = PACK.clusters
    assert gate.ids == (ROUTING, LEMMA15, GAP)


def test_a_clusters_roots_are_one_root_cause_under_the_clusters_sentence():
    roots = consequence.root_causes(planted())
    ids = [rc.slip.id for rc in roots]
    assert LEMMA15 not in ids and GAP not in ids  # tabled once, under the lead
    gate = next(rc for rc in roots if rc.slip.id == ROUTING)
    assert gate.members == (LEMMA15, GAP) and gate.error == clusters.GATE_SEPARATION.error
    assert {LEMMA15, GAP, LATE} <= {r.slip.id for r in gate.derived}
    text = markdown.render(planted())
    table = text.split("## Root causes")[1].split("## Requests")[0]
    row = next(line for line in table.splitlines() if line.startswith("| 1 |"))
    assert row.startswith(f"| 1 | {clusters.GATE_SEPARATION.error.split(':')[0]}")
    assert f"(#slip-{LEMMA15.replace('.', '-')})" in row and f"(#slip-{GAP.replace('.', '-')})" in row
    # the bottom line names the error, then the finding that leads it
    cause = next(s for s in bottom_line.sentences(planted()) if s.kind == "cause")
    assert cause.text.startswith("The gate does not separate the expert sets before it freezes: tasks keep being")


def test_a_cluster_with_one_root_present_is_that_root_alone():
    roots = consequence.root_causes(planted(with_members=False))
    gate = next(rc for rc in roots if rc.slip.id == ROUTING)
    assert gate.members == () and gate.error == ""


@pytest.mark.parametrize("lemma3_share, routing_share, first", [(0.03, 0.9, ROUTING), (0.9, 0.03, LEMMA3)])
def test_root_causes_are_ranked_by_the_share_their_own_ablation_explains(lemma3_share, routing_share, first):
    roots = consequence.root_causes(planted(lemma3_share, routing_share))
    assert roots[0].slip.id == first
    assert roots[0].explained == pytest.approx(max(lemma3_share, routing_share), abs=0.02)
    # a cause no ablation measured (Theorem 2's exact failure) comes after both, whatever it breaks
    ranked = [rc.slip.id for rc in roots]
    assert ranked.index(THM2) > max(ranked.index(ROUTING), ranked.index(LEMMA3))
    assert next(rc for rc in roots if rc.slip.id == THM2).explained is None


def test_a_share_beyond_the_whole_counts_as_all_of_it():
    roots = consequence.root_causes(planted(routing_share=3.0))
    assert next(rc for rc in roots if rc.slip.id == ROUTING).explained == 1.0


def test_a_cluster_is_checked_when_it_is_declared():
    with pytest.raises(ValueError, match="other member"):
        Cluster(lead="a", members=(), error="x")
    with pytest.raises(ValueError, match="one sentence"):
        Cluster(lead="a", members=("b",), error=" ")
    with pytest.raises(ValueError, match="in two clusters"):
        Pack(name="toy", title="t", source="s", claims="x.claims",
             clusters=(Cluster("a", ("b",), "one"), Cluster("c", ("b",), "two")))
    with pytest.raises(ValueError, match="Cluster"):
        Pack(name="toy", title="t", source="s", claims="x.claims", clusters=("a",))
