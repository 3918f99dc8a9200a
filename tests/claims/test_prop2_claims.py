"""Proposition 2 through the scaling mechanism, and the rule for hidden constants."""

from moecl_verify.checks import runner
from moecl_verify.checks.scaling import reconcile_constants


def test_reconcile_constants():
    assert reconcile_constants({1.0: "refuted", 0.5: "confirmed"}) == {1.0: "inconclusive", 0.5: "confirmed"}
    assert reconcile_constants({1.0: "refuted", 0.5: "refuted"}) == {1.0: "refuted", 0.5: "refuted"}
    assert reconcile_constants({1.0: "refuted", 0.5: "inconclusive"}) == {1.0: "refuted", 0.5: "inconclusive"}


def test_prop2_smoke():
    run = runner.run(["prop2.*"], budget="smoke", seed=0)
    scaling = [r for r in run.results if r.evidence_type == "scaling"]
    assert len(scaling) == 6
    # and prop2.t1's two exact entries from the update rule's bound (decided without sampling)
    exact = {r.config["aux_factor"]: r.verdict for r in run.results if r.evidence_type == "exact"}
    assert exact == {"1/t": "refuted", "t": "inconclusive"}
    assert "prop2.between_set_gap_update_bound" in [s.id for s in run.slips]
    for res in scaling:
        means = [m["mean_gap"] for m in res.config["means"]]
        assert means[0] > means[-1]  # gaps shrink with sigma0
    by_t2 = {r.config["hidden_constant"]: r.verdict for r in run.results if r.id == "prop2.t2"}
    assert "refuted" not in by_t2.values() or "confirmed" not in by_t2.values()


def test_a_slip_per_gap_refuted_at_every_constant():
    from moecl_verify.packs.moe_cl.claims.router.prop2 import slips
    from moecl_verify.checks.model import ClaimResult

    def entry(part, c, verdict):
        return ClaimResult(id="prop2.t1", source="-", kind="scaling", form="stated", verdict=verdict, expected=1.75,
                           observed=1.2, stderr=0.01, p_value=None, false_fail_rate=0.01, min_detectable=0.15,
                           config={"part": part, "hidden_constant": c, "exponent_interval": [1.1, 1.3],
                                   "local_exponents": [1.5, 1.0], "sigma0_range": [0.00625, 0.4]}, evidence="e")

    made = [entry("within a set at t1", 1.0, "refuted"), entry("within a set at t1", 0.5, "refuted"),
            entry("between sets at t1", 1.0, "refuted"), entry("between sets at t1", 0.5, "inconclusive")]
    assert [(r.key.part, r.key.constant) for r in made][:2] == [("within a set at t1", 1.0), ("within a set at t1", 0.5)]
    assert made[0].key.label == "within a set at t1, c = 1"
    found = slips(made)
    assert [s.id for s in found] == ["prop2.within_set_gap_exponent"]
    assert "0.00625" in found[0].holds


def test_bounded_chunk_size():
    from moecl_verify.numeric.chunks import bounded_chunk_size

    assert bounded_chunk_size(100, 10, 6, cap=1000) == 1000
    assert bounded_chunk_size(6840, 10, 6, cap=1000, budget=2 * 8 * 6840 * 60 * 7) == 7
    assert bounded_chunk_size(10**7, 10, 6, cap=1000) == 1


def test_update_rule_bound_entries_and_slip():
    from moecl_verify.packs.moe_cl.claims.router.prop2 import BOUND_PART, bound_entries, bound_slips, slips

    entries = bound_entries()
    by = {e.config["aux_factor"]: e for e in entries}
    one_over_t, printed = by["1/t"], by["t"]
    assert one_over_t.id == printed.id == "prop2.t1"
    assert one_over_t.key.part == BOUND_PART.format(factor="1/t") and one_over_t.key.reading == "aux_factor=1/t"
    assert (one_over_t.form, one_over_t.evidence_type, one_over_t.verdict) == ("derived", "exact", "refuted")
    assert one_over_t.p_value is None and one_over_t.false_fail_rate is None
    # O(sigma0 log(1/sigma0)): exponent 1 with one log factor, bound / sigma0^0.75 -> 0
    assert (one_over_t.config["leading_exponent"], one_over_t.config["log_power"]) == ("1", "1")
    assert one_over_t.config["ratio_limit"] == one_over_t.config["ratio_limit_growing_xbar"] == "0"
    assert "hidden_constant" not in one_over_t.config  # not grouped with the measured entries' constants
    assert one_over_t.key.constant is None
    # Lemma 4's printed factor t: O(sigma0^-0.5), decides nothing
    assert (printed.verdict, printed.config["leading_exponent"], printed.config["ratio_limit"]) == ("inconclusive", "-1/2", "oo")

    found = bound_slips(entries)
    assert [s.id for s in found] == ["prop2.between_set_gap_update_bound"]
    assert "c(t) = 1/t" in found[0].holds and "Theta(sigma0^0.75)" in found[0].stated
    assert bound_slips([printed]) == []  # no refutation, no slip
    assert "prop2.between_set_gap_update_bound" in [s.id for s in slips(entries)]
