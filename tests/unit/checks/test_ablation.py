"""Effects measured by ablation (checks/ablation.py): the record, its paired intervals, and the rule the reports
apply (a cause quotes a number only where its ablation moved it; a discrepancy is split between its ablated
causes).  Every expected number is computed here by hand from the planted replicates."""

import math

import numpy as np
import pytest
from scipy import stats as sps

from moecl_verify.checks import ablation
from moecl_verify.checks.model import Slip
from moecl_verify.checks.runner import DEFAULT_FAMILY_RATE
from moecl_verify.reports.consequence import RankedSlip, RootCause

# Common noise of six paired replicates (mean 0), and two small cause-specific residues (mean 0 each).
NOISE = np.array([0.1, -0.2, 0.3, -0.1, 0.0, -0.1])
E_A = np.array([0.01, -0.01, 0.02, -0.02, 0.0, 0.0])
E_B = np.array([0.0, 0.02, -0.02, 0.01, -0.01, 0.0])
# The planted discrepancy: 5 = 3 from cause A + 2 from cause B, on top of the common noise.
BASELINE = 5.0 + NOISE
WITHOUT_A = 2.0 + NOISE + E_A
WITHOUT_B = 3.0 + NOISE + E_B


def slip(slip_id, *causes, effect="", records=()):
    return Slip(id=slip_id, location="here", slip_class="false statement", stated="s", holds="h", evidence="e",
                causes=causes, effect=effect, ablation=tuple(records))


def test_the_level_is_the_runs_default_family_rate():
    assert ablation.LEVEL == pytest.approx(1 - DEFAULT_FAMILY_RATE, abs=1e-15)


def test_a_paired_ablation_matches_the_hand_computed_t_interval():
    a = ablation.paired("a", "cause A", "the gap", BASELINE, WITHOUT_A)
    assert a.replicates == 6 and a.baseline == pytest.approx(5.0) and a.ablated == pytest.approx(2.0)
    assert a.difference == pytest.approx(3.0)
    # by hand: the differences are 3 - E_A; sd from the sum of squares 0.001 over 5 degrees of freedom
    half = sps.t.ppf(1 - DEFAULT_FAMILY_RATE / 2, 5) * math.sqrt(0.001 / 5) / math.sqrt(6)
    assert a.interval == pytest.approx((3.0 - half, 3.0 + half), rel=1e-9)
    assert a.moved and a.share == pytest.approx(0.6)
    # the share 3/5 by the delta method: the error of mean(diff - 0.6 baseline) = mean(-E_A - 0.6 NOISE), over 5
    residual = -E_A - 0.6 * NOISE
    half_share = sps.t.ppf(1 - DEFAULT_FAMILY_RATE / 2, 5) * np.std(residual, ddof=1) / math.sqrt(6) / 5.0
    assert a.share_interval == pytest.approx((0.6 - half_share, 0.6 + half_share), rel=1e-9)
    # pairing matters: unpaired, the common noise (sd about 0.18) would swamp a difference this precise
    assert a.interval[1] - a.interval[0] < 0.1


def test_a_planted_cause_whose_ablation_changes_nothing_gets_no_effect():
    # removing the cause leaves the quantity as it was, up to noise of mean 0
    null = ablation.paired("root", "the planted cause", "the gap", BASELINE, BASELINE + E_A)
    assert null.difference == pytest.approx(0.0, abs=1e-12) and not null.moved
    derived = slip("derived", "root", effect="the gap is 5 at the configuration", records=(null,))
    root = slip("root")
    assert ablation.effect_for("root", derived) == ""
    rc = RootCause(root, (RankedSlip(derived, (), ()),), (), ())
    # nothing borrowed from the derived slip's size either: the ablation says the cause does not produce it
    assert rc.effect == ("", "")
    # without the ablation the derived slip's size would have been shown: the ablation is what removes it
    plain = RootCause(root, (RankedSlip(slip("derived", "root", effect="the gap is 5 at the configuration"), (), ()),),
                      (), ())
    assert plain.effect == ("derived", "the gap is 5 at the configuration")


def test_a_planted_two_cause_discrepancy_is_split_between_the_causes_by_their_ablations():
    records = (ablation.paired("a", "cause A", "the gap", BASELINE, WITHOUT_A),
               ablation.paired("b", "cause B", "the gap", BASELINE, WITHOUT_B))
    # hand-computed shares: 3/5 and 2/5
    assert [r.share for r in records] == [pytest.approx(0.6), pytest.approx(0.4)]
    assert all(r.moved for r in records)
    assert sum(r.share for r in records) == pytest.approx(1.0)
    gap = slip("gap", "a", "b", effect="the gap is 5", records=records)
    texts = {}
    for cause in ("a", "b"):
        rc = RootCause(slip(cause), (RankedSlip(gap, (), ()),), (), ())
        slip_id, texts[cause] = rc.effect
        assert slip_id == "gap"
        assert ";" not in texts[cause]  # the bottom line keeps a sentence's first clause
    # each cause quotes its own share, with an interval, and never the other's number or the borrowed total
    assert texts["a"].startswith("removing cause A lowers the gap from 5 to 2, 60% of it (99.9% intervals of the share")
    assert texts["b"].startswith("removing cause B lowers the gap from 5 to 3, 40% of it (99.9% intervals of the share")
    assert "cause B" not in texts["a"] and "cause A" not in texts["b"]
    assert "the gap is 5" not in texts["a"] + texts["b"]
    # the slip's audit entry gives both shares, the larger first
    both = ablation.explained(records)
    assert both.index("cause A") < both.index("cause B") and " and removing cause B lowers" in both
    # the discrepancy as its own root quotes its own size first, then the share of the cause that explains most
    assert ablation.effect_for("gap", gap).startswith("the gap is 5; most of it has another cause: removing cause A lowers "
                                                      "the gap from 5 to 2, 60%")


def test_a_joint_removal_is_never_quoted_as_one_causes_effect():
    joint = ablation.paired("a", "cause A and cause B", "the gap", BASELINE, NOISE + E_A + E_B, together=("b",))
    assert joint.together == ("b",) and not joint.alone and joint.moved
    gap = slip("gap", "a", "b", effect="the gap is 5", records=(joint,))
    # cause a has no run of its own: it may claim only what remains, and nothing remains with both removed
    assert ablation.effect_for("a", gap) == ""
    alone = ablation.paired("a", "cause A", "the gap", BASELINE, WITHOUT_A)
    gap = slip("gap", "a", "b", effect="the gap is 5", records=(alone, joint))
    assert ablation.effect_for("a", gap).startswith("removing cause A lowers the gap from 5 to 2, 60% of it")
    # the joint record survives the round trip, its second cause with it
    assert ablation.Ablation.from_json(joint.to_json()) == joint and joint.to_json()["together"] == ["b"]
    with pytest.raises(ValueError, match="together"):
        ablation.paired("a", "A", "q", BASELINE, WITHOUT_A, together=("a",))


def test_a_removal_that_more_than_closes_the_gap_says_so():
    over = ablation.paired("a", "cause A", "the gap", BASELINE, -2.0 + NOISE + E_A)
    text = ablation.explained([over])
    assert "lowers the gap from 5 to -2, all of it and more: the statement then holds with room (1 case)" in text
    assert "%" not in text  # past the whole, a percentage only confuses
    # a removal whose share's interval reaches below the whole keeps its percentages
    near = ablation.paired("a", "cause A", "the gap", BASELINE, -0.01 + 3 * NOISE + E_A)
    assert "% of it" in ablation.explained([near])


def test_a_cause_without_its_own_ablation_claims_only_what_remains():
    other = ablation.paired("a", "cause A", "the gap", BASELINE, WITHOUT_A)
    gap = slip("gap", "a", "b", effect="the gap is 5", records=(other,))
    text = ablation.effect_for("b", gap)
    assert text.startswith("with cause A removed, the gap is still 2 (99.9% intervals ")
    assert text.endswith("down from 5 (at most what this cause can explain: no run removed it alone)")
    assert "the gap is 5" not in text
    lo, hi = other.ablated_interval
    assert lo < 2.0 < hi and other.remains
    # nothing measurable left: no number for the other cause
    gone = ablation.paired("a", "cause A", "the gap", BASELINE, E_A)
    assert not gone.remains and ablation.effect_for("b", slip("gap", records=(gone,))) == ""


def test_a_slip_without_ablations_keeps_its_size_and_none_when_it_has_none():
    assert ablation.effect_for("x", slip("y", effect="size 3")) == "size 3"
    assert ablation.effect_for("x", slip("y")) is None


def test_the_record_refuses_unpaired_or_malformed_input():
    with pytest.raises(ValueError, match="same number"):
        ablation.paired("a", "A", "q", [1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="non-finite"):
        ablation.paired("a", "A", "q", [1.0, float("nan")], [1.0, 2.0])
    with pytest.raises(ValueError, match="replicates"):
        ablation.Ablation("a", "A", "q", 1.0, 0.0, 1.0, (0.5, 1.5), 0)
    with pytest.raises(TypeError, match="ablation"):
        slip("s", records=("not a record",))


def test_the_record_round_trips_through_json():
    a = ablation.paired("a", "cause A", "the gap", BASELINE, WITHOUT_A, case="t = 3")
    assert ablation.Ablation.from_json(a.to_json()) == a
    assert slip("s", records=[a.to_json()]).ablation == (a,)
