"""Worst cases searched: the paper's exactly checkable bounds, pushed where they are weakest.

A bound the tool can evaluate exactly for given inputs (a pool of ground truths, a task sequence, a routing,
gate outputs) is searched for the inputs that make its slack smallest (:mod:`moecl_verify.checks.search`:
random restarts, Nelder-Mead on the reals, local moves on the sequences), every violation is rechecked in
rational arithmetic from the same inputs and shrunk to a minimal case, and a search that finds nothing
reports its size and the least slack it saw.  Each statement declares the premises of the paper's claim as
:class:`~moecl_verify.checks.search.Premise` predicates on the instance, in the paper's quantities (asymptotic
ones at the constant they are checked at); the search, the recheck and the shrinker stay inside them, so a
counterexample satisfies every premise, and it is stored as the paper's instance (:func:`instance_of`: N, M, K,
d, s, T1, T, the ground truths as exact vectors, tasks, routing, both sides, the slack, the premises).  Pools are
free within the premises (any unit vectors of R^2, clustered where Theorem 2 asks for clusters).  Where the
verdict depends on which routings the premises admit, each reading is its own statement and entry.  Each
statement gives one exact entry of its claim, part ``worst case searched ...``:

* ``lemma2`` stated, ||p - p_hat||_inf <= (lambda / M^2) ||h - h_hat||_inf (Appendix B), and the sharp bound
  with 2 / lambda that the tool derives (``theory/routing.py``), exact routing probabilities of eq. (1);
* ``thm1.generalization``, eq. (20) averaged over the tasks given the routing (the proof's own reading,
  ``theory/task_averaged.py``), over pools, routings, T1 and the expert-set assignment, inside Theorem 1's
  premises (M > N, M >= N ln N, T1 >= M), in two readings of the routings: every expert explored during
  exploration (:data:`EQ20_AVERAGED`), and moreover every later round inside its task's expert set with every
  set non-empty (:data:`EQ20_AVERAGED_SETS`);
* ``thm2.generalization``, eq. (22) given the task sequence and the routing (eq. (42)'s recursion,
  ``theory/conditional.py``), inside Theorem 2's premises: K < M < N, M >= K ln K, clustered ground truths,
  T1 >= M, every expert explored, every round after T1 inside its task's cluster;

Domain conditions that are not the paper's premises (distinct ground truths, kept apart so that the float
slack relative to D is not rounding; equal gate outputs for the router bound) still return :data:`OUTSIDE`.

The budget sizes each search (``Sizes.search_evaluations``); the generator is keyed by the run's seed and the
statement, so the searches are deterministic.
"""

from __future__ import annotations

import math
from fractions import Fraction

from moecl_verify.checks.model import ClaimResult, exact_result
from moecl_verify.checks.search import (Choice, OutsideViolation, Premise, Real, SearchResult, Size, Statement, configurations,
                                         search)
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.theory.conditional import conditional_errors, eq20_rhs, eq22_rhs, pool_constants, psi
from moecl_verify.theory.routing import routing_probabilities
from moecl_verify.theory.task_averaged import task_averaged_by_linearity

PART = "worst case searched"
UNITS = {"router": "slack = right side - left side, divided by ||h - h_hat||_inf",
         "errors": "slack = right side - left side, divided by D, the pool's mean squared gap between tasks",
         "gradient": "slack = -||grad L_loc||_inf / (pi_m (1 - pi_m)) = -Delta ||xbar||_inf, 0 where the gradient "
                     "vanishes"}
# Outside a statement's numerical domain the slack is this: such a case is never a counterexample, and the
# shrinker, which keeps a step only while it violates, stays inside the domain.  Only for conditions that are
# not the paper's premises (those are Premise predicates): distinct ground truths (two equal tasks are one task;
# with all equal, D = 0 and both sides of a strict bound are 0), and equal gate outputs for the router bound.
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


def _eq20_averaged_parts(x):
    """(left side, right side, D) of eq. (20) averaged over the exploration tasks given the routing and the
    expert-set assignment sigma, exactly; None off the domain."""
    N, M, T1 = x["N"], x["M"], x["T1"]
    W = _pool(x, N)
    chosen = tuple(x["m"])  # T = T1 + late rounds
    S, D = pool_constants(W)
    if not _distinct(W):
        return None
    post = sorted(set(chosen[T1:]))
    sigma = tuple(x["sigma"][m] for m in post)
    # By linearity (O(T^2)); tests check it against theory.task_averaged's enumeration of the N^T1 sequences.
    lhs = task_averaged_by_linearity(W, chosen, R, T1, dict(zip(post, sigma)))
    return lhs, eq20_rhs(chosen, M, T1, R, S, D), D


def _eq20_averaged_slack(x):
    parts = _eq20_averaged_parts(x)
    if parts is None:
        return OUTSIDE
    lhs, rhs, D = parts
    return (rhs - lhs) / D  # in units of D: both sides scale with the pool


# Theorem 1's premises, on the paper's quantities.  M = Omega(N ln N) is asymptotic: checked at the constant 1.
THM1_SIZES = (
    Premise("M > N", "more experts than tasks (Theorem 1's case)", lambda x: x["M"] > x["N"], sizes_only=True),
    Premise("M = Omega(N ln N)", "M >= c N ln N, checked at c = 1", lambda x: x["M"] >= x["N"] * math.log(x["N"]),
            sizes_only=True),
    Premise("T1 = ceil(M / eta)", "an exploration phase of T1 >= M rounds (T1 = ceil(M / eta) for some eta <= 1)",
            lambda x: x["T1"] >= x["M"], sizes_only=True),
)
EXPLORED = Premise("every expert explored", "every expert is routed at least one round during exploration "
                   "(Lemma 8's balanced exploration)", lambda x: set(x["m"][:x["T1"]]) == set(range(x["M"])))
EXPERT_SETS = Premise("inside the expert sets", "after T1 every round is routed inside its task's expert set "
                      "M_n (the task of round tau is sigma(m_tau)), and the sets split all M experts with every M_n "
                      "non-empty (Proposition 1), as Algorithm 1 routes with probability 1 - o(1)",
                      lambda x: set(x["sigma"]) == set(range(x["N"])))
# The two readings of "the routings the statement is about": every routing whose exploration uses every expert,
# and those that moreover route inside Proposition 1's expert sets after T1.
EQ20_READINGS = {"every expert explored": (*THM1_SIZES, EXPLORED),
                 "inside the expert sets": (*THM1_SIZES, EXPLORED, EXPERT_SETS)}


def eq20_averaged(reading: str) -> Statement:
    """Eq. (20) averaged over the exploration tasks given the routing (``theory/task_averaged.py``) over N = 2..3,
    M = 3..5 > N, T1 = M..7, up to 2 rounds after T1, pools of unit vectors of R^2, every routing and expert-set
    assignment inside the premises of ``reading`` (:data:`EQ20_READINGS`)."""
    return Statement(
        f"thm1.generalization: eq. (20) averaged over tasks given the routing, {reading} [errors]",
        slack=lambda x: float(_eq20_averaged_slack(x)), exact_slack=_eq20_averaged_slack,
        sizes=(Size("N", 2, 3), Size("M", 3, 5), Size("T1", 3, 7), Size("late", 0, 2)),
        reals=(Real("w", -1, 1, "N"),),
        choices=(Choice("m", _horizon, "M"), Choice("sigma", "M", "N")),
        strict=True, premises=EQ20_READINGS[reading])


EQ20_AVERAGED = eq20_averaged("every expert explored")
# A violation outside the premises (M = N = 3, two experts never used during exploration), found by an earlier
# search without premises and checked by hand (E[G_4] = 898/909 against 7181/7272): reported beside the entries
# of eq. (20) averaged over the tasks, to show where the premises decide.
EQ20_AVERAGED_OUTSIDE = ({"N": 3, "M": 3, "T1": 3, "late": 1, "w": (Fraction(0), Fraction(1), Fraction(-1, 10)),
                          "m": (0, 0, 0, 0), "sigma": (1, 0, 0)},)
EQ20_AVERAGED_SETS = eq20_averaged("inside the expert sets")


# ------------------------------------------------------------------------ Theorem 2, eq. (22) given the routing


def _eq22_parts(x):
    """(left side, right side, D) of eq. (22) given the tasks and the routing, exactly; None off the domain."""
    N, M, K, T1 = x["N"], x["M"], x["K"], x["T1"]
    W = _pool(x, N)
    tasks, chosen = tuple(x["n"]), tuple(x["m"])
    S, D = pool_constants(W)
    if not _distinct(W):
        return None
    p1, p2 = psi(W, K)
    lhs = conditional_errors(W, tasks, chosen, M, R).generalization[-1]
    return lhs, eq22_rhs(chosen, M, T1, R, S, D, p1, p2), D


def _eq22_slack(x):
    parts = _eq22_parts(x)
    if parts is None:
        return OUTSIDE
    lhs, rhs, D = parts
    return (rhs - lhs) / D  # in units of D


# Theorem 2's premises, on the paper's quantities (task n in cluster n mod K; expert m serves cluster m mod K).
EQ22_PREMISES = (
    Premise("K < M < N", "fewer clusters than experts and fewer experts than tasks (Theorem 2's case)",
            lambda x: x["K"] < x["M"] < x["N"], sizes_only=True),
    Premise("M = Omega(K ln K)", "M >= c K ln K, checked at c = 1", lambda x: x["M"] >= x["K"] * math.log(x["K"]),
            sizes_only=True),
    Premise("T1 = ceil(M / eta)", "an exploration phase of T1 >= M rounds (T1 = ceil(M / eta), eta <= 1), and at "
            "least one round after it (T > T1)", lambda x: x["T1"] >= x["M"] and x["late"] >= 1, sizes_only=True),
    Premise("clustered ground truths", "K clusters, task n in cluster n mod K, every squared gap within a cluster "
            "at most 0.4 (= sigma0 at the paper's sigma0 = 0.4) times every squared gap across clusters",
            lambda x: _clustered(_pool(x, x["N"]), x["K"])),
    Premise("every expert explored", "every expert is routed at least one round during exploration (Lemma 8's "
            "balanced exploration)", lambda x: set(x["m"][:x["T1"]]) == set(range(x["M"]))),
    Premise("routed inside the cluster", "every round after T1 goes to an expert of its task's cluster (expert m "
            "serves cluster m mod K), as Algorithm 1 routes with probability 1 - o(1)",
            lambda x: all(m % x["K"] == n % x["K"] for n, m in zip(x["n"][x["T1"]:], x["m"][x["T1"]:]))),
)


EQ22_GIVEN_ROUTING = Statement(
    "thm2.generalization: eq. (22) given the tasks and the routing [errors]",
    slack=lambda x: float(_eq22_slack(x)), exact_slack=_eq22_slack,
    sizes=(Size("N", 4, 5), Size("K", 2, 3), Size("M", 3, 4), Size("T1", 3, 6), Size("late", 1, 4)),
    reals=(Real("w", -1, 1, "N"),),
    choices=(Choice("n", _horizon, "N"), Choice("m", _horizon, "M")),
    strict=True, premises=EQ22_PREMISES)


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


# --------------------------------------------------------------------- counterexamples in the paper's quantities

# How each statement's search inputs read as the paper's instance (filled in below, per statement).
INSTANCES: dict = {}


def _vectors(W) -> list[list[str]]:
    return [[str(c) for c in w] for w in W]


def _errors_instance(x, parts, extra: dict) -> dict:
    """The common part of an errors bound's instance: sizes, d, s, r, the ground truths as exact vectors
    (w_n, n = 1..N), the routing (experts numbered from 1), both sides, the slack and the slack in units of D."""
    N = x["N"]
    lhs, rhs, D = parts
    S, _ = pool_constants(_pool(x, N))
    return {"N": N, "M": x["M"], **extra, "d": D_DIM, "s": S_COLS, "r": str(R),
            "w": _vectors(_pool(x, N)), "S": str(S), "D": str(D), "lhs": str(lhs), "rhs": str(rhs),
            "slack": str(rhs - lhs), "slack_over_D": str((rhs - lhs) / D)}


def _eq22_instance(x) -> dict:
    T1, T = x["T1"], len(x["m"])
    inst = _errors_instance(x, _eq22_parts(x), {"K": x["K"], "T1": T1, "T": T})
    p1, p2 = psi(_pool(x, x["N"]), x["K"])
    return {**inst, "Psi1": str(p1), "Psi2": str(p2), "tasks": [n + 1 for n in x["n"]],
            "routing": [m + 1 for m in x["m"]]}


def _eq20_averaged_instance(x, every_set: bool) -> dict:
    """``every_set``: the reading assigns every expert a set (else only the experts routed after T1 matter)."""
    T1, T = x["T1"], len(x["m"])
    inst = _errors_instance(x, _eq20_averaged_parts(x), {"T1": T1, "T": T})
    post = sorted(set(x["m"][T1:]))
    sets = {str(m + 1): x["sigma"][m] + 1 for m in (range(x["M"]) if every_set else post)}
    # exploration tasks are averaged (i.i.d. uniform, independent of the routing): "uniform"
    return {**inst, "tasks": ["uniform"] * T1 + [x["sigma"][m] + 1 for m in x["m"][T1:]],
            "routing": [m + 1 for m in x["m"]], "expert_sets": sets}


def instance_of(st: Statement, x) -> dict:
    """The counterexample ``x`` of ``st`` as the paper's instance, exact values as strings (fractions p/q)."""
    make = INSTANCES.get(st.name)
    return make(x) if make else {k: _value(v) for k, v in x.items()}


def describe_instance(inst: dict) -> str:
    """An instance as the evidence prints it: the ground truths as vectors w_n = (..), tasks and routing as
    sequences (numbered from 1), then the sizes and both sides."""
    parts = []
    for n, w in enumerate(inst.get("w", ()), start=1):
        parts.append(f"w_{n} = ({', '.join(w)})")
    for key, label in (("tasks", "tasks n"), ("routing", "routing m")):
        if key in inst:
            parts.append(f"{label} = ({', '.join(map(str, inst[key]))})")
    if inst.get("expert_sets"):
        parts.append("expert sets " + ", ".join(f"expert {m} -> task {n}" for m, n in inst["expert_sets"].items()))
    skip = {"w", "tasks", "routing", "expert_sets", "lhs", "rhs", "slack", "slack_over_D", "premises",
            "slack_searched", "broken"}
    parts += [f"{k} = {_shown(v)}" for k, v in inst.items() if k not in skip]
    if "lhs" in inst:
        parts.append(f"left side {inst['lhs']} against right side {inst['rhs']} (slack {inst['slack']}"
                     + (f", {inst['slack_over_D']} D" if "slack_over_D" in inst else "") + ")")
    return ", ".join(parts)


def _exact_at(st: Statement, x) -> float:
    """The exact slack at the float inputs where the search saw its least slack (the float value there may be
    rounding), as a float for the report."""
    if not x:
        return float("nan")
    exact = {k: tuple(Fraction(e) for e in v) if isinstance(v, tuple) and st.reals and k in {r.name for r in st.reals}
             else Fraction(v) if k in {r.name for r in st.reals} else v for k, v in x.items()}
    return float(st.exact_slack(exact))


def run_search(st: Statement, seed: int, claim_id: str, evaluations: int, cover: bool = False) -> SearchResult:
    """The search of ``st`` at the run's budget, its generator keyed by the seed, the claim and the statement.
    ``cover``: split the budget evenly over every size configuration inside the premises (at least 20 each),
    so that a search that finds nothing has looked at every size, not only the smallest."""
    per_config = None
    if cover:
        inside = [c for c in configurations(st) if not st.failing(c, sizes_only=True)]
        per_config = max(20, evaluations // max(1, len(inside)))
    return search(st, generator_for(seed, claim_id, "worst case", st.name), budget=evaluations,
                  per_config=per_config, shrink_budget=max(100, evaluations // 4))


# A search over pools checks a universal statement about pools on pools the run did not draw: its own reading,
# so that a bound that holds on the drawn pools and fails on an allowed one falls under this reading only.
ANY_POOL = "on any pool the paper's assumptions allow (chosen by the search)"


def outside_case(st: Statement, x) -> OutsideViolation | None:
    """``x`` (exact inputs) as a violation outside the premises of ``st``: None unless it breaks a premise and
    violates the inequality exactly.  Such a case says where the premises matter; it decides nothing."""
    broken = st.failing(x)
    s = Fraction(st.exact_slack(x))
    return OutsideViolation(dict(x), s, broken) if broken and st.violated(s) else None


def entry(claim_id: str, source: str, st: Statement, result: SearchResult, formula: str, reading: str | None,
          form: str = "stated", pools: bool = True, outside: tuple = ()) -> ClaimResult:
    """The search's exact entry: refuted with the shrunk counterexample, which satisfies every premise of the
    statement (it is stored as the paper's instance, ``config["counterexample"]``: sizes, d, s, T1, T, the
    ground truths as exact vectors, the tasks and the routing, both sides, the slack, the premises it
    satisfies), else inconclusive with the search's size and the least slack seen inside the premises (a search
    that finds nothing proves nothing).  ``pools``: the search picks the pool of ground truths, so the entry's
    reading says so (:data:`ANY_POOL`).  ``outside``: known inputs outside the premises, reported (with the
    premises they break) where they violate, never deciding the entry."""
    if pools:
        reading = f"{reading}; {ANY_POOL}" if reading else ANY_POOL
    size = (f"{result.evaluations} evaluation{'s' if result.evaluations != 1 else ''} ({result.exact_evaluations} exact) over {result.restarts} restart{'s' if result.restarts != 1 else ''} "
            f"and {len(result.configurations)} size configuration{'s' if len(result.configurations) != 1 else ''}")
    config = {"reading": reading, "search": {"evaluations": result.evaluations, "exact": result.exact_evaluations,
                                             "restarts": result.restarts,
                                             "configurations": len(result.configurations),
                                             "allowed": result.allowed_evaluations, "float_only": result.float_only,
                                             "outside_premises": result.outside,
                                             "configurations_outside": result.skipped_configurations}}
    if st.premises:
        config["premises"] = [{"name": p.name, "text": p.text} for p in st.premises]
    premises = (f", only inside the premises: {', '.join(p.name for p in st.premises)}; {result.outside} "
                "candidates outside them not evaluated") if st.premises else ""
    beyond = [v for v in (result.outside_violation, *(outside_case(st, x) for x in outside)) if v is not None]
    if beyond:
        config["outside_premises"] = [{**instance_of(st, v.inputs), "broken": list(v.broken)} for v in beyond]
    outside = "".join(f". Outside the premises ({', '.join(v.broken)} broken), which decides nothing, it fails: "
                      + describe_instance(instance_of(st, v.inputs)) for v in beyond)
    if result.found:
        cex = result.counterexample
        # "slack": the paper's right side minus left side where the instance has both sides, else the searched one
        inst = {"slack": str(cex.slack), **instance_of(st, cex.inputs), "slack_searched": str(cex.slack),
                "premises": [{"name": n, "text": t} for n, t in cex.premises]}
        shown = describe_instance(inst)
        satisfied = (f"; it satisfies every premise ({'; '.join(f'{n}: {t}' for n, t in cex.premises)})"
                     if cex.premises else "")
        shrunk = f"shrunk in {len(cex.steps)} step{'s' if len(cex.steps) != 1 else ''} to" if cex.steps else "already minimal for the shrinker:"
        if result.from_example:
            # an explicit example of the statement (a violation an earlier run found), rechecked in this run
            evidence = ("Worst case: the statement's explicit example (a violation found by an earlier run of this "
                        f"search, rechecked exactly in every run) violates it in rational arithmetic, {shrunk} "
                        f"{shown}; exact slack = {cex.slack} ({_units(st)}){satisfied}")
        else:
            evidence = (f"Worst-case search ({size}{premises}) found a violation, rechecked in rational arithmetic "
                        f"and {shrunk} {shown}; exact slack = {cex.slack} ({_units(st)}){satisfied}")
        return exact_result(claim_id, source, "bound", PART, "refuted", evidence + outside, formula, form=form,
                            counterexample=inst, **config)
    at = {k: _value(v) for k, v in (result.least_at or {}).items() if not isinstance(v, tuple)}
    least = _exact_at(st, result.least_at)
    evidence = (f"Worst-case search ({size}{premises}): no violation found; least slack found {least:.3g} "
                f"({_units(st)})"
                + (f" at {', '.join(f'{k} = {_shown(v)}' for k, v in at.items())}" if at else "")
                + f"; {result.float_only} float-only violations rejected by the exact recheck. A search that finds "
                "nothing does not prove the bound" + outside)
    return exact_result(claim_id, source, "bound", PART, "inconclusive", evidence, formula, form=form,
                        least_slack=least, **config)


INSTANCES.update({EQ22_GIVEN_ROUTING.name: _eq22_instance,
                  EQ20_AVERAGED.name: lambda x: _eq20_averaged_instance(x, False),
                  EQ20_AVERAGED_SETS.name: lambda x: _eq20_averaged_instance(x, True)})


__all__ = ["EQ20_AVERAGED", "EQ20_AVERAGED_OUTSIDE", "EQ20_AVERAGED_SETS", "EQ22_GIVEN_ROUTING", "INSTANCES", "describe_instance", "instance_of", "LEMMA2_SHARP", "LEMMA2_STATED", "PART", "entry", "run_search"]
