"""Theorem 1's eq. (20) averaged over tasks given the routing, in exact rational arithmetic.

The proof of Theorem 1 (Appendix I.2) writes each round's error through S and D,
i.e. it averages over the tasks with the routing held fixed:
S = E||w_n||^2 and D = (1/N^2) sum_{n != n'} ||w_n - w_n'||^2 = E||w_n - w_n'||^2 for
n, n' independent and uniform.  Under Algorithm 1 the routing depends on the
tasks, so "E[G_T | routing]" needs a law of the tasks given the routing.  The
law used here (``law="sets"``):

* the routing m_1..m_T is fixed, and so is the expert-set assignment
  sigma (expert -> the one task it serves after exploration, Proposition 1's
  sets M_n);
* exploration rounds tau <= T1: n_tau i.i.d. uniform on {1..N}, independent of
  the routing (the averaging behind S and D);
* rounds tau > T1: n_tau = sigma(m_tau) (the routed expert serves its own set).

Then E[G_T | routing, sigma] = N^(-T1) sum over the N^T1 exploration task
sequences of E[G_T | tasks, routing], the latter from eq. (42)'s recursion
under A1 (:mod:`theory.conditional`).  The alternative ``law="product"`` draws
every round's task i.i.d. uniform, independent of the routing, also after T1;
both laws coincide at T = T1.

Closed form (product law, from eq. (42)): an expert routed L times, whose k-th
task is evaluated after all L updates, has
E[e] = r^L S + (1 - r) sum_{j != k} r^(L-j) D (the same-task term j = k is 0, not D),
so summing over its rounds

    E[G_T | routing] = (1/T) sum_m [ L_m (r^L_m S + (1 - r^L_m) D) - (1 - r^L_m) D ],   L_m = L_T^(m).

At T = T1 this is eq. (20)'s right-hand side minus (D/T) sum_{m routed} (1 - r^L_m):
eq. (20) then holds for every routing and every pool with D > 0.  For T > T1
the right-hand side freezes the counts at T1, and the comparison depends on the
law after T1; this is what the exhaustive search below explores.

Both sides of eq. (20) are unchanged by relabeling the experts (all start at
w = 0; the right-hand side depends only on the counts), so the search runs over
routings in canonical form (restricted growth strings: expert k + 1 is first
used after expert k), which are also the lexicographically first of their
relabelings.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterator, Sequence

from moecl_verify.theory.conditional import Vector, counts, eq20_rhs, pool_constants

LAWS = ("sets", "product")


def _sq(a: Vector, b: Vector) -> Fraction:
    return sum(((x - y) ** 2 for x, y in zip(a, b)), Fraction(0))


def canonical_routings(T: int, M: int) -> Iterator[tuple[int, ...]]:
    """Routings m_1..m_T up to relabeling the experts, in lexicographic order (restricted growth strings)."""
    def grow(prefix: tuple[int, ...], used: int):
        if len(prefix) == T:
            yield prefix
            return
        for m in range(min(used + 1, M)):
            yield from grow(prefix + (m,), max(used, m + 1))

    yield from grow((), 0)


def task_averaged_generalization(W: Sequence[Vector], chosen: Sequence[int], M: int, r: Fraction,
                                 T1: int) -> dict[tuple[int, ...], Fraction]:
    """E[G_T | routing, sigma] for every expert-set assignment sigma of the experts routed after T1.

    The exploration tasks n_1..n_T1 are averaged exhaustively (uniform, independent of the routing);
    after T1, n_tau = sigma(m_tau).  Keys: sigma as the tasks of the experts ``sorted(set(chosen[T1:]))``,
    in that order (the empty tuple when T1 = T).  Exact, from eq. (42)'s recursion as in
    :func:`theory.conditional.conditional_errors`, evaluated at T only.
    """
    N, T = len(W), len(chosen)
    if not 0 <= T1 <= T:
        raise ValueError(f"T1 must be in 0..{T}, got {T1}")
    zero = tuple(Fraction(0) for _ in W[0])
    gap = [[_sq(W[a], W[b]) for b in range(N)] for a in range(N)]
    start = tuple(_sq(zero, w) for w in W)
    post = sorted(set(chosen[T1:]))
    assignments = list(itertools.product(range(N), repeat=len(post)))
    totals = {sigma: Fraction(0) for sigma in assignments}

    def update(rows: list, m: int, n_t: int) -> None:
        rows[m] = tuple(r * e + (1 - r) * gap[n_t][n] for n, e in enumerate(rows[m]))

    def walk(j: int, rows: list, tasks: tuple[int, ...]) -> None:
        if j == T1:
            for sigma in assignments:
                of = dict(zip(post, sigma))
                after = list(rows)
                full = tasks + tuple(of[m] for m in chosen[T1:])
                for m, n_t in zip(chosen[T1:], full[T1:]):
                    update(after, m, n_t)
                totals[sigma] += sum((after[m][n] for m, n in zip(chosen, full)), Fraction(0))
            return
        for n_t in range(N):
            nxt = list(rows)
            update(nxt, chosen[j], n_t)
            walk(j + 1, nxt, tasks + (n_t,))

    walk(0, [start] * M, ())
    return {sigma: total / (T * N**T1) for sigma, total in totals.items()}


def product_closed_form(chosen: Sequence[int], M: int, r: Fraction, S: Fraction, D: Fraction) -> Fraction:
    """E[G_T | routing] with every task i.i.d. uniform and independent of the routing (see the module docstring)."""
    L = counts(chosen, M)[-1]
    return sum((L_m * (r**L_m * S + (1 - r**L_m) * D) - (1 - r**L_m) * D for L_m in L if L_m),
               Fraction(0)) / len(chosen)


@dataclass(frozen=True)
class Case:
    """One (routing, T1, sigma) case of eq. (20): exact E[G_T | routing, sigma] against the right-hand side."""

    horizon: int
    T1: int
    chosen: tuple[int, ...]
    sets: tuple[tuple[int, int], ...]  # (expert, task) for the experts routed after T1
    lhs: Fraction
    rhs: Fraction

    @property
    def slack(self) -> Fraction:
        return self.rhs - self.lhs

    def describe(self) -> str:
        routing = ", ".join(str(m + 1) for m in self.chosen)
        sets = (", sets " + ", ".join(f"expert {m + 1} -> task {n + 1}" for m, n in self.sets)) if self.sets else ""
        return (f"T = {self.horizon}, T1 = {self.T1}, routing m = ({routing}){sets}: E[G_T | routing] = {self.lhs} "
                f"against {self.rhs} (RHS - E = {self.slack})")


@dataclass(frozen=True)
class TaskAveragedSearch:
    """Outcome of the exhaustive search for eq. (20) averaged over tasks given the routing."""

    law: str
    N: int
    M: int
    d: int
    s: int
    W: tuple[tuple[str, ...], ...]
    S: Fraction
    D: Fraction
    max_horizon: int
    checked: tuple[int, ...]  # cases (routing, T1, sigma) per horizon 1..(last searched)
    violation: Case | None  # the first violating case (shortest horizon, then search order)
    violating: int  # violating cases at the violation's horizon (0 if none)
    tightest: tuple[Case, ...]  # per horizon, the first case with the smallest RHS - E
    closed_form_holds: bool  # at T1 = T the enumeration equals product_closed_form on every routing searched

    def describe(self) -> str:
        pool = f"w = {[list(w) for w in self.W]} (S = {self.S}, D = {self.D})"
        head = (f"{self.law} law at N = {self.N}, M = {self.M}, d = {self.d}, s = {self.s} "
                f"(r = {1 - Fraction(self.s, self.d)}), {pool}")
        if self.violation is not None:
            return (f"{head}: first violation {self.violation.describe()}; {self.violating} of "
                    f"{self.checked[-1]} cases of that length violate it")
        return (f"{head}: no violating case up to T = {self.max_horizon} ({sum(self.checked)} cases: every "
                f"canonical routing, T1 = 1..T, every sigma); tightest at T = {self.max_horizon}: "
                f"{self.tightest[-1].describe()}")


def search_eq20(W: Sequence[Vector], law: str = "sets", M: int = 3, d: int = 2, s: int = 1,
                max_horizon: int = 5) -> TaskAveragedSearch:
    """Shortest case on which E[G_T | routing] (averaged over tasks under ``law``) is not below eq. (20)'s RHS.

    Exhaustive over T = 1..max_horizon, canonical routings (lexicographic), T1 = 1..T and, under the sets
    law, every assignment sigma of the experts routed after T1; stops at the first horizon with a violation.
    Eq. (20) is strict, so a case with E >= RHS violates it.
    """
    if law not in LAWS:
        raise ValueError(f"law must be one of {LAWS}, got {law!r}")
    W = [tuple(Fraction(x) for x in w) for w in W]
    N, r = len(W), 1 - Fraction(s, d)
    S, D = pool_constants(W)
    checked, tightest, closed_ok = [], [], True
    violation, violating = None, 0
    for T in range(1, max_horizon + 1):
        n_checked, best = 0, None
        for chosen in canonical_routings(T, M):
            if law == "product":
                lhs_all = task_averaged_generalization(W, chosen, M, r, T)[()]
            for T1 in range(1, T + 1):
                if law == "product":
                    values = {(): lhs_all}
                else:
                    values = task_averaged_generalization(W, chosen, M, r, T1)
                if T1 == T:
                    closed_ok &= values[()] == product_closed_form(chosen, M, r, S, D)
                rhs = eq20_rhs(chosen, M, T1, r, S, D)
                post = sorted(set(chosen[T1:])) if law == "sets" else []
                for sigma, lhs in values.items():
                    case = Case(T, T1, tuple(chosen), tuple(zip(post, sigma)), lhs, rhs)
                    n_checked += 1
                    if best is None or case.slack < best.slack:
                        best = case
                    if not lhs < rhs:
                        violating += 1
                        violation = violation or case
        checked.append(n_checked)
        tightest.append(best)
        if violation is not None:
            break
    return TaskAveragedSearch(law, N, M, d, s, tuple(tuple(str(x) for x in w) for w in W), S, D, max_horizon,
                              tuple(checked), violation, violating, tuple(tightest), closed_ok)


def task_averaged_by_linearity(W: Sequence[Vector], chosen: Sequence[int], r: Fraction, T1: int,
                               sigma: dict[int, int]) -> Fraction:
    """E[G_T | routing, sigma] of :func:`task_averaged_generalization`, in O(T^2) instead of N^T1 sequences.

    An expert routed in rounds j_1 < ... < j_L ends, for a target task n, at
    E||w - w_n||^2 = r^L ||w_n||^2 + sum_i (1 - r) r^(L - i) ||w_(n_(j_i)) - w_n||^2 (eq. (42)'s recursion
    unrolled from w = 0), which is linear in the gaps, so G_T's expectation over the independent uniform
    exploration tasks takes each gap's expectation: 0 for a round against itself; D for two exploration
    rounds; (1/N) sum_a ||w_a - w_sigma||^2 between an exploration round and a later one of task sigma; and
    ||w_sigma - w_sigma'||^2 for two later rounds (0 on one expert, which serves one task).  ``sigma``: the task
    of each expert routed after T1.  Exact; tests check it against the enumeration."""
    N, T = len(W), len(chosen)
    zero = tuple(Fraction(0) for _ in W[0])
    norm = [_sq(zero, w) for w in W]
    gap = [[_sq(W[a], W[b]) for b in range(N)] for a in range(N)]
    S, D = sum(norm, Fraction(0)) / N, pool_constants(W)[1]
    to = [sum(gap[a][b] for a in range(N)) / N for b in range(N)]  # mean gap of a uniform task to task b
    task = [None if j < T1 else sigma[chosen[j]] for j in range(T)]  # None: uniform exploration task
    rounds = {m: [j for j in range(T) if chosen[j] == m] for m in set(chosen)}
    total = Fraction(0)
    for tau in range(T):
        own = rounds[chosen[tau]]
        L = len(own)
        total += r ** L * (S if task[tau] is None else norm[task[tau]])
        for i, j in enumerate(own, start=1):
            if j == tau:
                continue
            a, b = task[j], task[tau]
            g = (D if a is None and b is None else to[b] if a is None else to[a] if b is None else gap[a][b])
            total += (1 - r) * r ** (L - i) * g
    return total / T
