"""The compiled engines (numeric.kernels) against the numpy engines they must reproduce.

Same draws (DrawStream), both engines: trajectories agree to rtol 1e-9 of each trajectory's scale
(|numba - numpy| <= 1e-9 * max |numpy| per quantity: entrywise relative errors are meaningless where a
trajectory passes near 0, e.g. E_1 ~ 1e-32 under Definition 1), routing decisions (``chosen``,
``freeze_round``, ``expert_sets``, loads) identical.  The numbers differ by rounding only: the kernels
project with a Gram-Schmidt basis, numpy solves the Gram system by LAPACK.

The variants of MoEConfig (balance none and bias, top-k, the oracle router, per-round records) are compared
array by array on everything the numpy engine returns.

Without termination the gate dynamics amplify rounding (about 10x per 30 rounds at eta = 0.5, measured
while writing these tests), so those cases stay short (T <= 60); with termination the gate freezes and
the expert dynamics are contractive, so longer runs agree too.
"""

import dataclasses

import numpy as np
import pytest

from moecl_verify.numeric import kernels
from moecl_verify.numeric.chunks import ChunkRunner, cache_key
from moecl_verify.numeric.draws import SingleExpertDraws, TaskSchedule
from moecl_verify.numeric.moe import MoEConfig, MoEDraws, numba_unsupported, run_moe_batched, simulate_moe
from moecl_verify.numeric.pool import make_clustered_pool, make_pool
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.numeric.single_expert import run_batched, simulate_single_expert
from moecl_verify.numeric.streams import DrawStream

RTOL = 1e-9
SINGLE_FLOATS = ("model_error", "forgetting", "generalization", "final_w")
MOE_FLOATS = ("model_error", "forgetting", "generalization", "theta", "w", "theta_max")
MOE_EXACT = ("tasks", "chosen", "freeze_round", "expert_sets", "loads")


def _close(a, b, name):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, name
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=name)
    scale = np.nanmax(np.abs(b)) if np.isfinite(b).any() else 0.0
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=RTOL * scale, err_msg=name)


def _same(a, b, names):
    for name in names:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def _pool(N, d, seed=0):
    return make_pool(generator_for(seed, "test-kernels", "pool", N, d), N=N, d=d, sigma0=0.4, signal_scale=2.5)


# --- single expert ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("features", ["definition1", "gaussian", "gaussian_complement"])
@pytest.mark.parametrize("N, d, s, R", [(6, 10, 6, 37), (3, 5, 1, 5), (8, 7, 4, 70)])
def test_single_expert_numba_equals_numpy(features, N, d, s, R):
    pool = _pool(N, d)
    # R = 37 and 70 leave a partial group of lanes; block 7 splits the rounds unevenly.
    stream = DrawStream(pool=pool, R=R, T=90, s=s, seed=1, key=("single", features), features=features, block=7)
    fast = run_batched(pool, stream, engine="numba")
    ref = run_batched(pool, stream, engine="numpy")
    np.testing.assert_array_equal(fast.tasks, ref.tasks)
    for name in SINGLE_FLOATS:
        _close(getattr(fast, name), getattr(ref, name), name)
    assert np.isnan(fast.forgetting[:, 0]).all() and not np.isnan(fast.forgetting[:, 1:]).any()


def test_single_expert_rank_deficient_features():
    """Definition 1 with sigma_t = 0: only the signal column is nonzero (numpy falls back to the
    pseudo-inverse, the kernel drops the zero columns): the same minimum-norm step."""
    pool = _pool(4, 6)
    stream = DrawStream(pool=pool, R=9, T=30, s=3, seed=2, key=("rank",), features="definition1", sigma_t=0.0)
    fast, ref = run_batched(pool, stream, engine="numba"), run_batched(pool, stream, engine="numpy")
    for name in SINGLE_FLOATS:
        _close(getattr(fast, name), getattr(ref, name), name)


def test_single_expert_numba_is_deterministic_and_block_free():
    pool = _pool(6, 10)
    kw = dict(pool=pool, R=45, T=50, s=6, seed=3, key=("det",), features="definition1")
    a = run_batched(pool, DrawStream(**kw, block=64), engine="numba")
    b = run_batched(pool, DrawStream(**kw, block=64), engine="numba")
    c = run_batched(pool, DrawStream(**kw, block=5), engine="numba")
    d = run_batched(pool, DrawStream(**kw).materialize(), engine="numba")
    for other in (b, c, d):
        _same(a, other, ("tasks",) + SINGLE_FLOATS)
    # The default engine is the kernel.
    _same(a, run_batched(pool, DrawStream(**kw)), ("tasks",) + SINGLE_FLOATS)


def test_a_replicates_numbers_do_not_depend_on_its_lane():
    """The kernels advance replicates in groups of lanes: a replicate's arithmetic must not depend on the
    group size, its lane, or the replicates beside it."""
    pool = _pool(6, 10)
    draws = DrawStream(pool=pool, R=70, T=40, s=6, seed=9, key=("lanes",), features="gaussian").materialize()
    whole = run_batched(pool, draws, engine="numba")
    for rows in (slice(0, 5), slice(33, 70), slice(31, 34)):
        part = run_batched(pool, SingleExpertDraws(draws.tasks[rows], draws.X[rows]), engine="numba")
        for name in ("tasks",) + SINGLE_FLOATS:
            np.testing.assert_array_equal(getattr(part, name), getattr(whole, name)[rows], err_msg=name)
    pool = _pool(4, 6)
    cfg = MoEConfig(M=5, eta=0.5, alpha=0.5, lam=0.1, Gamma=0.2, termination=False)
    moe = DrawStream(pool=pool, R=40, T=30, s=3, seed=9, key=("lanes",), M=5).materialize()
    whole = run_moe_batched(pool, moe, cfg, engine="numba")
    for rows in (slice(0, 3), slice(30, 40)):
        part = run_moe_batched(pool, MoEDraws(moe.tasks[rows], moe.X[rows], moe.noise[rows]), cfg, engine="numba")
        for name in MOE_EXACT + MOE_FLOATS:
            np.testing.assert_array_equal(getattr(part, name), getattr(whole, name)[rows], err_msg=name)


# --- Algorithm 1 --------------------------------------------------------------------------------------------

MOE_CASES = {
    # name: (N, d, s, M, config options, T, R)
    "paper": (6, 10, 6, 10, dict(), 120, 40),
    "no-termination": (6, 10, 6, 10, dict(termination=False), 60, 40),
    "after-update": (4, 6, 3, 5, dict(flag_timing="after_update"), 120, 35),
    "aux-t": (4, 6, 3, 5, dict(aux_factor="t"), 120, 35),
    "aux-t-no-termination": (4, 6, 3, 5, dict(aux_factor="t", termination=False), 50, 35),
    "non-sticky": (3, 6, 2, 3, dict(sticky_marks=False, Gamma=1.0), 120, 33),
    "lam0-ties": (5, 8, 4, 7, dict(lam=0.0), 120, 34),  # theta = 0 at t = 1: every score ties
    "lam0-ties-after": (5, 8, 4, 7, dict(lam=0.0, flag_timing="after_update", termination=False), 50, 34),
    "M-below-N": (7, 9, 5, 2, dict(alpha=0.0, Gamma=0.05), 100, 20),
    "one-expert": (3, 5, 2, 1, dict(), 40, 6),
    "big-T1": (4, 6, 3, 4, dict(T1=30, eta=0.2, lam=0.01), 80, 33),
}


@pytest.mark.parametrize("case", list(MOE_CASES))
def test_moe_numba_equals_numpy(case):
    N, d, s, M, options, T, R = MOE_CASES[case]
    pool = make_clustered_pool(generator_for(0, "test-kernels", case), N=N, K=min(3, N), d=d, sigma0=0.4)
    cfg = MoEConfig(**{**dict(M=M, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.4**1.25), **options})
    stream = DrawStream(pool=pool, R=R, T=T, s=s, seed=4, key=("moe", case), M=M, block=9)
    fast = run_moe_batched(pool, stream, cfg, engine="numba")
    ref = run_moe_batched(pool, stream, cfg, engine="numpy")
    _same(fast, ref, MOE_EXACT)
    for name in MOE_FLOATS:
        _close(getattr(fast, name), getattr(ref, name), name)
    assert fast.rounds == {} and fast.bias is None
    if cfg.termination and case != "one-expert":
        assert (ref.freeze_round > 0).any()  # the termination path is exercised
    if not cfg.termination:
        assert (ref.freeze_round == 0).all()


def test_moe_ties_go_to_the_smaller_index():
    pool = _pool(3, 5)
    cfg = MoEConfig(M=4, eta=0.5, alpha=0.5, lam=0.0, Gamma=0.1)
    run = run_moe_batched(pool, DrawStream(pool=pool, R=6, T=3, s=2, seed=0, key=("ties",), M=4), cfg,
                          engine="numba")
    assert (run.chosen[:, 0] == 0).all()  # theta = 0: all four scores are 0


def test_moe_task_schedule_and_materialized_draws():
    pool = _pool(4, 6)
    cfg = MoEConfig(M=3, eta=0.5, alpha=0.5, lam=0.2, Gamma=0.2)
    stream = DrawStream(pool=pool, R=11, T=70, s=3, seed=5, key=("sched",), M=3,
                        task_probs=TaskSchedule.zipf(4, 1.0).swap_at(30))
    fast = run_moe_batched(pool, stream, cfg, engine="numba")
    _same(fast, run_moe_batched(pool, stream.materialize(), cfg, engine="numba"), MOE_EXACT + MOE_FLOATS)
    ref = run_moe_batched(pool, stream, cfg, engine="numpy")
    _same(fast, ref, MOE_EXACT)
    for name in MOE_FLOATS:
        _close(getattr(fast, name), getattr(ref, name), name)


def test_moe_numba_is_deterministic_and_the_default():
    pool = _pool(6, 10)
    cfg = MoEConfig(M=10, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.3)
    stream = DrawStream(pool=pool, R=40, T=60, s=6, seed=6, key=("det",), M=10)
    a = run_moe_batched(pool, stream, cfg, engine="numba")
    b = run_moe_batched(pool, dataclasses.replace(stream, block=13), cfg, engine="numba")
    c = run_moe_batched(pool, stream, cfg)
    for other in (b, c):
        _same(a, other, MOE_EXACT + MOE_FLOATS)


# --- Algorithm 1's variants (options of MoEConfig) -------------------------------------------------------------

VARIANT_CASES = {
    # name: (N, d, s, M, config options, T, R); T1 = 40 rounds of gate training (and bias updates), then
    # termination freezes the gate (so the engines part by rounding only); R = 33 leaves a partial group of lanes.
    "records": (4, 6, 3, 5, dict(record_rounds=True), 110, 33),
    "balance-none": (4, 6, 3, 5, dict(balance="none", record_rounds=True), 110, 33),
    "bias": (4, 6, 3, 5, dict(balance="bias", bias_rate=0.1, record_rounds=True), 110, 33),
    "bias-window-after-update": (4, 6, 3, 5, dict(balance="bias", bias_rate=0.2, bias_window=7,
                                                  flag_timing="after_update", record_rounds=True), 110, 33),
    "top-2": (6, 10, 6, 8, dict(top_k=2, record_rounds=True), 110, 33),
    "top-3-bias-window": (4, 6, 3, 5, dict(top_k=3, balance="bias", bias_rate=0.1, bias_window=5), 110, 33),
    "top-2-none": (4, 6, 3, 5, dict(top_k=2, balance="none"), 110, 33),
    "oracle": (4, 6, 3, 5, dict(router="oracle", oracle_sets=((0, 1), (2,), (3, 4), (0, 2, 4)),
                                record_rounds=True), 80, 33),
}


def _variant_run(case, engine, **stream_options):
    N, d, s, M, options, T, R = VARIANT_CASES[case]
    pool = make_clustered_pool(generator_for(0, "test-kernels", case), N=N, K=min(3, N), d=d, sigma0=0.4)
    cfg = MoEConfig(**{**dict(M=M, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.1, T1=40), **options})
    stream = DrawStream(pool=pool, R=R, T=T, s=s, seed=4, key=("variant", case), M=M, **{"block": 9, **stream_options})
    return cfg, run_moe_batched(pool, stream, cfg, engine=engine)


@pytest.mark.parametrize("case", list(VARIANT_CASES))
def test_moe_variants_numba_equal_numpy(case):
    """Every array the numpy engine returns, per-round records and routing bias included: floats to 1e-9 of
    their scale, integers, booleans and loads exactly."""
    cfg, fast = _variant_run(case, "numba")
    _, ref = _variant_run(case, "numpy")
    got, want = fast.to_arrays(), ref.to_arrays()
    assert list(got) == list(want)
    for name, value in want.items():
        assert got[name].dtype == value.dtype and got[name].shape == value.shape, name
        if value.dtype.kind in "biu" or name.endswith("loads"):
            np.testing.assert_array_equal(got[name], value, err_msg=name)
        else:
            _close(got[name], value, name)
    # Not vacuous: the options did what they do.
    if cfg.router == "learned":
        assert (ref.freeze_round > 0).any()
    if cfg.balance == "bias":
        assert np.abs(ref.bias).max() > 0
    if cfg.record_rounds:
        assert want["rounds.chosen_sets"].shape == (*ref.chosen.shape, cfg.top_k)


def test_top_k_ties_go_to_the_smaller_indices():
    """theta = 0 at t = 1 and lambda = 0: every score ties, and the routed set is the k smallest indices, largest
    score first (numpy's stable argsort).  Only round 1: with lambda = 0 experts routed together keep equal gates,
    exact ties that the numpy engine's einsum then breaks by rounding."""
    pool = _pool(3, 5)
    cfg = MoEConfig(M=5, eta=0.5, alpha=0.5, lam=0.0, Gamma=0.1, top_k=3, record_rounds=True)
    stream = DrawStream(pool=pool, R=6, T=1, s=2, seed=0, key=("top-k ties",), M=5)
    fast, ref = run_moe_batched(pool, stream, cfg, engine="numba"), run_moe_batched(pool, stream, cfg, engine="numpy")
    assert (fast.rounds["chosen_sets"][:, 0] == [0, 1, 2]).all()
    np.testing.assert_array_equal(fast.rounds["chosen_sets"], ref.rounds["chosen_sets"])


def test_moe_variant_numba_is_deterministic_and_lane_free():
    """Byte-identical reruns of a top-3, windowed-bias run with records, whatever the blocks or the draws'
    form; a replicate's numbers do not depend on the replicates beside it."""
    N, d, s, M, options, T, R = VARIANT_CASES["top-3-bias-window"]
    pool = make_clustered_pool(generator_for(0, "test-kernels", "determinism"), N=N, K=3, d=d, sigma0=0.4)
    cfg = MoEConfig(M=M, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.1, T1=40, record_rounds=True, **options)
    kw = dict(pool=pool, R=R, T=T, s=s, seed=4, key=("variant-determinism",), M=M)
    runs = [run_moe_batched(pool, DrawStream(**kw, block=block), cfg, engine="numba").to_arrays()
            for block in (9, 13)]
    draws = DrawStream(**kw).materialize()
    runs.append(run_moe_batched(pool, draws, cfg, engine="numba").to_arrays())
    for other in runs[1:]:
        assert list(other) == list(runs[0])
        for name, value in runs[0].items():
            assert other[name].tobytes() == value.tobytes(), name
    part = run_moe_batched(pool, MoEDraws(draws.tasks[31:], draws.X[31:], draws.noise[31:]), cfg, engine="numba")
    for name, value in part.to_arrays().items():
        assert value.tobytes() == np.ascontiguousarray(runs[0][name][31:]).tobytes(), name


# --- choosing the engine ------------------------------------------------------------------------------------

VARIANTS = {
    "top-k": dict(top_k=2),
    "balance-none": dict(balance="none"),
    "balance-bias": dict(balance="bias", bias_rate=0.1, bias_window=4),
    "oracle": dict(router="oracle", oracle_sets=((0,), (1,), (2,))),
    "record-rounds": dict(record_rounds=True),
}


@pytest.mark.parametrize("option", list(VARIANTS))
def test_variants_run_on_numba_by_default(option):
    """Every option of MoEConfig is covered: the default engine is the kernel, and only an observer is left to
    numpy (what numba_unsupported names)."""
    cfg = MoEConfig(M=3, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.2, **VARIANTS[option])
    assert numba_unsupported(cfg) is None
    assert kernels.choose_engine(None, numba_unsupported(cfg)) == "numba"
    assert numba_unsupported(cfg, observer=print) == "an observer"
    assert kernels.choose_engine(None, numba_unsupported(cfg, observer=print)) == "numpy"
    pool = _pool(3, 5)
    stream = DrawStream(pool=pool, R=3, T=8, s=2, seed=7, key=("variant-default",), M=3)
    a, b = run_moe_batched(pool, stream, cfg), run_moe_batched(pool, stream, cfg, engine="numba")
    for name, value in b.to_arrays().items():
        np.testing.assert_array_equal(a.to_arrays()[name], value, err_msg=name)


def test_observer_is_refused_by_numba_and_runs_on_numpy():
    pool = _pool(3, 5)
    cfg = MoEConfig(M=3, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.2)
    stream = DrawStream(pool=pool, R=3, T=8, s=2, seed=8, key=("observer",), M=3)
    seen = []
    with pytest.raises(ValueError, match="an observer"):
        run_moe_batched(pool, stream, cfg, observer=seen.append, engine="numba")
    run_moe_batched(pool, stream, cfg, observer=seen.append)
    assert len(seen) == 8


def test_unknown_engine_is_refused():
    pool = _pool(3, 5)
    stream = DrawStream(pool=pool, R=2, T=3, s=2, seed=0, key=("bogus",))
    with pytest.raises(ValueError, match="engine must be one of"):
        run_batched(pool, stream, engine="fortran")
    with pytest.raises(ValueError, match="engine must be one of"):
        simulate_single_expert(pool, R=2, T=3, s=2, engine="jax")


class _Capture(ChunkRunner):
    def run(self, chunks, progress=None):
        self.chunks = list(chunks)
        return super().run(chunks, progress)


def test_simulations_pass_the_engine_to_their_chunks():
    """The chosen engine is a chunk argument, so cached results of one engine never stand for the other."""
    pool = _pool(4, 6)
    cfg = MoEConfig(M=3, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.2)
    keys, runs = {}, {}
    for engine in (None, "numba", "numpy"):
        single, moe = _Capture(), _Capture()
        runs[engine] = simulate_single_expert(pool, R=5, T=12, s=3, features="gaussian", seed=1, chunk_size=3,
                                              runner=single, engine=engine)
        simulate_moe(pool, cfg, R=5, T=12, s=3, seed=1, chunk_size=3, runner=moe, engine=engine)
        assert {c.kwargs["engine"] for c in single.chunks + moe.chunks} == {engine or "numba"}
        keys[engine] = (cache_key(single.chunks[0]), cache_key(moe.chunks[0]))
    assert keys[None] == keys["numba"]
    assert keys["numba"][0] != keys["numpy"][0] and keys["numba"][1] != keys["numpy"][1]
    _same(runs[None], runs["numba"], ("tasks",) + SINGLE_FLOATS)
    for name in SINGLE_FLOATS:
        _close(getattr(runs["numba"], name), getattr(runs["numpy"], name), name)
    # A variant the kernel covers now is keyed as a numba run by default.
    capture = _Capture()
    simulate_moe(pool, dataclasses.replace(cfg, top_k=2), R=2, T=4, s=3, runner=capture)
    assert capture.chunks[0].kwargs["engine"] == "numba"


def test_choose_engine():
    assert kernels.choose_engine(None, None) == "numba"
    assert kernels.choose_engine(None, "top_k=2") == "numpy"
    assert kernels.choose_engine("numpy", "top_k=2") == "numpy"
    assert kernels.choose_engine("numba", None) == "numba"
    with pytest.raises(ValueError, match="top_k=2"):
        kernels.choose_engine("numba", "top_k=2")


def test_a_kernels_first_call_is_serialized_across_processes(tmp_path, monkeypatch):
    # While one process compiles (or loads) a kernel, another's first call of the same kernel waits: the lock is
    # an exclusive flock on a file in the temporary directory, per kernel.  The test's own temporary directory,
    # so that other processes' locks (another checkout, another test worker) cannot be mistaken for ours.
    import fcntl
    import glob
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with kernels._first_call_lock("moe_block"):
        [path] = [p for p in glob.glob(f"{tmp_path}/moecl-verify-numba-*.lock") if _holds_lock(p, fcntl)]
        with kernels._first_call_lock("single_expert_block"):  # another kernel's lock is free
            pass
    assert not _holds_lock(path, fcntl)


def _holds_lock(path, fcntl) -> bool:
    with open(path, "a") as other:
        try:
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(other, fcntl.LOCK_UN)
        return False
