"""Theorem 1 at M = 1 against Proposition 4: exact substitutions."""

import numpy as np
import sympy as sp

from moecl_verify.checks import runner
from moecl_verify.theory import prop4
from moecl_verify.theory.symbols import D, S, r, t


def test_specialization_entries():
    run = runner.run(["thm1.m1_specialization"], budget="smoke", seed=0)
    verdicts = {res.key.part: res.verdict for res in run.results}
    assert verdicts == {
        "eq19 -> eq17 as printed": "refuted",
        "eq19 -> eq17 with Appendix H's coefficient": "confirmed",
        "eq20 -> eq18": "refuted",
    }
    assert [s.id for s in run.slips] == ["thm1.m1_specialization"]


def test_derived_forgetting_exceeds_the_bound_for_every_t_and_r():
    # The entry's text claims derived E[F_t] > eq. (19)'s right-hand side at M = 1 (D > 0); check it on a grid.
    excess = sp.lambdify((r, t, S, D), prop4.forgetting_derived().expr - prop4.forgetting_corrected().expr)
    for rv in np.linspace(0.05, 0.95, 19):
        for tv in range(2, 60):
            assert excess(rv, tv, 1.3, 1.0) > 0
