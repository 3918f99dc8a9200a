"""Lemma 10 (softmax gap): verdicts and the facts behind them."""

import math

import numpy as np

import moecl_verify.checks.claims.router.lemma10 as mod
from moecl_verify.checks.context import BUDGETS, Context


def test_lemma10_entries_and_slips():
    out = mod.measure_lemma10(Context(budget=BUDGETS["smoke"], seed=0))
    verdicts = {r.config["part"]: r.verdict for r in out}
    assert verdicts == {
        "statement.O": "confirmed",
        "statement.Omega": "refuted",
        "proof.identity": "refuted",
        "proof.taylor": "confirmed",
        "proof.lower_bound": "refuted",
        "derived.tanh": "confirmed",
    }
    assert {s.id for s in mod.slips_lemma10(out)} == {"lemma10.omega_part", "lemma10.identity",
                                                      "lemma10.lower_bound_orientation"}


def test_softmax_gap_identity_numerically():
    # independent of sympy: pi_m - pi_m' = (pi_m + pi_m') tanh((h_m - h_m')/2) on random gates
    rng = np.random.default_rng(3)
    h = rng.normal(scale=3, size=(200, 5))
    pi = np.exp(h) / np.exp(h).sum(axis=1, keepdims=True)
    lhs = pi[:, 0] - pi[:, 1]
    rhs = (pi[:, 0] + pi[:, 1]) * np.tanh((h[:, 0] - h[:, 1]) / 2)
    assert np.allclose(lhs, rhs, atol=1e-14)
    # the printed identity with exp(h_m - h_m' - pi_m') is wrong at M = 2, h = (1, 0): hand value
    p1 = 1 / (1 + math.e)
    assert abs((1 - 2 * p1) - p1 * (math.exp(1 - p1) - 1) - float(mod.printed_identity_difference())) < 1e-12
