"""Lemma 2's smooth router, exactly: the grid audit of the routing probabilities of eq. (1).

p_m = P(argmax_m' (h_m' + r^(m')) = m) with r^(m') i.i.d. Uniform[0, lambda], computed exactly as a
piecewise-polynomial integral (:mod:`theory.routing`).  By exact scale invariance p(c h, c lambda) =
p(h, lambda), so the audit runs at lambda = 1 over a grid of relative outputs x_m = h_m / lambda
(x_0 = 0, the others over the budget's grid) and pairs (h, h + eps s) with eps in :data:`STEPS` and sign
vectors s.  It records the largest ratio ||p - p_hat||_inf / ||h - h_hat||_inf, the Jacobian's sign
pattern and largest diagonal entry, and the ratios behind the proof's steps 3-4.  The grid is split
into cacheable chunks.  Used by :mod:`packs.moe_cl.claims.router.lemma2`; :data:`MS` (the numbers of experts
checked exactly) also by :mod:`packs.moe_cl.claims.router.cor1`.
"""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from typing import Callable

import numpy as np

from moecl_verify.numeric.chunks import Chunk, ChunkRunner
from moecl_verify.theory.routing import jacobian, routing_probabilities, switch_probability

MS = (2, 3, 4)
# The relative gate outputs x_m = h_m / lambda of the exact grid (x_0 = 0, the others over the grid) are the
# budget's ``lemma2_grid`` (packs/moe_cl/budgets.py): the callers pass it.
STEPS = (Fraction(1, 8), Fraction(1, 2))  # perturbation sizes eps of the grid pairs (lambda = 1)


def inf_norm(v) -> Fraction:
    """max_i |v_i|, the l_inf norm."""
    return max(abs(x) for x in v)


def grid_points(M: int, grid: tuple[Fraction, ...], first: int | None = None):
    """Base outputs (lambda = 1): x_0 = 0, x_1..x_{M-1} over ``grid`` (with x_1 = grid[first] if given)."""
    heads = grid if first is None else (grid[first],)
    for head in heads:
        for rest in itertools.product(grid, repeat=M - 2):
            yield (Fraction(0), head) + rest


def directions(M: int):
    """Sign vectors with a leading +1 (the global sign is covered by swapping h and h_hat)."""
    for signs in itertools.product((1, -1), repeat=M - 1):
        yield (1,) + signs


def audit_points(M: int, points) -> dict:
    worst_ratio, worst_pair = Fraction(0), None
    worst_switch_ratio = Fraction(0)  # P(switch) / (M (M-1) ||dh|| / lambda): the derived union bound
    step4_first_ok = True  # |p_hat_i - p_i| <= P(switch)
    max_diag, rows_ok = Fraction(0), True
    pairs = 0
    for h in points:
        J = jacobian(h, 1)
        for m, row in enumerate(J):
            max_diag = max(max_diag, row[m])
            rows_ok &= sum(row) == 0 and all(v <= 0 for j, v in enumerate(row) if j != m)
        p = routing_probabilities(h, 1)
        for s in directions(M):
            for eps in STEPS:
                hh = tuple(a + eps * b for a, b in zip(h, s))
                ph = routing_probabilities(hh, 1)
                dp = inf_norm([a - b for a, b in zip(p, ph)])
                ratio = dp / eps
                if ratio > worst_ratio:
                    worst_ratio, worst_pair = ratio, (h, hh)
                sw = switch_probability(h, hh, 1)
                step4_first_ok &= dp <= sw
                worst_switch_ratio = max(worst_switch_ratio, sw / (M * (M - 1) * eps))
                pairs += 1
    return dict(M=M, pairs=pairs, worst_ratio=worst_ratio, worst_pair=worst_pair, max_diag=max_diag,
                rows_ok=rows_ok, step4_first_ok=step4_first_ok, worst_switch_ratio=worst_switch_ratio)


FRACTIONS = ("worst_ratio", "max_diag", "worst_switch_ratio")


def grid_audit_chunk(*, M: int, grid: tuple[str, ...], first: int) -> dict:
    """One part of the grid (x_1 = grid[first]) as a cacheable chunk: the grid comes as 'p/q' strings (a chunk's
    arguments are JSON), the partial audit goes back as JSON text in a 0-d unicode array, Fractions as 'p/q'
    strings too (read back with Fraction(str), nothing evaluated)."""
    audit = audit_points(M, grid_points(M, tuple(Fraction(x) for x in grid), first))
    text = {k: str(audit[k]) for k in FRACTIONS}
    text["worst_pair"] = None if audit["worst_pair"] is None else [[str(v) for v in h] for h in audit["worst_pair"]]
    text.update({k: audit[k] for k in ("M", "pairs", "rows_ok", "step4_first_ok")})
    return {"audit": np.array(json.dumps(text, sort_keys=True))}


def read_audit(arrays: dict) -> dict:
    text = json.loads(str(arrays["audit"][()]))
    audit = {k: text[k] for k in ("M", "pairs", "rows_ok", "step4_first_ok")}
    audit.update({k: Fraction(text[k]) for k in FRACTIONS})
    pair = text["worst_pair"]
    audit["worst_pair"] = None if pair is None else tuple(tuple(Fraction(v) for v in h) for h in pair)
    return audit


def grid_audit(M: int, grid: tuple[Fraction, ...], runner: ChunkRunner | None = None,
               progress: Callable[[int, int], object] | None = None) -> dict:
    """Exact checks over the pairs (h, h + eps s), lambda = 1, with h's relative outputs over ``grid``.

    Returns the largest ratio ||p - p_hat||_inf / ||h - h_hat||_inf (with the first pair attaining it), the
    largest diagonal Jacobian entry, whether the Jacobian rows have the sign pattern and zero sums, and the
    largest ratios for the proof's steps 3-4.  The grid is split by x_1 into chunks, which ``runner`` may
    run in parallel and cache like simulation chunks; parts are merged in grid order, so the result (the
    first worst pair included) is that of one pass over the grid.
    """
    size = len(grid) ** (M - 2)
    text = tuple(str(x) for x in grid)
    chunks = [Chunk(grid_audit_chunk, dict(M=M, grid=text, first=i), size=size) for i in range(len(grid))]
    parts = [read_audit(a) for a in (runner or ChunkRunner()).run(chunks, progress)]
    merged = dict(parts[0])
    for part in parts[1:]:
        merged["pairs"] += part["pairs"]
        if part["worst_ratio"] > merged["worst_ratio"]:
            merged["worst_ratio"], merged["worst_pair"] = part["worst_ratio"], part["worst_pair"]
        for k in ("max_diag", "worst_switch_ratio"):
            merged[k] = max(merged[k], part[k])
        for k in ("rows_ok", "step4_first_ok"):
            merged[k] = merged[k] and part[k]
    return merged
