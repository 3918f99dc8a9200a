"""More worst cases searched (:mod:`packs.moe_cl.entries.worst_case` has the engine's use, the entry and the first
four statements): three more of the paper's statements the tool evaluates exactly for given inputs.

* ``thm1.forgetting_early``, eq. (19) given the task sequence and the routing (the conditional entry's reading,
  only the left side strictly larger counted, as that entry counts it), over pools of unit vectors of R^2,
  sequences, M > N and the horizon t; the left side from eq. (42)'s recursion (``theory/conditional.py``);
* ``thm1.generalization``, eq. (20) given the task sequence and the routing (the same reading; the search of
  eq. (20) averaged over the tasks is in :mod:`worst_case`), over the same pools, M > N, T and T1 >= M;
* ``lemma12`` (M > N), the locality loss's gradient under correct routing: eq. (5)'s step of the routed expert in
  rational arithmetic, Definition 1's features (signal column beta v_n with v = w, and noise columns), the gate
  parameter putting the expert in M_n (eq. (11)) and the proof's premise (the expert's previous task had the
  same ground truth) imposed.

Each gives one exact entry of its claim through :func:`worst_case.entry`, part ``worst case searched``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from moecl_verify.checks.search import Choice, Premise, Real, Size, Statement
from moecl_verify.packs.moe_cl.entries.worst_case import (D_DIM, EXPLORED, INSTANCES, MIN_GAP, OUTSIDE, R, S_COLS,
                                                          THM1_SIZES)
from moecl_verify.theory.conditional import conditional_errors, eq19_rhs, eq20_rhs, pool_constants


def _pool(x, n: int) -> list[tuple]:
    """Unit vectors of R^2 with rational parameters t: ((1 - t^2) / (1 + t^2), 2 t / (1 + t^2)), as the
    searches of eq. (20) and (22) take them."""
    return [((1 - t * t) / (1 + t * t), 2 * t / (1 + t * t)) for t in x["w"][:n]]


def _sq(a, b):
    return sum((p - q) ** 2 for p, q in zip(a, b))


def _distinct(W) -> bool:
    """Ground truths at squared distance at least MIN_GAP from each other (as in the other searches)."""
    return all(_sq(W[a], W[b]) >= MIN_GAP for a in range(len(W)) for b in range(a))


# ------------------------------------------------------------------------ Theorem 1, eq. (19) given the routing


def _eq19_parts(x):
    N, M, t = x["N"], x["M"], x["T"]
    W = _pool(x, N)
    tasks, chosen = tuple(x["n"]), tuple(x["m"])
    S, D = pool_constants(W)
    if not _distinct(W):
        return None
    lhs = conditional_errors(W, tasks, chosen, M, R).forgetting[t - 1]
    return lhs, eq19_rhs(chosen, M, t, R, S, D), D


def _eq19_slack(x, extra=Fraction(0)):
    parts = _eq19_parts(x)
    if parts is None:
        return OUTSIDE
    lhs, rhs, D = parts
    return (rhs - lhs) / D + extra  # in units of D


# Eq. (19) speaks of t <= T1 and both sides depend on rounds 1..t only: any T1 >= max(t, M) will do, and rounds
# t+1..T1 can use the experts rounds 1..t left unused, so every routing of rounds 1..t is a prefix of an
# exploration that uses every expert (the instance records T1 = max(t, M)).  Theorem 1's premises on the sizes
# are what remains.
EQ19_PREMISES = (THM1_SIZES[0], THM1_SIZES[1])


def eq19_bound(name: str, extra=Fraction(0)) -> Statement:
    """E[F_t | tasks, routing] <= eq. (19)'s right side (+ ``extra`` D) for every pool of unit vectors, task
    sequence and routing, over N = 2..3, M = 3..4 > N and t = 2..6; only the left side strictly larger counts
    (``strict=False``), as the conditional entry counts it: a violation of the non-strict bound is one of the
    printed strict bound too.  Eq. (19) is stated for t <= T1, and both sides depend on rounds 1..t only, so T1 is
    any T1 >= max(t, M)."""
    return Statement(name, slack=lambda x: float(_eq19_slack(x, extra)),
                     exact_slack=lambda x: _eq19_slack(x, extra),
                     sizes=(Size("N", 2, 3), Size("M", 3, 4), Size("T", 2, 6)),
                     reals=(Real("w", -1, 1, "N"),),
                     choices=(Choice("n", "T", "N"), Choice("m", "T", "M")),
                     strict=False, premises=EQ19_PREMISES)


EQ19_GIVEN_ROUTING = eq19_bound("thm1.forgetting_early: eq. (19) given the tasks and the routing, left side larger "
                                "[errors]")


# ----------------------------------------------------------------- Theorem 1, eq. (20) given the tasks and routing


def _eq20_parts(x):
    N, M, T, T1 = x["N"], x["M"], x["T"], x["T1"]
    W = _pool(x, N)
    tasks, chosen = tuple(x["n"]), tuple(x["m"])
    S, D = pool_constants(W)
    if not _distinct(W) or T1 > T:
        return None
    lhs = conditional_errors(W, tasks, chosen, M, R).generalization[T - 1]
    return lhs, eq20_rhs(chosen, M, T1, R, S, D), D


def _eq20_slack(x, extra=Fraction(0)):
    parts = _eq20_parts(x)
    if parts is None:
        return OUTSIDE
    lhs, rhs, D = parts
    return (rhs - lhs) / D + extra  # in units of D


def _one_task_each(x) -> bool:
    """After T1 every expert is routed rounds of one task only, and every task's rounds go to its own experts:
    the experts routed after T1 split into disjoint sets M_n (Proposition 1)."""
    served = {}
    return all(served.setdefault(m, n) == n for n, m in zip(x["n"][x["T1"]:], x["m"][x["T1"]:]))


GIVEN_EXPERT_SETS = Premise("inside the expert sets", "after T1 every expert serves one task only: each round "
                            "goes to an expert of its task's set M_n, the sets disjoint (Proposition 1), as "
                            "Algorithm 1 routes with probability 1 - o(1)", _one_task_each)
EQ20_GIVEN_READINGS = {
    "every expert explored": (*THM1_SIZES, Premise("T1 <= T", "the horizon T is at least T1",
                                                   lambda x: x["T1"] <= x["T"], sizes_only=True), EXPLORED),
}
EQ20_GIVEN_READINGS["inside the expert sets"] = (*EQ20_GIVEN_READINGS["every expert explored"], GIVEN_EXPERT_SETS)


def eq20_given_bound(name: str, extra=Fraction(0), reading: str = "every expert explored") -> Statement:
    """E[G_T | tasks, routing] <= eq. (20)'s right side (+ ``extra`` D), the counts frozen at T1, for every pool of
    unit vectors, task sequence and routing inside the premises of ``reading`` (:data:`EQ20_GIVEN_READINGS`),
    over N = 2..3, M = 3..4 > N, T = 3..7 and M <= T1 <= T; only the left side strictly larger counts, as the
    conditional entry counts it."""
    return Statement(name, slack=lambda x: float(_eq20_slack(x, extra)),
                     exact_slack=lambda x: _eq20_slack(x, extra),
                     sizes=(Size("N", 2, 3), Size("M", 3, 4), Size("T", 3, 7), Size("T1", 3, 7)),
                     reals=(Real("w", -1, 1, "N"),),
                     choices=(Choice("n", "T", "N"), Choice("m", "T", "M")),
                     strict=False, premises=EQ20_GIVEN_READINGS[reading])


EQ20_GIVEN_ROUTING = eq20_given_bound("thm1.generalization: eq. (20) given the tasks and the routing, left side "
                                      "larger, every expert explored [errors]")
EQ20_GIVEN_ROUTING_SETS = eq20_given_bound("thm1.generalization: eq. (20) given the tasks and the routing, left "
                                           "side larger, inside the expert sets [errors]",
                                           reading="inside the expert sets")


def _given_instance(parts_of, horizon: str):
    def make(x) -> dict:
        N = x["N"]
        W = _pool(x, N)
        lhs, rhs, D = parts_of(x)
        S = sum((_sq(w, (0, 0)) for w in W), Fraction(0)) / N
        # eq. (19): any T1 >= max(t, M) has rounds 1..t as a prefix of an exploration using every expert
        T1 = {"T1": x["T1"]} if horizon == "T" else {"T1": max(x["T"], x["M"])}
        return {"N": N, "M": x["M"], horizon: x["T"], **T1, "d": D_DIM, "s": S_COLS, "r": str(R),
                "w": [[str(c) for c in w] for w in W], "S": str(S), "D": str(D),
                "tasks": [n + 1 for n in x["n"]], "routing": [m + 1 for m in x["m"]],
                "lhs": str(lhs), "rhs": str(rhs), "slack": str(rhs - lhs), "slack_over_D": str((rhs - lhs) / D)}
    return make


INSTANCES.update({EQ19_GIVEN_ROUTING.name: _given_instance(_eq19_parts, "t"),
                  EQ20_GIVEN_ROUTING.name: _given_instance(_eq20_parts, "T"),
                  EQ20_GIVEN_ROUTING_SETS.name: _given_instance(_eq20_parts, "T")})


# ---------------------------------------------------------------------------- Lemma 12, M > N, correct routing

L12_D = 3  # the smallest dimension with room for s = 2 < d features per round
MIN_GRAM = Fraction(1, 1000)  # det(X^T X) at least this: the round's features have full column rank


def _dot(a, b):
    return sum((x * y for x, y in zip(a, b)), 0 * a[0])


def _projected_step(X, u):
    """P u for P the orthogonal projection onto the span of the columns of X (s = 1 or 2), as a vector, by
    Cramer's rule on (X^T X) c = X^T u; None if det(X^T X) < MIN_GRAM."""
    G = [[_dot(a, b) for b in X] for a in X]
    rhs = [_dot(a, u) for a in X]
    if len(X) == 1:
        if G[0][0] < MIN_GRAM:
            return None
        c = [rhs[0] / G[0][0]]
    else:
        det = G[0][0] * G[1][1] - G[0][1] * G[1][0]
        if det < MIN_GRAM:
            return None
        c = [(rhs[0] * G[1][1] - rhs[1] * G[0][1]) / det, (G[0][0] * rhs[1] - G[1][0] * rhs[0]) / det]
    return tuple(sum((ci * col[j] for ci, col in zip(c, X)), 0 * u[0]) for j in range(len(u)))


@dataclass(frozen=True)
class RoutedRound:
    """The routed round of Lemma 12's statement, exactly: the expert's step Delta = ||w_t - w_{t-1}||^2, its
    residual ||w_n - w_{t-1}||^2 before the step, and ||xbar||_inf for xbar = X_t 1."""
    delta: object
    residual: object
    xbar_inf: object


def lemma12_round(x) -> RoutedRound | None:
    """The expert's rounds by eq. (5) from w_0 = 0: tasks n[0], n[1], then n[1] again (the routed round, whose
    previous task on this expert had the same ground truth, the proof's premise).  Round i's features
    (Definition 1): the signal column beta_i v_(n_i), v = w, and s - 1 noise columns.  None outside the lemma's
    setting: ground truths not distinct or of squared norm below MIN_GAP, or features of deficient rank.  That
    the gate parameter puts the routed expert in M_n is the lemma's premise (:data:`IN_M_N`), not checked here."""
    N, s = x["N"], x["s"]
    d = L12_D
    flat = x["w"]
    W = [tuple(flat[i * d:(i + 1) * d]) for i in range(N)]
    if not _distinct(W) or any(_dot(w, w) < MIN_GAP for w in W):
        return None
    tasks = (x["n"][0], x["n"][1], x["n"][1])
    n = tasks[-1]
    noise = x["noise"]
    w = tuple(0 * flat[0] for _ in range(d))
    for i, task in enumerate(tasks):
        cols = [tuple(x["beta"][i] * v for v in W[task])]
        cols += [tuple(noise[(i * (s - 1) + c) * d:(i * (s - 1) + c + 1) * d]) for c in range(s - 1)]
        residual = tuple(a - b for a, b in zip(W[task], w))
        step = _projected_step(cols, residual)
        if step is None:
            return None
        w = tuple(a + b for a, b in zip(w, step))
    xbar = [sum((col[j] for col in cols), 0 * flat[0]) for j in range(d)]
    return RoutedRound(_dot(step, step), _dot(residual, residual), max(abs(v) for v in xbar))


def _in_m_n(x) -> bool:
    """Eq. (11): task n of the routed round is the unique argmax of theta^T v_j over the tasks (v = w)."""
    d, flat, theta = L12_D, x["w"], tuple(x["theta"])
    W = [tuple(flat[i * d:(i + 1) * d]) for i in range(x["N"])]
    n = x["n"][1]
    return all(_dot(theta, W[n]) > _dot(theta, W[j]) for j in range(x["N"]) if j != n)


# Lemma 12's premises: correct routing (the expert is in M_n, eq. (11)) and the proof's premise that the expert's
# previous task had the same ground truth (built into the rounds: n[1] twice).
IN_M_N = Premise("routed within M_n", "the gate parameter theta of the routed expert puts it in M_n for the "
                 "round's task n (eq. (11): n the unique argmax of theta^T v_j, v = w)", _in_m_n)


def lemma12_bound(name: str, slack) -> Statement:
    """A bound on Lemma 12's routed round (``slack`` of a :class:`RoutedRound`) over N = 2..3 ground truths in
    [-1, 1]^3, s = 1..2 features per round, beta in [1/10, 1] (Definition 1's (0, C], C = 1), noise columns in
    [-1, 1]^3, the gate parameter theta of the routed expert in [-1, 1]^3, and the expert's two previous tasks."""
    def exact(x):
        q = lemma12_round(x)
        return OUTSIDE if q is None else slack(q)

    return Statement(name, slack=lambda x: float(exact(x)), exact_slack=exact,
                     sizes=(Size("N", 2, 3), Size("s", 1, 2)),
                     reals=(Real("w", -1, 1, lambda sz: sz["N"] * L12_D), Real("theta", -1, 1, L12_D),
                            Real("beta", Fraction(1, 10), 1, 3),
                            Real("noise", -1, 1, lambda sz: 3 * (sz["s"] - 1) * L12_D)),
                     choices=(Choice("n", 2, "N"),),
                     strict=False, premises=(IN_M_N,))


# grad_theta_k L_loc = Delta pi_m (1{k = m} - pi_k) xbar (the claim's derived.gradient) and 0 < pi_m < 1, so the
# gradient vanishes for every expert exactly when Delta ||xbar||_inf = 0, whatever M > N and the other experts' gate
# parameters (which only move pi): the statement's exact, rational form.
def _lemma12_instance(x) -> dict:
    """Lemma 12's routed round as the paper's instance: d = 3, s, the ground truths w_n and the gate parameter as
    exact vectors, each round's signal scale beta and noise columns, the expert's tasks (numbered from 1)."""
    d, s = L12_D, x["s"]
    q = lemma12_round(x)
    cols = [[str(v) for v in x["noise"][c * d:(c + 1) * d]] for c in range(3 * (s - 1))]
    return {"N": x["N"], "d": d, "s": s, "w": [[str(v) for v in x["w"][i * d:(i + 1) * d]] for i in range(x["N"])],
            "theta": [str(v) for v in x["theta"]], "beta": [str(v) for v in x["beta"]], "noise_columns": cols,
            "tasks": [x["n"][0] + 1, x["n"][1] + 1, x["n"][1] + 1],
            **({"Delta": str(q.delta), "xbar_inf": str(q.xbar_inf)} if q else {})}


LEMMA12_GIVEN_ROUND = lemma12_bound("lemma12: grad L_loc = 0 under correct routing, M > N [gradient]",
                                    lambda q: -q.delta * q.xbar_inf)
INSTANCES[LEMMA12_GIVEN_ROUND.name] = _lemma12_instance


__all__ = ["EQ19_GIVEN_ROUTING", "EQ20_GIVEN_ROUTING", "EQ20_GIVEN_ROUTING_SETS", "EQ20_GIVEN_READINGS", "LEMMA12_GIVEN_ROUND", "RoutedRound", "eq19_bound",
           "eq20_given_bound", "lemma12_bound", "lemma12_round"]
