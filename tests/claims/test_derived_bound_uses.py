"""The update rule's gate-gap bound, declared once (packs/moe_cl/entries/derived_bounds.py), and the three
statements it decides.

Reasoning by hand, which the asserts below recompute numerically rather than copy from the tool:

* The bound after T rounds is B(T) = v (eta/2) d X (4 T sigma0^2 zeta^2 + alpha M (1 + log T)) with
  eta = alpha = c sigma0^0.5.  At T = C t1 with t1 ~ M / (c sigma0^0.75): the first term is of order
  sigma0^0.5 sigma0^-0.75 sigma0^2 = sigma0^1.75, the second c^2 sigma0 M (1 + 0.75 log(1/sigma0) + ...), so
  B = Theta(sigma0 log(1/sigma0)) whatever the fixed C: exponent 1 > 0.75 > 0.5, hence B / sigma0^0.75 -> 0
  and B / sigma0^0.5 -> 0.
* Proposition 2 (t1): same quantity, T = t1, so the Theta(sigma0^0.75) between sets is contradicted.
* Proposition 3, step (G, 1): T2 = O(eta^-1 sigma0^-0.25 M) = O(t1) by the statement itself, the frozen gate was
  updated in rounds <= T2, B grows with T: contradicted for any constant C.
* Lemma 13, eq. (35): T1 = ceil(M/eta) <= ceil(M/(eta sigma0^0.25)) = t1 for sigma0 <= 1; a softmax gap of one
  expert on two inputs is at most (1/4) * 2B = B/2 (the softmax's gradient in the gaps has l1 norm
  pi (1 - pi) <= 1/4): contradicted, as B/2 = o(sigma0^0.5).
"""

import math

import numpy as np

import moecl_verify.packs.moe_cl.claims.router.lemma13 as lemma13
import moecl_verify.packs.moe_cl.claims.router.prop2 as prop2
import moecl_verify.packs.moe_cl.claims.router.prop3 as prop3
from moecl_verify.packs.moe_cl import PACK
from moecl_verify.packs.moe_cl.entries import derived_bounds as db


def B(sigma0, T, c=1.0, M=6, d=10, X=1.0, zeta=1.0, v=1.0):
    eta = alpha = c * math.sqrt(sigma0)
    return v * eta / 2 * d * X * (4 * T * sigma0**2 * zeta**2 + alpha * M * (1 + math.log(T)))


def test_the_bound_is_declared_once_with_its_three_uses():
    (bound,) = PACK.derived_bounds()
    assert bound is db.gate_gap_bound() and bound.id == db.BOUND_ID and bound.checked
    assert [(u.claim_id, u.relation, u.checked) for u in bound.uses] == [
        ("prop2.t1", "contradicts", True), ("prop3", "contradicts", True), ("lemma13", "contradicts", True)]
    assert all(u.reading == "aux_factor=1/t" for u in bound.uses)


def test_the_orders_by_hand():
    # B(C t1) / sigma0^k falls towards 0 for k = 0.75 and 0.5, for a small and a large constant C
    for C in (0.5, 10.0):
        for k in (0.75, 0.5):
            ratios = [B(s, C * (6 / s**0.75 + 1)) / s**k for s in (1e-4, 1e-8, 1e-16, 1e-32)]
            assert all(a > b for a, b in zip(ratios, ratios[1:])) and ratios[-1] < 0.01 * ratios[0]
    # the log term dominates: B(t1) / (sigma0 log(1/sigma0)) tends to c^2 M d / 2 * 0.75 = 22.5
    s = 1e-40
    assert abs(B(s, 6 / s**0.75 + 1) / (s * math.log(1 / s)) - 22.5) < 1.0


def test_T1_is_never_after_t1():
    for s in np.geomspace(1e-6, 1.0, 40):
        for c in (0.5, 1.0, 2.0):
            for M in (2, 6, 20):
                eta = c * math.sqrt(s)
                assert math.ceil(M / eta) <= math.ceil(M / (eta * s**0.25))


def test_a_softmax_gap_is_at_most_half_the_largest_output_gap():
    rng = np.random.default_rng(0)
    for _ in range(2000):
        M, Bmax = int(rng.integers(2, 8)), float(rng.uniform(0.01, 3.0))
        h = [rng.uniform(0, Bmax, M) for _ in range(2)]  # gate outputs on X_n, X_n': every gap within [-B, B]
        pi = [np.exp(x) / np.exp(x).sum() for x in h]
        assert np.all(np.abs(pi[0] - pi[1]) <= Bmax / 2 + 1e-12)


def test_each_use_is_one_exact_entry_with_the_verdict_its_derivation_gives():
    p2 = {e.config["aux_factor"]: e for e in prop2.bound_entries()}["1/t"]
    p3, l13 = prop3.update_bound_entry(), lemma13.update_bound_entry()
    assert (p2.id, p2.key.part, p2.verdict) == ("prop2.t1", db.PROP2_PART, "refuted")  # unchanged from before
    for entry, claim, part in ((p3, "prop3", db.PROP3_PART), (l13, "lemma13", db.LEMMA13_PART)):
        assert (entry.id, entry.key.part, entry.verdict) == (claim, part, "refuted")
        assert (entry.form, entry.evidence_type, entry.key.role, entry.key.reading) == (
            "derived", "exact", "proof step", "aux_factor=1/t")
        assert entry.p_value is None and entry.key.constant is None
        assert entry.config["derived_bound"] == db.BOUND_ID and entry.config["applicability_checked"] is True
        assert entry.evidence.startswith(f"Derived bound {db.BOUND_ID} (every step checked)")
        assert "[NOT CONFIRMED]" not in entry.evidence
    assert "T2 = O(eta^-1 sigma0^-0.25 M)" in p3.evidence and "for every fixed C > 0" in p3.evidence
    assert "T1 <= t1" in l13.evidence and "pi_m (1 - pi_m) <= 1/4" in l13.evidence
    # the new parts do not join the measured entries' slips (matched by part prefix)
    assert not p3.key.part.startswith("proof step (G, 1)") and not l13.key.part.startswith("proof step (35)")


def test_the_refutations_follow_from_proposition_2s_slip():
    p3 = [s for s in prop3.prop3_slips([prop3.update_bound_entry()]) if s.id == "prop3.between_set_gap_update_bound"]
    l13 = [s for s in lemma13.slips([lemma13.update_bound_entry()]) if s.id == "lemma13.eq35_update_bound"]
    for (slip,) in (p3, l13):
        assert slip.causes == (db.SLIP_ID,) and slip.slip_class == "false intermediate step"
    # an entry that is not refuted makes no slip
    import dataclasses
    calm = dataclasses.replace(prop3.update_bound_entry(), verdict="inconclusive")
    assert "prop3.between_set_gap_update_bound" not in [s.id for s in prop3.prop3_slips([calm])]
