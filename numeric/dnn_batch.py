"""Algorithm 1 with deep experts, every replicate of one configuration advanced together (Figure 3).

The algorithm is :mod:`numeric.dnn_moe`'s, which stays the readable statement of it (one replicate at a
time) and the reference this engine is tested against (tests/unit/numeric/test_dnn_batch.py: the same
draws give the same routing, gate and errors).  Here, each round of R replicates is

1. on the host, for all replicates at once: the round's images and gate inputs, the gate outputs, top-1
   routing with noise (eq. 1) and softmax (eq. 2), with the float64 functions of :mod:`numeric.gate` on
   arrays with a leading replicate axis, the functions the reference and the linear engine use;
2. one compiled call (:func:`routed_round`): the experts' parameters are held stacked (R x M), the routed
   expert of every replicate is gathered, trained by :func:`numeric.dnn.train` vectorised over replicates
   (``jax.vmap``), tested on every task, and scattered back; Delta_t (eq. 6) comes back with the errors;
3. on the host again: loads, the termination marks (Algorithm 1, lines 7-13) and the gate step of eq. 9.

Why the round loop stays on the host: the gate holds M x d^2 numbers per replicate against the experts'
hundreds of SGD steps per round (at 80 epochs the host's share of this engine's time is about 1.4%,
bench/bench_dnn.py), and keeping the gate in float64 numpy makes each routing decision rest on the same
arithmetic as in the reference; a float32 gate inside the compiled loop would move near-tied routing
decisions between the two engines.

Where the speed is: on a GPU, the vectorised training turns R networks' tiny matrix products into one
batched kernel per layer.  On the CPU, XLA runs a batched product as a loop of the single products, so
this engine costs what the reference costs per replicate (0.9-1.1x, bench/bench_dnn.py); the Figure 3 runs
use it where JAX's default device is not the CPU (:func:`preferred`).  The two engines sum the matrix
products in different orders: on few SGD steps they agree to float32 rounding, over a round's hundreds of
steps SGD amplifies the difference (the routing stays the same far longer than the errors do), so per
replicate the results are reproducible on one engine and device, and comparable across them only in
distribution.

With ``fork``, the run without termination continues each replicate from the start of the round in
which its gate froze, as :func:`numeric.dnn_moe.run_replicate` does: the replicates that froze are
advanced together from the earliest such round, each only from its own (the others' slots are computed
and discarded, so that one compiled shape serves every round).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from moecl_verify.numeric import dnn
from moecl_verify.numeric.digit_tasks import TaskSet, gate_inputs
from moecl_verify.numeric.dnn_moe import (DnnMoEConfig, ReplicateDraws, check_draws, draw_replicate,
                                          forgetting_generalization, gate_step, update_flags)
from moecl_verify.numeric.gate import gate_outputs, route, softmax
from moecl_verify.numeric.seeding import generator_for


def preferred() -> bool:
    """Whether the Figure 3 runs should use this engine: where JAX's default backend is an accelerator."""
    return jax.default_backend() != "cpu"


@functools.partial(jax.jit, static_argnames=("batch", "split"))
def routed_round(experts, chosen, active, x, y_onehot, orders, lr, test_x, test_y, *, batch: int, split: int):
    """One round's training of every replicate's routed expert.

    ``experts``: the parameters in :data:`numeric.dnn.PARAM_NAMES` order, each (R, M, ...); ``chosen`` (R,) the
    routed experts; ``active`` (R,) which replicates take the round (the others keep their experts); ``x``
    (R, s, d, d), ``y_onehot`` (R, s, classes), ``orders`` (R, epochs, s) as :func:`numeric.dnn.train`.  With
    ``split`` > 0 the training stops after ``split`` epochs to test the expert (the probe) and goes on.

    Returns the experts after the round, Delta_t (R,), the routed experts' test errors on every task (R, N) and
    the probe's errors (R, N) (None without ``split``)."""
    rows = jnp.arange(chosen.shape[0])
    start = tuple(a[rows, chosen] for a in experts)
    train = jax.vmap(lambda p, xs, ys, o: dnn.train(p, xs, ys, o, lr, batch))
    errors = jax.vmap(lambda p: dnn.test_errors(p, test_x, test_y))
    if split:
        mid = train(start, x, y_onehot, orders[:, :split])
        probed = errors(mid)
        new = train(mid, x, y_onehot, orders[:, split:])
    else:
        new, probed = train(start, x, y_onehot, orders), None
    delta = jax.vmap(dnn.squared_change)(new, start)
    kept = tuple(jnp.where(active.reshape((-1,) + (1,) * (n.ndim - 1)), n, s) for n, s in zip(new, start))
    return tuple(a.at[rows, chosen].set(k) for a, k in zip(experts, kept)), delta, errors(new), probed


@functools.partial(jax.jit)
def _initial_errors(first, test_x, test_y):
    return jax.vmap(lambda p: dnn.test_errors(p, test_x, test_y))(first)


@dataclass
class BatchState:
    """R replicates at the start of a round: stacked experts (R, M, ...), their test errors (R, M, N), the gate
    Theta (R, M, d^2), loads, termination marks, frozen flags and freeze rounds, and the records so far
    (each with a leading replicate axis and a round axis)."""

    experts: tuple
    err: np.ndarray
    theta: np.ndarray
    counts: np.ndarray
    marks: np.ndarray
    frozen: np.ndarray
    freeze_round: np.ndarray
    records: dict


@dataclass(frozen=True, eq=False)
class _Stacked:
    """The draws of R replicates stacked: tasks (R, T), picks (R, T, s), noise (R, T, K), orders (R, T, E, s)."""

    tasks: np.ndarray
    picks: np.ndarray
    noise: np.ndarray
    orders: np.ndarray

    @classmethod
    def of(cls, draws: list[ReplicateDraws]) -> "_Stacked":
        return cls(*(np.stack([getattr(d, name) for d in draws]) for name in ("tasks", "picks", "noise", "orders")))


def _start(tasks: TaskSet, cfg: DnnMoEConfig, draws: list[ReplicateDraws], test_x, test_y) -> BatchState:
    R, M, T, N = len(draws), cfg.M, cfg.T, tasks.N
    first = tuple(jnp.asarray(np.stack([d.init[i] for d in draws])) for i in range(len(draws[0].init)))
    err = np.asarray(_initial_errors(first, test_x, test_y), dtype=np.float64)  # (R, N)
    return BatchState(
        experts=tuple(jnp.repeat(a[:, None], M, axis=1) for a in first),  # every expert from the one initial network
        err=np.repeat(err[:, None], M, axis=1),
        theta=np.zeros((R, M, tasks.d ** 2)), counts=np.zeros((R, M)), marks=np.zeros((R, M), dtype=bool),
        frozen=np.zeros(R, dtype=bool), freeze_round=np.zeros(R, dtype=np.int64),
        records={"chosen": np.zeros((R, T), dtype=np.int64), "h": np.zeros((R, T, M)), "delta": np.zeros((R, T)),
                 "errors": np.zeros((R, T, M, N)), **({"probe_errors": np.zeros((R, T, N))} if cfg.probe_epochs else {})},
    )


def _advance(state: BatchState, first_round: int, termination: bool, tasks: TaskSet, cfg: DnnMoEConfig,
             stacked: _Stacked, test_x, test_y, starts: np.ndarray | None = None, forks: dict | None = None) -> BatchState:
    """Rounds ``first_round``..T-1 (0-based) of Algorithm 1 for every replicate of ``state`` (modified in place and
    returned).  ``starts`` (R,): replicate r takes only the rounds from ``starts[r]`` on (None: all).  ``forks``:
    filled with ``r -> (round, its state at the start of that round)`` for each replicate whose gate froze."""
    R, M, T1, lr = state.err.shape[0], cfg.M, cfg.exploration_rounds, np.float32(cfg.lr)
    for j in range(first_round, cfg.T):
        t = j + 1
        active = np.ones(R, dtype=bool) if starts is None else starts <= j
        rows = np.flatnonzero(active)
        before = None if forks is None else (state.experts, state.err.copy(), state.theta.copy(),
                                             state.counts.copy(), state.marks.copy())
        batches = [tasks.batch(int(stacked.tasks[r, j]), stacked.picks[r, j]) for r in range(R)]
        x_img = np.stack([b[0] for b in batches])
        y_hot = np.stack([b[1] for b in batches])
        # One replicate at a time, as the reference computes it, so that the gate sees the same float64 input.
        x = np.stack([gate_inputs(img, tasks.center) for img in x_img])
        h = gate_outputs(state.theta, x)
        m_t = route(h, cfg.lam * stacked.noise[:, j, :M])
        pi = softmax(h)
        state.experts, delta, errs, probed = routed_round(
            state.experts, jnp.asarray(m_t, dtype=jnp.int32), jnp.asarray(active), jnp.asarray(x_img),
            jnp.asarray(y_hot), jnp.asarray(stacked.orders[:, j]), lr, test_x, test_y, batch=cfg.batch,
            split=cfg.probe_epochs)
        delta = np.asarray(delta, dtype=np.float64)[rows]
        m = m_t[rows]
        state.err[rows, m] = np.asarray(errs, dtype=np.float64)[rows]
        state.counts[rows, m] += 1.0
        marks, frozen, freeze_round = state.marks[rows], state.frozen[rows], state.freeze_round[rows]
        was_frozen = frozen.copy()
        if termination and t > T1:
            update_flags(h[rows], m, cfg.Gamma, marks, frozen, freeze_round, t)
        state.marks[rows], state.frozen[rows], state.freeze_round[rows] = marks, frozen, freeze_round
        state.theta[rows] = gate_step(state.theta[rows], x[rows], pi[rows], m, delta, state.counts[rows], t, cfg,
                                      frozen)
        if forks is not None:
            for r in rows[frozen & ~was_frozen]:
                forks[int(r)] = (j, tuple(a[r] for a in before[0]), *(b[r] for b in before[1:]))
        rec = state.records
        rec["chosen"][rows, j], rec["h"][rows, j], rec["delta"][rows, j] = m, h[rows], delta
        rec["errors"][rows, j] = state.err[rows]
        if cfg.probe_epochs:
            rec["probe_errors"][rows, j] = np.asarray(probed, dtype=np.float64)[rows]
    return state


def _finish(state: BatchState, stacked: _Stacked) -> dict:
    """The records and final state, with E_t, F_t and G_t (eq. 14-16), as :func:`numeric.dnn_moe.run_dnn_moe`."""
    out = {**{k: v for k, v in state.records.items()}, "freeze_round": state.freeze_round.copy(),
           "loads": state.counts.copy(), "theta": state.theta.copy()}
    model_error, forgetting, generalization = forgetting_generalization(out["errors"], out["chosen"], stacked.tasks)
    return {"tasks": stacked.tasks.copy(), **out, "model_error": model_error, "forgetting": forgetting,
            "generalization": generalization}


def _check(cfg: DnnMoEConfig, draws: list[ReplicateDraws], fork: bool) -> None:
    if not draws:
        raise ValueError("no replicates to run")
    for d in draws:
        check_draws(cfg, d, fork)


def run_batch(tasks: TaskSet, shape: dnn.NetShape, cfg: DnnMoEConfig, draws: list[ReplicateDraws],
              fork: bool = False) -> dict | tuple[dict, dict]:
    """Every replicate of ``draws`` together: the arrays of :func:`numeric.dnn_moe.run_dnn_moe`, or with ``fork``
    those of :func:`numeric.dnn_moe.run_dnn_moe_forked` (with termination, without)."""
    _check(cfg, draws, fork)
    test_x, test_y = jnp.asarray(tasks.test_x), jnp.asarray(tasks.test_y)
    stacked = _Stacked.of(draws)
    state = _start(tasks, cfg, draws, test_x, test_y)
    if not fork:
        return _finish(_advance(state, 0, cfg.termination, tasks, cfg, stacked, test_x, test_y), stacked)
    forks: dict = {}
    on = _finish(_advance(state, 0, True, tasks, cfg, stacked, test_x, test_y, forks=forks), stacked)
    off = {k: v.copy() for k, v in on.items()}
    if not forks:
        return on, off
    which = sorted(forks)
    sub = _Stacked(*(a[which] for a in (stacked.tasks, stacked.picks, stacked.noise, stacked.orders)))
    starts = np.array([forks[r][0] for r in which])
    rest = BatchState(
        experts=tuple(jnp.stack([forks[r][1][i] for r in which]) for i in range(len(forks[which[0]][1]))),
        err=np.stack([forks[r][2] for r in which]), theta=np.stack([forks[r][3] for r in which]),
        counts=np.stack([forks[r][4] for r in which]), marks=np.stack([forks[r][5] for r in which]),
        frozen=np.zeros(len(which), dtype=bool), freeze_round=np.zeros(len(which), dtype=np.int64),
        # The rounds before each fork are the run with termination's; later ones are overwritten.
        records={k: v[which].copy() for k, v in state.records.items()},
    )
    continued = _finish(_advance(rest, int(starts.min()), False, tasks, cfg, sub, test_x, test_y, starts=starts), sub)
    for name, values in continued.items():
        off[name][which] = values
    return on, off


def dnn_batch_chunk(*, tasks: TaskSet, shape: dnn.NetShape, cfg: DnnMoEConfig, seed: int, key: tuple,
                    replicates: tuple, noise_experts: int, fork: bool, libraries: dict,
                    keep: tuple = ("forgetting", "generalization", "freeze_round", "chosen", "tasks")) -> dict:
    """:func:`numeric.dnn_moe.dnn_moe_chunk` computed by :func:`run_batch`: the same draws (each replicate from
    ``generator_for(seed, *key, "replicate", r)``), the same arrays.  ``libraries`` (the versions and the device
    :func:`numeric.dnn.library_versions` reports) keys the results cache by the device as well."""
    if libraries != dnn.library_versions():
        raise ValueError(f"chunk keyed for {libraries}, running under {dnn.library_versions()}")
    draws = [draw_replicate(generator_for(seed, *key, "replicate", int(r)), tasks, shape, cfg.T, cfg.s, noise_experts,
                            cfg.epochs) for r in replicates]
    if not fork:
        result = run_batch(tasks, shape, cfg, draws)
        return {name: result[name] for name in keep}
    on, off = run_batch(tasks, shape, cfg, draws, fork=True)
    return {**{name: on[name] for name in keep}, **{f"off.{name}": off[name] for name in keep}}
