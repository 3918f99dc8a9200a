"""Theorem 2's generalization bound pieces, and the C4/C5 insights (smoke budget)."""

import numpy as np

from moecl_verify.checks import runner
from moecl_verify.checks.experiments.theorem_bounds import eq22_rhs, psi


def test_psi_against_a_naive_double_loop():
    rng = np.random.default_rng(0)
    W, K = rng.normal(size=(5, 3)), 2
    clusters = {k: [n for n in range(5) if n % K == k] for k in range(K)}
    sq = lambda a, b: float(np.sum((W[a] - W[b]) ** 2))  # noqa: E731
    psi1 = np.mean([np.mean([sq(n, m) for m in clusters[n % K]]) for n in range(5)])
    psi2 = np.mean([np.mean([np.mean([sq(n, m) for m in clusters[k]]) for k in range(K)]) for n in range(5)])
    assert np.allclose(psi(W, K), (psi1, psi2))


def test_eq22_rhs_by_hand():
    # Two experts, T = 3, T1 = 2, rounds routed 0, 1, 0: L_T = (2, 1, 2) per round, L_T1 = (1, 1, 1).
    chosen, r, S, D, p1, p2 = np.array([[0, 1, 0]]), 0.5, 1.0, 2.0, 0.3, 0.7
    inner = np.mean([r ** (2 - 1) * (1 - r), r ** (1 - 1) * (1 - r)])
    first = np.mean([r**2, r**1, r**2]) * (S + inner * D)
    late = (1 - r ** (2 - 1)) / 3
    assert np.isclose(eq22_rhs(chosen, 2, 2, r, S, D, p1, p2)[0], first + (p1 + p2) * late)


def test_verdicts_at_smoke():
    run = runner.run(["thm2.*", "c4"], budget="smoke", seed=0)
    by = {(r.id, r.config["features"]): r.verdict for r in run.results}
    assert by[("thm2.forgetting", "-")] == "not_checkable"
    assert by[("c4", "definition1")] == "confirmed"
