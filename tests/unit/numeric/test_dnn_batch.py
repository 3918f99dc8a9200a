"""The batched deep-network engine (numeric/dnn_batch.py) against the per-replicate reference
(numeric/dnn_moe.py): the same draws give the same routing, gate, loads and errors, with and without
termination, across a fork whose replicates froze in different rounds, and with the probe of the epochs
check; a chunk of it returns what the reference's chunk returns.  Tiny networks on random 'digits'."""

import dataclasses

import numpy as np
import pytest

from moecl_verify.numeric import digit_tasks
from moecl_verify.numeric.seeding import generator_for

pytestmark = pytest.mark.xdist_group("fig3")


@pytest.fixture(scope="module")
def engines():
    pytest.importorskip("jax", reason="the network engines need JAX: pip install '.[dnn]'")
    from moecl_verify.numeric import dnn, dnn_batch, dnn_moe

    return dnn, dnn_moe, dnn_batch


def _toy_data(n=700, d=4, seed=0):
    rng = np.random.default_rng(seed)
    images = rng.random((n, d, d)).astype(np.float32)
    labels = np.arange(n) % 10
    return digit_tasks.split_digits(images, labels, n // 4, np.random.default_rng(seed + 1), "toy")


def _setting(engines, M=3, T=30, epochs=2, Gamma=0.08, termination=True, probe_epochs=0, d=4, widths=None):
    dnn, dnn_moe, _ = engines
    tasks = digit_tasks.make_tasks(_toy_data(d=d), "mirrors", 10)
    shape = dnn.NetShape(d=d, classes=10, **(widths or dict(conv1=2, conv2=2, fc1=4, fc2=4)))
    cfg = dnn_moe.DnnMoEConfig(M=M, eta=0.4, alpha=0.4, lam=0.05, Gamma=Gamma, termination=termination, T=T, s=20,
                               epochs=epochs, lr=0.2, batch=10, probe_epochs=probe_epochs)
    return tasks, shape, cfg


def _draws(engines, tasks, shape, cfg, R, key="batch"):
    _, dnn_moe, _ = engines
    return [dnn_moe.draw_replicate(generator_for(0, key, "replicate", r), tasks, shape, cfg.T, cfg.s, 4, cfg.epochs)
            for r in range(R)]


def _assert_same(reference: dict, batched: dict):
    assert set(reference) == set(batched)
    for name in reference:
        assert reference[name].shape == batched[name].shape, name
        if reference[name].dtype.kind in "ib":
            assert np.array_equal(reference[name], batched[name]), name  # routing, loads' rounds, freezes exactly
        else:
            assert np.allclose(reference[name], batched[name], rtol=1e-5, atol=1e-7, equal_nan=True), name


def test_the_fork_matches_the_reference_when_gates_freeze_in_different_rounds(engines):
    _, dnn_moe, dnn_batch = engines
    tasks, shape, cfg = _setting(engines)
    draws = _draws(engines, tasks, shape, cfg, R=5)
    on_ref, off_ref = dnn_moe.run_dnn_moe_forked(tasks, shape, cfg, draws)
    on, off = dnn_batch.run_batch(tasks, shape, cfg, draws, fork=True)
    # The premise of the check: the replicates' gates froze, not all in one round, so the continuation without
    # termination starts at different rounds in one batch.
    assert on_ref["freeze_round"].min() > 0 and len(set(on_ref["freeze_round"].tolist())) > 1
    _assert_same(on_ref, on)
    _assert_same(off_ref, off)
    assert not np.allclose(on["h"], off["h"])  # without termination the gate went on moving


def test_a_replicate_whose_gate_never_froze_is_its_own_run_without_termination(engines):
    _, dnn_moe, dnn_batch = engines
    tasks, shape, cfg = _setting(engines, T=9, Gamma=0.0)  # one check (t = T1 + 1 = 9) marks one expert of 3
    draws = _draws(engines, tasks, shape, cfg, R=2)
    on, off = dnn_batch.run_batch(tasks, shape, cfg, draws, fork=True)
    assert not on["freeze_round"].any()
    for name in on:
        assert np.array_equal(on[name], off[name], equal_nan=True), name
    _assert_same(dnn_moe.run_dnn_moe(tasks, shape, cfg, draws), on)


def test_without_termination_and_at_the_real_widths_it_matches_the_reference(engines):
    _, dnn_moe, dnn_batch = engines
    tasks, shape, cfg = _setting(engines, M=4, T=6, epochs=2, termination=False, d=8,
                                 widths=dict(conv1=4, conv2=8, fc1=64, fc2=32))
    draws = _draws(engines, tasks, shape, cfg, R=3)
    _assert_same(dnn_moe.run_dnn_moe(tasks, shape, cfg, draws), dnn_batch.run_batch(tasks, shape, cfg, draws))


def test_the_probe_of_the_epochs_check_matches_the_reference(engines):
    _, dnn_moe, dnn_batch = engines
    tasks, shape, cfg = _setting(engines, T=8, epochs=4, probe_epochs=2, termination=False)
    draws = _draws(engines, tasks, shape, cfg, R=3)
    reference = dnn_moe.run_dnn_moe(tasks, shape, cfg, draws)
    batched = dnn_batch.run_batch(tasks, shape, cfg, draws)
    assert "probe_errors" in batched
    _assert_same(reference, batched)
    # The probe is the routed expert part-way: different from its errors at the end of the round.
    rows, steps = np.indices(batched["chosen"].shape)
    assert not np.allclose(batched["probe_errors"], batched["errors"][rows, steps, batched["chosen"]])


def test_a_chunk_returns_what_the_reference_chunk_returns(engines):
    dnn, dnn_moe, dnn_batch = engines
    tasks, shape, cfg = _setting(engines, T=16)
    kw = dict(tasks=tasks, shape=shape, cfg=cfg, seed=3, key=("t",), noise_experts=3, fork=True,
              libraries=dnn.library_versions(), replicates=(0, 1, 2))
    reference, batched = dnn_moe.dnn_moe_chunk(**kw), dnn_batch.dnn_batch_chunk(**kw)
    _assert_same(reference, batched)
    alone = dnn_batch.dnn_batch_chunk(**{**kw, "replicates": (2,)})
    _assert_same({k: v[2:] for k, v in batched.items()}, alone)  # a replicate's result is its own draws'
    with pytest.raises(ValueError, match="keyed for"):
        dnn_batch.dnn_batch_chunk(**{**kw, "libraries": {**kw["libraries"], "device": "gpu (other)"}})


def test_bad_input_is_refused_with_the_reason(engines):
    _, _, dnn_batch = engines
    tasks, shape, cfg = _setting(engines, T=4, termination=False)
    draws = _draws(engines, tasks, shape, cfg, R=1)
    with pytest.raises(ValueError, match="no replicates"):
        dnn_batch.run_batch(tasks, shape, cfg, [])
    with pytest.raises(ValueError, match="fewer than M"):
        dnn_batch.run_batch(tasks, shape, dataclasses.replace(cfg, M=5), draws)  # noise drawn for 4
    with pytest.raises(ValueError, match="epoch orders"):
        dnn_batch.run_batch(tasks, shape, dataclasses.replace(cfg, epochs=3), draws)
    with pytest.raises(ValueError, match="needs cfg.termination"):
        dnn_batch.run_batch(tasks, shape, cfg, draws, fork=True)


def test_the_device_is_recorded_and_keys_the_results(engines):
    dnn, _, dnn_batch = engines
    versions = dnn.library_versions()
    assert versions["device"] == dnn.device()
    assert dnn.device().split(" ")[0] in ("cpu", "gpu", "tpu", "cuda", "rocm", "metal")
    assert dnn_batch.preferred() == (not dnn.device().startswith("cpu"))
