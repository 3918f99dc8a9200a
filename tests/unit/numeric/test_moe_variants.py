"""Algorithm 1's variants outside the paper: top-k routing, load balancing by none or a routing bias, task schedules.

The batched engine must equal the reference loop for every option; the defaults must be the paper's engine bit for
bit; each option must do what its definition says (checked on properties derived from the definitions).
"""

import dataclasses
import itertools

import numpy as np
import pytest

from moecl_verify.numeric.draws import SingleExpertDraws, TaskSchedule, draw_single_expert
from moecl_verify.numeric.gate import softmax, softmax_chain_gradient, task_loss_gradient
from moecl_verify.numeric.moe import MoEConfig, MoERun, draw_moe, run_moe_batched, run_moe_reference, simulate_moe
from moecl_verify.numeric.pool import make_pool
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.numeric.single_expert import run_batched

BASE = dict(M=4, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.3)
FLOATS = ("model_error", "forgetting", "generalization", "theta", "w", "theta_max")
EXACT = ("chosen", "loads", "freeze_round", "expert_sets")


def _pool(N=4, d=6, seed=0):
    return make_pool(generator_for(seed, "test-moe-variants-pool"), N=N, d=d, sigma0=0.4, signal_scale=2.5)


# A schedule with every feature: unequal frequencies, a swap of frequent and rare tasks, a task arriving late.
SCHEDULE = TaskSchedule.zipf(4, 1.0).swap_at(15).new_task_at(25)
BALANCING = {
    "aux": dict(balance="aux"),
    "none": dict(balance="none"),
    "bias": dict(balance="bias", bias_rate=0.3),
    "bias-window": dict(balance="bias", bias_rate=0.2, bias_window=5),
}


@pytest.mark.parametrize("balancing, top_k, termination",
                         list(itertools.product(BALANCING, (1, 2, 3), (True, False))))
def test_batched_equals_reference(balancing, top_k, termination):
    pool = _pool()
    cfg = MoEConfig(**BASE, **BALANCING[balancing], top_k=top_k, termination=termination, record_rounds=True)
    draws = draw_moe(generator_for(1, balancing, top_k, str(termination)), pool, R=5, T=45, s=3, M=4,
                     task_probs=SCHEDULE)
    fast, slow = run_moe_batched(pool, draws, cfg), run_moe_reference(pool, draws, cfg)
    for name in FLOATS:
        np.testing.assert_allclose(getattr(fast, name), getattr(slow, name), rtol=1e-10, atol=1e-12, err_msg=name)
    for name in EXACT:
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
    assert fast.rounds.keys() == slow.rounds.keys()
    for key in fast.rounds:
        np.testing.assert_allclose(fast.rounds[key], slow.rounds[key], rtol=1e-10, atol=1e-12, err_msg=key)
    if cfg.balance == "bias":
        np.testing.assert_array_equal(fast.bias, slow.bias)
        assert np.abs(fast.bias).max() > 0  # the bias moved: the comparison is not vacuous
    else:
        assert fast.bias is None and slow.bias is None
    # Not vacuous either: termination froze some replicates (after exploration), or none without it.
    assert (fast.freeze_round > 0).any() == termination
    assert fast.rounds["chosen_sets"].shape == (5, 45, top_k)


def test_schedule_in_the_comparison_has_its_features():
    draws = draw_moe(generator_for(1, "aux", 1, "True"), _pool(), R=5, T=45, s=3, M=4, task_probs=SCHEDULE)
    assert (draws.tasks[:, :24] != 3).all() and (draws.tasks[:, 24:] == 3).any()


def test_explicit_defaults_are_the_paper_engine_bit_for_bit():
    pool = _pool()
    draws = draw_moe(generator_for(2, "defaults"), pool, R=6, T=60, s=3, M=4)
    paper = run_moe_batched(pool, draws, MoEConfig(**BASE, record_rounds=True))
    spelled = run_moe_batched(pool, draws, MoEConfig(**BASE, record_rounds=True, balance="aux", bias_rate=0.0,
                                                     bias_window=None, top_k=1))
    for name, value in paper.to_arrays().items():
        np.testing.assert_array_equal(value, spelled.to_arrays()[name], err_msg=name)
    assert paper.bias is None and "bias" not in paper.to_arrays()


def test_uniform_draws_make_the_same_generator_calls_as_before():
    # task_probs=None must draw tasks with rng.integers first, as the paper's draws always did.
    pool = _pool()
    draws = draw_moe(generator_for(3, "calls"), pool, R=4, T=20, s=3, M=4, features="gaussian")
    rng = generator_for(3, "calls")
    np.testing.assert_array_equal(draws.tasks, rng.integers(0, pool.N, size=(4, 20), dtype=np.int64))
    np.testing.assert_array_equal(draws.X, rng.standard_normal((4, 20, pool.d, 3)))
    np.testing.assert_array_equal(draws.noise, rng.random((4, 20, 4)))


def test_schedule_draws_one_uniform_per_round_so_other_streams_do_not_shift():
    pool = _pool()
    a = draw_moe(generator_for(4, "shift"), pool, R=3, T=30, s=3, M=4, features="gaussian",
                 task_probs=TaskSchedule.zipf(4, 2.0))
    b = draw_moe(generator_for(4, "shift"), pool, R=3, T=30, s=3, M=4, features="gaussian",
                 task_probs=TaskSchedule.with_rare(4, 0.1).swap_at(7).new_task_at(12))
    assert not np.array_equal(a.tasks, b.tasks)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.noise, b.noise)
    # The tasks are the inverse CDF of one uniform per (replicate, round).
    u = generator_for(4, "shift").random((3, 30))
    np.testing.assert_array_equal(a.tasks, np.searchsorted(np.cumsum(TaskSchedule.zipf(4, 2.0).phases[0][1]), u,
                                                           side="right").clip(max=3))


def test_loss_free_bias_balances_the_load():
    # M = 4 experts, N = 2 tasks, T = 400, no termination.  Without balancing (rate 0) the loads fluctuate at
    # least as much as under random routing, sd sqrt(p (1 - p) / T) = 0.022 per expert at p = 1/4, so the
    # largest of the 4 deviations |load / T - 1/4| is about 0.03 on average (more where the gate, trained
    # on the locality loss alone, favours some experts).  With bias_rate = 1 (above the routing noise
    # lambda = 0.3, and the bias keeps growing while an expert stays under- or overloaded) an expert whose
    # cumulative load falls below 1/4 is pushed up every round until it is routed, so every load stays within
    # a few rounds of T / 4: deviations of order 1 / T to a few / T, well under 0.05 and a third of the
    # unbalanced ones.  The runs share the draws.
    pool = _pool(N=2)
    draws = draw_moe(generator_for(5, "balance"), pool, R=8, T=400, s=3, M=4)

    def deviation(rate):
        cfg = MoEConfig(**BASE, termination=False, balance="bias", bias_rate=rate)
        return np.abs(run_moe_batched(pool, draws, cfg).loads / 400 - 0.25).max(axis=1)

    balanced, free = deviation(1.0), deviation(0.0)
    assert balanced.max() < 0.05
    assert balanced.mean() < free.mean() / 3


def test_bias_rate_zero_is_no_balancing_and_none_is_aux_without_alpha():
    pool = _pool()
    draws = draw_moe(generator_for(6, "none"), pool, R=6, T=60, s=3, M=4)
    none = run_moe_batched(pool, draws, MoEConfig(**BASE, balance="none"))
    still = run_moe_batched(pool, draws, MoEConfig(**BASE, balance="bias", bias_rate=0.0))
    for name in FLOATS + EXACT:
        np.testing.assert_array_equal(getattr(none, name), getattr(still, name), err_msg=name)
    np.testing.assert_array_equal(still.bias, 0.0)
    # "none" drops the auxiliary term whatever alpha is: the same as the paper's gradient with alpha = 0.
    no_alpha = run_moe_batched(pool, draws, MoEConfig(**{**BASE, "alpha": 0.0}))
    np.testing.assert_array_equal(none.chosen, no_alpha.chosen)
    np.testing.assert_allclose(none.theta, no_alpha.theta, rtol=1e-10, atol=1e-13)
    with_alpha = run_moe_batched(pool, draws, MoEConfig(**BASE))
    assert not np.allclose(none.theta, with_alpha.theta)


def test_bias_stops_when_the_gate_freezes():
    pool = _pool()
    cfg = MoEConfig(**BASE, balance="bias", bias_rate=0.3, record_rounds=True)
    run = run_moe_batched(pool, draw_moe(generator_for(7, "freeze"), pool, R=6, T=60, s=3, M=4), cfg)
    assert (run.freeze_round > 0).all()
    for r in range(run.R):
        t0 = int(run.freeze_round[r])
        # The round that freezes the gate (flags before its update) updates neither theta nor b.
        np.testing.assert_array_equal(run.rounds["bias"][r, t0 - 1:], np.broadcast_to(run.rounds["bias"][r, t0 - 2],
                                                                                       (60 - t0 + 1, 4)))
        np.testing.assert_array_equal(run.bias[r], run.rounds["bias"][r, t0 - 2])
        assert not np.array_equal(run.rounds["bias"][r, t0 - 2], 0.0)


def test_bias_update_follows_its_definition_on_recorded_rounds():
    # b_t - b_{t-1} = u sign(1/M - load_t), load over the last W rounds of routed sets (recorded).
    pool = _pool()
    M, W, u, k = 4, 3, 0.25, 2
    cfg = MoEConfig(**BASE, termination=False, balance="bias", bias_rate=u, bias_window=W, top_k=k,
                    record_rounds=True)
    run = run_moe_batched(pool, draw_moe(generator_for(8, "def"), pool, R=3, T=20, s=3, M=M), cfg)
    sets, bias = run.rounds["chosen_sets"], run.rounds["bias"]
    for r in range(3):
        previous = np.zeros(M)
        for j in range(20):
            recent = sets[r, max(0, j - W + 1): j + 1]
            load = np.array([(recent == m).sum() for m in range(M)]) / (k * len(recent))
            expected = previous + u * np.sign(1 / M - load)
            np.testing.assert_allclose(bias[r, j], expected, rtol=0, atol=1e-12)
            previous = bias[r, j]


def test_bias_steers_routing_but_not_the_softmax():
    # With lam = 0 the choice is argmax(h + b); pi (hence the losses) must not see b.
    pool = _pool()
    cfg = MoEConfig(**{**BASE, "lam": 0.0}, termination=False, balance="bias", bias_rate=0.5, record_rounds=True)
    draws = draw_moe(generator_for(9, "steer"), pool, R=4, T=30, s=3, M=4)
    run = run_moe_batched(pool, draws, cfg)
    h, b = run.rounds["h"], run.rounds["bias"]
    b_before = np.concatenate([np.zeros((4, 1, 4)), b[:, :-1]], axis=1)  # the bias that routed round t
    np.testing.assert_array_equal(run.chosen, np.argmax(h + b_before, axis=-1))
    assert (run.chosen != np.argmax(h, axis=-1)).any()  # the bias did change some choices


def test_top_k_sets_loads_and_ties():
    pool = _pool()
    cfg = MoEConfig(**{**BASE, "lam": 0.0}, top_k=3, record_rounds=True)
    run = run_moe_batched(pool, draw_moe(generator_for(10, "sets"), pool, R=4, T=25, s=3, M=4), cfg)
    sets = run.rounds["chosen_sets"]
    assert all(len(set(sets[r, j])) == 3 for r in range(4) for j in range(25))
    np.testing.assert_array_equal(sets[:, :, 0], run.chosen)
    np.testing.assert_array_equal(run.rounds["loads"].sum(axis=2), np.broadcast_to(3 * np.arange(1, 26), (4, 25)))
    # Round 1: theta = 0 and no noise, every score ties at 0, so the set is the 3 smallest indices in order.
    np.testing.assert_array_equal(sets[:, 0], np.broadcast_to([0, 1, 2], (4, 3)))


def test_top_k_equal_to_M_moves_every_expert_like_a_single_expert():
    # Every expert takes every step from the same start, so all models are equal, the combined model is that
    # model (weights sum to 1), and the errors are the single-expert engine's on the same draws.
    pool = _pool()
    draws = draw_moe(generator_for(11, "all"), pool, R=5, T=30, s=3, M=4)
    run = run_moe_batched(pool, draws, MoEConfig(**BASE, top_k=4))
    for m in range(1, 4):
        np.testing.assert_allclose(run.w[:, m], run.w[:, 0], rtol=1e-12, atol=1e-14)
    single = run_batched(pool, SingleExpertDraws(draws.tasks, draws.X))
    for name in ("model_error", "forgetting", "generalization"):
        np.testing.assert_allclose(getattr(run, name), getattr(single, name), rtol=1e-9, atol=1e-12, err_msg=name)
    np.testing.assert_array_equal(run.loads, 30.0)


def test_top_k_model_error_is_the_combined_model_error():
    # E_t from the final state: the last round's set and renormalized softmax weights, h recorded.
    pool = _pool()
    cfg = MoEConfig(**BASE, top_k=2, record_rounds=True)
    draws = draw_moe(generator_for(12, "combo"), pool, R=4, T=20, s=3, M=4)
    run = run_moe_batched(pool, draws, cfg)
    for r in range(4):
        S = run.rounds["chosen_sets"][r, -1]
        pi = np.exp(run.rounds["h"][r, -1]) / np.exp(run.rounds["h"][r, -1]).sum()
        g = pi[S] / pi[S].sum()
        model = g[0] * run.w[r, S[0]] + g[1] * run.w[r, S[1]]
        expected = np.sum((model - pool.W[draws.tasks[r, -1]]) ** 2)
        np.testing.assert_allclose(run.model_error[r, -1], expected, rtol=1e-10)


def test_softmax_chain_gradient_matches_finite_differences_of_the_top_k_loss():
    rng = np.random.default_rng(0)
    M, d = 5, 4
    theta, xbar = rng.normal(size=(M, d)), rng.normal(size=d)
    weights = np.zeros(M)
    weights[[1, 3]] = [0.7, 1.3]  # dL/dpi_j on a routed set {1, 3}

    def loss(th):
        return float(weights @ softmax(th @ xbar))

    grad = softmax_chain_gradient(softmax(theta @ xbar)[None], weights[None], xbar[None])[0]
    eps = 1e-6
    numeric = np.zeros_like(theta)
    for i, j in itertools.product(range(M), range(d)):
        step = np.zeros_like(theta)
        step[i, j] = eps
        numeric[i, j] = (loss(theta + step) - loss(theta - step)) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-9)
    # One routed expert: the paper's closed form.
    pi = softmax(theta @ xbar)[None]
    one = np.zeros((1, M))
    one[0, 2] = 0.8
    np.testing.assert_allclose(softmax_chain_gradient(pi, one, xbar[None]),
                               task_loss_gradient(pi, np.array([2]), np.array([0.8]), np.array([0.0]), 1, 0.0,
                                                  xbar[None]), rtol=1e-12, atol=1e-15)


def test_schedule_helpers():
    assert TaskSchedule.zipf(5, 0) == TaskSchedule.uniform(5)
    z = TaskSchedule.zipf(3, 1.0).phases[0][1]
    np.testing.assert_allclose(z, np.array([1, 1 / 2, 1 / 3]) / (1 + 1 / 2 + 1 / 3), rtol=1e-15)
    assert TaskSchedule.with_rare(4, 0.1).phases == ((1, (0.3, 0.3, 0.3, 0.1)),)
    swapped = TaskSchedule.with_rare(4, 0.1).swap_at(10)
    assert swapped.phases == ((1, (0.3, 0.3, 0.3, 0.1)), (10, (0.1, 0.3, 0.3, 0.3)))
    late = TaskSchedule.with_rare(4, 0.1).new_task_at(5)
    np.testing.assert_allclose(late.probabilities_at(4), (1 / 3, 1 / 3, 1 / 3, 0.0), rtol=1e-15, atol=0)
    assert late.probabilities_at(4)[3] == 0.0 and late.probabilities_at(5) == (0.3, 0.3, 0.3, 0.1)
    assert TaskSchedule.uniform(3).new_task_at(1) == TaskSchedule.uniform(3)


def test_new_task_never_arrives_early_and_frequencies_follow_the_phases():
    pool = _pool()
    schedule = TaskSchedule.with_rare(4, 0.4).swap_at(100).new_task_at(50)
    draws = draw_single_expert(generator_for(13, "late"), pool, R=200, T=150, s=3, task_probs=schedule)
    assert (draws.tasks[:, :49] != 3).all()
    for lo, hi, probs in ((0, 49, [1 / 3, 1 / 3, 1 / 3, 0]), (49, 99, [0.2, 0.2, 0.2, 0.4]),
                          (99, 150, [0.4, 0.2, 0.2, 0.2])):
        n = draws.tasks[:, lo:hi].size
        share = np.bincount(draws.tasks[:, lo:hi].ravel(), minlength=4) / n
        sd = np.sqrt(np.array(probs) * (1 - np.array(probs)) / n)
        assert (np.abs(share - probs) <= 5 * sd + 1e-12).all(), (lo, share)


def test_zero_probability_tasks_are_never_drawn_even_at_rounding_edges():
    # Ten times 0.1 accumulates to 0.9999999999999999 = the largest uniform below 1: the trailing task of
    # probability 0 must still never be drawn, even for that uniform.
    probs = (0.1,) * 10 + (0.0,)
    assert np.cumsum(probs)[9] == np.nextafter(1.0, 0.0)  # the edge this test is about
    schedule = TaskSchedule(((1, probs),))

    class Edge:
        def random(self, shape):
            return np.full(shape, np.nextafter(1.0, 0.0))

    assert (schedule.sample(Edge(), 2, 3) == 9).all()


@pytest.mark.parametrize(
    "phases, name",
    [
        ((), "empty"),
        (((2, (0.5, 0.5)),), "round 1"),
        (((1, (0.5, 0.6)),), "sum to 1"),
        (((1, (1.5, -0.5)),), ">= 0"),
        (((1, (0.5, 0.5)), (1, (0.5, 0.5))), "increase"),
        (((1, (0.5, 0.5)), (0, (0.5, 0.5))), "start round"),
        (((1, (0.5, 0.5)), (3, (1.0,))), "lists 1 tasks"),
        (((1, (float("nan"), 1.0)),), ">= 0"),
    ],
)
def test_schedule_validation(phases, name):
    with pytest.raises(ValueError, match=name):
        TaskSchedule(phases)


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: TaskSchedule.zipf(3, -1), "zipf exponent"),
        (lambda: TaskSchedule.with_rare(3, 1.5), "share"),
        (lambda: TaskSchedule.with_rare(1, 0.5), "N"),
        (lambda: TaskSchedule.uniform(3).swap_at(0), "swap round"),
        (lambda: TaskSchedule.uniform(3).new_task_at(0), "new task round"),
        (lambda: TaskSchedule.with_rare(2, 1.0).new_task_at(3), "arrive late"),
    ],
)
def test_schedule_helper_validation(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_schedule_must_match_the_pool_and_not_come_with_tasks():
    pool = _pool()
    with pytest.raises(ValueError, match="task_probs"):
        draw_moe(generator_for(0), pool, R=2, T=5, s=3, M=4, task_probs=TaskSchedule.uniform(3))
    with pytest.raises(ValueError, match="not both"):
        draw_single_expert(generator_for(0), pool, R=2, T=5, s=3, tasks=np.zeros(5, dtype=int),
                           task_probs=TaskSchedule.uniform(4))


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(balance="aux-free"), "balance"),
        (dict(balance="bias", bias_rate=-1.0), "bias_rate"),
        (dict(balance="bias", bias_rate=float("inf")), "bias_rate"),
        (dict(balance="bias", bias_rate=0.1, bias_window=0), "bias_window"),
        (dict(balance="bias", bias_window=2.5), "bias_window"),
        (dict(bias_rate=0.1), "bias_rate"),
        (dict(balance="none", bias_window=3), "bias_window"),
        (dict(top_k=0), "top_k"),
        (dict(top_k=5), "top_k"),
        (dict(top_k=True), "top_k"),
        (dict(top_k=2, router="oracle", oracle_sets=((0,), (1,), (2,), (3,))), "top_k"),
        (dict(balance="bias", router="oracle", oracle_sets=((0,), (1,), (2,), (3,))), "balance"),
    ],
)
def test_config_validation_names_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        MoEConfig(**{**BASE, **kwargs})


def test_run_arrays_round_trip_and_old_arrays_without_bias_still_load():
    pool = _pool()
    cfg = MoEConfig(**BASE, balance="bias", bias_rate=0.2, top_k=2, record_rounds=True)
    run = simulate_moe(pool, cfg, R=5, T=12, s=3, seed=1, key=("rt",), chunk_size=2,
                       task_probs=TaskSchedule.zipf(4, 1.0))
    assert run.bias.shape == (5, 4) and run.rounds["chosen_sets"].shape == (5, 12, 2)
    back = MoERun.from_arrays(run.to_arrays())
    for name, value in run.to_arrays().items():
        np.testing.assert_array_equal(value, back.to_arrays()[name], err_msg=name)
    old = {k: v for k, v in run.to_arrays().items() if k != "bias"}
    assert MoERun.from_arrays(old).bias is None
    # Draws are streamed by round: a longer horizon replays the first 12 rounds exactly.
    longer = simulate_moe(pool, cfg, R=5, T=20, s=3, seed=1, key=("rt",), chunk_size=2,
                          task_probs=TaskSchedule.zipf(4, 1.0))
    np.testing.assert_array_equal(longer.tasks[:, :12], run.tasks)
    np.testing.assert_array_equal(longer.generalization[:, :12], run.generalization)


def test_round_state_carries_the_routed_set():
    pool = _pool()
    seen = []
    cfg = MoEConfig(**BASE, top_k=2, balance="bias", bias_rate=0.1)
    run = run_moe_batched(pool, draw_moe(generator_for(14, "obs"), pool, R=3, T=10, s=3, M=4), cfg,
                          observer=lambda state: seen.append(dataclasses.replace(state)))
    assert all(state.chosen_sets.shape == (3, 2) and state.deltas.shape == (3, 2) for state in seen)
    np.testing.assert_array_equal(seen[-1].bias, run.bias)
    np.testing.assert_array_equal(np.stack([state.chosen for state in seen], axis=1), run.chosen)
