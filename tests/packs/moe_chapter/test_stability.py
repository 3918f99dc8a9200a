"""The chapter's numerical-stability claims (softmax.overflow, softmax.max_shift, softmax.temperature,
clipping.global_norm): verdicts on tiny contexts, and every exact recheck against numbers derived by hand here
from the IEEE formats (max = (2 - 2^-p) 2^emax, smallest subnormal 2^(emin - p)), never copied from the tool."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

import moecl_verify.packs.moe_chapter.claims.clipping as clipping
import moecl_verify.packs.moe_chapter.claims.softmax as softmax
from moecl_verify.checks import runner
from moecl_verify.checks.context import context_for
from moecl_verify.packs.moe_chapter import PACK

pytestmark = pytest.mark.claims

# (dtype, significand bits after the point, largest exponent, exponent of the smallest subnormal)
FORMATS = ((np.float16, 10, 15, -24), (np.float32, 23, 127, -149), (np.float64, 52, 1023, -1074))


def _ln_max(p: int, emax: int) -> float:
    # ln((2 - 2^-p) 2^emax) = (emax + 1) ln 2 + ln(1 - 2^-(p+1)), computed without forming the number
    return (emax + 1) * math.log(2) + math.log1p(-(2.0 ** -(p + 1)))


def test_ln_max_by_hand():
    assert _ln_max(10, 15) == pytest.approx(math.log(65504), abs=1e-12)
    assert _ln_max(10, 15) == pytest.approx(11.0898664, abs=1e-6)
    assert _ln_max(23, 127) == pytest.approx(88.7228391, abs=1e-6)
    assert _ln_max(52, 1023) == pytest.approx(709.7827129, abs=1e-6)


def test_overflow_entries():
    out = softmax.measure_overflow(context_for(PACK, "smoke", 0))
    assert [r.verdict for r in out] == ["confirmed"] * 3
    for r, (dt, p, emax, _) in zip(out, FORMATS):
        assert r.config["dtype"] == np.dtype(dt).name
        assert r.config["ln_max"] == pytest.approx(_ln_max(p, emax), rel=1e-14)
        # the first overflowing logit lies within one ulp of ln(max)
        assert abs(r.config["first_overflow"] - _ln_max(p, emax)) <= float(np.spacing(dt(r.config["first_overflow"])))


def test_float16_first_overflow_by_hand():
    # float16 has spacing 2^-7 in [8, 16): ln(65504) = 11.0899 lies between 1419/128 = 11.0859375 and
    # 1420/128 = 11.09375.  exp rounds to inf above 65504 + 16 (half the spacing 32 at the top binade):
    # e^11.0859375 = 65248.6 stays finite, e^11.09375 = 65759.2 > 65520 overflows.
    assert math.exp(1419 / 128) < 65520 < math.exp(1420 / 128)
    facts = softmax.overflow_facts(np.float16)
    assert facts["first_overflow"] == 1420 / 128 and facts["before"] == 1419 / 128


def test_float16_first_underflow_gap_by_hand():
    # The smallest float16 subnormal is 2^-24; e^-g rounds to 0 below 2^-25, i.e. g > 25 ln 2 = 17.3287.
    # Spacing 2^-6 in [16, 32): 1109/64 = 17.328125 < 25 ln 2 < 1110/64 = 17.34375.
    assert 1109 / 64 < 25 * math.log(2) < 1110 / 64
    facts = softmax.underflow_facts(np.float16)
    assert facts["first_zero_gap"] == 1110 / 64
    assert facts["ln_threshold"] == pytest.approx(25 * math.log(2), rel=1e-15)


def test_naive_and_shifted_softmax_by_hand():
    z = np.array([1000.0, 0.0])
    assert np.isnan(softmax.naive_softmax(z)[0])
    assert softmax.shifted_softmax(z).tolist() == [1.0, 0.0]  # e^-1000 underflows in float64
    # log-sum-exp keeps the log-probability: log(1/(1 + e^1000)) = -1000 - log1p(e^-1000) = -1000.
    assert softmax.log_softmax_lse(z)[1] == -1000.0
    # an ordinary case: softmax(ln 1, ln 3) = (1/4, 3/4) in every dtype
    for dt in (np.float16, np.float32, np.float64):
        y = softmax.shifted_softmax(np.array([0.0, math.log(3)], dtype=dt)).astype(float)
        assert y == pytest.approx([0.25, 0.75], rel=4 * float(np.finfo(dt).eps))


def test_max_shift_entries_and_error_control():
    res = runner.run(["softmax.*"], budget="smoke", seed=0, pack="moe-chapter", reuse_claims=False)
    by = {(r.id, r.key.part): r for r in res.results}
    assert by[("softmax.max_shift", "shift invariance")].verdict == "confirmed"
    assert by[("softmax.max_shift", "no overflow for finite logits")].verdict == "confirmed"
    assert by[("softmax.max_shift", "underflow and log of the shifted softmax")].verdict == "confirmed"
    sampled = [r for (cid, part), r in by.items() if part.startswith("relative error within")]
    assert len(sampled) == 3
    for r in sampled:
        # decided by the run's error control, never by the claim
        assert r.evidence_type == "proportion" and r.false_fail_rate is not None and r.form == "derived"
        assert r.verdict == "confirmed"
        # a few u near the maximum: the derived bound at gap 0 is 1.01 (8 + 7 + 8/e + 1) = 19.1 u
        assert r.config["worst_error_u_gap_le_1"] < 1.01 * (8 + 7 + 8 / math.e + 1 + 1)
    temp = {(part, r.form, r.key.reading): r.verdict for (cid, part), r in by.items() if cid == "softmax.temperature"
            and part != softmax.PART_ONE_HOT}
    one_hot = {r.key.reading: r.verdict for r in res.results if r.key.part == softmax.PART_ONE_HOT}
    # The one-hot statement under its two readings: ties included (as printed) refuted, a unique largest logit
    # confirmed; both are the statement, not derived notes.
    assert one_hot == {softmax.READING_TIES: "refuted", softmax.READING_UNIQUE: "confirmed"}
    assert all(r.key.is_statement for r in res.results if r.key.part == softmax.PART_ONE_HOT)
    assert temp == {("tau -> oo: uniform", "stated", None): "confirmed",
                    ("tau -> 0- gives the argmin", "derived", None): "confirmed",
                    ("distance to the one-hot limit", "derived", None): "confirmed",
                    ("overflow at small tau without the shift", "derived", None): "confirmed"}
    assert {s.id for s in res.slips} == {"softmax.temperature.ties"}
    ties = res.slips[0]
    # The unstated unique maximum, resting first on the refuted reading of the statement: it breaks the stability
    # line under that reading, which therefore no longer stands.
    assert ties.slip_class == "unstated assumption"
    assert [(k.part, k.reading) for k in ties.entries] == [(softmax.PART_ONE_HOT, softmax.READING_TIES),
                                                           (softmax.PART_ONE_HOT, softmax.READING_UNIQUE)]
    assert ties.entries[0].is_statement
    from moecl_verify.reports.headline import DEPENDS, part_verdicts, summarize
    temperature = [r for r in res.results if r.id == "softmax.temperature"]
    assert summarize(temperature) == DEPENDS
    item = next(i for i in PACK.headline if i.key == "stability")
    parts = dict(part_verdicts(res.results, item))
    assert parts["τ -> 0 gives one-hot, τ -> ∞ uniform"] == DEPENDS


def test_one_hot_readings_by_hand():
    # Ties: z = (0, 0, -1) at temperature tau: g = (1, 1, e^{-1/tau}) / (2 + e^{-1/tau}); at tau = 1/40 the third
    # is e^{-40}/(2 + e^{-40}) ~ 2e-18 and the first two 1/(2 + e^{-40}) ~ 1/2: the limit (1/2, 1/2, 0) is not
    # one-hot.
    t = 1 / 40
    e = math.exp(-1 / t)
    assert (1 / (2 + e), e / (2 + e)) == pytest.approx((0.5, 0.0), abs=1e-15)
    assert softmax.temperature_limits()["tie"] == (sp.Rational(1, 2), sp.Rational(1, 2), 0)
    # A unique maximum, N = 4, z = (1, 0.5, 0, -2): g_max = 1/(1 + e^{-0.5/tau} + e^{-1/tau} + e^{-3/tau}); at
    # tau = 1/20: 1/(1 + e^{-10} + e^{-20} + e^{-60}) = 1 - 4.54e-5 to three digits, and tends to 1.
    t = 1 / 20
    g_max = 1 / (1 + math.exp(-0.5 / t) + math.exp(-1 / t) + math.exp(-3 / t))
    z = np.array([1.0, 0.5, 0.0, -2.0]) / t
    direct = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    assert direct[0] == pytest.approx(g_max, rel=1e-15) and 1 - g_max == pytest.approx(4.54e-5, rel=1e-3)
    lim = softmax.temperature_limits()
    assert lim["general_identity"] and lim["general_others"] and lim["term_limit"] == 0


def test_one_hot_unique_reading_can_fail(monkeypatch):
    # A term e^{-a/tau} that did not vanish as tau -> 0+, or an identity that did not hold, must not confirm the
    # unique-maximum reading.
    real = softmax.temperature_limits()
    for broken in ({"term_limit": sp.Integer(1)}, {"general_identity": False}):
        monkeypatch.setattr(softmax, "temperature_limits", lambda broken=broken: {**real, **broken})
        out = softmax.measure_temperature(context_for(PACK, "smoke", 0))
        unique = next(r for r in out if r.key.reading == softmax.READING_UNIQUE)
        assert unique.verdict == "refuted"


def test_same_tells_a_wrong_identity():
    # The exact comparison behind the general-N identities sees a wrong one: e^{2x}/(e^{2x} + 1) is
    # 1/(1 + e^{-2x}), not 1/(1 + e^{-x}).
    xv = sp.Symbol("x", positive=True)
    assert softmax._same(sp.exp(2 * xv) / (sp.exp(2 * xv) + 1), 1 / (1 + sp.exp(-2 * xv)))
    assert not softmax._same(sp.exp(2 * xv) / (sp.exp(2 * xv) + 1), 1 / (1 + sp.exp(-xv)))


def test_derived_bound_by_hand():
    # n = 8: 1.01 (g + 2 * 2 * 2 + 7 + 8/e + 1) u; at g = 0: 1.01 * (16 + 2.943) = 19.13
    assert softmax.derived_bound_units(np.array([0.0, 3.0]), 8) == pytest.approx(
        [1.01 * (16 + 8 / math.e), 1.01 * (19 + 8 / math.e)])


def test_relative_error_sample_against_a_hand_reference():
    rng = np.random.default_rng(5)
    errors, gaps, bound = softmax.relative_errors(np.float32, rng, 5)
    assert errors.shape == gaps.shape == (5, 8) and (gaps >= 0).all() and (gaps.min(axis=1) == 0).all()
    assert (errors / (np.finfo(np.float32).eps / 2) <= bound).all()
    # The same draws by hand: offsets then logits, rounded to float32; the reference in float64 (its own error,
    # about 1e-15, is far below float32's u = 6e-8).
    rng = np.random.default_rng(5)
    offsets = rng.uniform(-8, 8, size=(5, 1))
    z = (offsets + rng.uniform(-4, 4, size=(5, 8))).astype(np.float32).astype(float)
    ref = np.exp(z - z.max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    y = softmax.shifted_softmax(z.astype(np.float32)).astype(float)
    assert np.allclose(errors, np.abs(y - ref) / ref, rtol=1e-6, atol=1e-13)


def test_shift_check_refutes_a_broken_softmax(monkeypatch):
    # A softmax without the shift fails the no-overflow entry: the check can fail.
    monkeypatch.setattr(softmax, "shifted_softmax", softmax.naive_softmax)
    monkeypatch.setattr(softmax, "REL_MAX_GATES", 20)
    out = softmax.measure_max_shift(context_for(PACK, "smoke", 0))
    verdicts = {r.key.part: r.verdict for r in out if hasattr(r, "verdict")}
    assert verdicts["no overflow for finite logits"] == "refuted"


def test_temperature_limits_by_hand():
    lim = softmax.temperature_limits()
    half = sp.Rational(1, 2)
    assert lim["tie"] == (half, half, 0)
    assert lim["n2_zero"] == 1 and lim["n3_zero"] == 1 and lim["n2_negative"] == 0
    assert lim["n2_inf"] == half and lim["n3_inf"] == (sp.Rational(1, 3),) * 3
    assert lim["distance"]
    # the distance at gap 1, tau = 1/2: 1/(1 + e^2) = 0.1192
    out = softmax.measure_temperature(context_for(PACK, "smoke", 0))
    dist = next(r for r in out if r.key.part == "distance to the one-hot limit")
    assert f"{1 / (1 + math.e ** 2):.4g}" in dist.evidence
    # overflow at small tau in float16: 1/0.05 = 20 > ln(65504) = 11.09 > 1/0.1 = 10
    assert 1 / 0.1 < math.log(65504) < 1 / 0.05


# ---------------------------------------------------------------------------------------------- clipping


def test_clip_by_hand():
    g = (sp.Integer(3), sp.Integer(4))  # norm 5
    assert clipping.clip(g, sp.Integer(1)) == (sp.Rational(3, 5), sp.Rational(4, 5))
    assert clipping.clip(g, sp.Integer(10)) == g
    assert clipping.norm(clipping.clip(g, sp.Rational(1, 2))) == sp.Rational(1, 2)
    # norm sqrt(2) clipped at 1: (1, 1)/sqrt(2)
    assert clipping.clip((sp.Integer(1), sp.Integer(1)), sp.Integer(1)) == (1 / sp.sqrt(2), 1 / sp.sqrt(2))
    assert clipping.clip((sp.Integer(0), sp.Integer(0)), sp.Integer(1)) == (0, 0)


def test_clipping_entries_and_no_slip():
    out = clipping.measure(context_for(PACK, "smoke", 0))
    got = {(r.key.part, r.key.reading, r.key.role): r.verdict for r in out}
    # The chapter never says clipping removes jumps; it bounds the step after one, which holds.
    assert got == {
        (clipping.PART_NORM, "Pascanu et al. 2013", "statement"): "confirmed",
        (clipping.PART_JUMP, None, "proof step"): "confirmed",
        (clipping.PART_BOUNDED, "bounds the step", "proof step"): "confirmed",
        (clipping.PART_C, None, "statement"): "not_checkable",
    }
    c_entry = next(r for r in out if r.key.part == clipping.PART_C)
    assert "common practice" in c_entry.evidence
    # the example by hand: w = (1/2, -1/2), y = 0, theta > 0 picks expert 1: gradient (1/2 - 0, 0);
    # theta < 0 picks expert 2: (0, -1/2); the jump (1/2, 1/2) has squared norm 1/2; both sides have norm 1/2 < 1.
    ex = clipping.top1_example()
    assert ex["right"] == (Fraction(1, 2), 0) and ex["left"] == (0, Fraction(-1, 2))
    assert not hasattr(clipping, "slips") and all(r.verdict != "refuted" for r in out)


def test_clipping_check_refutes_a_broken_clip(monkeypatch):
    # clipping every coordinate to [-c, c] instead of the norm: (3, 4) at c = 1 gives (1, 1), of norm sqrt(2) != 1
    monkeypatch.setattr(clipping, "clip", lambda g, c: tuple(sp.Max(-c, sp.Min(c, v)) for v in g))
    out = clipping.measure(context_for(PACK, "smoke", 0))
    assert next(r for r in out if r.key.part == clipping.PART_NORM).verdict == "refuted"
