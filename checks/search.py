"""Worst-case search: look for inputs on which a claimed inequality fails, confirm them exactly, shrink them.

A :class:`Statement` claims ``slack(x) = rhs(x) - lhs(x) > 0`` (``strict``) or ``>= 0`` for every ``x`` in a
space of discrete sizes (:class:`Size`), real vectors in boxes (:class:`Real`) and integer sequences
(:class:`Choice`).  :func:`search` tries size configurations smallest first; at each it draws random restarts from
the caller's ``numpy.random.Generator``, runs scipy's Nelder-Mead on the reals and first-improvement moves (change
one entry, swap two) on the sequences, all on the fast float ``slack``.  A float violation is only a lead:
:func:`recheck` evaluates ``exact_slack`` on rationalized inputs, and only a violation the exact arithmetic
confirms becomes a counterexample, which :func:`shrink` then reduces (smaller sizes, simpler numbers), keeping a
step only if the exact slack still violates.  Finding nothing proves nothing: the result says how much was
searched and the least slack seen, never that the statement holds.

Premises.  A statement may declare :class:`Premise` predicates on an instance (the hypotheses of the claim it
encodes).  The search evaluates a candidate only if every premise holds; candidates outside are counted
(``SearchResult.outside``), never evaluated as leads and never decide anything.  The exact recheck confirms a
violation only at a rationalization on which every premise holds exactly, and the shrinker keeps a step only
if the premises still hold exactly, so a counterexample satisfies every premise (it records them).  A premise
that reads only the sizes (``sizes_only``) rules out whole size configurations, which are then skipped.  On
request (``report_outside``) the search also evaluates candidates outside the premises, and keeps the first
exactly confirmed violation there as :class:`OutsideViolation`, naming the premises it breaks: reported beside
the result, it never makes the result ``found``.

Assumptions, and why:

* ``slack`` and ``exact_slack`` compute the same function; the float one only guides the search, so its
  rounding can cost a lead but never produce a false counterexample.
* ``exact_slack`` is rational at rational inputs (return ``int``, ``Fraction`` or a sympy ``Rational``; compare
  squares instead of Euclidean norms).  A float returned there would defeat the recheck, so it is refused.
* Box bounds are rational (floats are read as their exact values), so rounded inputs can be clipped exactly.
* Random restarts plus local descent find violations on sets with interior; a violation only on an equality set
  (say ``x = y``) is reached through the recheck's coarser rationalizations, which snap near-equal floats together.
* Premises are checked on the float candidates during the search (a guide) and on the exact inputs wherever
  something is confirmed or kept; a premise must accept Fractions and floats alike.  Checking a premise costs
  no evaluation; a configuration whose draws keep falling outside is abandoned after a few barren restarts.
* Every evaluation, float or exact, counts against ``budget`` (and ``per_config``), so a caller sizes the search
  by its run's budget; a recheck is never cut short, so the count may pass the budget by at most
  ``len(LADDER) - 1``.  Shrinking has its own ``shrink_budget``.  Runs are deterministic for a given generator
  state, which the search advances (pass a fresh ``numpy.random.default_rng(seed)`` to repeat a run).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from numbers import Rational
from typing import Callable, Mapping

import numpy as np
from scipy import optimize

Sizes = Mapping[str, int]
Dim = int | str | Callable[[Sizes], int]  # a length: fixed, a size's name, or a function of the sizes
Bound = int | float | Fraction | Callable[[Sizes], object]

# Finest first: the floats' own values are "the same inputs"; coarser ones snap near-equal floats together.
LADDER = (None, 10**9, 10**6, 10**3)
DENOMINATORS = (1, 2, 3, 4, 5, 10, 100, 1000)  # what the shrinker rounds to, simplest first


@dataclass(frozen=True)
class Size:
    """A discrete size, ``lo <= value <= hi``; the search and the shrinker prefer small values."""
    name: str
    lo: int
    hi: int


@dataclass(frozen=True)
class Real:
    """Reals in the box ``[lo, hi]`` (bounds may be functions of the sizes); a scalar if ``length`` is None."""
    name: str
    lo: Bound = -1
    hi: Bound = 1
    length: Dim | None = None


@dataclass(frozen=True)
class Choice:
    """A sequence of ``length`` integers, each in ``0 .. values - 1`` (e.g. a routing over the experts)."""
    name: str
    length: Dim
    values: Dim


@dataclass(frozen=True)
class Premise:
    """A hypothesis of the statement: ``holds(x)`` on an instance (exact or float inputs) says whether ``x`` is
    one the statement is about.  ``text`` states it in the claim's own quantities, with the constant it is
    checked at where the claim's premise is asymptotic.  ``sizes_only``: it reads only the sizes."""
    name: str
    text: str
    holds: Callable[[Mapping], bool]
    sizes_only: bool = False


@dataclass(frozen=True)
class Statement:
    """``slack(x) > 0`` (``strict``) or ``>= 0`` for all ``x``; ``x`` maps each name to its value (an int for a
    size, a number or a tuple for a real, a tuple of ints for a choice), floats for ``slack`` and Fractions
    for ``exact_slack``."""
    name: str
    slack: Callable[[Mapping], float]
    exact_slack: Callable[[Mapping], object]
    sizes: tuple[Size, ...] = ()
    reals: tuple[Real, ...] = ()
    choices: tuple[Choice, ...] = ()
    strict: bool = True
    # Inputs tried exactly before any search, as Hypothesis's @example: a violation an earlier search found is
    # kept here so that every seed and budget rechecks it (the exact recheck, not the declaration, decides).  An
    # example outside the premises is no instance of the statement: it is counted as outside and not rechecked.
    examples: tuple[Mapping, ...] = ()
    # The hypotheses: only instances on which every one holds are searched, confirmed, shrunk or reported.
    premises: tuple[Premise, ...] = ()

    def failing(self, x: Mapping, sizes_only: bool = False) -> tuple[str, ...]:
        """The names of the premises ``x`` breaks (only those reading the sizes, if ``sizes_only``)."""
        return tuple(p.name for p in self.premises if (p.sizes_only or not sizes_only) and not p.holds(x))

    def within(self, x: Mapping) -> bool:
        """Every premise holds at ``x``."""
        return all(p.holds(x) for p in self.premises)

    def violated(self, s) -> bool:
        return s <= 0 if self.strict else s < 0

    def box(self, sizes: Sizes) -> tuple[list[Fraction], list[Fraction]]:
        """Lower and upper bounds of the reals flattened in declaration order."""
        lo, hi = [], []
        for r in self.reals:
            n = 1 if r.length is None else _dim(r.length, sizes)
            lo += [_bound(r.lo, sizes)] * n
            hi += [_bound(r.hi, sizes)] * n
        return lo, hi


@dataclass(frozen=True)
class Recheck:
    """The exact verdict on a float lead: the rationalized inputs tried last (the confirming ones if
    ``confirmed``, else the finest), their exact slack, and the denominator limit used (None: the floats' own
    values)."""
    confirmed: bool
    inputs: Mapping
    slack: Fraction
    max_denominator: int | None
    evaluations: int


@dataclass(frozen=True)
class Unconfirmed:
    """A float violation that exact arithmetic rejected: rounding, not a counterexample."""
    inputs: Mapping
    float_slack: float
    exact_slack: Fraction


@dataclass(frozen=True)
class Counterexample:
    """The shrunk violating inputs (exact) and their exact slack, the confirmed case it came from, the steps, and
    the premises both satisfy (``(name, text)`` pairs, rechecked exactly on the shrunk inputs)."""
    inputs: Mapping
    slack: Fraction
    found_inputs: Mapping
    found_slack: Fraction
    steps: tuple[str, ...]
    evaluations: int
    premises: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class OutsideViolation:
    """An exactly confirmed violation at inputs outside the statement's premises: which premises it breaks.  It
    says where the premises matter; it is never a counterexample of the statement."""
    inputs: Mapping
    slack: Fraction
    broken: tuple[str, ...]


@dataclass(frozen=True)
class SearchResult:
    """What was searched and what was found.  ``least_slack`` is the least trusted slack seen: a float slack
    that did not violate, or the exact slack where a float violation was rejected or confirmed."""
    statement: str
    found: bool
    evaluations: int
    exact_evaluations: int
    restarts: int
    configurations: tuple[Mapping, ...]
    allowed_evaluations: int  # the search's budget of evaluations
    least_slack: float
    least_at: Mapping | None
    counterexample: Counterexample | None
    float_only: int
    unconfirmed: tuple[Unconfirmed, ...]
    seconds: float = field(compare=False)
    # The violation came from one of the statement's explicit examples, not from this run's search.
    from_example: bool = False
    # Candidates outside the premises (not evaluated as leads), size configurations skipped for a premise on the
    # sizes, and (on request) the first exact violation found outside the premises, which decides nothing.
    outside: int = 0
    skipped_configurations: int = 0
    outside_violation: OutsideViolation | None = None
    premises: tuple[str, ...] = ()  # the statement's premises, by name

    def summary(self) -> str:
        beyond = ""
        if self.outside_violation is not None:
            v = self.outside_violation
            beyond = (f"; outside the premises ({', '.join(v.broken)} broken) it fails at "
                      f"{', '.join(f'{k} = {_show(e)}' for k, e in v.inputs.items())}, which decides nothing")
        if self.found:
            shown = ", ".join(f"{k} = {_show(v)}" for k, v in self.counterexample.inputs.items())
            return f"{self.statement}: fails at {shown}, exact slack {self.counterexample.slack}" + beyond
        outside = f", {self.outside} candidates outside the premises" if self.premises else ""
        return (f"{self.statement}: no violation in {self.evaluations} float and {self.exact_evaluations} exact "
                f"evaluations, {self.restarts} restarts over {len(self.configurations)} size configurations "
                f"({self.float_only} float violations not confirmed{outside}); least slack {self.least_slack:.3g}"
                + beyond)


def _dim(spec: Dim, sizes: Sizes) -> int:
    if isinstance(spec, str):
        return int(sizes[spec])
    return int(spec(sizes)) if callable(spec) else int(spec)


def _bound(b: Bound, sizes: Sizes) -> Fraction:
    return _fraction(b(sizes) if callable(b) else b, floats=True)


def _fraction(v, floats: bool = False) -> Fraction:
    if isinstance(v, float) and floats:
        return Fraction(v)
    if isinstance(v, (bool, float)):
        raise TypeError(f"an exact slack must be rational, got {v!r}")
    if isinstance(v, Rational):  # int, Fraction, and sympy's Rational and Integer, which register as such
        return Fraction(v.numerator, v.denominator)
    raise TypeError(f"an exact slack must be rational, got {v!r}")


def _flat(st: Statement, x: Mapping) -> list:
    out = []
    for r in st.reals:
        out += [x[r.name]] if r.length is None else list(x[r.name])
    return out


def _with_flat(st: Statement, x: Mapping, z) -> dict:
    y, i = dict(x), 0
    for r in st.reals:
        n = 1 if r.length is None else len(x[r.name])
        y[r.name] = z[i] if r.length is None else tuple(z[i:i + n])
        i += n
    return y


def _as_floats(st: Statement, x: Mapping) -> dict:
    return _with_flat(st, x, [float(v) for v in _flat(st, x)])


def _rationalized(st: Statement, x: Mapping, limit: int | None) -> dict:
    lo, hi = st.box({s.name: x[s.name] for s in st.sizes})
    z = [Fraction(v) if limit is None else Fraction(v).limit_denominator(limit) for v in _flat(st, x)]
    return _with_flat(st, x, [min(max(v, a), b) for v, a, b in zip(z, lo, hi)])


def recheck(st: Statement, x: Mapping, inside: bool = True) -> Recheck:
    """Exact slack on ``x`` rationalized ever more coarsely (:data:`LADDER`); confirmed at the first
    rationalization that violates and satisfies every premise exactly (``inside``; with ``inside=False``, at
    the first that violates and breaks one, for reporting a violation outside the premises).  If none does,
    the verdict reports the finest one: "the same inputs"."""
    first, tried = None, []
    for limit in LADDER:
        y = _rationalized(st, x, limit)
        if y in tried:
            continue
        tried.append(y)
        s = _fraction(st.exact_slack(y))
        if st.violated(s) and st.within(y) == inside:
            return Recheck(True, y, s, limit, len(tried))
        first = first or Recheck(False, y, s, limit, 0)
    return Recheck(False, first.inputs, first.slack, first.max_denominator, len(tried))


class _Exhausted(Exception):
    pass


class _FloatViolation(Exception):
    def __init__(self, x, s):
        super().__init__()
        self.x, self.s = x, s


class _OutsideLead(Exception):
    def __init__(self, x, s):
        super().__init__()
        self.x, self.s = x, s


# Draws per restart before a restart counts as barren (its draws all outside the premises), and barren restarts
# before a configuration is abandoned: checking a premise costs no evaluation, so without these a configuration
# whose premises (almost) never hold would spin.
DRAWS = 200
BARREN = 3


class _Run:
    """One search's state: the generator, the counters, the least slack seen, the rejected float leads."""

    def __init__(self, st: Statement, rng: np.random.Generator, budget: int, report_outside: bool = False):
        self.st, self.rng, self.budget, self.limit = st, rng, budget, budget
        self.evals = self.exact = self.restarts = self.float_only = self.outside = 0
        self.least, self.least_at, self.unconfirmed = math.inf, None, []
        self.report_outside, self.outside_violation = report_outside, None

    @property
    def spent(self) -> int:
        return self.evals + self.exact

    def eval(self, x: Mapping) -> float:
        if self.spent >= self.limit:
            raise _Exhausted
        if self.st.premises and not self.st.within(x):
            # Not an instance of the statement: no lead, no least slack.  Only when asked, and until one is
            # confirmed, is its slack looked at, to report a violation outside the premises.
            self.outside += 1
            if self.report_outside and self.outside_violation is None:
                self.evals += 1
                s = float(self.st.slack(x))
                if not math.isnan(s) and self.st.violated(s):
                    raise _OutsideLead(x, s)
            return math.inf
        self.evals += 1
        s = float(self.st.slack(x))
        if math.isnan(s):  # outside the statement's domain: neither a lead nor a least slack
            return math.inf
        if self.st.violated(s):
            raise _FloatViolation(x, s)
        if s < self.least:
            self.least, self.least_at = s, x
        return s

    def _draw_once(self, sizes: Sizes) -> dict:
        x = dict(sizes)
        for r in self.st.reals:
            lo, hi = float(_bound(r.lo, sizes)), float(_bound(r.hi, sizes))
            values = [float(v) for v in self.rng.uniform(lo, hi, 1 if r.length is None else _dim(r.length, sizes))]
            x[r.name] = values[0] if r.length is None else tuple(values)
        for c in self.st.choices:
            x[c.name] = tuple(int(v) for v in self.rng.integers(0, _dim(c.values, sizes), _dim(c.length, sizes)))
        return x

    def draw(self, sizes: Sizes) -> dict:
        """A random point of the space; with premises, the first of up to :data:`DRAWS` draws inside them
        (rejection sampling), else the last one drawn."""
        x = self._draw_once(sizes)
        for _ in range(DRAWS - 1 if self.st.premises else 0):
            if self.st.within(x):
                break
            self.outside += 1
            x = self._draw_once(sizes)
        return x

    def config(self, sizes: Sizes, per_config: int, restarts: int, seed: Mapping | None = None) -> Recheck | None:
        """Restarts at one size configuration until ``per_config`` evaluations are spent; the first confirmed
        violation, or None."""
        end = min(self.budget, self.spent + per_config)
        # A configuration with nothing free is one point: evaluating it again teaches nothing.
        fixed = all(a == b for a, b in zip(*self.st.box(sizes))) and all(
            _dim(c.length, sizes) == 0 or _dim(c.values, sizes) <= 1 for c in self.st.choices)
        barren = 0
        while self.spent < end and barren < BARREN:
            self.restarts += 1
            self.limit = min(end, self.spent + max(1, per_config // restarts))
            x = seed if seed is not None else self.draw(sizes)
            seed, before = None, self.spent
            try:
                self.descend(x)
            except _Exhausted:
                pass
            except _OutsideLead as v:
                check = recheck(self.st, v.x, inside=False)
                self.exact += check.evaluations
                if check.confirmed:
                    self.outside_violation = OutsideViolation(check.inputs, check.slack,
                                                              self.st.failing(check.inputs))
            except _FloatViolation as v:
                check = recheck(self.st, v.x)
                self.exact += check.evaluations
                if float(check.slack) < self.least and self.st.within(check.inputs):
                    self.least, self.least_at = float(check.slack), check.inputs
                if check.confirmed:
                    return check
                self.float_only += 1
                if len(self.unconfirmed) < 10:
                    self.unconfirmed.append(Unconfirmed(v.x, v.s, check.slack))
            barren = barren + 1 if self.spent == before else 0
            if fixed:
                break
        return None

    def descend(self, x: Mapping) -> None:
        s = self.eval(x)
        for _ in range(3):  # alternate while the sequence moves open new ground for the reals
            if self.st.reals:
                x, s = self.nelder_mead(x, s)
            x, s, moved = self.moves(x, s)
            if not moved or not self.st.reals:
                return

    def nelder_mead(self, x: Mapping, s: float) -> tuple[Mapping, float]:
        lo, hi = (np.array([float(v) for v in b]) for b in self.st.box(x))
        z0 = np.array(_flat(self.st, x), dtype=float)
        best = [s, x]
        if not z0.size:  # vectors of length zero at this size
            return x, s

        def f(z):
            y = _with_flat(self.st, x, [float(v) for v in np.clip(z, lo, hi)])
            value = self.eval(y)
            if value < best[0]:
                best[:] = [value, y]
            return value

        # The default simplex (5% of each coordinate) is too small to leave a restart's basin in a box; step a
        # tenth of the box, inwards so that no vertex is clipped onto another.
        step = (hi - lo) / 10
        simplex = [z0] + [z0 + np.where(np.arange(len(z0)) == i, np.where(z0 + step <= hi, step, -step), 0)
                          for i in range(len(z0))]
        optimize.minimize(f, z0, method="Nelder-Mead", bounds=list(zip(lo, hi)),
                          options={"initial_simplex": np.array(simplex), "maxfev": self.limit - self.spent + 1,
                                   "xatol": 1e-10, "fatol": 1e-12})
        return best[1], best[0]

    def moves(self, x: Mapping, s: float) -> tuple[Mapping, float, bool]:
        """First-improvement descent over "change one entry" and "swap two entries", tried in a random order."""
        moved, improved = False, True
        while improved:
            improved = False
            catalogue = []  # (choice, number of changes, number of swap slots)
            for c in self.st.choices:
                n, k = len(x[c.name]), _dim(c.values, x)
                catalogue.append((c.name, n * (k - 1), n * n, n, k))
            total = sum(a + b for _, a, b, _, _ in catalogue)
            for index in self.rng.permutation(total) if total else ():
                y = self.move(x, catalogue, int(index))
                if y is None:
                    continue
                value = self.eval(y)
                if value < s:
                    x, s, moved, improved = y, value, True, True
                    break
        return x, s, moved

    @staticmethod
    def move(x: Mapping, catalogue, index: int) -> dict | None:
        for name, changes, swaps, n, k in catalogue:
            seq = list(x[name])
            if index < changes:
                i, shift = divmod(index, k - 1)
                seq[i] = (seq[i] + 1 + shift) % k
                return {**x, name: tuple(seq)}
            index -= changes
            if index < swaps:
                i, j = divmod(index, n)
                if i >= j or seq[i] == seq[j]:
                    return None  # each pair once, and only if the swap changes something
                seq[i], seq[j] = seq[j], seq[i]
                return {**x, name: tuple(seq)}
            index -= swaps
        return None


def configurations(st: Statement) -> list[dict]:
    """Every size configuration, smallest total first (ties: the declared order, smaller first)."""
    grid = itertools.product(*(range(s.lo, s.hi + 1) for s in st.sizes))
    return [dict(zip((s.name for s in st.sizes), v)) for v in sorted(grid, key=lambda v: (sum(v), v))]


def search(st: Statement, rng: np.random.Generator, *, budget: int = 2000, per_config: int | None = None,
           restarts: int = 4, configs: list[Mapping] | None = None, shrink_budget: int = 500,
           report_outside: bool = False) -> SearchResult:
    """Search ``configs`` (default: all, smallest first) for a violation and shrink the first one confirmed.

    Each configuration gets ``per_config`` evaluations (default: an even share of ``budget`` over the
    configurations inside the premises on the sizes, at least 100), split over at least ``restarts`` local
    descents, until ``budget`` is spent; so with many configurations only the smallest are reached, which is
    where a shrunk counterexample would live anyway.  A configuration outside a premise on the sizes is skipped
    (counted).  The first confirmed violation inside the premises ends the search and is shrunk with
    ``shrink_budget`` evaluations; a result without one reports the effort and the least slack seen inside the
    premises, which bound nothing.  ``report_outside``: also look at candidates outside the premises and report
    the first exact violation there (:class:`OutsideViolation`), which decides nothing."""
    started = time.perf_counter()
    configs = configurations(st) if configs is None else [dict(c) for c in configs]
    inside = [c for c in configs if not st.failing(c, sizes_only=True)]
    skipped = len(configs) - len(inside)
    per_config = per_config or max(budget // max(1, len(inside)), min(budget, 100))
    run, tried, found, cex = _Run(st, rng, budget, report_outside), [], None, None
    for example in st.examples:
        if not st.within(example):  # an example outside the premises is no instance of the statement
            run.outside += 1
            continue
        check = recheck(st, example)
        run.exact += check.evaluations
        if check.confirmed:
            found = check
            break
    from_example = found is not None
    for sizes in inside if found is None else ():
        if run.spent >= budget:
            break
        tried.append(sizes)
        found = run.config(sizes, per_config, restarts)
        if found:
            break
    if found:
        cex = shrink(st, found.inputs, rng, budget=shrink_budget)
    return SearchResult(st.name, found is not None, run.evals, run.exact, run.restarts, tuple(tried), budget,
                        run.least, run.least_at, cex, run.float_only, tuple(run.unconfirmed),
                        time.perf_counter() - started, from_example, run.outside, skipped, run.outside_violation,
                        tuple(p.name for p in st.premises))


def _key(st: Statement, x: Mapping) -> tuple:
    """What the shrinker lowers, most important first: sizes, real numbers' denominators, numerators and
    signs (positive preferred, as Hypothesis does), sequence entries."""
    z = [_simplicity(v) for v in _flat(st, x)]
    return (sum(x[s.name] for s in st.sizes), *(sum(v[k] for v in z) for k in range(3)),
            sum(sum(x[c.name]) for c in st.choices))


def _projected(st: Statement, x: Mapping, sizes: Sizes) -> dict:
    """``x`` at other sizes: vectors and sequences cut (or padded with 0), entries clipped into the new space."""
    y = dict(sizes)
    for r in st.reals:
        lo, hi = _bound(r.lo, sizes), _bound(r.hi, sizes)
        old = [x[r.name]] if r.length is None else list(x[r.name])
        n = 1 if r.length is None else _dim(r.length, sizes)
        new = [min(max(Fraction(v), lo), hi) for v in (old + [Fraction(0)] * n)[:n]]
        y[r.name] = new[0] if r.length is None else tuple(new)
    for c in st.choices:
        n, k = _dim(c.length, sizes), _dim(c.values, sizes)
        y[c.name] = tuple(min(v, k - 1) for v in (list(x[c.name]) + [0] * n)[:n])
    return y


def _show(v) -> str:
    return f"({', '.join(map(str, v))})" if isinstance(v, tuple) else str(v)


def _simpler(st: Statement, x: Mapping):
    """(description, transformation of the current inputs) pairs: groups of reals (all of them, then each
    vector) zeroed, made equal, rounded to small denominators; then entry by entry; then sequence entries
    lowered.  Transformations rather than candidates, so each applies to the inputs as already shrunk."""
    lo, hi = st.box({s.name: x[s.name] for s in st.sizes})

    def put(rule, idx):
        def apply(y):
            z = _flat(st, y)
            for i in idx:
                z[i] = min(max(rule(z, i), lo[i]), hi[i])
            return _with_flat(st, y, z)
        return apply

    groups, labels, start = [], [], 0
    for r in st.reals:
        n = 1 if r.length is None else len(x[r.name])
        groups.append((r.name, range(start, start + n)))
        labels += [r.name] if r.length is None else [f"{r.name}[{i}]" for i in range(n)]
        start += n
    # Jointly first: a violation on an equality set (x = y) survives only moves that keep the equality.
    joint = [("all reals", range(start))] if len(groups) > 1 else []
    for name, idx in joint + [g for g in groups if len(g[1]) > 1]:
        yield f"{name} all to 0", put(lambda z, i: Fraction(0), idx)
        yield f"{name} all equal", put(lambda z, i, idx=idx: min((z[j] for j in idx), key=_simplicity), idx)
        for q in DENOMINATORS:
            yield f"{name} rounded to denominators <= {q}", put(lambda z, i, q=q: z[i].limit_denominator(q), idx)
    for i, label in enumerate(labels):
        yield f"{label} to 0", put(lambda z, i: Fraction(0), [i])
        yield f"{label} to its sign", put(lambda z, i: Fraction(1 if z[i] > 0 else -1), [i])
        yield f"{label} negated", put(lambda z, i: -z[i], [i])
        for q in DENOMINATORS:
            yield f"{label} rounded to denominator <= {q}", put(lambda z, i, q=q: z[i].limit_denominator(q), [i])
    for c in st.choices:
        yield f"{c.name} all to 0", lambda y, name=c.name: {**y, name: (0,) * len(y[name])}
        for i in range(len(x[c.name])):
            for label, rule in (("to 0", lambda v: 0), ("lowered", lambda v: max(v - 1, 0))):
                yield (f"{c.name}[{i}] {label}",
                       lambda y, name=c.name, i=i, rule=rule: {**y, name: y[name][:i] + (rule(y[name][i]),) +
                                                                 y[name][i + 1:]})


def _simplicity(v: Fraction) -> tuple:
    return v.denominator, abs(v.numerator), v < 0


def shrink(st: Statement, inputs: Mapping, rng: np.random.Generator, *, budget: int = 500,
           search_budget: int = 60) -> Counterexample:
    """Greedily simplify an exactly violating ``inputs`` while it still violates exactly.

    Passes, repeated until none changes anything or ``budget`` evaluations (float and exact) are spent:
    each size lowered to each smaller value, smallest first (the witness projected, and if the projection
    does not violate, a short search of ``search_budget`` evaluations seeded from it); then the reals made
    simpler (zeroed, equalized, rounded to small denominators); then the sequences' entries lowered.  A step
    is kept only if it lowers :func:`_key`, so shrinking terminates."""
    x = dict(inputs)
    slack = _fraction(st.exact_slack(x))
    if not st.violated(slack):
        raise ValueError(f"{st.name}: inputs do not violate exactly (slack {slack})")
    if st.failing(x):
        raise ValueError(f"{st.name}: inputs break the premises {', '.join(st.failing(x))}")
    found_inputs, found_slack, steps, used = dict(x), slack, [], 1

    def attempt(label, y, detail=True):
        nonlocal x, slack, used
        if used >= budget or y == x or _key(st, y) >= _key(st, x) or not st.within(y):
            return False  # a step must simplify and stay inside the premises
        used += 1
        s = _fraction(st.exact_slack(y))
        if st.violated(s):
            changes = [f"{k} = {_show(v)}" for k, v in y.items() if v != x[k]]
            steps.append(f"{label}: {', '.join(changes)}" if detail else label)
            x, slack = y, s
        return st.violated(s)

    changed = True
    while changed and used < budget:
        changed = False
        for size in st.sizes:
            for value in range(size.lo, x[size.name]):
                sizes = {s.name: x[s.name] for s in st.sizes} | {size.name: value}
                if st.failing(sizes, sizes_only=True):
                    continue  # a size outside the premises: no instance of the statement there
                label = f"{size.name}: {x[size.name]} -> {value}"
                if attempt(f"{label} (projected)", _projected(st, x, sizes), detail=False):
                    changed = True
                    break
                run = _Run(st, rng, min(search_budget, budget - used))
                found = run.config(sizes, run.budget, 2, seed=_as_floats(st, _projected(st, x, sizes)))
                used += run.spent
                if found and attempt(f"{label} (searched, {run.spent} evaluations)", found.inputs, detail=False):
                    changed = True
                    break
        for label, transform in _simpler(st, x):
            changed = attempt(label, transform(x)) or changed
    assert st.within(x), "the shrinker keeps only steps inside the premises"
    return Counterexample(x, slack, found_inputs, found_slack, tuple(steps), used,
                          tuple((p.name, p.text) for p in st.premises))
