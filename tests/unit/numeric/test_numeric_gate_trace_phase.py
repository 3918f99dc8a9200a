"""The per-round replay of Algorithm 1 (numeric.gate_trace) as the router-phase claims use it, and the quantities
measured on it."""

import numpy as np
import pytest

from moecl_verify.numeric import gate_trace as pt
from moecl_verify.numeric.chunks import chunk_sizes
from moecl_verify.numeric.moe import MoEConfig, draw_moe, draw_moe_chunk, run_moe_batched, simulate_moe
from moecl_verify.numeric.pool import make_pool
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.packs.moe_cl.claims.router.lemma13 import lemma13_holds
from moecl_verify.packs.moe_cl.claims.router.lemma15 import lemma15_holds


def _pool(sigma0=0.1, N=3, d=6):
    return make_pool(generator_for(0, "test-phase-pool"), N=N, d=d, sigma0=sigma0, signal_scale=1 / sigma0)


@pytest.mark.parametrize("termination", [True, False])
def test_trace_is_the_engines_trajectory(termination):
    pool = _pool()
    cfg = MoEConfig(M=4, eta=0.3, alpha=0.3, lam=0.05, Gamma=0.05, termination=termination, record_rounds=True)
    kw = dict(R=7, T=40, s=3, seed=5, key=("phase-test",), chunk_size=4)
    run = simulate_moe(pool, cfg, **kw, engine="numpy")  # the trace replays the numpy engine (an observer)
    tr = pt.GateTrace.concatenate([
        pt.run_gate_trace(pool, draw_moe_chunk(pool, M=4, size=size, T=40, s=3, features="definition1",
                                               sigma_t=0.1, beta_max=1.0, seed=5, key=("phase-test",), index=i),
                          cfg, factors=False)
        for i, size in enumerate(chunk_sizes(7, 4))])
    np.testing.assert_array_equal(run.chosen, tr.chosen)
    np.testing.assert_array_equal(run.freeze_round, tr.freeze_round)
    np.testing.assert_array_equal(run.theta, tr.gate(tr.T + 1))
    np.testing.assert_array_equal(run.w, tr.w)
    np.testing.assert_array_equal(run.rounds["h"], tr.h)
    # the engine records eq. (11) sets after each round's update, i.e. of Theta_{t+1}
    np.testing.assert_array_equal(run.rounds["sets"], pt.expert_sets(tr.theta[:, 1:], pool.V))
    assert not termination or (tr.freeze_round > 0).any()  # the termination case actually freezes


def test_step_is_the_routed_experts_move():
    pool = _pool()
    cfg = MoEConfig(M=3, eta=0.4, alpha=0.4, lam=0.05, Gamma=0.05, termination=False)
    draws = draw_moe(generator_for(1, "steps"), pool, R=3, T=9, s=3, M=3)
    tr = pt.run_gate_trace(pool, draws, cfg, factors=False)
    before = np.zeros((3, 3, pool.d))
    for t in range(1, 10):
        after = run_moe_batched(pool, type(draws)(draws.tasks[:, :t], draws.X[:, :t], draws.noise[:, :t]), cfg).w
        moved = ((after - before) ** 2).sum(axis=2)  # (R, M): only the routed expert moves
        for r in range(3):
            m = tr.chosen[r, t - 1]
            np.testing.assert_allclose(moved[r, m], tr.delta[r, t - 1], rtol=1e-10, atol=1e-14)
            assert np.all(np.delete(moved[r], m) == 0)
        before = after


def test_first_round_gradient_gap_by_hand():
    # Round 1: Theta = 0, so pi = 1/M; the routed expert starts at 0 and, with v_n proportional to w_n in X, lands
    # exactly on w_n (Delta = ||w_n||^2); f_1 = 1, c_1 = 1.  grad_k = pi_mt (Delta + alpha M) (1{k = m_t} - pi_k) xbar,
    # so ||grad_m - grad_mt||_inf = (Delta + alpha M) / M * ||xbar||_inf for every m != m_t.
    pool, M, alpha = _pool(), 4, 0.3
    cfg = MoEConfig(M=M, eta=0.3, alpha=alpha, lam=0.05, Gamma=0.05, termination=False)
    draws = draw_moe(generator_for(2, "grad"), pool, R=5, T=2, s=3, M=M)
    tr = pt.run_gate_trace(pool, draws, cfg, factors=False)
    delta = (pool.W[draws.tasks[:, 0]] ** 2).sum(axis=1)
    np.testing.assert_allclose(tr.delta[:, 0], delta, rtol=1e-9)
    xbar = np.abs(draws.X[:, 0].sum(axis=-1)).max(axis=1)
    np.testing.assert_allclose(tr.grad_gap[:, 0], (delta + alpha * M) / M * xbar, rtol=1e-9)


def _manual_trace(theta, tasks, chosen, freeze, T1, step=None):
    """A trace with a prescribed gate history theta (R, T+1, M, d)."""
    R, K, M, d = theta.shape
    T = K - 1
    return pt.GateTrace(tasks=np.asarray(tasks), chosen=np.asarray(chosen), theta=theta,
                        delta=np.zeros((R, T)) if step is None else step, grad_gap=np.zeros((R, T)),
                        h=np.zeros((R, T, M)), applied=np.ones((R, T), dtype=bool), freeze_round=np.asarray(freeze),
                        w=np.zeros((R, M, d)), eta=0.0, T1=T1)


V2 = np.eye(2)  # two tasks with signals e1, e2: theta_m^T v_n is simply theta_m[n]


def test_orderings_on_a_prescribed_gate():
    # Three experts, two tasks.  Expert 0 and 1 prefer task 0, expert 2 prefers task 1.
    good = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]])
    # Same eq. (11) sets (argmax over tasks per expert), but expert 1's output on v_0 (0.30) falls below that of
    # expert 2 (0.5), which is outside M_0: Lemma 15 fails at that round.  Lemma 13 compares each expert's softmax
    # on its own signal and on the other one; its value for `bad` is worked out by hand below.
    bad = np.array([[1.0, 0.0], [0.30, 0.29], [0.5, 1.0]])
    theta = np.stack([np.stack([good] * 4), np.stack([good, good, bad, good])])  # (R=2, T+1=4, M=3, d=2)
    tr = _manual_trace(theta, tasks=np.zeros((2, 3), int), chosen=np.zeros((2, 3), int), freeze=[0, 0], T1=1)
    margin15 = pt.eq40_margin(tr, V2)  # rounds T1+1..T = 2, 3 -> Theta_2, Theta_3
    # `bad` on v_0: expert 1 (0.30, in M_0) against expert 2 (0.5, outside): margin -0.2
    np.testing.assert_allclose(margin15, [[0.9, 0.9], [0.9, -0.2]])
    holds15, share15 = lemma15_holds(margin15)
    assert holds15.tolist() == [True, False] and share15.tolist() == [1.0, 0.5]
    # Lemma 13 by hand for `bad`: softmax columns; expert 1 has pi(X_0) vs pi(X_1)
    h = bad
    p0, p1 = np.exp(h[:, 0]) / np.exp(h[:, 0]).sum(), np.exp(h[:, 1]) / np.exp(h[:, 1]).sum()
    expected = bool(p0[0] > p1[0] and p0[1] > p1[1] and p1[2] > p0[2])
    margin13 = pt.eq33_margin(tr, V2)  # rounds T1+2..T = 3 -> Theta_3 = bad for replicate 1
    assert margin13.shape == (2, 1)
    holds13, _ = lemma13_holds(margin13)
    assert holds13.tolist() == [True, expected]
    assert pt.sets_stable(tr, V2, 1, 4).tolist() == [True, True]  # argmax over tasks is unchanged by `bad`


def test_gaps_on_a_prescribed_gate():
    theta = np.array([[[2.0, 0.0], [1.0, 0.5], [0.0, 3.0]]])[:, None].repeat(3, axis=1)  # (1, 3, 3, 2), T = 2
    tr = _manual_trace(theta, tasks=[[0, 1]], chosen=[[0, 2]], freeze=[0], T1=1)
    # theta gap across sets at Theta_2: experts 0, 1 in set 0, expert 2 in set 1: max(||(2,-3)||, ||(1,-2.5)||) = 3
    assert pt.theta_gap_between(tr, V2, 2).tolist() == [3.0]
    assert pt.signal_step_max(tr, V2).tolist() == [0.0]  # the gate does not move
    # eq. (35) at Theta_1: mean over experts of pi_m(X_own) - pi_m(X_other)
    P = np.exp(theta[0, 0]) / np.exp(theta[0, 0]).sum(axis=0)
    expected = np.mean([P[0, 0] - P[0, 1], P[1, 0] - P[1, 1], P[2, 1] - P[2, 0]])
    np.testing.assert_allclose(pt.pi_gap_own_signal(tr, V2, 1), [expected])
    # eq. (38) over Theta_1..Theta_{T}: on v_0 the set {0, 1} against expert 2, on v_1 expert 2 against {0, 1}
    worst = max(P[0, 0] - P[2, 0], P[2, 1] - P[0, 1])
    np.testing.assert_allclose(pt.pi_gap_between_max(tr, V2), [worst])


def test_routed_single_task_and_moves():
    tasks = np.array([[0, 1, 0, 1], [0, 1, 0, 1]])
    chosen = np.array([[0, 1, 0, 1], [0, 1, 1, 1]])  # replicate 1 gives expert 1 both tasks after round 1
    step = np.array([[5.0, 1.0, 0.0, 0.0], [5.0, 0.0, 2.0, 0.0]])
    tr = _manual_trace(np.zeros((2, 5, 2, 2)), tasks, chosen, freeze=[0, 0], T1=1, step=step)
    assert pt.routed_single_task(tr, 1, 2).tolist() == [True, False]
    assert pt.moved(tr, 2, 1e-12).any(axis=1).tolist() == [False, True]


def test_frozen_routing_counts_and_chi_square_by_hand():
    # Frozen at round 2 with gate: experts 0, 1 in M_0 (gap 0.5 on v_0), expert 2 in M_1.
    gate = np.array([[1.0, 0.0], [0.5, 0.0], [0.0, 1.0]])
    T = 2 + 30
    tasks = np.zeros((1, T), int)
    chosen = np.zeros((1, T), int)
    tasks[0, 2:] = [0] * 20 + [1] * 10
    chosen[0, 2:] = [0] * 15 + [1] * 4 + [2] + [2] * 9 + [0]  # one task-0 arrival sent to expert 2, one task 1 to 0
    tr = _manual_trace(np.broadcast_to(gate, (1, T + 1, 3, 2)).copy(), tasks, chosen, freeze=[2], T1=1)
    fr = pt.frozen_routing(tr, V2, min_expected=5.0)
    assert fr.any_outside.tolist() == [True]
    np.testing.assert_allclose(fr.outside_share, [2 / 30])
    # task 0 within M_0 = {0, 1}: counts (15, 4), expected 9.5 each; task 1: |M_1| = 1, not tested
    np.testing.assert_allclose(fr.chi2, [(5.5**2 + 5.5**2) / 9.5])
    assert fr.df.tolist() == [1]
    np.testing.assert_allclose(fr.within_gap, [0.5])
    # between: on v_0, {0, 1} vs 2: (|1 - 0| + |0.5 - 0|) / 2; on v_1, {2} vs {0, 1}: 1; mean 0.875
    np.testing.assert_allclose(fr.between_gap, [0.875])
    assert fr.empty_sets.tolist() == [0]


def test_an_exact_fixed_point_reads_as_no_move():
    # One expert, task 1 twice, Definition 1 features with v_n = w_n / sigma0: the first step from 0 lands exactly on
    # w_1 (w_1 lies in the span of X), so the second step is zero up to rounding -- far below the STILL threshold
    # that Proposition 1's entries use -- while a step toward another task is of the order of ||w_n||^2.
    from moecl_verify.packs.moe_cl.experiments.router_phase import STILL
    from moecl_verify.numeric.draws import draw_single_expert
    from moecl_verify.numeric.moe import MoEDraws

    pool = _pool(sigma0=0.05, d=10)
    scale = float(np.mean((pool.W**2).sum(axis=1)))
    for tasks, still in (([1, 1], True), ([1, 2], False)):
        base = draw_single_expert(generator_for(4, "fixed"), pool, R=50, T=2, s=6, features="definition1",
                                  tasks=np.array(tasks))
        draws = MoEDraws(base.tasks, base.X, np.zeros((50, 2, 1)))
        tr = pt.run_gate_trace(pool, draws, MoEConfig(M=1, eta=0.5, alpha=0.5, lam=0.0, Gamma=0.0, termination=False),
                               factors=False)
        assert (~pt.moved(tr, 1, STILL * scale).any(axis=1)).all() == still
