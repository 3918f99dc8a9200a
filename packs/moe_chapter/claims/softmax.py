"""The softmax gate's numerical stability (section "数值稳定性分析", 门控数值的稳定性条件).

The chapter's text (the display formulas for the shifted softmax and the tempered gate are missing):

    在实际计算中，softmax的门控输出可能出现数值溢出。设 z_i = (W_g x + b_g)_i，则 g_i = e^{z_i} / Σ_j e^{z_j}。
    为保证数值稳定，应采用减去最大值的softmax：[missing]
    此外，可以引入温度参数 τ 控制门控分布的尖锐程度：[missing]
    当 τ → 0 时，门控趋向one-hot选择；当 τ → ∞ 时，趋向均匀分布。

    (In practice the softmax gate's outputs may overflow numerically.  With z_i = (W_g x + b_g)_i, g_i =
    e^{z_i} / Σ_j e^{z_j}.  To ensure numerical stability one should use the softmax with the maximum subtracted:
    [missing].  A temperature τ can also control the sharpness of the gate: [missing].  As τ → 0 the gate tends to
    a one-hot choice; as τ → ∞, to the uniform distribution.)

Readings.  The shifted softmax is g_i = e^{z_i − m} / Σ_j e^{z_j − m} with m = max_j z_j (the standard form of the
literature the chapter paraphrases, e.g. Goodfellow, Bengio and Courville, *Deep Learning*, section 4.1); the
tempered gate is g_i(τ) = e^{z_i/τ} / Σ_j e^{z_j/τ} with τ > 0 (a temperature), so "τ → 0" is τ → 0⁺.  "Overflow"
is read as the intermediate e^{z_i} leaving the floating-point range (the outputs themselves lie in [0, 1]).

Claims: ``softmax.overflow`` (per dtype: the exact logit at which e^z overflows, and the naive softmax's nan),
``softmax.max_shift`` (the shift identity; no overflow for any finite logits; underflow and log(0) remain; the
relative error against an mpmath reference, sampled under the run's error control), ``softmax.temperature``
(the one-hot limit under two readings: ties included, refuted by an exact tie; a unique largest logit, proved for
every N by sympy; τ → 0⁻, the distance
to the limit, overflow at small τ).  Every random stream is
``generator_for(ctx.seed, "moe-chapter", claim_id, ...)``.
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np
import sympy as sp

from moecl_verify.checks.kinds.proportion import ProportionEvidence, ProportionRow
from moecl_verify.checks.model import ClaimResult, Interpretation, Slip, exact_result, keys_of
from moecl_verify.checks.registry import Claim, register
from moecl_verify.numeric.seeding import generator_for

SOURCE = "Chapter 1.5, 数值稳定性分析, 门控数值的稳定性条件 (numerical stability of the gate values)"
DTYPES = (np.float16, np.float32, np.float64)
_UINT = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}
# The relative-error check: N = 8 logits per gate, uniform within 4 of an offset in [-8, 8] (gaps <= 8, so in
# float16 every exact output stays above the smallest normal number e^-8 / 8 > 6.1e-5 and the error is relative
# error, not a subnormal's); at most this many gates per dtype, since the mpmath reference dominates the cost.
REL_N, REL_SPREAD, REL_OFFSET, REL_MAX_GATES = 8, 4.0, 8.0, 10_000
# numpy's exp is taken to be within 2 ulp (= 4 u); the derived bound's other terms follow from the usual model
# fl(a o b) = (a o b)(1 + delta), |delta| <= u.
EXP_ULP = 2
# Digits of the mpmath reference.
DPS = 40


def _name(dt) -> str:
    return np.dtype(dt).name


def _entry(claim_id: str, part: str, verdict: str, evidence: str, formula: str, **kw) -> ClaimResult:
    return exact_result(claim_id, SOURCE, kw.pop("kind", "qualitative"), part, verdict, evidence, formula, **kw)


# ---------------------------------------------------------------------------------------------- float helpers


def naive_softmax(z: np.ndarray) -> np.ndarray:
    """e^{z_i} / sum_j e^{z_j} in z's dtype, as the chapter writes it (last axis)."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)


def shifted_softmax(z: np.ndarray) -> np.ndarray:
    """e^{z_i - m} / sum_j e^{z_j - m}, m = max_j z_j, in z's dtype (last axis)."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


def log_softmax_lse(z: np.ndarray) -> np.ndarray:
    """log g_i as (z_i - m) - log sum_j e^{z_j - m}: finite for finite logits (no log of an underflowed 0)."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        a = z - z.max(axis=-1, keepdims=True)
        return a - np.log(np.exp(a).sum(axis=-1, keepdims=True))


def _first_positive(dt, predicate) -> np.floating:
    """The smallest positive finite value x of ``dt`` with ``predicate(x)``, for a predicate monotone in x, by
    bisection over the bit patterns (positive floats are ordered as their bit patterns)."""
    ui = _UINT[dt]
    lo, hi = 0, int(np.array(np.finfo(dt).max, dtype=dt).view(ui))
    if not predicate(np.array(hi, dtype=ui).view(dt)):
        raise ValueError(f"{_name(dt)}: the predicate never holds")
    while hi - lo > 1:  # predicate(lo) false (or lo = 0), predicate(hi) true
        mid = (lo + hi) // 2
        if predicate(np.array(mid, dtype=ui).view(dt)):
            hi = mid
        else:
            lo = mid
    return np.array(hi, dtype=ui).view(dt)[()]


def _previous(x: np.floating) -> np.floating:
    return np.nextafter(x, x.dtype.type(0))


def overflow_facts(dt) -> dict:
    """ln(max) (mpmath, from np.finfo), the smallest value z of ``dt`` with exp(z) = inf in ``dt``, and its
    predecessor."""
    big = float(np.finfo(dt).max)
    with np.errstate(over="ignore"):
        first = _first_positive(dt, lambda x: bool(np.isinf(np.exp(x))))
        before = _previous(first)
        finite_before = bool(np.isfinite(np.exp(before)))
    return {"dtype": _name(dt), "max": big, "ln_max": float(mpmath.log(mpmath.mpf(big))),
            "first_overflow": float(first), "before": float(before), "finite_before": finite_before,
            "ulp": float(np.spacing(first))}


def underflow_facts(dt) -> dict:
    """The smallest gap g of ``dt`` with exp(-g) = 0 in ``dt``, against ln(2 / smallest subnormal) (round to
    nearest sends everything below half the smallest subnormal to 0)."""
    tiny = float(np.finfo(dt).smallest_subnormal)
    with np.errstate(under="ignore"):
        first = _first_positive(dt, lambda g: bool(np.exp(-g) == 0))
    return {"dtype": _name(dt), "smallest_subnormal": tiny,
            "ln_threshold": float(mpmath.log(2 / mpmath.mpf(tiny))), "first_zero_gap": float(first),
            "ulp": float(np.spacing(first))}


# ---------------------------------------------------------------------------------------------- softmax.overflow


def measure_overflow(ctx) -> list[ClaimResult]:
    out = []
    for dt in DTYPES:
        f = overflow_facts(dt)
        z = np.array([f["first_overflow"], 0.0], dtype=dt)
        naive = naive_softmax(z)
        nan = bool(np.isnan(naive).any())
        # The first overflowing logit lies within one ulp of ln(max): exp is rounded, so the exact threshold is
        # ln(max + ulp(max)/2), a hair above ln(max).
        near = abs(f["first_overflow"] - f["ln_max"]) <= f["ulp"]
        verdict = "confirmed" if nan and near and f["finite_before"] else "refuted"
        out.append(_entry(
            "softmax.overflow", f"overflow of e^z in {f['dtype']}", verdict,
            f"{f['dtype']}: ln(max) = ln({f['max']:.6g}) = {f['ln_max']:.6f} (mpmath from np.finfo); the smallest "
            f"{f['dtype']} logit with exp(z) = inf is z = {f['first_overflow']!r} (its predecessor {f['before']!r} "
            f"gives a finite exp: {f['finite_before']}), within one ulp ({f['ulp']:.3g}) of ln(max): {near}. The "
            f"naive softmax of (z, 0) is {[float(v) for v in naive]} (inf/inf = nan). So the chapter's 'may "
            "overflow' holds: the intermediate e^z overflows, and the outputs become nan (the outputs themselves lie "
            "in [0, 1])",
            r"e^{z} = \infty \iff z \gtrsim \ln(\max)", kind="qualitative", dtype=f["dtype"],
            ln_max=f["ln_max"], first_overflow=f["first_overflow"]))
    return out


# ---------------------------------------------------------------------------------------------- softmax.max_shift


def shift_identity(n: int = 3) -> bool:
    """softmax(z - c) = softmax(z) for symbolic z_1..z_n and c (sympy)."""
    z = sp.symbols(f"z1:{n + 1}", real=True)
    c = sp.Symbol("c", real=True)
    total = sum(sp.exp(v) for v in z)
    shifted = sum(sp.exp(v - c) for v in z)
    return all(sp.simplify(sp.exp(v - c) / shifted - sp.exp(v) / total) == 0 for v in z)


def extreme_logits(dt, rng: np.random.Generator, cases: int) -> np.ndarray:
    """Logit vectors (rows of 4) at the edges of ``dt``'s range (+-max, +-tiny, 0, equal entries) and ``cases``
    random rows whose magnitudes are log-uniform over the whole finite range, with random signs."""
    fi = np.finfo(dt)
    big, tiny = float(fi.max), float(fi.smallest_subnormal)
    edges = [[big, -big, 0, 0], [big, big, big, big], [-big, -big, -big, -big], [big, big * 0.5, -big, tiny],
             [tiny, -tiny, 0, 0], [big, 0, 0, 0], [-big, 0, 0, 0]]
    lo, hi = math.log(max(tiny, 1e-300)), math.log(big)
    mags = np.exp(rng.uniform(lo, hi, size=(cases, 4)))
    signs = rng.choice((-1.0, 1.0), size=(cases, 4))
    with np.errstate(over="ignore"):
        rows = np.vstack([np.array(edges, dtype=float), np.minimum(mags, big) * signs])
        return rows.astype(dt)


def relative_errors(dt, rng: np.random.Generator, gates: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For ``gates`` random logit vectors in ``dt``: each output's relative error against the exact softmax of the
    stored logits (mpmath, DPS digits), each output's gap m - z_i (exact, from the stored values), and the
    derived bound for it in units of u."""
    offsets = rng.uniform(-REL_OFFSET, REL_OFFSET, size=(gates, 1))
    z = (offsets + rng.uniform(-REL_SPREAD, REL_SPREAD, size=(gates, REL_N))).astype(dt)
    y = shifted_softmax(z).astype(float)
    errors = np.empty_like(y)
    gaps = np.empty_like(y)
    with mpmath.workdps(DPS):
        for r, row in enumerate(z.astype(float)):
            exact = [mpmath.mpf(v) for v in row]
            top = max(exact)
            e = [mpmath.exp(v - top) for v in exact]
            s = mpmath.fsum(e)
            for i in range(REL_N):
                ref = e[i] / s
                errors[r, i] = float(abs(mpmath.mpf(y[r, i]) - ref) / ref)
                gaps[r, i] = float(top - exact[i])
    return errors, gaps, derived_bound_units(gaps, REL_N)


def derived_bound_units(gaps: np.ndarray, n: int) -> np.ndarray:
    """The derived bound on the relative error of output i, in units of u (unit roundoff):
    g_i (the subtraction z_i - m, amplified by exp) + 2 EXP_ULP * 2 (exp, twice: its own output and the sum's
    terms) + n - 1 (the sum) + n/e (the sum's terms' subtraction errors, sum_j e^{-g_j} g_j <= n/e) + 1 (the
    division), with 1% for second-order terms."""
    return 1.01 * (gaps + 2 * 2 * EXP_ULP + (n - 1) + n / math.e + 1)


def measure_max_shift(ctx) -> list:
    cid = "softmax.max_shift"
    out = []
    ok = shift_identity(3) and shift_identity(2)
    out.append(_entry(
        cid, "shift invariance", "confirmed" if ok else "refuted",
        "sympy: e^{z_i - c} / sum_j e^{z_j - c} - e^{z_i} / sum_j e^{z_j} simplifies to 0 for symbolic z (n = 2, 3) "
        "and c: subtracting any constant, the maximum included, leaves the softmax unchanged",
        r"\mathrm{softmax}(z - c\mathbf 1) = \mathrm{softmax}(z)", kind="symbolic identity"))
    # No overflow: z_i - m <= 0, so every e^{z_i - m} <= 1 and the largest is e^0 = 1: the sum lies in [1, n].
    rows, bad = 0, []
    for dt in DTYPES:
        rng = generator_for(ctx.seed, "moe-chapter", cid, "extremes", _name(dt))
        z = extreme_logits(dt, rng, ctx.sizes.cases)
        y = shifted_softmax(z)
        naive_bad = int((~np.isfinite(naive_softmax(z))).any(axis=1).sum())
        finite = np.isfinite(y).all(axis=1) & (y >= 0).all(axis=1) & (y <= 1).all(axis=1)
        sums = y.astype(float).sum(axis=1)
        summed = np.abs(sums - 1) <= 4 * z.shape[1] * float(np.finfo(dt).eps)
        rows += z.shape[0]
        bad.append((_name(dt), int((~(finite & summed)).sum()), naive_bad, z.shape[0]))
    ok = all(b[1] == 0 for b in bad)
    out.append(_entry(
        cid, "no overflow for finite logits", "confirmed" if ok else "refuted",
        "z_i - m <= 0, so each e^{z_i - m} lies in [0, 1] and the maximum's is e^0 = 1: the sum lies in [1, n] and "
        "nothing overflows for any finite logits (z_i - m may itself round to -inf when z_i = -max, m = max; "
        "e^{-inf} = 0 is still no nan). Checked at the edges of each dtype (+-max, +-smallest subnormal, equal "
        "entries) and on seeded rows with log-uniform magnitudes over the whole range: "
        + "; ".join(f"{name}: {n_bad} of {n} shifted rows non-finite, outside [0, 1] or not summing to 1 "
                    f"(naive softmax: {n_naive} rows with inf or nan)" for name, n_bad, n_naive, n in bad),
        r"0 \le e^{z_i - \max_j z_j} \le 1,\ 1 \le \sum_j e^{z_j - \max_j z_j} \le n", kind="qualitative",
        reading="no overflow"))
    # Underflow remains: far below the maximum an output is exactly 0, and log of it is -inf.
    facts = [underflow_facts(dt) for dt in DTYPES]
    texts, ok = [], True
    for dt, f in zip(DTYPES, facts):
        g = f["first_zero_gap"]
        z = np.array([0.0, -g], dtype=dt)
        y = shifted_softmax(z)
        with np.errstate(divide="ignore"):
            logs = np.log(y)
        lse = log_softmax_lse(z)
        exact_small = 1 / (1 + mpmath.exp(mpmath.mpf(g)))  # kept in mpmath: in float64 it is itself subnormal
        near = abs(g - f["ln_threshold"]) <= f["ulp"]
        case_ok = near and y[1] == 0 and np.isneginf(logs[1]) and bool(np.isfinite(lse).all())
        ok &= case_ok
        texts.append(f"{f['dtype']}: outputs underflow to 0 from a gap of {g!r} = ln(2 / smallest subnormal) = "
                     f"{f['ln_threshold']:.4f} within one ulp ({near}); z = (0, -{g:g}) gives softmax "
                     f"({float(y[0]):g}, {float(y[1]):g}) against the exact (1 - {mpmath.nstr(exact_small, 4)}, "
                     f"{mpmath.nstr(exact_small, 4)}), log(softmax) = {float(logs[1])}, log-sum-exp form {float(lse[1]):.6g}")
    out.append(_entry(
        cid, "underflow and log of the shifted softmax", "confirmed" if ok else "refuted",
        "the shift removes overflow, not underflow: " + "; ".join(texts) + ". So 'stable' holds for overflow; an "
        "output far below the maximum is 0 (relative error 1) and log(softmax) is -inf, while log-softmax computed "
        "as (z - m) - log sum e^{z - m} stays finite. In float16 relative accuracy is lost already from a gap of "
        "ln(1/smallest normal) = 9.70 (subnormal outputs)",
        r"e^{-(m - z_i)} \to 0\ \text{for}\ m - z_i > \ln(2/\text{tiny})", form="derived", kind="qualitative",
        dtypes=[f["dtype"] for f in facts], zero_gaps=[f["first_zero_gap"] for f in facts]))
    # Relative error against mpmath, sampled: P(some output exceeds the derived bound) <= 0 (one excess refutes).
    gates = min(ctx.sizes.draws, REL_MAX_GATES)
    for dt in DTYPES:
        rng = generator_for(ctx.seed, "moe-chapter", cid, "relative-error", _name(dt))
        errors, gaps, bound = relative_errors(dt, rng, gates)
        u = float(np.finfo(dt).eps) / 2
        units = errors / u
        exceed = int((units > bound).any(axis=1).sum())
        small = gaps <= 1
        worst_small = float(units[small].max()) if small.any() else float("nan")
        worst = float(units.max())
        worst_gap = float(gaps.flat[int(np.argmax(units))])
        out.append(ProportionEvidence(
            claim_id=cid, source=SOURCE, kind="bound", form="derived",
            config={"features": "-", "part": f"relative error within the derived bound in {_name(dt)}",
                    "dtype": _name(dt), "n": REL_N, "gates": gates, "seed": ctx.seed, "u": u,
                    "worst_error_u": worst, "worst_error_u_gap_le_1": worst_small},
            formula=r"\frac{|\hat g_i - g_i|}{g_i} \le 1.01\,(m - z_i + 4\cdot\mathrm{ulp}_{\exp} + n - 1 + n/e + 1)\,u",
            what=f"{_name(dt)}, {gates} seeded gates of n = {REL_N} logits uniform within {REL_SPREAD:g} of an offset "
            f"in [-{REL_OFFSET:g}, {REL_OFFSET:g}]: some output's relative error (against mpmath at {DPS} digits, on "
            "the stored logits) exceeds the derived bound",
            rows=(ProportionRow(None, exceed, gates),), claim="at_most", bound=0.0, resolution=0.01, unit="gates",
            note=f"Worst relative error {worst:.3g} u (u = {u:.3g}) at a gap of {worst_gap:.3g}; {worst_small:.3g} u at "
            "gaps <= 1. The error is a few u near the maximum and grows with the gap m - z_i (the rounding of "
            "z_i - m is amplified by exp), as the bound's g_i term says.",
        ))
    return out


# ---------------------------------------------------------------------------------------------- softmax.temperature


tau = sp.Symbol("tau", positive=True)
PART_ONE_HOT = "tau -> 0+: one-hot"
# The statement's two readings: as printed, for every logit vector (ties included), and for a unique largest
# logit (every input but a set of measure zero for a gate with distinct rows), the reading the literature means.
READING_TIES = "every logit vector, ties included"
READING_UNIQUE = "unique largest logit"
# The general-N argument's identities are checked by sympy at these N (the algebra, dividing by e^{z_max/tau}, is
# the same at every N).
GENERAL_N = (2, 3, 4, 5, 6)
_t = sp.Symbol("t", positive=True)  # tau = -t for tau -> 0-


def tempered(z, i: int, temperature) -> sp.Expr:
    return sp.exp(z[i] / temperature) / sum(sp.exp(v / temperature) for v in z)


def _same(p: sp.Expr, q: sp.Expr) -> bool:
    """p == q for quotients of sums of exponentials, exactly: the cross-multiplied difference, with the
    exponentials' products combined, expands to 0 (cheaper than ``simplify`` and as exact)."""
    p, q = sp.together(p), sp.together(q)
    cross = sp.numer(p) * sp.denom(q) - sp.denom(p) * sp.numer(q)
    return sp.expand(sp.powsimp(sp.expand(cross))) == 0


def temperature_limits() -> dict:
    """The sympy limits behind the entries (computed once per process: they depend on nothing)."""
    return dict(_temperature_limits())


@functools.lru_cache(maxsize=1)
def _temperature_limits() -> dict:
    a, b = sp.symbols("a b", positive=True)  # gaps of the maximum over the others
    z1, z2, z3 = sp.symbols("z1 z2 z3", real=True)
    out = {}
    # N = 2, gap a > 0: g_1 = 1/(1 + e^{-a/tau}).
    out["n2_zero"] = sp.limit(tempered((a, 0), 0, tau), tau, 0, "+")
    # N = 3 with a unique maximum: z = (0, -a, -b).
    out["n3_zero"] = sp.limit(tempered((0, -a, -b), 0, tau), tau, 0, "+")
    # Ties: z = (0, 0, -1).
    out["tie"] = tuple(sp.limit(tempered((0, 0, -1), i, tau), tau, 0, "+") for i in range(3))
    # tau -> oo: uniform, symbolic logits.
    out["n2_inf"] = sp.limit(tempered((z1, z2), 0, tau), tau, sp.oo)
    out["n3_inf"] = tuple(sp.limit(tempered((z1, z2, z3), i, tau), tau, sp.oo) for i in range(3))
    # tau -> 0- (tau = -t, t -> 0+): the argmin, N = 2 with z = (a, 0).
    out["n2_negative"] = sp.limit(tempered((a, 0), 0, -_t), _t, 0, "+")
    # Every N with a unique maximum at index 0, gaps a_j = z_0 - z_j > 0: g_0 = 1/(1 + sum_j e^{-a_j/tau}) and
    # 0 < g_j <= e^{-a_j/tau}, and each e^{-a/tau} -> 0 as tau -> 0+ for a > 0: a finite sum of terms tending to 0.
    z0 = sp.Symbol("z0", real=True)
    identity = others = True
    for n in GENERAL_N:
        gaps = sp.symbols(f"a1:{n}", positive=True)
        logits = (z0,) + tuple(z0 - g for g in gaps)
        top = tempered(logits, 0, tau)
        identity &= _same(top, 1 / (1 + sum(sp.exp(-g / tau) for g in gaps)))
        others &= all(_same(tempered(logits, j + 1, tau), sp.exp(-g / tau) * top) for j, g in enumerate(gaps))
    out["general_identity"], out["general_others"] = identity, others
    out["term_limit"] = sp.limit(sp.exp(-a / tau), tau, 0, "+")
    # Distance to the one-hot limit, N = 2: 1 - g_1 = 1/(1 + e^{a/tau}).
    out["distance"] = sp.simplify(1 - tempered((a, 0), 0, tau) - 1 / (1 + sp.exp(a / tau))) == 0
    return out


def measure_temperature(ctx) -> list[ClaimResult]:
    cid = "softmax.temperature"
    lim = temperature_limits()
    out = []
    tie = lim["tie"]
    half = sp.Rational(1, 2)
    general = lim["general_identity"] and lim["general_others"] and lim["term_limit"] == 0
    ok = lim["n2_zero"] == 1 and lim["n3_zero"] == 1 and general
    out.append(_entry(
        cid, PART_ONE_HOT, "confirmed" if ok else "refuted",
        "exact, for every N, under the reading that the largest logit is unique: with gaps a_j = z_max - z_j > 0, "
        "g_max(tau) = 1/(1 + sum_{j != max} e^{-a_j/tau}) and g_j(tau) = e^{-a_j/tau} g_max(tau) (sympy, symbolic "
        f"z and gaps at N = {', '.join(map(str, GENERAL_N))}: {lim['general_identity']}, {lim['general_others']}; "
        "the algebra, dividing by e^{z_max/tau}, is the same at every N), and e^{{-a/tau}} -> {lim['term_limit']} as tau -> 0+ for every a > 0 (sympy), so the finite "
        "sum tends to 0: g_max -> 1 and every other g_j -> 0. Directly: N = 2, z = (a, 0), a > 0: g_1 -> "
        f"{lim['n2_zero']}; N = 3, z = (0, -a, -b), a, b > 0: g_1 -> {lim['n3_zero']}. A unique maximum holds at "
        "every input but a set of measure zero for a gate z = W_g x + b_g with distinct rows",
        r"\max \text{ unique} \Rightarrow \lim_{\tau\to0^+} \mathrm{softmax}(z/\tau) = e_{\arg\max z}",
        kind="symbolic identity", reading=READING_UNIQUE))
    out.append(_entry(
        cid, PART_ONE_HOT, "refuted" if tie == (half, half, 0) else "confirmed",
        "exact counterexample, inside the premises, to the statement as printed (every logit vector, ties "
        f"included): z = (0, 0, -1) (the gate W_g = 0, b_g = (0, 0, -1) gives it at every input; tau > 0) tends to "
        f"{_vec(tie)} as tau -> 0+ (sympy), uniform over the tied maxima, not one-hot. Ties occur where two rows of "
        "W_g x + b_g are equal and largest: a set of measure zero when the rows differ, every input when they are "
        "equal (e.g. W_g = 0, b_g = 0: every logit 0, the gate uniform at every tau)",
        r"z_1 = z_2 > z_3 \Rightarrow \lim_{\tau\to0^+} \mathrm{softmax}(z/\tau) = (\tfrac12, \tfrac12, 0)",
        kind="symbolic identity", reading=READING_TIES, counterexample=["0", "0", "-1"]))
    third = sp.Rational(1, 3)
    ok = lim["n2_inf"] == half and all(v == third for v in lim["n3_inf"])
    out.append(_entry(
        cid, "tau -> oo: uniform", "confirmed" if ok else "refuted",
        f"sympy, symbolic real logits: N = 2: g_1 -> {lim['n2_inf']}; N = 3: g -> "
        f"{tuple(str(v) for v in lim['n3_inf'])}",
        r"\lim_{\tau\to\infty} \mathrm{softmax}(z/\tau) = \tfrac1N \mathbf 1", kind="symbolic identity"))
    out.append(_entry(
        cid, "tau -> 0- gives the argmin", "confirmed" if lim["n2_negative"] == 0 else "refuted",
        f"sympy: N = 2, z = (a, 0), a > 0, tau = -t, t -> 0+: g_1 -> {lim['n2_negative']}, so the gate tends to the "
        "one-hot of the smallest logit: 'tau -> 0' means tau -> 0+ (a temperature is positive)",
        r"\lim_{\tau\to0^-} \mathrm{softmax}(z/\tau) = e_{\arg\min z}", form="derived", kind="symbolic identity"))
    # The distance to the limit as a function of tau and the gap, with a table at gap 1.
    rows = []
    for tv in (2, 1, sp.Rational(1, 2), sp.Rational(1, 10), sp.Rational(1, 20)):
        dist = 1 / (1 + sp.exp(1 / tv))
        rows.append(f"tau = {tv}: {float(dist):.4g}")
    out.append(_entry(
        cid, "distance to the one-hot limit", "confirmed" if lim["distance"] else "refuted",
        "sympy: N = 2, gap a = z_1 - z_2 > 0: 1 - g_1(tau) = 1/(1 + e^{a/tau}) exactly (a function of a/tau only, "
        "below e^{-a/tau}); for N logits with gaps a_j to the maximum, 1 - g_max = sum_j e^{-a_j/tau} / (1 + "
        "sum_j e^{-a_j/tau}) <= (N - 1) e^{-min_j a_j/tau}. At a = 1: " + "; ".join(rows),
        r"1 - g_1(\tau) = \frac{1}{1 + e^{a/\tau}}", form="derived", kind="symbolic identity"))
    # Overflow at small tau without the shift: the logits z/tau exceed ln(max).
    texts, ok = [], True
    for dt, tv in ((np.float16, 0.05), (np.float32, 0.01), (np.float64, 0.001)):
        ln_max = float(mpmath.log(mpmath.mpf(float(np.finfo(dt).max))))
        z = (np.array([1.0, 0.0]) / tv).astype(dt)
        naive, shifted = naive_softmax(z), shifted_softmax(z)
        case_ok = bool(np.isnan(naive).any()) and bool(np.isfinite(shifted).all()) and 1 / tv > ln_max
        ok &= case_ok
        texts.append(f"{_name(dt)}: z = (1, 0), tau = {tv:g} (z/tau = {1 / tv:g} > ln(max) = {ln_max:.4f}; tau < "
                     f"1/ln(max) = {1 / ln_max:.4g} overflows): naive {[float(v) for v in naive]}, shifted "
                     f"{[float(v) for v in shifted]}")
    out.append(_entry(
        cid, "overflow at small tau without the shift", "confirmed" if ok else "refuted",
        "as tau -> 0 the tempered logits z/tau grow without bound, so the unshifted gate overflows at gap/tau > "
        "ln(max): " + "; ".join(texts), r"\frac{z_1 - z_2}{\tau} > \ln(\max) \Rightarrow \text{nan}",
        form="derived", kind="qualitative"))
    return out


def slips_temperature(results: list[ClaimResult]) -> list[Slip]:
    by = {(r.key.part, r.key.reading): r for r in results}
    ties, unique = by.get((PART_ONE_HOT, READING_TIES)), by.get((PART_ONE_HOT, READING_UNIQUE))
    if ties is None or ties.verdict != "refuted":
        return []
    return [Slip(
        id="softmax.temperature.ties",
        entries=keys_of(ties, unique),
        location="Section 'Numerical stability analysis', '当 τ → 0 时，门控趋向one-hot选择'",
        slip_class="unstated assumption",
        stated="as tau -> 0 the gate tends to a one-hot choice",
        holds="false where the largest logits tie: there it tends to the uniform distribution over them (z = (0, 0, "
        "-1) gives (1/2, 1/2, 0)); one-hot wherever the largest logit is unique (exact, every N), which is almost "
        "every input",
        evidence=ties.evidence + (" | " + unique.evidence if unique is not None else ""),
        effect="ties are rare: a set of measure zero for a gate with distinct rows, every input only if all rows "
        "of W_g x + b_g are equal (e.g. W_g = 0, b_g = 0)",
        summary="The one-hot limit as tau -> 0 is false at tied largest logits (exact: z = (0, 0, -1) tends to "
        "(1/2, 1/2, 0)) and holds exactly when the largest logit is unique, which the chapter leaves unstated",
    )]


def _vec(values) -> str:
    return "(" + ", ".join(sp.sstr(v) for v in values) + ")"


INTERPRETATIONS_SHIFT = (
    Interpretation(
        id="softmax.shifted_form",
        location="Section 'Numerical stability analysis', the display after '应采用减去最大值的softmax'",
        issue="The shifted softmax's formula is missing.",
        choice="g_i = e^{z_i - m} / sum_j e^{z_j - m}, m = max_j z_j (the standard form).",
    ),
    Interpretation(
        id="softmax.stable",
        location="Section 'Numerical stability analysis', '为保证数值稳定'",
        issue="'Numerically stable' is not defined.",
        choice="Read as 'no overflow and no nan for finite logits' (the chapter's concern, overflow); underflow "
        "and the relative error are reported as derived facts.",
    ),
)
INTERPRETATIONS_TEMPERATURE = (
    Interpretation(
        id="softmax.temperature_form",
        location="Section 'Numerical stability analysis', the display after '温度参数 τ'",
        issue="The tempered gate's formula is missing, and the sign of tau is not stated.",
        choice="g_i(tau) = e^{z_i/tau} / sum_j e^{z_j/tau} with tau > 0, so 'tau -> 0' is tau -> 0+.",
    ),
    Interpretation(
        id="softmax.temperature_ties",
        location="Section 'Numerical stability analysis', '当 τ → 0 时，门控趋向one-hot选择'",
        issue="Whether 'one-hot' is claimed for every logit vector or only where the largest logit is unique.",
        choice="Both readings, each its own entry: ties included (the statement as printed) and a unique largest "
        "logit (almost every input of a gate with distinct rows, the case the literature means).",
    ),
)

register(__name__, Claim(
    id="softmax.overflow", source=SOURCE, kind="qualitative",
    statement="softmax的门控输出可能出现数值溢出 (the softmax gate's outputs may overflow numerically); "
    r"g_i = e^{z_i} / \sum_j e^{z_j}",
    preconditions=("IEEE binary16, binary32, binary64 arithmetic through numpy",),
    measure=measure_overflow,
    summary="The naive softmax overflows.",
    notes="Exact per dtype: the smallest logit whose exp overflows (bisection over the bit patterns), against "
    "ln(max) from np.finfo (mpmath), and the naive softmax's nan there.",
))
register(__name__, Claim(
    id="softmax.max_shift", source=SOURCE, kind="qualitative",
    statement="为保证数值稳定，应采用减去最大值的softmax (to ensure numerical stability, use the softmax with the "
    r"maximum subtracted): g_i = e^{z_i - \max_j z_j} / \sum_k e^{z_k - \max_j z_j}",
    preconditions=("finite logits", "IEEE binary16, binary32, binary64 arithmetic through numpy"),
    measure=measure_max_shift, interpretations=INTERPRETATIONS_SHIFT,
    summary="Subtracting the maximum keeps the softmax and removes overflow.",
    notes="The identity by sympy; no overflow at the edges of each dtype and on seeded rows over the whole range; "
    "underflow and log(0) at exact gaps; the relative error against mpmath on seeded gates, one entry per dtype, "
    "decided under the run's error control (a single excess over the derived bound refutes).",
))
register(__name__, Claim(
    id="softmax.temperature", source=SOURCE, kind="symbolic identity",
    statement="当 τ → 0 时，门控趋向one-hot选择；当 τ → ∞ 时，趋向均匀分布 (as tau -> 0 the gate tends to a one-hot "
    r"choice; as tau -> oo, to the uniform distribution): g_i(\tau) = e^{z_i/\tau} / \sum_j e^{z_j/\tau}",
    preconditions=("tau > 0",),
    measure=measure_temperature, slips=slips_temperature, interpretations=INTERPRETATIONS_TEMPERATURE,
    summary="The temperature interpolates between one-hot and uniform gates.",
    notes="The one-hot limit under two readings: ties included (refuted: an exact tie tends to (1/2, 1/2, 0)) and a "
    "unique largest logit (confirmed for every N: sympy identities at N = 2..6 and the limit of each term, and sympy "
    "limits at N = 2, 3); tau -> oo with symbolic logits, tau -> 0-, the distance to the one-hot limit as a "
    "function of gap/tau, and the unshifted gate's overflow at small tau per dtype.",
))
