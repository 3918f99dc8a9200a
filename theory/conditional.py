"""Theorems 1-2 read conditionally on the routing: exact rational arithmetic and a shrinker.

Given the task sequence n_1..n_t and the routing m_1..m_t, the expected model
errors over the features follow the recursion of Lemma 16 (eq. 42) under
assumption A1 (E[P_t | past] = (s/d) I, exact for Gaussian features drawn
independently of the routing):

    E||w^(m)_t - w_n||^2 = r E||w^(m)_{t-1} - w_n||^2 + (1 - r) ||w_{n_t} - w_n||^2   if m_t = m,
                         unchanged                                                      otherwise,

from ||w_n||^2 at t = 0.  With rational r and rational ground truths every
quantity is an exact ``Fraction``, so a sequence on which a bound fails is a
proof that the bound fails in the conditional reading, not a statistical
finding.  (:mod:`numeric.conditional_oracle` is the batched float version.)

The bounds, at the realized counts L^(m)_t (tasks routed to m in rounds 1..t):

* eq. (19): E[F_t] < 1/(t-1) sum_{tau<t} ((r^{L_t} - r^{L_tau}) S + (r^{L_tau} - r^{L_t}) D), L = L^(m_tau);
* Theorem 1, t > T1: E[F_t] = (T1 - 1)/(t - 1) E[F_{T1}];
* eq. (20): E[G_T] < 1/T sum_{tau<=T} (r^{L_T1} S + (1 - r^{L_T1}) D), L_T1 = L^(m_tau)_{T1}.

S = (1/N) sum ||w_n||^2 and D = (1/N^2) sum_{n != n'} ||w_n - w_n'||^2.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

Vector = tuple[Fraction, ...]


def _sq(a: Vector, b: Vector) -> Fraction:
    return sum(((x - y) ** 2 for x, y in zip(a, b)), Fraction(0))


def pool_constants(W: Sequence[Vector]) -> tuple[Fraction, Fraction]:
    """S and D of the pool, exactly."""
    N = len(W)
    zero = tuple(Fraction(0) for _ in W[0])
    S = sum((_sq(w, zero) for w in W), Fraction(0)) / N
    D = sum((_sq(W[a], W[b]) for a in range(N) for b in range(N) if a != b), Fraction(0)) / N**2
    return S, D


@dataclass(frozen=True)
class ConditionalErrors:
    """E[F_t | routing] (None at t = 1) and E[G_t | routing] for t = 1..T, exactly."""

    forgetting: tuple[Fraction | None, ...]
    generalization: tuple[Fraction, ...]


def conditional_errors(W: Sequence[Vector], tasks: Sequence[int], chosen: Sequence[int], M: int,
                       r: Fraction) -> ConditionalErrors:
    """Eq. (15)-(16) in expectation over the features, given tasks and routing (eq. 42's recursion)."""
    N = len(W)
    zero = tuple(Fraction(0) for _ in W[0])
    gap = [[_sq(W[a], W[b]) for b in range(N)] for a in range(N)]
    expected = [[_sq(zero, W[n]) for n in range(N)] for _ in range(M)]  # E||w^(m) - w_n||^2
    at_own_round: list[Fraction] = []  # E||w^(m_tau)_tau - w_{n_tau}||^2
    forgetting: list[Fraction | None] = []
    generalization: list[Fraction] = []
    for j, (n_t, m_t) in enumerate(zip(tasks, chosen)):
        t = j + 1
        expected[m_t] = [r * e + (1 - r) * gap[n_t][n] for n, e in enumerate(expected[m_t])]
        now = [expected[chosen[i]][tasks[i]] for i in range(t)]  # each past task on its expert now
        at_own_round.append(now[-1])
        forgetting.append(None if t == 1 else sum((now[i] - at_own_round[i] for i in range(t - 1)), Fraction(0)) / (t - 1))
        generalization.append(sum(now, Fraction(0)) / t)
    return ConditionalErrors(tuple(forgetting), tuple(generalization))


def counts(chosen: Sequence[int], M: int) -> list[list[int]]:
    """L[j][m]: tasks routed to m in rounds 1..j+1."""
    out, running = [], [0] * M
    for m in chosen:
        running[m] += 1
        out.append(list(running))
    return out


def eq19_rhs(chosen: Sequence[int], M: int, t: int, r: Fraction, S: Fraction, D: Fraction) -> Fraction:
    L = counts(chosen[:t], M)
    total = Fraction(0)
    for tau in range(1, t):
        m = chosen[tau - 1]
        total += (r ** L[t - 1][m] - r ** L[tau - 1][m]) * S + (r ** L[tau - 1][m] - r ** L[t - 1][m]) * D
    return total / (t - 1)


def eq20_rhs(chosen: Sequence[int], M: int, T1: int, r: Fraction, S: Fraction, D: Fraction) -> Fraction:
    L_T1 = counts(chosen[:T1], M)[T1 - 1]
    return sum((r ** L_T1[m] * S + (1 - r ** L_T1[m]) * D for m in chosen), Fraction(0)) / len(chosen)


def psi(W: Sequence[Vector], K: int) -> tuple[Fraction, Fraction]:
    """Theorem 2's Psi1 (a task's mean squared gap to its own cluster) and Psi2 (to a uniformly chosen cluster),
    exactly, with task n in cluster n mod K (as the pack's clustered pools lay them out)."""
    N = len(W)
    clusters = [[n for n in range(N) if n % K == k] for k in range(K)]
    to_cluster = [[sum((_sq(W[n], W[j]) for j in members), Fraction(0)) / len(members) for members in clusters]
                  for n in range(N)]
    psi1 = sum((to_cluster[n][n % K] for n in range(N)), Fraction(0)) / N
    psi2 = sum((x for row in to_cluster for x in row), Fraction(0)) / (N * K)
    return psi1, psi2


def eq22_rhs(chosen: Sequence[int], M: int, T1: int, r, S, D, psi1, psi2):
    """Eq. (22)'s right-hand side at the counts of one routing (the inner sum's tau read as tau', as the
    run's paired entries read it): exact for Fraction inputs, a float for floats."""
    T = len(chosen)
    L = counts(chosen, M)
    L_T = [L[T - 1][m] for m in chosen]
    L_T1 = [L[T1 - 1][m] for m in chosen]
    inner = sum((r ** (a - b) * (1 - r ** b) for a, b in zip(L_T[:T1], L_T1[:T1])), Fraction(0)) / T1
    first = sum((r ** a for a in L_T), Fraction(0)) / T * (S + inner * D)
    late = sum((1 - r ** (a - b) for a, b in zip(L_T[T1:], L_T1[T1:])), Fraction(0)) / T
    return first + (psi2 + psi1) * late


@dataclass(frozen=True)
class Violation:
    """A task/routing sequence on which a bound fails, with the exact values."""

    bound: str
    N: int
    M: int
    d: int
    s: int
    W: tuple[tuple[str, ...], ...]
    tasks: tuple[int, ...]
    chosen: tuple[int, ...]
    horizon: int
    T1: int | None
    lhs: Fraction
    rhs: Fraction
    sequences_checked: int
    sequences_violating: int
    premises: tuple[str, ...] = ()  # the premises every sequence searched satisfies (empty: all sequences)

    def describe(self) -> str:
        rounds = ", ".join(f"n_{i + 1}={n + 1}->m_{i + 1}={m + 1}" for i, (n, m) in enumerate(zip(self.tasks, self.chosen)))
        t1 = f", T1 = {self.T1}" if self.T1 is not None else ""
        return (f"{self.bound} at N = {self.N}, M = {self.M}, d = {self.d}, s = {self.s} (r = {1 - Fraction(self.s, self.d)}), "
                f"w = {', '.join('(' + ', '.join(w) + ')' for w in self.W)}, horizon {self.horizon}{t1}; "
                f"sequence {rounds}: exact E[. | routing] "
                f"= {self.lhs} against the right-hand side {self.rhs} (difference {self.rhs - self.lhs}); "
                f"{self.sequences_violating} of {self.sequences_checked} sequences of this length violate it"
                + (f" (sequences searched: {'; '.join(self.premises)})" if self.premises else ""))


def _sequences(N: int, M: int, T: int):
    for pairs in itertools.product(range(N), range(M), repeat=T):
        yield pairs[0::2], pairs[1::2]


# What ``smallest_violation(..., premises=True)`` restricts the sequences to: Theorem 1's exploration and expert
# sets, as the routings the statement is about (the caller's sizes keep M > N).
PREMISES = ("T1 >= M (T1 = ceil(M / eta), eta <= 1)",
            "every expert routed at least one round during exploration (Lemma 8's balanced exploration)",
            "after T1 every expert serves one task only (Proposition 1's expert sets)")
PREFIX = ("rounds 1..t a prefix of an exploration phase T1 >= max(t, M) whose later rounds may route the experts "
          "still unused (every sequence qualifies)",)


def _inside(chosen, tasks, M: int, T1: int | None) -> bool:
    """The sequence satisfies :data:`PREMISES` (T1 None: rounds 1..t of an exploration phase T1 >= max(t, M),
    whose later rounds may use the experts still unused, so every prefix qualifies)."""
    if T1 is None:
        return True
    served: dict = {}
    return (T1 >= M and set(chosen[:T1]) == set(range(M))
            and all(served.setdefault(m, n) == n for n, m in zip(tasks[T1:], chosen[T1:])))


def smallest_violation(bound: str, N: int = 2, M: int = 3, d: int = 2, s: int = 1, max_horizon: int = 4,
                       W: Sequence[Vector] | None = None, exceeds: bool = False,
                       premises: bool = False) -> Violation | None:
    """The first (shortest, then lexicographically first) sequence on which ``bound`` fails.

    ``bound`` is ``"eq19"`` (strict <, at t = horizon <= T1 = horizon), ``"late"``
    (the identity at t = horizon with T1 = horizon - 1 >= 2) or ``"eq20"`` (strict <,
    T = horizon, T1 = horizon).  Exhaustive over all N^T M^T sequences of each
    length, shortest first, so what it returns cannot be shrunk in length.
    With ``exceeds`` a bound fails only where the left side is strictly
    larger (not merely equal, which already breaks a strict ``<``).  With ``premises`` only the sequences
    inside :data:`PREMISES` count (eq. (20) then also tries every T1 = M..T, the late identity needs
    T1 = horizon - 1 >= M; eq. (19)'s rounds 1..t are a prefix of an exploration that may use the remaining
    experts later, so its sequences are all inside).
    """
    if W is None:  # orthonormal ground truths: S = 1, D = 2 (N - 1) / N
        W = [tuple(Fraction(int(i == n)) for i in range(max(d, N))) for n in range(N)]
        W = [w[:d] for w in W]
    r = 1 - Fraction(s, d)
    S, D = pool_constants(W)
    first_horizon = 3 if bound == "late" else 2 if bound == "eq19" else 1
    if premises and bound == "late":
        first_horizon = max(first_horizon, M + 1)
    for T in range(first_horizon, max_horizon + 1):
        found, checked, violating = None, 0, 0
        for tasks, chosen in _sequences(N, M, T):
            if bound == "eq19":
                T1s = (None,)
            elif bound == "eq20":
                T1s = range(M, T + 1) if premises else (T,)
            elif bound == "late":
                T1s = (T - 1,)
            else:
                raise ValueError(f"bound must be eq19, eq20 or late, got {bound!r}")
            for T1 in T1s:
                if premises and not _inside(chosen, tasks, M, T1):
                    continue
                errs = conditional_errors(W, tasks, chosen, M, r)
                if bound == "eq19":
                    lhs, rhs = errs.forgetting[T - 1], eq19_rhs(chosen, M, T, r, S, D)
                    fails = lhs > rhs if exceeds else not lhs < rhs
                elif bound == "eq20":
                    lhs, rhs = errs.generalization[T - 1], eq20_rhs(chosen, M, T1, r, S, D)
                    fails = lhs > rhs if exceeds else not lhs < rhs
                else:
                    lhs, rhs = errs.forgetting[T - 1], Fraction(T1 - 1, T - 1) * errs.forgetting[T1 - 1]
                    fails = lhs != rhs
                checked += 1
                if fails:
                    violating += 1
                    if found is None:
                        found = (tasks, chosen, lhs, rhs, T1)
        if found is not None:
            tasks, chosen, lhs, rhs, T1 = found
            return Violation(bound, N, M, d, s, tuple(tuple(str(x) for x in w) for w in W), tuple(tasks),
                             tuple(chosen), T, T1, lhs, rhs, checked, violating,
                             (PREFIX if bound == "eq19" else PREMISES) if premises else ())
    return None
