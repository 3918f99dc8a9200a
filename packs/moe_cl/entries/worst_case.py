"""Worst cases searched: the paper's exactly checkable bounds, pushed where they are weakest.

A bound the tool can evaluate exactly for given inputs (a pool of ground truths, a task sequence, a routing,
gate outputs) is searched for the inputs that make its slack smallest (:mod:`moecl_verify.checks.search`:
random restarts, Nelder-Mead on the reals, local moves on the sequences), every violation is rechecked in
rational arithmetic from the same inputs and shrunk to a minimal case, and a search that finds nothing
reports its size and the least slack it saw.  Pools are free within the statement's assumptions (any ground
truths in a box), so a bound that holds on the run's pools but fails on an allowed adversarial pool falls
under this reading.  Each statement gives one exact entry of its claim, part ``worst case searched ...``:

* ``lemma2`` stated, ||p - p_hat||_inf <= (lambda / M^2) ||h - h_hat||_inf (Appendix B), and the sharp bound
  with 2 / lambda that the tool derives (``theory/routing.py``), exact routing probabilities of eq. (1);
* ``thm1.generalization``, eq. (20) averaged over the tasks given the routing (the proof's own reading,
  ``theory/task_averaged.py``), over pools, routings, T1 and the expert-set assignment;
* ``thm2.generalization``, eq. (22) given the task sequence and the routing (eq. (42)'s recursion,
  ``theory/conditional.py``), over pools in K clusters, sequences, M < N and T1, on routings as Algorithm 1
  makes them (every expert explored, every round after T1 inside its task's cluster);

The budget sizes each search (``Sizes.search_evaluations``); the generator is keyed by the run's seed and the
statement, so the searches are deterministic.
"""

from __future__ import annotations

from fractions import Fraction

from moecl_verify.checks.model import ClaimResult, exact_result
from moecl_verify.checks.search import Choice, Real, SearchResult, Size, Statement, search
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.theory.conditional import conditional_errors, eq20_rhs, eq22_rhs, pool_constants, psi
from moecl_verify.theory.routing import routing_probabilities
from moecl_verify.theory.task_averaged import task_averaged_generalization

PART = "worst case searched"
UNITS = {"router": "slack = right side - left side, divided by ||h - h_hat||_inf",
         "errors": "slack = right side - left side, divided by D, the pool's mean squared gap between tasks",
         "gradient": "slack = -||grad L_loc||_inf / (pi_m (1 - pi_m)) = -Delta ||xbar||_inf, 0 where the gradient "
                     "vanishes"}
# Outside a statement's domain the slack is this: such a case is never a counterexample, and the shrinker, which
# keeps a step only while it violates, stays inside the domain.  The domain is the paper's setting, read
# generously for the bound: distinct ground truths (two equal tasks are one task; with all equal, D = 0 and
# both sides of a strict bound are 0), Theorem 2's clusters (``_clustered``), and an
# exploration phase of at least one round per expert (T1 >= M, as T1 = O(M / eta) is).
OUTSIDE = Fraction(1)
D_DIM, S_COLS = 2, 1  # d = 2, s = 1 (r = 1/2), as the exhaustive searches of the conditional readings use
R = 1 - Fraction(S_COLS, D_DIM)


# Theorem 2's clusters: intra-cluster gaps O(sigma0^1.5) against inter-cluster gaps of order sigma0; at the
# paper's sigma0 = 0.4 the ratio of squared gaps is sigma0 = 0.4, so a pool counts as clustered when every squared
# gap within a cluster is at most 0.4 times every squared gap across clusters.
CLUSTER_RATIO = Fraction(2, 5)


def _clustered(W, K: int) -> bool:
    sq = lambda a, b: sum((x - y) ** 2 for x, y in zip(W[a], W[b]))  # noqa: E731
    pairs = [(a, b) for a in range(len(W)) for b in range(a)]
    within = [sq(a, b) for a, b in pairs if a % K == b % K]
    across = [sq(a, b) for a, b in pairs if a % K != b % K]
    return not within or not across or max(within) <= CLUSTER_RATIO * min(across)


# Distinct ground truths, kept apart by at least this squared gap: nearer points make D tiny and the float
# slack (relative to D) pure rounding, which would steer the search to noise.
MIN_GAP = Fraction(1, 100)


def _distinct(W) -> bool:
    return all(sum((x - y) ** 2 for x, y in zip(W[a], W[b])) >= MIN_GAP for a in range(len(W)) for b in range(a))


def _on_circle(t) -> tuple:
    """The point of the unit circle with rational parameter t (exact for a rational t):
    ((1 - t^2) / (1 + t^2), 2 t / (1 + t^2))."""
    return ((1 - t * t) / (1 + t * t), 2 * t / (1 + t * t))


def _pool(x, n: int) -> list[tuple]:
    """The ground truths: unit vectors of R^2, one per task.  Equal norms keep the comparison fair to a bound
    written through the pool's averages S and D: given the tasks, a task of more than average norm would break
    such a bound for that reason alone."""
    return [_on_circle(t) for t in x["w"][:n]]


# ------------------------------------------------------------------------------------------------ Lemma 2


def _router_slack(x, constant) -> object:
    M, lam = x["M"], x["lam"]
    p, q = routing_probabilities(x["h"], lam), routing_probabilities(x["g"], lam)
    gap = max(abs(a - b) for a, b in zip(x["h"], x["g"]))
    if gap < MIN_OUTPUT_GAP:
        return OUTSIDE  # h = g: both sides 0; nearer, the float ratio is rounding
    # relative to ||h - g||_inf, so that the least slack found says how tight the constant is
    return constant(M, lam) - max(abs(a - b) for a, b in zip(p, q)) / gap


MIN_OUTPUT_GAP = Fraction(1, 1000)


def router_bound(constant, name: str) -> Statement:
    """||p(h) - p(g)||_inf <= constant(M, lambda) ||h - g||_inf over M = 2..4, h, g in [-1, 1]^M and lambda in
    [1/10, 2] (the bound is claimed for every gate output and every lambda > 0)."""
    return Statement(name + " [router]", slack=lambda x: float(_router_slack(x, constant)),
                     exact_slack=lambda x: _router_slack(x, constant),
                     sizes=(Size("M", 2, 4),),
                     reals=(Real("h", -1, 1, "M"), Real("g", -1, 1, "M"), Real("lam", Fraction(1, 10), 2)),
                     strict=False)


LEMMA2_STATED = router_bound(lambda M, lam: lam / M**2, "lemma2: (lambda / M^2) bound")
LEMMA2_SHARP = router_bound(lambda M, lam: 2 / lam, "lemma2: sharp 2 / lambda bound")


# ------------------------------------------------------------------------------- Theorem 1, eq. (20) averaged


def _horizon(sizes) -> int:
    """T = T1 + late: the searches size the exploration phase and the rounds after it, so that no size
    configuration is spent on T < T1."""
    return sizes["T1"] + sizes["late"]


def _eq20_averaged_slack(x):
    N, M, T1 = x["N"], x["M"], x["T1"]
    W = _pool(x, N)
    chosen = tuple(x["m"])  # T = T1 + late rounds
    S, D = pool_constants(W)
    if not _distinct(W) or T1 < M:
        return OUTSIDE
    post = sorted(set(chosen[T1:]))
    sigma = tuple(x["sigma"][m] for m in post)
    lhs = task_averaged_generalization(W, chosen, M, R, T1)[sigma]
    return (eq20_rhs(chosen, M, T1, R, S, D) - lhs) / D  # in units of D: both sides scale with the pool


EQ20_AVERAGED = Statement(
    "thm1.generalization: eq. (20) averaged over tasks given the routing [errors]",
    slack=lambda x: float(_eq20_averaged_slack(x)), exact_slack=_eq20_averaged_slack,
    sizes=(Size("N", 2, 3), Size("M", 3, 4), Size("T1", 3, 6), Size("late", 0, 3)),
    reals=(Real("w", -1, 1, "N"),),
    choices=(Choice("m", _horizon, "M"), Choice("sigma", "M", "N")),
    strict=True,
    # Found by this search at seed 0 and 3,000 evaluations (and checked by hand: E[G_4] = 898/909 against
    # 7181/7272); at most seeds the search misses so narrow a violation, so every run rechecks it first.
    examples=({"N": 3, "M": 3, "T1": 3, "late": 1, "w": (Fraction(0), Fraction(1), Fraction(-1, 10)),
               "m": (0, 0, 0, 0), "sigma": (1, 0, 0)},))


# ------------------------------------------------------------------------ Theorem 2, eq. (22) given the routing


def _as_algorithm_routes(tasks, chosen, M: int, K: int, T1: int) -> bool:
    """The routings Theorem 2 speaks of, read narrowly so that a violation cannot be blamed on an odd routing:
    at least one round after exploration (T > T1), every expert used during exploration, and every later round
    routed to an expert of its task's cluster (expert m serves cluster m mod K, as task n is in cluster n mod K)."""
    T = len(tasks)
    return (T > T1 and set(chosen[:T1]) == set(range(M))
            and all(chosen[t] % K == tasks[t] % K for t in range(T1, T)))


def _eq22_slack(x):
    N, T1 = x["N"], x["T1"]
    T = T1 + x["late"]  # at least one round after exploration
    M = min(x["M"], N - 1)  # Theorem 2's case: fewer experts than tasks
    K = min(x["K"], M)
    W = _pool(x, N)
    tasks, chosen = tuple(x["n"]), tuple(min(m, M - 1) for m in x["m"])
    S, D = pool_constants(W)
    if not _distinct(W) or T1 < M:
        return OUTSIDE
    if not _clustered(W, K) or not _as_algorithm_routes(tasks, chosen, M, K, T1):
        return OUTSIDE
    p1, p2 = psi(W, K)
    lhs = conditional_errors(W, tasks, chosen, M, R).generalization[T - 1]
    return (eq22_rhs(chosen, M, T1, R, S, D, p1, p2) - lhs) / D  # in units of D


EQ22_GIVEN_ROUTING = Statement(
    "thm2.generalization: eq. (22) given the tasks and the routing [errors]",
    slack=lambda x: float(_eq22_slack(x)), exact_slack=_eq22_slack,
    sizes=(Size("N", 3, 4), Size("K", 2, 3), Size("M", 2, 3), Size("T1", 2, 5), Size("late", 1, 4)),
    reals=(Real("w", -1, 1, "N"),),
    choices=(Choice("n", _horizon, "N"), Choice("m", _horizon, "M")),
    strict=True)


# ------------------------------------------------------------------------------------------------ entries


def _value(v):
    if isinstance(v, tuple):
        return [_value(e) for e in v]
    return str(v) if isinstance(v, Fraction) else v


def _shown(v) -> str:
    """A value as the evidence prints it: sequences in parentheses, fractions as p/q."""
    if isinstance(v, (tuple, list)):
        return "(" + ", ".join(_shown(e) for e in v) + ")"
    return str(v)


def _units(st: Statement) -> str:
    return UNITS[st.name.rsplit("[", 1)[-1].rstrip("]")]


def _exact_at(st: Statement, x) -> float:
    """The exact slack at the float inputs where the search saw its least slack (the float value there may be
    rounding), as a float for the report."""
    if not x:
        return float("nan")
    exact = {k: tuple(Fraction(e) for e in v) if isinstance(v, tuple) and st.reals and k in {r.name for r in st.reals}
             else Fraction(v) if k in {r.name for r in st.reals} else v for k, v in x.items()}
    return float(st.exact_slack(exact))


def run_search(st: Statement, seed: int, claim_id: str, evaluations: int) -> SearchResult:
    return search(st, generator_for(seed, claim_id, "worst case", st.name), budget=evaluations,
                  shrink_budget=max(100, evaluations // 4))


# A search over pools checks a universal statement about pools on pools the run did not draw: its own reading,
# so that a bound that holds on the drawn pools and fails on an allowed one falls under this reading only.
ANY_POOL = "on any pool the paper's assumptions allow (chosen by the search)"


def entry(claim_id: str, source: str, st: Statement, result: SearchResult, formula: str, reading: str | None,
          form: str = "stated", pools: bool = True) -> ClaimResult:
    """The search's exact entry: refuted with the shrunk counterexample, else inconclusive with the search's
    size and the least slack seen (a search that finds nothing proves nothing).  ``pools``: the search picks
    the pool of ground truths, so the entry's reading says so (:data:`ANY_POOL`)."""
    if pools:
        reading = f"{reading}; {ANY_POOL}" if reading else ANY_POOL
    size = (f"{result.evaluations} evaluation{'s' if result.evaluations != 1 else ''} ({result.exact_evaluations} exact) over {result.restarts} restart{'s' if result.restarts != 1 else ''} "
            f"and {len(result.configurations)} size configuration{'s' if len(result.configurations) != 1 else ''}")
    config = {"reading": reading, "search": {"evaluations": result.evaluations, "exact": result.exact_evaluations,
                                             "restarts": result.restarts,
                                             "configurations": len(result.configurations),
                                             "allowed": result.allowed_evaluations, "float_only": result.float_only}}
    if result.found:
        cex = result.counterexample
        inputs = {k: _value(v) for k, v in cex.inputs.items()}
        shown = ", ".join(f"{k} = {_shown(v)}" for k, v in cex.inputs.items())
        shrunk = f"shrunk in {len(cex.steps)} step{'s' if len(cex.steps) != 1 else ''} to" if cex.steps else "already minimal for the shrinker:"
        if result.from_example:
            # an explicit example of the statement (a violation an earlier run found), rechecked in this run
            evidence = ("Worst case: the statement's explicit example (a violation found by an earlier run of this "
                        f"search, rechecked exactly in every run) violates it in rational arithmetic, {shrunk} "
                        f"{shown}; exact slack = {cex.slack} ({_units(st)})")
        else:
            evidence = (f"Worst-case search ({size}) found a violation, rechecked in rational arithmetic and "
                        f"{shrunk} {shown}; exact slack = {cex.slack} ({_units(st)})")
        return exact_result(claim_id, source, "bound", PART, "refuted", evidence, formula, form=form,
                            counterexample={**inputs, "slack": str(cex.slack)}, **config)
    at = {k: _value(v) for k, v in (result.least_at or {}).items() if not isinstance(v, tuple)}
    least = _exact_at(st, result.least_at)
    evidence = (f"Worst-case search ({size}): no violation found; least slack found {least:.3g} ({_units(st)})"
                + (f" at {', '.join(f'{k} = {_shown(v)}' for k, v in at.items())}" if at else "")
                + f"; {result.float_only} float-only violations rejected by the exact recheck. A search that finds "
                "nothing does not prove the bound")
    return exact_result(claim_id, source, "bound", PART, "inconclusive", evidence, formula, form=form,
                        least_slack=least, **config)


__all__ = ["EQ20_AVERAGED", "EQ22_GIVEN_ROUTING", "LEMMA2_SHARP", "LEMMA2_STATED", "PART", "entry", "run_search"]
