"""Mixture of experts in continual learning: Algorithm 1 of the paper, batched.

Each round t = 1..T (Section 3.3, Algorithm 1):

1. Definition 1 data ``(X_t, y_t)`` for a uniformly drawn task ``n_t``.
2. Gate outputs ``h_m = theta_m^T sum_i X_{t,i}``; top-1 routing
   ``m_t = argmax_m (h_m + r_t^(m))``, ``r ~ Uniform[0, lambda]`` (eq. 1);
   softmax ``pi = softmax(h)`` (eq. 2).
3. The routed expert takes the minimum-norm step of eq. 5; the others keep
   their models.
4. Unless the gate is frozen, every ``theta_m`` takes a gradient step on
   ``L_task = L_tr + L_loc + L_aux`` (eq. 3, 6-9) with the gradient derived in
   :mod:`theory.gate`; ``f_t`` and ``P_t`` are cumulative since t = 1 and
   include round t, as eq. 7 defines them.
5. Early termination (Algorithm 1, lines 7-13): for t > T1 = ceil(M / eta),
   expert m is marked converged when ``|h_m - h_{m_t}| <= Gamma`` on the
   round's data; once every expert is marked, the gate is frozen for good.

Variants outside the paper (options of :class:`MoEConfig`, defaults = the
paper): top-k routing (``top_k``), other load balancing (``balance``: none,
or a loss-free routing bias), and, in the draws, a :class:`TaskSchedule` of
unequal or drifting task frequencies (``draw_moe(..., task_probs=...)``).

Randomness is drawn separately (:class:`MoEDraws`: tasks, features, and
routing noise as Uniform[0, 1) scaled by lambda in the dynamics), so the
batched engine :func:`run_moe_batched` and the per-replicate reference
:func:`run_moe_reference` give the same trajectories from the same draws.

Ambiguities of the paper are options of :class:`MoEConfig` (documented
there); their defaults are listed in the report's interpretations.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from moecl_verify.numeric import kernels
from moecl_verify.numeric.chunks import Chunk, ChunkRunner, chunk_sizes, default_runner
from moecl_verify.numeric.draws import MoEDraws, ReplicateRounds, TaskSchedule, draw_single_expert
from moecl_verify.numeric.expert import min_norm_update
from moecl_verify.numeric.gate import (AUX_FACTORS, gate_outputs, route, softmax, softmax_chain_gradient,
                                       task_loss_gradient)
from moecl_verify.numeric.kept import Keep, KeptRun, reduce_arrays
from moecl_verify.numeric.pool import TaskPool
from moecl_verify.numeric.single_expert import blocks_of, round_major_blocks
from moecl_verify.numeric.streams import DrawStream

FLAG_TIMINGS = ("before_update", "after_update")
# "sets_after_T1": the learned gate through exploration, then each task routed inside its eq. (11) expert set
# of the gate at T1 (a counterfactual: the routing Proposition 3 says Algorithm 1 makes, forced).
SETS_AFTER_T1 = "sets_after_T1"
ROUTERS = ("learned", "oracle", SETS_AFTER_T1)
# Expert steps: eq. (5) as the paper defines it, or a counterfactual in which Lemma 3 is imposed: an expert routed
# the task it was last trained on does not move (the ablation of Lemma 3's false statement).
EQ5 = "eq5"
STILL_ON_REPEAT = "still_on_repeat"
EXPERT_STEPS = (EQ5, STILL_ON_REPEAT)
BALANCES = ("aux", "none", "bias")


def _finite(name: str, value: float, low: float, strict: bool) -> float:
    value = float(value)
    ok = math.isfinite(value) and (value > low if strict else value >= low)
    if not ok:
        raise ValueError(f"{name} must be finite and {'>' if strict else '>='} {low}, got {value!r}")
    return value


@dataclass(frozen=True)
class MoEConfig:
    """Parameters and interpretation options of Algorithm 1.

    ``M`` experts; learning rate ``eta``; auxiliary-loss weight ``alpha``;
    routing-noise level ``lam`` (lambda); termination threshold ``Gamma``.

    Options (paper silent or ambiguous):

    * ``termination``: apply Algorithm 1's early termination (default) or
      keep training the gate forever (Figure 2(b), (d)).
    * ``T1``: exploration length, default ``ceil(M / eta)``.
    * ``sticky_marks``: a converged mark, once set, stays set (default); with
      False every expert must be within Gamma of the routed one in the same
      round, which with M > N sets of experts can essentially never happen.
    * ``flag_timing``: flags are tested on the gate that routed the round,
      before its update (default), or after the round's gate update.
    * ``aux_factor``: ``"1/t"`` as derived from eq. 7 (default) or ``"t"`` as
      printed in the proof of Lemma 4.
    * ``router``: ``"learned"`` (the gate) or ``"oracle"``: each task goes to
      a uniformly chosen expert of ``oracle_sets[n]``, a reference point; or
      ``"sets_after_T1"``, a counterfactual with the same draws: the learned
      gate routes rounds t <= T1, then each task n goes to a uniformly chosen
      expert (the one of largest routing noise) of its eq. (11) set of the gate
      after round T1, M_n = {m : n = argmax_j theta^(m)^T v_j} (Proposition 3's
      routing, forced); where a task's set is empty, the best-aligned expert
      of a set with two or more moves to it (the sets stay a partition;
      M >= N).  The gate keeps training and terminating as in Algorithm
      1; only the choice of expert after T1 is forced.  Numpy engine only.
    * ``expert_step``: ``"eq5"`` (default): the routed expert takes eq. (5)'s
      minimum-norm step; or ``"still_on_repeat"``, a counterfactual with the
      same draws: Lemma 3 imposed, an expert routed the same task as the last
      one it was trained on keeps its model (no step, Delta_t = 0 in the
      gate's gradient), every other routed expert steps by eq. (5).  Top-1,
      numpy engine only.
    * ``record_rounds``: keep per-round gate outputs, loads and expert sets
      (memory R * T * M); off by default so long runs stay bounded.

    Variants the paper does not study (interpretations; the defaults are the
    paper's Algorithm 1 and reproduce its numbers bit for bit):

    * ``balance``: how the load is balanced.  ``"aux"`` (default): the
      auxiliary loss of eq. 7 enters the gate gradient.  ``"none"``: the gate
      trains on the locality loss alone (the auxiliary term of dL/dpi is
      dropped whatever ``alpha`` is).  ``"bias"``: loss-free balancing
      (Wang et al. 2024, "Auxiliary-Loss-Free Load Balancing Strategy for
      Mixture-of-Experts"): a per-expert bias b, starting at 0, is added to
      the routing scores for the choice only, ``argmax_m (h_m + b_m +
      lambda r_m)``, never to the softmax pi the losses and the combination
      weights use; the gradient has no auxiliary term; after each round's
      routing ``b_m <- b_m + bias_rate * sign(1/M - load_m)`` (sign(0) = 0),
      where load_m is expert m's share of the routing so far including round
      t, ``counts_m / (k t)``, or over the last ``bias_window`` rounds,
      ``counts_m / (k min(t, W))``.  Reading chosen: termination freezes the
      whole router, so the bias stops updating in the round the gate freezes
      (it is updated exactly when the gate update is applied).
    * ``top_k``: the paper routes top-1 and calls top-k out of scope.  With
      k > 1 the k experts of largest ``h_m + b_m + lambda r_m`` form the set
      S_t (ties toward the smaller index, as np.argmax); each takes the eq. 5
      minimum-norm step on (X_t, y_t).  Reading chosen (the generic MoE
      combination): round tau's task is served by ``sum_{m in S_tau} g_m
      w^(m)`` with the renormalized top-k softmax weights ``g_m = pi_m /
      sum_{j in S_tau} pi_j`` of round tau (set and weights fixed at tau, the
      experts' current models), and E_t, F_t, G_t (eq. 14-16) use that
      combined model in place of w^(m_tau); top-1 gives g = 1, today's
      numbers.  The gate gradient generalizes the top-1 one through the
      softmax Jacobian with ``dL/dpi_j = Delta_j + alpha M f_j c(t)`` for j
      in S_t (Delta_j = ||w_t^(j) - w_{t-1}^(j)||^2, f_j = counts_j / (k t)),
      0 otherwise (no alpha term unless ``balance="aux"``).  Termination
      compares with m_t, the top-1 member of S_t; ``MoERun.chosen`` is m_t.
    * ``bias_rate`` (u >= 0) and ``bias_window`` (W >= 1 or None: since
      round 1) apply to ``balance="bias"`` only.
    """

    M: int
    eta: float
    alpha: float
    lam: float
    Gamma: float
    termination: bool = True
    T1: int | None = None
    sticky_marks: bool = True
    flag_timing: str = "before_update"
    aux_factor: str = "1/t"
    router: str = "learned"
    oracle_sets: tuple[tuple[int, ...], ...] | None = None
    record_rounds: bool = False
    balance: str = "aux"
    bias_rate: float = 0.0
    bias_window: int | None = None
    top_k: int = 1
    expert_step: str = EQ5

    def __post_init__(self) -> None:
        if isinstance(self.M, bool) or not isinstance(self.M, numbers.Integral) or self.M < 1:
            raise ValueError(f"M must be an integer >= 1, got {self.M!r}")
        object.__setattr__(self, "eta", _finite("eta", self.eta, 0.0, strict=True))
        object.__setattr__(self, "alpha", _finite("alpha", self.alpha, 0.0, strict=False))
        object.__setattr__(self, "lam", _finite("lambda", self.lam, 0.0, strict=False))
        object.__setattr__(self, "Gamma", _finite("Gamma", self.Gamma, 0.0, strict=False))
        if self.T1 is not None and (isinstance(self.T1, bool) or not isinstance(self.T1, numbers.Integral) or self.T1 < 0):
            raise ValueError(f"T1 must be an integer >= 0, got {self.T1!r}")
        if self.flag_timing not in FLAG_TIMINGS:
            raise ValueError(f"flag_timing must be one of {FLAG_TIMINGS}, got {self.flag_timing!r}")
        if self.aux_factor not in AUX_FACTORS:
            raise ValueError(f"aux_factor must be one of {AUX_FACTORS}, got {self.aux_factor!r}")
        if self.router not in ROUTERS:
            raise ValueError(f"router must be one of {ROUTERS}, got {self.router!r}")
        if self.router == "oracle":
            if not self.oracle_sets:
                raise ValueError("router='oracle' needs oracle_sets (one tuple of experts per task)")
            for n, experts in enumerate(self.oracle_sets):
                if not experts or any(not 0 <= e < self.M for e in experts):
                    raise ValueError(f"oracle_sets[{n}] must be a non-empty set of experts in [0, {self.M})")
        if self.balance not in BALANCES:
            raise ValueError(f"balance must be one of {BALANCES}, got {self.balance!r}")
        object.__setattr__(self, "bias_rate", _finite("bias_rate", self.bias_rate, 0.0, strict=False))
        window = self.bias_window
        if window is not None and (isinstance(window, bool) or not isinstance(window, numbers.Integral) or window < 1):
            raise ValueError(f"bias_window must be an integer >= 1 or None, got {self.bias_window!r}")
        if self.balance != "bias" and (self.bias_rate != 0 or self.bias_window is not None):
            raise ValueError(f"bias_rate and bias_window apply to balance='bias' only, got balance={self.balance!r}")
        top_k = self.top_k
        if isinstance(top_k, bool) or not isinstance(top_k, numbers.Integral) or not 1 <= top_k <= self.M:
            raise ValueError(f"top_k must be an integer in [1, M = {self.M}], got {self.top_k!r}")
        if self.expert_step not in EXPERT_STEPS:
            raise ValueError(f"expert_step must be one of {EXPERT_STEPS}, got {self.expert_step!r}")
        if self.expert_step != EQ5 and self.top_k != 1:
            raise ValueError(f"expert_step={self.expert_step!r} is defined for top-1 routing, got top_k={self.top_k}")
        if self.router != "learned" and (self.top_k != 1 or self.balance == "bias"):
            raise ValueError(f"router={self.router!r} routes each task to one expert: it needs top_k=1 and balance other "
                             f"than 'bias', got top_k={self.top_k}, balance={self.balance!r}")

    @property
    def exploration_rounds(self) -> int:
        """T1 = ceil(M / eta) (Proposition 1) unless given."""
        return int(self.T1) if self.T1 is not None else int(math.ceil(self.M / self.eta - 1e-12))


def draw_moe(
    rng: np.random.Generator,
    pool: TaskPool,
    *,
    R: int,
    T: int,
    s: int,
    M: int,
    features: str = "definition1",
    sigma_t: float = 0.1,
    beta_max: float = 1.0,
    task_probs: TaskSchedule | None = None,
) -> MoEDraws:
    """Tasks and features as :func:`numeric.draws.draw_single_expert`, then noise ``rng.random((R, T, M))``.

    ``task_probs``: None draws tasks uniformly (the paper; the draws of earlier
    versions exactly), a :class:`TaskSchedule` draws them by its phases."""
    base = draw_single_expert(rng, pool, R=R, T=T, s=s, features=features, sigma_t=sigma_t, beta_max=beta_max,
                              task_probs=task_probs)
    if isinstance(M, bool) or not isinstance(M, numbers.Integral) or M < 1:
        raise ValueError(f"M must be an integer >= 1, got {M!r}")
    return MoEDraws(base.tasks, base.X, rng.random((base.R, base.T, int(M))))


_RUN_FIELDS = ("tasks", "chosen", "model_error", "forgetting", "generalization", "loads", "expert_sets",
               "freeze_round", "theta", "w", "theta_max")
_OPTIONAL_RUN_FIELDS = ("bias",)  # absent (None) unless an option produces them


def _compact(a: np.ndarray) -> np.ndarray:
    """An int64 array as int16 when every value fits (the values unchanged), else as it is."""
    if a.dtype != np.int64 or a.size == 0:
        return a
    lo, hi = int(a.min()), int(a.max())
    return a.astype(np.int16) if -(2**15) <= lo and hi < 2**15 else a


@dataclass(frozen=True, eq=False)
class MoERun(ReplicateRounds):
    """Per replicate and round: ``tasks``, ``chosen`` expert, ``model_error``
    E_t (eq. 14), ``forgetting`` F_t (eq. 15; NaN at t = 1), ``generalization``
    G_t (eq. 16 at T = t), all (R, T) with column j = round j + 1.  Final state:
    ``loads`` (R, M) routing counts, ``expert_sets`` (R, M) = argmax_j
    theta_m^T v_j (eq. 11), ``freeze_round`` (R,) (0 = never frozen), ``theta``
    (R, M, d), ``w`` (R, M, d), ``theta_max`` (R,) the largest ||theta_t^(m)||_inf
    over all rounds and experts.  ``rounds`` holds, on request, per-round gate
    outputs ``h`` (R, T, M), cumulative ``loads`` (R, T, M), ``sets`` (R, T, M),
    the routed sets ``chosen_sets`` (R, T, top_k) (column 0 = ``chosen``) and,
    with ``balance="bias"``, the routing bias ``bias`` (R, T, M) after round t.
    ``bias`` (R, M) is the final routing bias with ``balance="bias"``, else None.
    With top-k routing ``loads`` count every expert of each routed set (they
    sum to k t).
    """

    tasks: np.ndarray
    chosen: np.ndarray
    model_error: np.ndarray
    forgetting: np.ndarray
    generalization: np.ndarray
    loads: np.ndarray
    expert_sets: np.ndarray
    freeze_round: np.ndarray
    theta: np.ndarray
    w: np.ndarray
    theta_max: np.ndarray  # (R,): max over rounds t and experts m of ||theta_t^(m)||_inf (Lemma 6)
    rounds: dict = field(default_factory=dict)
    bias: np.ndarray | None = None

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Flat arrays (per-round records as ``rounds.<name>``), the cache's npz layout.  Optional
        fields that are None are left out, so arrays stored without them still load.  Integer records
        (tasks, routed experts, sets) go as int16 where their values fit, :func:`from_arrays` restoring
        int64: the same values in a third of the bytes a chunk's tasks and choices took."""
        out = {name: getattr(self, name) for name in _RUN_FIELDS}
        out.update({name: getattr(self, name) for name in _OPTIONAL_RUN_FIELDS if getattr(self, name) is not None})
        out.update({f"rounds.{k}": v for k, v in self.rounds.items()})
        return {name: _compact(a) for name, a in out.items()}

    @staticmethod
    def from_arrays(arrays: dict[str, np.ndarray]) -> "MoERun":
        arrays = {name: a.astype(np.int64) if a.dtype == np.int16 else a for name, a in arrays.items()}
        rounds = {k[len("rounds."):]: v for k, v in arrays.items() if k.startswith("rounds.")}
        return MoERun(**{name: arrays[name] for name in _RUN_FIELDS},
                      **{name: arrays.get(name) for name in _OPTIONAL_RUN_FIELDS}, rounds=rounds)

    @staticmethod
    def concatenate(runs: Sequence["MoERun"]) -> "MoERun":
        if not runs:
            raise ValueError("runs must be non-empty")
        keys = runs[0].rounds.keys()
        return MoERun(
            **{
                name: np.concatenate([getattr(r, name) for r in runs])
                for name in _RUN_FIELDS
            },
            **{
                name: None if any(getattr(r, name) is None for r in runs)
                else np.concatenate([getattr(r, name) for r in runs])
                for name in _OPTIONAL_RUN_FIELDS
            },
            rounds={k: np.concatenate([r.rounds[k] for r in runs]) for k in keys},
        )


def _check(pool: TaskPool, draws: MoEDraws | DrawStream, cfg: MoEConfig) -> None:
    if draws.M != cfg.M:
        raise ValueError(f"draws carry noise for M = {draws.M} experts, config has M = {cfg.M}")
    d = draws.pool.d if isinstance(draws, DrawStream) else draws.X.shape[2]
    if d != pool.d:
        raise ValueError(f"draws have d = {d}, pool has d = {pool.d}")
    if cfg.router == "oracle" and len(cfg.oracle_sets) != pool.N:
        raise ValueError(f"oracle_sets must list experts for each of the N = {pool.N} tasks")
    if cfg.router == SETS_AFTER_T1 and cfg.M < pool.N:
        raise ValueError(f"router={SETS_AFTER_T1!r} gives every task its own experts: it needs M >= N, got M = "
                         f"{cfg.M} < N = {pool.N}")


def _oracle_mask(cfg: MoEConfig, N: int) -> np.ndarray:
    mask = np.zeros((N, cfg.M), dtype=bool)
    for n, experts in enumerate(cfg.oracle_sets):
        mask[n, list(experts)] = True
    return mask


@dataclass(frozen=True, eq=False)
class RoundState:
    """What one round of :func:`run_moe_batched` computed, handed to an observer (arrays over replicates).

    ``theta`` is the gate that routed round t (before its update) and
    ``theta_next`` the gate after it; ``h``, ``pi`` the gate outputs and softmax
    at round t (eq. 1-2); ``xbar`` = sum_i X_{t,i}; ``delta`` = Delta_t (eq. 6);
    ``counts`` the routing counts including round t; ``grad`` the task-loss
    gradient (None for the oracle router); ``applied`` whether the gate update
    was applied (False once frozen).  With top-k routing ``chosen`` and
    ``delta`` are the top-1 expert's, ``chosen_sets`` (R, k) and ``deltas``
    (R, k) those of the whole routed set; ``bias`` the routing bias after the
    round (``balance="bias"``, else None).  Observers must not modify the arrays.
    """

    j: int
    t: int
    X: np.ndarray
    xbar: np.ndarray
    h: np.ndarray
    pi: np.ndarray
    chosen: np.ndarray
    delta: np.ndarray
    counts: np.ndarray
    theta: np.ndarray
    theta_next: np.ndarray
    grad: np.ndarray | None
    applied: np.ndarray
    chosen_sets: np.ndarray | None = None
    deltas: np.ndarray | None = None
    bias: np.ndarray | None = None


def numba_unsupported(cfg: MoEConfig, observer: object = None) -> str | None:
    """What of this configuration the compiled kernel (:func:`numeric.kernels.moe_block`) does not cover,
    or None.  It runs every option of :class:`MoEConfig` (router, top_k, balance with its bias rate and
    window, termination, flag timing, sticky marks, aux factor, per-round records); an observer needs the
    numpy engine's per-round arrays."""
    if cfg.router == SETS_AFTER_T1:
        return "routing forced into the expert sets after T1"
    if cfg.expert_step != EQ5:
        return "Lemma 3 imposed on the expert step"
    return "an observer" if observer is not None else None


def _numba_state(R: int, T: int, M: int, N: int, d: int, cfg: MoEConfig) -> dict[str, np.ndarray]:
    """The compiled kernel's state and outputs at round 0 (:func:`numeric.kernels.moe_block`)."""
    k = cfg.top_k
    state = dict(
        theta=np.zeros((R, M, d)),
        w=np.zeros((R, M, d)),
        counts=np.zeros((R, M)),
        pair_counts=np.zeros((R, M, N)),  # top-1: rounds tau < t with (m_tau, n_tau) = (m, n)
        expert_past=np.zeros((R, M)),  # top-1: sum_n pair_counts[m, n] ||w^(m) - w_n||^2
        past_self_error=np.zeros(R),
        marks=np.zeros((R, M), dtype=bool),
        frozen=np.zeros(R, dtype=bool),
        freeze_round=np.zeros(R, dtype=np.int64),
        theta_max=np.zeros(R),
        chosen=np.empty((R, T), dtype=np.int64),
        chosen_sets=np.empty((R, T, k), dtype=np.int64),
        model_error=np.empty((R, T)),
        forgetting=np.empty((R, T)),
        generalization=np.empty((R, T)),
    )
    if cfg.balance == "bias":
        state.update(bias=np.zeros((R, M)), window_counts=np.zeros((R, M)))
    if k > 1:
        # The served models' error sums of run_moe_batched's top-k path, and the models' inner products
        # (all zero at w = 0).
        state["combined"] = dict(past_gg=np.zeros((R, M, M)), past_gn=np.zeros((R, M, N)), past_nn=np.zeros(R),
                                 gram=np.zeros((R, M, M)), cross=np.zeros((R, M, N)))
    if cfg.record_rounds:
        records = {"h": np.empty((R, T, M)), "loads": np.empty((R, T, M)),
                   "sets": np.empty((R, T, M), dtype=np.int64)}
        if cfg.balance == "bias":
            records["bias"] = np.empty((R, T, M))
        state["records"] = records
    return state


def _run_moe_numba(pool: TaskPool, draws: MoEDraws | DrawStream, cfg: MoEConfig) -> MoERun:
    """:func:`run_moe_batched` by the compiled kernel, streaming the draws block by block."""
    R, T, M, N, d = draws.R, draws.T, cfg.M, pool.N, pool.d
    if not isinstance(draws, DrawStream) and draws.tasks.size and (draws.tasks.min() < 0 or draws.tasks.max() >= N):
        raise ValueError(f"draws.tasks must lie in [0, {N - 1}]")
    W = np.ascontiguousarray(pool.W, dtype=np.float64)
    V = np.ascontiguousarray(pool.V, dtype=np.float64)
    state = _numba_state(R, T, M, N, d, cfg)
    oracle_mask = None if cfg.router == "learned" else _oracle_mask(cfg, N)
    tasks_all = np.empty((R, T), dtype=np.int64)
    for start, tasks, X, noise in round_major_blocks(draws):
        tasks_all[:, start:start + tasks.shape[1]] = tasks
        kernels.moe_block(X, tasks, noise, W, start, V=V, eta=cfg.eta, alpha=cfg.alpha, lam=cfg.lam,
                          Gamma=cfg.Gamma, termination=cfg.termination, T1=cfg.exploration_rounds,
                          sticky=cfg.sticky_marks, after_update=cfg.flag_timing == "after_update",
                          aux_is_t=cfg.aux_factor == "t", oracle_mask=oracle_mask, balance=cfg.balance,
                          top_k=cfg.top_k, bias_rate=cfg.bias_rate, bias_window=cfg.bias_window, **state)
    rounds = {}
    if cfg.record_rounds:  # the numpy engine's records, in its order
        rec = state["records"]
        rounds = {"h": rec["h"], "loads": rec["loads"], "sets": rec["sets"], "chosen_sets": state["chosen_sets"]}
        if "bias" in rec:
            rounds["bias"] = rec["bias"]
    theta = state["theta"]
    return MoERun(
        tasks=tasks_all,
        chosen=state["chosen"],
        model_error=state["model_error"],
        forgetting=state["forgetting"],
        generalization=state["generalization"],
        loads=state["counts"],
        expert_sets=np.argmax(np.einsum("rmd,nd->rmn", theta, pool.V), axis=-1),
        freeze_round=state["freeze_round"],
        theta=theta,
        w=state["w"],
        theta_max=state["theta_max"],
        rounds=rounds,
        bias=state.get("bias"),
    )


def run_moe_batched(pool: TaskPool, draws: MoEDraws | DrawStream, cfg: MoEConfig,
                    observer: Callable[[RoundState], object] | None = None, engine: str | None = None) -> MoERun:
    """All replicates advanced together; a Python loop over rounds only.

    ``observer``, if given, is called after every round with its
    :class:`RoundState`, so per-round quantities the lemmas need can be
    recorded without a second copy of the dynamics.

    ``engine``: "numpy" (this function's own loop, the reference) or "numba" (the compiled kernel of
    :mod:`numeric.kernels`, equal up to rounding, for the configurations :func:`numba_unsupported`
    accepts; asking it for another raises ValueError); None (default) takes "numba" where it applies,
    else "numpy"."""
    if kernels.choose_engine(engine, numba_unsupported(cfg, observer)) == "numba":
        _check(pool, draws, cfg)
        return _run_moe_numba(pool, draws, cfg)
    _check(pool, draws, cfg)
    R, T, M, N, d = draws.R, draws.T, cfg.M, pool.N, pool.d
    W, V = pool.W, pool.V
    rows = np.arange(R)
    T1 = cfg.exploration_rounds
    learned = cfg.router == "learned"
    oracle_mask = _oracle_mask(cfg, N) if cfg.router == "oracle" else None
    forced = cfg.router == SETS_AFTER_T1
    set_mask = None  # (R, N, M): the eq. (11) sets of the gate after round T1, for forced routing
    k = cfg.top_k
    biased = cfg.balance == "bias"
    c_t_of = (lambda t: 1.0 / t) if cfg.aux_factor == "1/t" else (lambda t: float(t))

    theta = np.zeros((R, M, d))
    w = np.zeros((R, M, d))
    counts = np.zeros((R, M))
    if k == 1:
        err = np.broadcast_to(np.einsum("nd,nd->n", W, W), (R, M, N)).copy()  # ||w^(m) - w_n||^2 at w = 0
        pair_counts = np.zeros((R, M, N))  # rounds tau < t with (m_tau, n_tau) = (m, n)
    else:
        # Past rounds' combined models sum_m g_{tau,m} w^(m): their errors at the current w expand into
        # g^T Gram g - 2 g^T (w W^T)[:, n] + ||w_n||^2, so three sums over tau < t suffice.
        task_norms = np.einsum("nd,nd->n", W, W)
        past_gg = np.zeros((R, M, M))  # sum g_tau g_tau^T
        past_gn = np.zeros((R, M, N))  # sum g_tau e_{n_tau}^T
        past_nn = np.zeros(R)  # sum ||w_{n_tau}||^2
    past_self_error = np.zeros(R)
    still = cfg.expert_step == STILL_ON_REPEAT
    last_task = np.full((R, M), -1, dtype=np.int64)  # the task each expert was last trained on (-1: none)
    marks = np.zeros((R, M), dtype=bool)
    frozen = np.zeros(R, dtype=bool)
    freeze_round = np.zeros(R, dtype=np.int64)
    theta_max = np.zeros(R)
    bias = np.zeros((R, M)) if biased else None
    window_counts = np.zeros((R, M)) if biased and cfg.bias_window is not None else None

    chosen_all = np.empty((R, T), dtype=np.int64)
    sets_all = chosen_all[:, :, None] if k == 1 else np.empty((R, T, k), dtype=np.int64)  # a view for top-1
    model_error = np.empty((R, T))
    forgetting = np.empty((R, T))
    generalization = np.empty((R, T))
    rec = {}
    if cfg.record_rounds:
        rec = {"h": np.empty((R, T, M)), "loads": np.empty((R, T, M)), "sets": np.empty((R, T, M), dtype=np.int64),
               "chosen_sets": np.empty((R, T, k), dtype=np.int64)}
        if biased:
            rec["bias"] = np.empty((R, T, M))

    tasks_all = np.empty((R, T), dtype=np.int64)
    for block in blocks_of(draws):
        tasks_all[:, block.start:block.start + block.size] = block.tasks
        y_block = np.einsum("rtds,rtd->rts", block.X, W[block.tasks])
        for jj in range(block.size):
            j = block.start + jj
            t = j + 1
            n_t = block.tasks[:, jj]
            X = block.X[:, jj]
            xbar = X.sum(axis=-1)
            h = gate_outputs(theta, xbar)
            if forced and t == T1 + 1:
                set_mask = _sets_mask(theta, V)
            if learned or (forced and t <= T1):
                scores = h if bias is None else h + bias  # the bias steers the choice only, never pi
                if k == 1:
                    m_t = route(scores, cfg.lam * block.noise[:, jj])
                    S = m_t[:, None]
                else:
                    # Descending scores, ties toward the smaller index (a stable sort), as np.argmax breaks them.
                    S = np.argsort(-(scores + cfg.lam * block.noise[:, jj]), axis=-1, kind="stable")[:, :k]
                    m_t = S[:, 0]
            else:
                mask = oracle_mask[n_t] if oracle_mask is not None else set_mask[rows, n_t]
                m_t = np.argmax(np.where(mask, block.noise[:, jj], -np.inf), axis=-1)
                S = m_t[:, None]
            pi = softmax(h)
            sets_all[:, j] = S

            if k == 1:
                w_old = w[rows, m_t]
                w_new = min_norm_update(w_old, X, y_block[:, jj])
                if still:  # Lemma 3 imposed: the expert's own task again leaves it where it is
                    repeat = last_task[rows, m_t] == n_t
                    w_new = np.where(repeat[:, None], w_old, w_new)
                    last_task[rows, m_t] = n_t
                step = w_new - w_old
                delta = np.einsum("rd,rd->r", step, step)
                deltas = delta[:, None]
                w[rows, m_t] = w_new
                counts[rows, m_t] += 1.0

                diff = w_new[:, None, :] - W[None, :, :]
                err[rows, m_t] = np.einsum("rnd,rnd->rn", diff, diff)
                current = err[rows, m_t, n_t]
                past_at_current = np.einsum("rmn,rmn->r", pair_counts, err)
                pair_counts[rows, m_t, n_t] += 1.0
            else:
                S_rows = rows[:, None]
                w_old = w[S_rows, S]
                w_new = min_norm_update(w_old, X[:, None], y_block[:, jj][:, None])  # every expert of S_t steps (eq. 5)
                step = w_new - w_old
                deltas = np.einsum("rkd,rkd->rk", step, step)
                delta = deltas[:, 0]
                w[S_rows, S] = w_new
                counts[S_rows, S] += 1.0

                g = np.zeros((R, M))
                g[S_rows, S] = softmax(h[S_rows, S])  # = pi_m / sum_{j in S_t} pi_j, without the underflow of pi
                u = np.einsum("rm,rmd->rd", g, w) - W[n_t]
                current = np.einsum("rd,rd->r", u, u)
                past_at_current = (np.einsum("rmk,rmk->r", past_gg, np.einsum("rmd,rkd->rmk", w, w))
                                   - 2.0 * np.einsum("rmn,rmn->r", past_gn, np.einsum("rmd,nd->rmn", w, W)) + past_nn)
                past_gg += g[:, :, None] * g[:, None, :]
                past_gn[rows, :, n_t] += g
                past_nn += task_norms[n_t]

            forgetting[:, j] = (past_at_current - past_self_error) / (t - 1) if t > 1 else np.nan
            generalization[:, j] = (past_at_current + current) / t
            model_error[:, j] = current
            chosen_all[:, j] = m_t
            past_self_error += current

            theta_before, grad, applied = theta, None, ~frozen
            if learned or forced:
                checking = cfg.termination and t > T1
                if checking and cfg.flag_timing == "before_update":
                    _update_flags(h, m_t, rows, cfg, marks, frozen, freeze_round, t)
                if k == 1 and cfg.balance == "aux":
                    grad = task_loss_gradient(
                        pi, m_t, delta, counts[rows, m_t] / t, t, cfg.alpha, xbar, cfg.aux_factor
                    )
                else:
                    dL_dpi = np.zeros((R, M))
                    on_set = deltas
                    if cfg.balance == "aux":
                        on_set = deltas + cfg.alpha * M * (counts[rows[:, None], S] / (k * t)) * c_t_of(t)
                    dL_dpi[rows[:, None], S] = on_set
                    grad = softmax_chain_gradient(pi, dL_dpi, xbar)
                applied = ~frozen
                theta = theta - cfg.eta * np.where(frozen[:, None, None], 0.0, grad)
                np.maximum(theta_max, np.abs(theta).max(axis=(1, 2)), out=theta_max)
                if biased:
                    bias = _bias_step(bias, counts, window_counts, sets_all, j, frozen, cfg)
                if checking and cfg.flag_timing == "after_update":
                    _update_flags(gate_outputs(theta, xbar), m_t, rows, cfg, marks, frozen, freeze_round, t)
            if observer is not None:
                observer(RoundState(j=j, t=t, X=X, xbar=xbar, h=h, pi=pi, chosen=m_t, delta=delta, counts=counts.copy(),
                                    theta=theta_before, theta_next=theta, grad=grad, applied=applied, chosen_sets=S,
                                    deltas=deltas, bias=bias))
            if cfg.record_rounds:
                rec["h"][:, j] = h
                rec["loads"][:, j] = counts
                rec["sets"][:, j] = np.argmax(np.einsum("rmd,nd->rmn", theta, V), axis=-1)
                rec["chosen_sets"][:, j] = S
                if biased:
                    rec["bias"][:, j] = bias

    return MoERun(
        tasks=tasks_all,
        chosen=chosen_all,
        model_error=model_error,
        forgetting=forgetting,
        generalization=generalization,
        loads=counts,
        expert_sets=np.argmax(np.einsum("rmd,nd->rmn", theta, V), axis=-1),
        freeze_round=freeze_round,
        theta=theta,
        w=w,
        theta_max=theta_max,
        rounds=rec,
        bias=bias,
    )


def _bias_step(bias, counts, window_counts, sets_all, j, frozen, cfg: MoEConfig) -> np.ndarray:
    """Loss-free balancing after round t = j + 1: b_m += u sign(1/M - load_m) where the gate is live.

    load_m is expert m's share of the routed slots, cumulative (counts / (k t)) or over the last
    ``bias_window`` rounds; ``window_counts`` (updated in place) tracks the latter."""
    M, k, t = cfg.M, cfg.top_k, j + 1
    if window_counts is None:
        load = counts / (k * t)
    else:
        rows = np.arange(bias.shape[0])[:, None]
        window_counts[rows, sets_all[:, j]] += 1.0
        if t > cfg.bias_window:
            window_counts[rows, sets_all[:, j - cfg.bias_window]] -= 1.0  # round t - W leaves the window
        load = window_counts / (k * min(t, cfg.bias_window))
    return np.where(frozen[:, None], bias, bias + cfg.bias_rate * np.sign(1.0 / M - load))


def _sets_mask(theta: np.ndarray, V: np.ndarray) -> np.ndarray:
    """(R, N, M): expert m in task n's set, for ``router="sets_after_T1"``: eq. (11)'s M_n = {m : n = argmax_j
    theta^(m)^T v_j}, made a partition in which every task has an expert (M >= N): while a task has none, the
    expert of largest theta^(m)^T v_n among those of sets with two or more moves to it (ties: the smaller
    index), so that no expert serves two tasks and no task is left without one."""
    R, M, _ = theta.shape
    N = V.shape[0]
    scores = np.einsum("rmd,nd->rmn", theta, V)
    owner = np.argmax(scores, axis=2)  # (R, M): each expert's eq. (11) task
    for r in range(R):
        sizes = np.bincount(owner[r], minlength=N)
        for n in range(N):
            if sizes[n]:
                continue
            spare = np.flatnonzero(sizes[owner[r]] >= 2)
            m = int(spare[np.argmax(scores[r, spare, n])])
            sizes[owner[r, m]] -= 1
            owner[r, m], sizes[n] = n, 1
    return owner[:, None, :] == np.arange(N)[None, :, None]


def _update_flags(h, m_t, rows, cfg: MoEConfig, marks, frozen, freeze_round, t) -> None:
    """Algorithm 1, lines 7-13: mark experts within Gamma of the routed one; freeze when all are marked."""
    close = np.abs(h - h[rows, m_t][:, None]) <= cfg.Gamma
    live = ~frozen
    if cfg.sticky_marks:
        marks[live] |= close[live]
    else:
        marks[live] = close[live]
    newly = live & marks.all(axis=1)
    frozen |= newly
    freeze_round[newly] = t


def run_moe_reference(pool: TaskPool, draws: MoEDraws, cfg: MoEConfig) -> MoERun:
    """One replicate at a time, straight from the definitions (test oracle).

    The gate gradient is formed by the chain rule through the softmax
    Jacobian, d pi_j / d h_k = pi_j (1{j = k} - pi_k), from dL/dpi_j, not from
    the closed form the batched engine uses; F_t and G_t are the O(t) sums of
    eq. 15-16 over the models that served each past round (the routed expert,
    or with top-k the weighted combination of the routed set, formed
    explicitly); the routed set is found by sorting, the routing bias's load
    by counting the routed sets of the rounds it looks back on.
    """
    if isinstance(draws, DrawStream):
        draws = draws.materialize()
    _check(pool, draws, cfg)
    R, T, M, N, d = draws.R, draws.T, cfg.M, pool.N, pool.d
    k = cfg.top_k
    T1 = cfg.exploration_rounds
    out = {name: np.empty((R, T)) for name in ("model_error", "forgetting", "generalization")}
    chosen_all = np.empty((R, T), dtype=np.int64)
    loads = np.zeros((R, M))
    sets = np.zeros((R, M), dtype=np.int64)
    freeze_round = np.zeros(R, dtype=np.int64)
    theta_all = np.zeros((R, M, d))
    w_all = np.zeros((R, M, d))
    theta_max = np.zeros(R)
    bias_all = np.zeros((R, M)) if cfg.balance == "bias" else None
    rec = {}
    if cfg.record_rounds:
        rec = {"h": np.empty((R, T, M)), "loads": np.empty((R, T, M)), "sets": np.empty((R, T, M), dtype=np.int64),
               "chosen_sets": np.empty((R, T, k), dtype=np.int64)}
        if cfg.balance == "bias":
            rec["bias"] = np.empty((R, T, M))
    c_t = {"1/t": lambda t: 1.0 / t, "t": lambda t: float(t)}[cfg.aux_factor]

    def served(w, S, g):
        """The model that serves a round routed to the set S with weights g: sum_i g_i w^(S_i)."""
        return sum(g[i] * w[m] for i, m in enumerate(S))

    for r in range(R):
        theta = np.zeros((M, d))
        w = np.zeros((M, d))
        b = np.zeros(M)
        counts = np.zeros(M)
        marks = [False] * M
        frozen = False
        trained_on = {}  # expert -> the task it was last routed (Lemma 3 imposed: that task again, no step)
        history = []  # (routed set, weights, task, E_tau(w_tau))
        for j in range(T):
            t = j + 1
            n = int(draws.tasks[r, j])
            X = draws.X[r, j]
            y = X.T @ pool.W[n]
            xbar = X.sum(axis=1)
            h = np.array([theta[m] @ xbar for m in range(M)])
            if cfg.router == SETS_AFTER_T1 and t == T1 + 1:
                # eq. (11) at the gate after round T1, by the definition: expert m's set is its best-aligned signal
                own = [int(np.argmax([theta[m] @ v for v in pool.V])) for m in range(M)]
                for task in range(N):  # a task left without an expert takes the best-aligned spare one
                    if task not in own:
                        spare = [m for m in range(M) if own.count(own[m]) >= 2]
                        own[max(spare, key=lambda m: (theta[m] @ pool.V[task], -m))] = task
                sets_T1 = [[m for m in range(M) if own[m] == task] for task in range(N)]
            if cfg.router == "learned" or (cfg.router == SETS_AFTER_T1 and t <= T1):
                if cfg.balance == "bias":
                    scores = h + b + cfg.lam * draws.noise[r, j]
                else:
                    scores = h + cfg.lam * draws.noise[r, j]
                S = sorted(range(M), key=lambda m: (-scores[m], m))[:k]  # largest first, ties to the smaller index
            else:
                eligible = list(cfg.oracle_sets[n]) if cfg.router == "oracle" else sets_T1[n]
                S = [max(eligible, key=lambda e: (draws.noise[r, j, e], -e))]
            m_t = S[0]
            z = np.exp(h - h.max())
            pi = z / z.sum()
            # Renormalized top-k softmax: pi_m / sum_{j in S} pi_j = exp(h_m) / sum_{j in S} exp(h_j).
            zS = np.exp(h[S] - h[S].max())
            g = zS / zS.sum()
            deltas = {}
            for m in S:
                w_old = w[m].copy()
                if not (cfg.expert_step == STILL_ON_REPEAT and trained_on.get(m) == n):
                    w[m] = w_old + X @ np.linalg.solve(X.T @ X, y - X.T @ w_old)
                trained_on[m] = n
                deltas[m] = float(np.sum((w[m] - w_old) ** 2))
                counts[m] += 1
            e_now = float(np.sum((served(w, S, g) - pool.W[n]) ** 2))
            history.append((S, g, n, e_now))
            out["model_error"][r, j] = e_now
            if t > 1:
                out["forgetting"][r, j] = np.mean(
                    [np.sum((served(w, S_, g_) - pool.W[n_]) ** 2) - e for S_, g_, n_, e in history[:-1]]
                )
            else:
                out["forgetting"][r, j] = np.nan
            out["generalization"][r, j] = np.mean(
                [np.sum((served(w, S_, g_) - pool.W[n_]) ** 2) for S_, g_, n_, _ in history]
            )
            chosen_all[r, j] = m_t

            if cfg.router != "oracle":
                checking = cfg.termination and t > T1 and not frozen

                def flags(h_now):
                    nonlocal frozen
                    for m in range(M):
                        close = abs(h_now[m] - h_now[m_t]) <= cfg.Gamma
                        marks[m] = (marks[m] or close) if cfg.sticky_marks else close
                    if all(marks):
                        frozen = True
                        freeze_round[r] = t

                if checking and cfg.flag_timing == "before_update":
                    flags(h)
                if not frozen:
                    # dL/dpi_j: only the routed experts' pi enter L_loc and the h-dependent part of L_aux.
                    dL_dpi = np.zeros(M)
                    for m in S:
                        dL_dpi[m] = deltas[m]
                        if cfg.balance == "aux":
                            dL_dpi[m] = deltas[m] + cfg.alpha * M * (counts[m] / (k * t)) * c_t(t)
                    for q in range(M):
                        dL_dh_q = sum(dL_dpi[jj] * pi[jj] * ((1.0 if jj == q else 0.0) - pi[q]) for jj in range(M))
                        theta[q] = theta[q] - cfg.eta * dL_dh_q * xbar
                    theta_max[r] = max(theta_max[r], float(np.abs(theta).max()))
                    if cfg.balance == "bias":
                        looked_at = [S_ for S_, _, _, _ in history]
                        if cfg.bias_window is not None:
                            looked_at = looked_at[-cfg.bias_window:]
                        load = np.array([sum(m in S_ for S_ in looked_at) for m in range(M)]) / (k * len(looked_at))
                        b = b + cfg.bias_rate * np.sign(1.0 / M - load)
                    if checking and cfg.flag_timing == "after_update":
                        flags(np.array([theta[m] @ xbar for m in range(M)]))
            if cfg.record_rounds:
                rec["h"][r, j] = h
                rec["loads"][r, j] = counts
                rec["sets"][r, j] = [int(np.argmax([theta[m] @ v for v in pool.V])) for m in range(M)]
                rec["chosen_sets"][r, j] = S
                if cfg.balance == "bias":
                    rec["bias"][r, j] = b
        loads[r] = counts
        sets[r] = [int(np.argmax([theta[m] @ v for v in pool.V])) for m in range(M)]
        theta_all[r] = theta
        w_all[r] = w
        if bias_all is not None:
            bias_all[r] = b

    return MoERun(
        tasks=draws.tasks.copy(),
        chosen=chosen_all,
        loads=loads,
        expert_sets=sets,
        freeze_round=freeze_round,
        theta=theta_all,
        w=w_all,
        theta_max=theta_max,
        rounds=rec,
        bias=bias_all,
        **out,
    )


def simulate_moe(
    pool: TaskPool,
    cfg: MoEConfig,
    *,
    R: int,
    T: int,
    s: int,
    features: str = "definition1",
    sigma_t: float = 0.1,
    beta_max: float = 1.0,
    seed: int = 0,
    key: Sequence[str | int] = (),
    chunk_size: int = 100,
    progress: Callable[[int, int], object] | None = None,
    runner: ChunkRunner | None = None,
    task_probs: TaskSchedule | None = None,
    engine: str | None = None,
    keep: Keep | None = None,
) -> MoERun | KeptRun:
    """R replicates in chunks; chunk i draws from ``generator_for(seed, *key, "chunk", i)``.

    ``keep`` (:mod:`numeric.kept`): hold only the records it names, cut from each chunk as it arrives; the
    result is then a :class:`~numeric.kept.KeptRun` (None: the whole :class:`MoERun`).

    ``runner`` decides where chunks run and whether they are cached
    (:mod:`numeric.chunks`); the result does not depend on it.  ``task_probs``
    as in :func:`draw_moe` (None: uniform tasks, the paper).  ``engine`` as in
    :func:`run_moe_batched`; the engine chosen is an argument of every chunk (so of its cache key)."""
    engine = kernels.choose_engine(engine, numba_unsupported(cfg))
    # task_probs enters a chunk's arguments (hence its cache key) only when given.
    schedule = {} if task_probs is None else {"task_probs": task_probs}
    chunks = [
        Chunk(_moe_chunk, dict(pool=pool, cfg=cfg, size=size, T=T, s=s, M=cfg.M, features=features, sigma_t=sigma_t,
                               beta_max=beta_max, seed=seed, key=tuple(key), index=i, engine=engine, **schedule),
              size=size)
        for i, size in enumerate(chunk_sizes(R, chunk_size))
    ]
    if keep is not None:
        reduced = (runner or default_runner()).run(chunks, progress, reduce=lambda a: reduce_arrays(a, keep, T))
        return KeptRun.concatenate(reduced, keep, T)
    results = (runner or default_runner()).run(chunks, progress)
    return MoERun.concatenate([MoERun.from_arrays(a) for a in results])


def draw_moe_chunk(pool: TaskPool, *, M: int, size: int, T: int, s: int, features: str, sigma_t: float,
                   beta_max: float, seed: int, key: Sequence[str | int], index: int,
                   task_probs: TaskSchedule | None = None) -> MoEDraws:
    """Chunk ``index`` of a simulation, materialised: the draws :func:`simulate_moe` streams for it
    (:class:`numeric.streams.DrawStream`), so a per-round trace of a chunk replays the simulation's rounds."""
    return stream_moe_chunk(pool, M=M, size=size, T=T, s=s, features=features, sigma_t=sigma_t,
                            beta_max=beta_max, seed=seed, key=key, index=index, task_probs=task_probs).materialize()


def stream_moe_chunk(pool: TaskPool, *, M: int, size: int, T: int, s: int, features: str, sigma_t: float,
                     beta_max: float, seed: int, key: Sequence[str | int], index: int,
                     task_probs: TaskSchedule | None = None) -> DrawStream:
    """Chunk ``index`` of a simulation: its own keyed streams (``generator_for(seed, *key, "chunk", index,
    <kind>)``), so a chunk's draws do not depend on the other chunks, nor on how or where they run, nor on
    the horizon beyond their first T rounds."""
    return DrawStream(pool=pool, R=size, T=T, s=s, seed=seed, key=tuple(key), index=index, features=features,
                      sigma_t=sigma_t, beta_max=beta_max, M=M, task_probs=task_probs)


def _moe_chunk(*, pool, cfg, size, T, s, M, features, sigma_t, beta_max, seed, key, index, engine,
               task_probs=None) -> dict:
    """One chunk of :func:`simulate_moe`, as flat arrays (cacheable, picklable)."""
    draws = stream_moe_chunk(pool, M=M, size=size, T=T, s=s, features=features, sigma_t=sigma_t,
                             beta_max=beta_max, seed=seed, key=key, index=index, task_probs=task_probs)
    return run_moe_batched(pool, draws, cfg, engine=engine).to_arrays()
