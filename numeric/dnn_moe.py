"""Algorithm 1 with deep experts (Figure 3, Section 6 and Appendix A.3).

Each round t = 1..T of a replicate:

1. A task n_t drawn uniformly from N; s training images drawn without replacement from its pool.
2. The gate's input x_t: the s images averaged, flattened, unit norm
   (:func:`numeric.digit_tasks.gate_inputs`).  Gate outputs ``h_m = theta_m^T x_t``, top-1 routing
   with noise Uniform[0, lambda] (eq. 1, :func:`numeric.gate.route`), softmax pi (eq. 2).
3. The routed expert, a five-layer network (:mod:`numeric.dnn`), is trained on the round's images by
   ``epochs`` passes of minibatch SGD; the other experts keep their parameters.  Delta_t (eq. 6) is the squared
   change of the routed expert's parameters.
4. Unless frozen, the gate takes the step of eq. 9 on L_loc + L_aux (eq. 6-7), the gradient of the
   linear engine (:func:`numeric.gate.task_loss_gradient`), since the gate is the same linear gate
   whatever the experts are; early termination (Algorithm 1, lines 7-13) for t > T1 = ceil(M / eta)
   with sticky marks tested before the round's gate update, as the linear engine's defaults.
5. Errors (Appendix A.3): E_tau(w) is the mean-squared test error of network w on task n_tau's
   test set, in place of eq. 14; forgetting F_t and overall generalization error G_t follow eq. 15-16
   (:func:`forgetting_generalization`) from the test errors of every expert on every task after each
   round.

Draws are made per replicate from ``generator_for(seed, *key, "replicate", r)`` in a fixed order (tasks,
training picks, routing noise for ``noise_experts`` experts, initial parameters, epoch orders), so runs with different
M (up to ``noise_experts``) and with or without termination share them: comparisons between them are
paired, and results do not depend on how replicates are grouped into chunks.  All experts start from the
replicate's one initial network (the analogue of w_0^(m) = 0 for every m) and the gate from Theta_0 = 0.

Replicates run one after the other.  This is the reference; :mod:`numeric.dnn_batch` advances every
replicate of a chunk together (the same draws, the same algorithm), which pays on an accelerator: on the
CPU, XLA runs the batched matrix products of a vectorised batch as loops of the single ones, so one
replicate after another costs the same.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import jax.numpy as jnp
import numpy as np

from moecl_verify.numeric import dnn
from moecl_verify.numeric.digit_tasks import TaskSet, gate_inputs
from moecl_verify.numeric.gate import gate_outputs, route, softmax, task_loss_gradient
from moecl_verify.numeric.seeding import generator_for


@dataclass(frozen=True)
class DnnMoEConfig:
    """Algorithm 1's parameters (as :class:`numeric.moe.MoEConfig`) and the experts' training: ``epochs``
    passes of stochastic gradient descent with step ``lr`` and minibatches of ``batch`` over the round's ``s``
    images, for ``T`` rounds.  ``probe_epochs`` > 0 also records, each round, the routed expert's test errors
    after its first ``probe_epochs`` epochs (``probe_errors``), for the epochs check."""

    M: int
    eta: float
    alpha: float
    lam: float
    Gamma: float
    termination: bool
    T: int
    s: int
    epochs: int
    lr: float
    batch: int
    probe_epochs: int = 0

    def __post_init__(self) -> None:
        for name in ("M", "T", "s", "epochs", "batch"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        for name, strict in (("eta", True), ("alpha", False), ("lam", False), ("Gamma", False), ("lr", True)):
            value = float(getattr(self, name))
            if not math.isfinite(value) or value < 0 or (strict and value == 0):
                raise ValueError(f"{name} must be finite and {'>' if strict else '>='} 0, got {value!r}")
        if self.s % self.batch:
            raise ValueError(f"batch = {self.batch} must divide s = {self.s}")
        if isinstance(self.probe_epochs, bool) or not isinstance(self.probe_epochs, numbers.Integral) \
                or not 0 <= self.probe_epochs < self.epochs:
            raise ValueError(f"probe_epochs must be an integer in [0, epochs = {self.epochs}), got {self.probe_epochs!r}")

    @property
    def exploration_rounds(self) -> int:
        """T1 = ceil(M / eta) (Proposition 1)."""
        return int(math.ceil(self.M / self.eta - 1e-12))


@dataclass(frozen=True, eq=False)
class ReplicateDraws:
    """One replicate's randomness: tasks (T,), training picks (T, s) into the task's pool, routing noise
    (T, noise_experts) in [0, 1), the initial network's parameters, and the order of the samples in every
    epoch of every round (T, epochs, s)."""

    tasks: np.ndarray
    picks: np.ndarray
    noise: np.ndarray
    init: tuple
    orders: np.ndarray


def draw_replicate(rng: np.random.Generator, tasks: TaskSet, shape: dnn.NetShape, T: int, s: int,
                   noise_experts: int, epochs: int) -> ReplicateDraws:
    """Draw one replicate's tasks, picks, noise, initial network and epoch orders, in that order: runs that
    differ only in the number of epochs share everything, and the orders of the epochs they have in common
    (orders are drawn epoch by epoch, each epoch for every round)."""
    sizes = tasks.pool_sizes()
    if s > min(sizes):
        raise ValueError(f"s = {s} exceeds the smallest task pool ({min(sizes)} images)")
    task_seq = rng.integers(tasks.N, size=T)
    picks = np.stack([rng.choice(sizes[n], size=s, replace=False) for n in task_seq])
    noise = rng.random((T, noise_experts))
    init = dnn.init_params(rng, shape)
    # Epoch-major, so that a run with more epochs replays the first epochs' orders of a run with fewer: the epochs
    # check then compares the same training extended, not a reshuffled one.
    orders = rng.permuted(np.broadcast_to(np.arange(s, dtype=np.int32), (epochs, T, s)), axis=-1)
    return ReplicateDraws(task_seq, picks, noise, init, np.ascontiguousarray(orders.transpose(1, 0, 2)))


def update_flags(h: np.ndarray, chosen: np.ndarray, Gamma: float, marks: np.ndarray, frozen: np.ndarray,
                 freeze_round: np.ndarray, t: int) -> None:
    """Algorithm 1, lines 7-13, in place: mark every expert within Gamma of the routed one (marks persist);
    freeze the gate of a replicate once all its experts are marked."""
    rows = np.arange(h.shape[0])
    close = np.abs(h - h[rows, chosen][:, None]) <= Gamma
    live = ~frozen
    marks[live] |= close[live]
    newly = live & marks.all(axis=1)
    frozen |= newly
    freeze_round[newly] = t


def gate_step(theta: np.ndarray, x: np.ndarray, pi: np.ndarray, chosen: np.ndarray, delta: np.ndarray,
              counts: np.ndarray, t: int, cfg: DnnMoEConfig, frozen: np.ndarray) -> np.ndarray:
    """theta_{t+1} = theta_t - eta grad L_task (eq. 9) where the gate is live; ``counts`` include round t."""
    rows = np.arange(theta.shape[0])
    grad = task_loss_gradient(pi, chosen, delta, counts[rows, chosen] / t, t, cfg.alpha, x)
    return theta - cfg.eta * np.where(frozen[:, None, None], 0.0, grad)


def forgetting_generalization(errors: np.ndarray, chosen: np.ndarray, tasks: np.ndarray):
    """Model error E_t(w_t^(m_t)), forgetting F_t (eq. 15; NaN at t = 1) and generalization error G_t
    (eq. 16 at T = t), each (R, T), from ``errors`` (R, T, M, N): expert m's test error on task n after
    round t.  Uses the cumulative counts of (expert, task) pairs: sum_{tau < t} E_tau(w_t^(m_tau)) =
    sum_{m, n} count_{t-1}(m, n) errors[t, m, n]."""
    R, T, M, N = errors.shape
    rows = np.arange(R)[:, None]
    steps = np.arange(T)[None, :]
    pairs = np.zeros((R, T, M, N))
    pairs[rows, steps, chosen, tasks] = 1.0
    before = np.cumsum(pairs, axis=1) - pairs  # rounds tau < t
    past = np.einsum("rtmn,rtmn->rt", before, errors)
    model_error = errors[rows, steps, chosen, tasks]
    own_before = np.cumsum(model_error, axis=1) - model_error
    t = np.arange(1, T + 1, dtype=float)[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        forgetting = np.where(t > 1, (past - own_before) / (t - 1), np.nan)
    generalization = (past + model_error) / t
    return model_error, forgetting, generalization


@dataclass
class _State:
    """One replicate's state at the start of a round: its experts, their test errors (1, M, N), the gate and
    termination marks (arrays with one leading replicate axis), and the records of the rounds so far."""

    experts: list
    err: np.ndarray
    theta: np.ndarray
    counts: np.ndarray
    marks: np.ndarray
    frozen: np.ndarray
    freeze_round: np.ndarray
    records: dict

    def copy(self) -> "_State":
        # Expert parameters are immutable jax arrays: copying the list shares them safely.
        return _State(list(self.experts), *(a.copy() for a in (self.err, self.theta, self.counts, self.marks,
                                                                 self.frozen, self.freeze_round)),
                      {k: v.copy() for k, v in self.records.items()})


def _start(tasks: TaskSet, cfg: DnnMoEConfig, draws: ReplicateDraws, test_x, test_y) -> _State:
    M, T, N = cfg.M, cfg.T, tasks.N
    first = tuple(jnp.asarray(a) for a in draws.init)
    err = np.asarray(dnn.test_errors(first, test_x, test_y), dtype=np.float64)
    return _State(
        experts=[first] * M,  # every expert starts from the replicate's one initial network
        err=np.repeat(err[None, None], M, axis=1),
        theta=np.zeros((1, M, tasks.d ** 2)), counts=np.zeros((1, M)), marks=np.zeros((1, M), dtype=bool),
        frozen=np.zeros(1, dtype=bool), freeze_round=np.zeros(1, dtype=np.int64),
        records={"chosen": np.zeros(T, dtype=np.int64), "h": np.zeros((T, M)), "delta": np.zeros(T),
                 "errors": np.zeros((T, M, N)), **({"probe_errors": np.zeros((T, N))} if cfg.probe_epochs else {})},
    )


def _advance(state: _State, first_round: int, termination: bool, tasks: TaskSet, cfg: DnnMoEConfig,
             draws: ReplicateDraws, test_x, test_y, on_round_start=None) -> _State:
    """Rounds ``first_round``..T-1 (0-based) of Algorithm 1 from ``state`` (modified in place and returned).
    ``on_round_start(j, state)`` is called before each round (the fork of :func:`run_replicate` uses it)."""
    M, T1, lr = cfg.M, cfg.exploration_rounds, np.float32(cfg.lr)
    for j in range(first_round, cfg.T):
        if on_round_start is not None:
            on_round_start(j, state)
        t = j + 1
        x_img, y_hot = tasks.batch(int(draws.tasks[j]), draws.picks[j])
        x = gate_inputs(x_img, tasks.center)[None]
        h = gate_outputs(state.theta, x)
        m_t = route(h, cfg.lam * draws.noise[None, j, :M])
        m = int(m_t[0])
        pi = softmax(h)
        if cfg.probe_epochs:
            # The round's training cut in two at the probe: the same steps, and (when the probe is half the
            # epochs) the same compiled function for both halves as for a run with probe_epochs epochs.
            start, split = state.experts[m], cfg.probe_epochs
            mid, _, probed = dnn.expert_round(start, x_img, y_hot, draws.orders[j][:split], lr, test_x, test_y,
                                              batch=cfg.batch)
            state.experts[m], _, errs = dnn.expert_round(mid, x_img, y_hot, draws.orders[j][split:], lr, test_x,
                                                         test_y, batch=cfg.batch)
            delta = dnn.squared_change_jit(state.experts[m], start)
            state.records["probe_errors"][j] = np.asarray(probed, dtype=np.float64)
        else:
            state.experts[m], delta, errs = dnn.expert_round(state.experts[m], x_img, y_hot, draws.orders[j], lr,
                                                             test_x, test_y, batch=cfg.batch)
        delta = np.array([float(delta)])
        state.err[0, m] = np.asarray(errs, dtype=np.float64)
        state.counts[0, m] += 1.0
        if termination and t > T1:
            update_flags(h, m_t, cfg.Gamma, state.marks, state.frozen, state.freeze_round, t)
        state.theta = gate_step(state.theta, x, pi, m_t, delta, state.counts, t, cfg, state.frozen)
        rec = state.records
        rec["chosen"][j], rec["h"][j], rec["delta"][j], rec["errors"][j] = m, h[0], delta[0], state.err[0]
    return state


def _finish(state: _State) -> dict:
    return {**state.records, "freeze_round": state.freeze_round[0], "loads": state.counts[0], "theta": state.theta[0]}


def check_draws(cfg: DnnMoEConfig, draws: ReplicateDraws, fork: bool = False) -> None:
    """Refuse, with the reason, draws that do not fit ``cfg`` (noise for fewer than M experts, epoch orders of
    other rounds or epochs) and a fork of a run without termination (shared by both engines)."""
    if draws.noise.shape[1] < cfg.M:
        raise ValueError(f"draws carry routing noise for {draws.noise.shape[1]} experts, fewer than M = {cfg.M}")
    if draws.orders.shape[:2] != (cfg.T, cfg.epochs):
        raise ValueError(f"draws carry epoch orders for {draws.orders.shape[:2]} (rounds, epochs), "
                         f"need {(cfg.T, cfg.epochs)}")
    if fork and not cfg.termination:
        raise ValueError("fork continues a run with termination into one without: it needs cfg.termination")


def run_replicate(tasks: TaskSet, shape: dnn.NetShape, cfg: DnnMoEConfig, draws: ReplicateDraws,
                  fork: bool = False) -> dict | tuple[dict, dict]:
    """Algorithm 1 with network experts, one replicate.  Returns ``chosen`` (T,), gate outputs ``h`` (T, M),
    ``delta`` (T,), ``errors`` (T, M, N) (every expert's test error on every task after each round),
    ``freeze_round`` (0 = never), ``loads`` (M,), the final gate ``theta`` (M, d^2) and, with
    ``cfg.probe_epochs``, ``probe_errors`` (T, N) (the routed expert's test errors after its first probe_epochs
    epochs of the round).  The gate arithmetic runs on arrays with one leading replicate axis, the shapes
    :mod:`numeric.gate` works on.

    With ``fork`` (and ``cfg.termination``), returns (with termination, without termination): the run
    without termination is identical up to the round in which the gate froze, so it continues from the
    state at the start of that round instead of being recomputed from round 1 (if the gate never froze,
    the two runs are the same run)."""
    check_draws(cfg, draws, fork)
    test_x, test_y = jnp.asarray(tasks.test_x), jnp.asarray(tasks.test_y)
    state = _start(tasks, cfg, draws, test_x, test_y)
    if not fork:
        return _finish(_advance(state, 0, cfg.termination, tasks, cfg, draws, test_x, test_y))
    latest = {}

    def remember(j, s):
        if not s.frozen[0]:
            latest["round"], latest["state"] = j, s.copy()  # the state before a round that may freeze the gate

    with_termination = _finish(_advance(state, 0, True, tasks, cfg, draws, test_x, test_y, remember))
    if not with_termination["freeze_round"]:
        return with_termination, {k: v.copy() for k, v in with_termination.items()}
    fork_state = latest["state"]
    return with_termination, _finish(_advance(fork_state, latest["round"], False, tasks, cfg, draws, test_x, test_y))


def _stack(runs: list[dict], draws: list[ReplicateDraws]) -> dict:
    out = {name: np.stack([r[name] for r in runs]) for name in runs[0]}
    task_seq = np.stack([d.tasks for d in draws])
    model_error, forgetting, generalization = forgetting_generalization(out["errors"], out["chosen"], task_seq)
    return {"tasks": task_seq, **out, "model_error": model_error, "forgetting": forgetting,
            "generalization": generalization}


def run_dnn_moe(tasks: TaskSet, shape: dnn.NetShape, cfg: DnnMoEConfig, draws: list[ReplicateDraws]) -> dict:
    """:func:`run_replicate` for each of ``draws``, stacked: ``tasks``, ``chosen`` (R, T); ``h`` (R, T, M);
    ``delta`` (R, T); ``errors`` (R, T, M, N); ``model_error``, ``forgetting``, ``generalization`` (R, T, from
    eq. 14-16 with test errors); ``freeze_round`` (R,); ``loads`` (R, M); ``theta`` (R, M, d^2)."""
    return _stack([run_replicate(tasks, shape, cfg, d) for d in draws], draws)


def run_dnn_moe_forked(tasks: TaskSet, shape: dnn.NetShape, cfg: DnnMoEConfig,
                       draws: list[ReplicateDraws]) -> tuple[dict, dict]:
    """As :func:`run_dnn_moe`, with termination and without it (``cfg.termination`` must be True), sharing
    the rounds before the freeze (:func:`run_replicate` with ``fork``)."""
    pairs = [run_replicate(tasks, shape, cfg, d, fork=True) for d in draws]
    return _stack([p[0] for p in pairs], draws), _stack([p[1] for p in pairs], draws)


def dnn_moe_chunk(*, tasks: TaskSet, shape: dnn.NetShape, cfg: DnnMoEConfig, seed: int, key: tuple,
                  replicates: tuple, noise_experts: int, fork: bool, libraries: dict,
                  keep: tuple = ("forgetting", "generalization", "freeze_round", "chosen", "tasks")) -> dict:
    """Replicates ``replicates`` (their indices) of one configuration, each drawn from
    ``generator_for(seed, *key, "replicate", r)``; returns the ``keep`` arrays, and with ``fork`` (see
    :func:`run_dnn_moe_forked`) also those of the run without termination, prefixed ``off.``.

    ``libraries`` (the versions :func:`numeric.dnn.library_versions` reports) is not used: it is an argument
    so that the results cache never serves results computed with another version of JAX."""
    if libraries != dnn.library_versions():
        raise ValueError(f"chunk keyed for {libraries}, running under {dnn.library_versions()}")
    draws = [draw_replicate(generator_for(seed, *key, "replicate", int(r)), tasks, shape, cfg.T, cfg.s, noise_experts,
                            cfg.epochs) for r in replicates]
    if not fork:
        result = run_dnn_moe(tasks, shape, cfg, draws)
        return {name: result[name] for name in keep}
    on, off = run_dnn_moe_forked(tasks, shape, cfg, draws)
    return {**{name: on[name] for name in keep}, **{f"off.{name}": off[name] for name in keep}}
