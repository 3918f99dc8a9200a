"""Figure 3's pieces: the IDX reader, the digit tasks and the gate's input, and (with JAX installed) the
network engine: the gate update against finite differences, the routing against the linear engine's,
F and G against eq. (15)-(16) by a plain loop, the fork of the runs with and without termination."""

import dataclasses
import gzip
import struct

import numpy as np
import pytest

from moecl_verify.numeric import digit_tasks
from moecl_verify.numeric.gate import route, task_loss
from moecl_verify.numeric.idx import IdxError, load_mnist, parse_idx, read_idx


def _idx_bytes(array: np.ndarray, code: int) -> bytes:
    """An IDX file written by hand from the format's description (not by the reader's code)."""
    header = bytes([0, 0, code, array.ndim]) + b"".join(struct.pack(">I", n) for n in array.shape)
    dtype = {0x08: ">u1", 0x0B: ">i2", 0x0D: ">f4"}[code]
    return header + array.astype(dtype).tobytes()


@pytest.mark.parametrize("compressed", [False, True])
def test_idx_files_read_back_plain_and_gzip(tmp_path, compressed):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(5, 4, 3), dtype=np.uint8)
    data = _idx_bytes(images, 0x08)
    path = tmp_path / ("x.idx.gz" if compressed else "x.idx")
    path.write_bytes(gzip.compress(data) if compressed else data)
    back = read_idx(path)
    assert back.dtype == np.uint8 and back.shape == (5, 4, 3)
    assert np.array_equal(back, images)


def test_idx_big_endian_types_become_native_values():
    values = np.array([[1, -2], [300, -32768]], dtype=np.int16)
    assert np.array_equal(parse_idx(_idx_bytes(values, 0x0B)), values)
    floats = np.array([0.5, -1.25, 3.0], dtype=np.float32)
    back = parse_idx(_idx_bytes(floats, 0x0D))
    assert back.dtype.byteorder in ("=", "<", "|") and np.array_equal(back, floats)


@pytest.mark.parametrize("data, message", [
    (b"\x01\x00\x08\x01\x00\x00\x00\x01\x05", "first two bytes"),
    (b"\x00\x00\x07\x01\x00\x00\x00\x01\x05", "unknown IDX type"),
    (b"\x00\x00\x08\x02\x00\x00\x00\x02", "truncated header"),
    (b"\x00\x00\x08\x01\x00\x00\x00\x03\x01\x02", "data bytes"),
    # more dimensions than numpy's arrays have, all of length 1, with the one byte they need
    (bytes([0, 0, 8, 40]) + b"\x00\x00\x00\x01" * 40 + b"\x05", "40 dimensions"),
    # no data, as a zero dimension asks, but the others multiply beyond numpy's index range
    (bytes([0, 0, 8, 3]) + b"\x00" * 4 + b"\xff" * 8, "too large for an array"),
])
def test_malformed_idx_is_refused(data, message):
    with pytest.raises(IdxError, match=message):
        parse_idx(data)


def _write_mnist(folder, n_train=6, n_test=4, size=28, compressed=True, labels_short=0):
    rng = np.random.default_rng(1)
    files = {
        "train-images-idx3-ubyte": rng.integers(0, 256, size=(n_train, size, size), dtype=np.uint8),
        "train-labels-idx1-ubyte": rng.integers(0, 10, size=n_train - labels_short, dtype=np.uint8),
        "t10k-images-idx3-ubyte": rng.integers(0, 256, size=(n_test, size, size), dtype=np.uint8),
        "t10k-labels-idx1-ubyte": rng.integers(0, 10, size=n_test, dtype=np.uint8),
    }
    for name, array in files.items():
        data = _idx_bytes(array, 0x08)
        (folder / (name + (".gz" if compressed else ""))).write_bytes(gzip.compress(data) if compressed else data)
    return files


@pytest.mark.parametrize("compressed", [True, False])
def test_mnist_folder_loads_and_averages_to_14(tmp_path, compressed):
    files = _write_mnist(tmp_path, compressed=compressed)
    loaded = load_mnist(tmp_path)
    assert np.array_equal(loaded.train_images, files["train-images-idx3-ubyte"])
    assert np.array_equal(loaded.test_labels, files["t10k-labels-idx1-ubyte"].astype(np.int64))
    data = digit_tasks.mnist_digits(loaded, 14, str(tmp_path))
    assert data.train_x.shape == (6, 14, 14) and data.d == 14 and "MNIST" in data.name
    raw = files["train-images-idx3-ubyte"][0].astype(float) / 255.0
    assert data.train_x[0, 3, 5] == pytest.approx(raw[6:8, 10:12].mean(), abs=1e-6)


def test_mnist_folder_with_mismatched_counts_or_missing_file_is_refused(tmp_path):
    _write_mnist(tmp_path, labels_short=1)
    with pytest.raises(IdxError, match="6 train images but 5 labels"):
        load_mnist(tmp_path)
    (tmp_path / "t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(FileNotFoundError, match="t10k-labels-idx1-ubyte"):
        load_mnist(tmp_path)


def _toy_data(n=400, d=4, seed=0):
    """Random 'digits' with every label present, for the task definitions (no scikit-learn needed)."""
    rng = np.random.default_rng(seed)
    images = rng.random((n, d, d)).astype(np.float32)
    labels = np.arange(n) % 10
    return digit_tasks.split_digits(images, labels, n // 4, np.random.default_rng(seed + 1), "toy")


def test_mirror_tasks_show_the_same_test_digits_mirrored():
    data = _toy_data()
    tasks = digit_tasks.make_tasks(data, "mirrors", 20)
    assert tasks.test_x.shape == (3, 20, 4, 4) and tasks.classes == 10
    assert np.array_equal(tasks.test_x[1], tasks.test_x[0][:, :, ::-1])
    assert np.array_equal(tasks.test_x[2], tasks.test_x[0][:, ::-1, :])
    assert np.array_equal(tasks.test_y[0], tasks.test_y[1])
    x, y = tasks.batch(1, np.array([0, 5]))
    rows = tasks.pools[1][[0, 5]]
    assert np.array_equal(x, data.train_x[rows][:, :, ::-1])
    assert np.array_equal(y.argmax(axis=1), data.train_y[rows])


def test_split_tasks_keep_their_digit_groups_and_relabel_them():
    data = _toy_data()
    tasks = digit_tasks.make_tasks(data, "split", 1000)
    for n, group in enumerate(digit_tasks.SPLIT_GROUPS):
        digits = data.train_y[tasks.pools[n]]
        assert set(digits) == set(group)
        _, y = tasks.batch(n, np.arange(6))
        assert np.array_equal(y.argmax(axis=1), [group.index(v) for v in digits[:6]])
    held = [np.isin(data.test_y, g).sum() for g in digit_tasks.SPLIT_GROUPS]
    assert tasks.test_x.shape[1] == min(held)  # equal test sets, as large as the smallest group allows


def test_gate_inputs_are_centered_unit_vectors_and_sigma0_is_their_spread():
    data = _toy_data()
    tasks = digit_tasks.make_tasks(data, "mirrors", 20)
    means = [digit_tasks.mirror(data.train_x[p], how).mean(axis=0, dtype=np.float64)
             for p, how in zip(tasks.pools, tasks.mirrors)]
    assert np.allclose(tasks.center, np.mean(means, axis=0))
    images = np.random.default_rng(3).random((2, 7, 4, 4))
    x = digit_tasks.gate_inputs(images, tasks.center)
    expected = (images[0].mean(axis=0) - tasks.center).ravel()
    assert np.allclose(x[0], expected / np.linalg.norm(expected))
    v = np.stack([(m - tasks.center).ravel() / np.linalg.norm((m - tasks.center).ravel()) for m in means])
    assert digit_tasks.input_variance(tasks) == pytest.approx(v.var())
    assert digit_tasks.input_cosines(tasks)[0] == pytest.approx(v[0] @ v[1])
    uncentered = digit_tasks.make_tasks(data, "mirrors", 20, centered=False)
    assert np.all(uncentered.center == 0)


# ---- the network engine (needs the optional JAX extra) -------------------------------------------------

@pytest.fixture(scope="module")
def engine():
    pytest.importorskip("jax", reason="the network engine needs JAX: pip install '.[dnn]'")
    from moecl_verify.numeric import dnn, dnn_moe

    return dnn, dnn_moe


def _tiny(engine, M=3, T=8, epochs=2, termination=True, centered=True):
    dnn, dnn_moe = engine
    tasks = digit_tasks.make_tasks(_toy_data(n=700), "mirrors", 10, centered=centered)
    shape = dnn.NetShape(d=4, classes=10, conv1=2, conv2=2, fc1=4, fc2=4)
    cfg = dnn_moe.DnnMoEConfig(M=M, eta=0.4, alpha=0.4, lam=0.05, Gamma=0.05, termination=termination, T=T, s=20,
                               epochs=epochs, lr=0.2, batch=10)
    return tasks, shape, cfg


def _draws(engine, tasks, shape, cfg, r=0):
    dnn, dnn_moe = engine
    from moecl_verify.numeric.seeding import generator_for

    return dnn_moe.draw_replicate(generator_for(0, "test", "replicate", r), tasks, shape, cfg.T, cfg.s, 3, cfg.epochs)


def test_delta_is_the_squared_change_of_every_parameter(engine):
    dnn, _ = engine
    tasks, shape, cfg = _tiny(engine)
    draws = _draws(engine, tasks, shape, cfg)
    x, y = tasks.batch(int(draws.tasks[0]), draws.picks[0])
    new, delta, errors = dnn.expert_round(draws.init, x, y, draws.orders[0], np.float32(0.2), tasks.test_x,
                                          tasks.test_y, batch=10)
    by_hand = sum(float(np.sum((np.asarray(a, dtype=np.float64) - b) ** 2)) for a, b in zip(new, draws.init))
    assert float(delta) == pytest.approx(by_hand, rel=1e-4) and float(delta) > 0
    out = np.asarray(dnn.forward(new, tasks.test_x[2]))
    assert float(errors[2]) == pytest.approx(np.mean(np.sum((out - tasks.test_y[2]) ** 2, axis=1)), rel=1e-5)


def test_gate_update_matches_finite_differences_of_the_task_loss(engine):
    """The gate step of a round with a trained network's Delta is -eta times the gradient of L_loc + L_aux
    (numeric.gate.task_loss), taken here by central differences."""
    dnn, dnn_moe = engine
    tasks, shape, cfg = _tiny(engine, M=3)
    draws = _draws(engine, tasks, shape, cfg)
    x_img, y = tasks.batch(int(draws.tasks[0]), draws.picks[0])
    _, delta, _ = dnn.expert_round(draws.init, x_img, y, draws.orders[0], np.float32(0.2), tasks.test_x,
                                   tasks.test_y, batch=10)
    rng = np.random.default_rng(5)
    theta = rng.normal(scale=0.3, size=(1, 3, 16))
    x = digit_tasks.gate_inputs(x_img, tasks.center)[None]
    chosen, t = np.array([1]), 4
    counts = np.array([[1.0, 2.0, 1.0]])  # including round t
    past = np.array([0.2, 0.5, 0.3])  # sum over tau < t of pi_m 1{m_tau = m}
    pi = np.exp(theta[0] @ x[0]) / np.exp(theta[0] @ x[0]).sum()
    new = dnn_moe.gate_step(theta, x, pi[None], chosen, np.array([float(delta)]), counts, t, cfg, np.zeros(1, bool))

    def loss(th):
        return task_loss(th, x[0], 1, float(delta), counts[0] / t, past, t, cfg.alpha)

    h = 1e-6
    numeric = np.zeros_like(theta[0])
    for idx in np.ndindex(*numeric.shape):
        up, down = theta[0].copy(), theta[0].copy()
        up[idx] += h
        down[idx] -= h
        numeric[idx] = (loss(up) - loss(down)) / (2 * h)
    assert np.allclose((theta[0] - new[0]) / cfg.eta, numeric, atol=1e-6)
    frozen = dnn_moe.gate_step(theta, x, pi[None], chosen, np.array([float(delta)]), counts, t, cfg, np.ones(1, bool))
    assert np.array_equal(frozen, theta)


def test_routing_is_the_linear_engines_routing_of_the_recorded_gate_outputs(engine):
    _, dnn_moe = engine
    tasks, shape, cfg = _tiny(engine, M=3, T=10)
    draws = _draws(engine, tasks, shape, cfg)
    run = dnn_moe.run_replicate(tasks, shape, cfg, draws)
    assert np.array_equal(run["chosen"], route(run["h"], cfg.lam * draws.noise[:, :cfg.M]))
    assert np.all(run["h"][0] == 0) and run["chosen"][0] == np.argmax(draws.noise[0, :cfg.M])  # Theta_0 = 0
    assert np.array_equal(np.bincount(run["chosen"], minlength=cfg.M), run["loads"])
    assert len(set(run["h"][:, 0] - run["h"][:, 1])) > 1  # the gate moved


def test_forgetting_and_generalization_follow_eq_15_16_by_a_plain_loop(engine):
    _, dnn_moe = engine
    rng = np.random.default_rng(7)
    R, T, M, N = 3, 9, 4, 3
    errors = rng.random((R, T, M, N))
    chosen, tasks = rng.integers(M, size=(R, T)), rng.integers(N, size=(R, T))
    E, F, G = dnn_moe.forgetting_generalization(errors, chosen, tasks)
    for r in range(R):
        for t in range(1, T + 1):
            def err(tau, at):  # E_tau(w_at^(m_tau)), rounds 1-based
                return errors[r, at - 1, chosen[r, tau - 1], tasks[r, tau - 1]]

            assert E[r, t - 1] == pytest.approx(err(t, t))
            assert G[r, t - 1] == pytest.approx(sum(err(tau, t) for tau in range(1, t + 1)) / t)
            if t == 1:
                assert np.isnan(F[r, 0])
            else:
                assert F[r, t - 1] == pytest.approx(sum(err(tau, t) - err(tau, tau) for tau in range(1, t)) / (t - 1))


def test_termination_freezes_the_gate_and_the_fork_equals_a_run_from_scratch(engine):
    dnn, dnn_moe = engine
    tasks, shape, cfg = _tiny(engine, M=2, T=12, termination=True)
    cfg = dataclasses.replace(cfg, Gamma=10.0)  # every expert marked at the first check: freeze at T1 + 1
    draws = _draws(engine, tasks, shape, cfg)
    on, off = dnn_moe.run_replicate(tasks, shape, cfg, draws, fork=True)
    T1 = cfg.exploration_rounds
    assert on["freeze_round"] == T1 + 1
    # Frozen before the update of round T1 + 1: from then on the outputs are the final gate times the inputs.
    inputs = np.stack([digit_tasks.gate_inputs(tasks.batch(int(n), p)[0], tasks.center)
                       for n, p in zip(draws.tasks, draws.picks)])
    assert np.allclose(on["h"][T1:], inputs[T1:] @ on["theta"].T)
    assert not np.allclose(on["h"][:T1], inputs[:T1] @ on["theta"].T)
    scratch = dnn_moe.run_replicate(tasks, shape, dataclasses.replace(cfg, termination=False), draws)
    for name in scratch:
        assert np.array_equal(off[name], scratch[name]), name
    assert not np.array_equal(off["h"], on["h"])


def test_chunks_are_deterministic_and_independent_of_grouping(engine):
    dnn, dnn_moe = engine
    tasks, shape, cfg = _tiny(engine, M=2, T=5)
    kw = dict(tasks=tasks, shape=shape, cfg=cfg, seed=3, key=("t",), noise_experts=3, fork=True,
              libraries=dnn.library_versions())
    both = dnn_moe.dnn_moe_chunk(replicates=(0, 1), **kw)
    again = dnn_moe.dnn_moe_chunk(replicates=(0, 1), **kw)
    second = dnn_moe.dnn_moe_chunk(replicates=(1,), **kw)
    for name in both:
        assert np.array_equal(both[name], again[name], equal_nan=True)
        assert np.array_equal(both[name][1:], second[name], equal_nan=True)
    with pytest.raises(ValueError, match="keyed for"):
        dnn_moe.dnn_moe_chunk(replicates=(0,), **{**kw, "libraries": {"jax": "0"}})


def test_convolution_and_pooling_are_xlas_own_on_random_inputs(engine):
    """conv3x3 (shifted copies times the kernel) and max_pool2 (a reshape) against XLA's convolution and
    window maximum, which they replace for speed."""
    dnn, _ = engine
    import jax

    rng = np.random.default_rng(11)
    x = rng.normal(size=(3, 6, 6, 2)).astype(np.float32)
    w = rng.normal(size=(3, 3, 2, 5)).astype(np.float32)
    reference = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    assert np.allclose(dnn.conv3x3(x, w), reference, atol=1e-5)
    pooled = jax.lax.reduce_window(x, -np.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    assert np.array_equal(dnn.max_pool2(x), pooled)


def test_more_epochs_replay_the_first_epochs_orders_and_every_other_draw(engine):
    # The epochs check compares a run with twice the epochs against the same run: every draw is shared, and the
    # first epochs of every round are visited in the same orders.
    tasks, shape, short = _tiny(engine, epochs=2)
    _, _, long = _tiny(engine, epochs=4)
    a, b = _draws(engine, tasks, shape, short), _draws(engine, tasks, shape, long)
    for name in ("tasks", "picks", "noise"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    assert all(np.array_equal(x, y) for x, y in zip(a.init, b.init))
    assert a.orders.shape[1:] == (2, short.s) and b.orders.shape[1:] == (4, short.s)
    assert np.array_equal(a.orders, b.orders[:, :2]) and not np.array_equal(b.orders[:, 2:], b.orders[:, :2])
    assert all(sorted(row) == list(range(short.s)) for row in b.orders.reshape(-1, short.s))


def test_a_round_trained_in_two_halves_is_the_same_training(engine):
    # The probe cuts a round's training in two; the steps are the same, so the network is (up to rounding).
    dnn, dnn_moe = engine
    tasks, shape, cfg = _tiny(engine, epochs=4)
    draws = _draws(engine, tasks, shape, cfg)
    x, y = tasks.batch(int(draws.tasks[0]), draws.picks[0])
    rest = (np.float32(0.2), tasks.test_x, tasks.test_y)
    new, delta, errors = dnn.expert_round(draws.init, x, y, draws.orders[0], *rest, batch=10)
    mid, _, _ = dnn.expert_round(draws.init, x, y, draws.orders[0][:2], *rest, batch=10)
    end, _, end_errors = dnn.expert_round(mid, x, y, draws.orders[0][2:], *rest, batch=10)
    assert np.allclose(np.asarray(end_errors), np.asarray(errors), rtol=1e-5)
    assert np.isclose(float(dnn.squared_change_jit(end, draws.init)), float(delta), rtol=1e-5)


def test_probe_epochs_are_recorded_for_the_routed_expert_and_change_nothing_else(engine):
    dnn, dnn_moe = engine
    tasks, shape, cfg = _tiny(engine, epochs=4)
    draws = _draws(engine, tasks, shape, cfg)
    plain = dnn_moe.run_replicate(tasks, shape, cfg, draws)
    probed = dnn_moe.run_replicate(tasks, shape, dataclasses.replace(cfg, probe_epochs=2), draws)
    assert np.array_equal(plain["chosen"], probed["chosen"])
    assert np.allclose(plain["errors"], probed["errors"], rtol=1e-5)
    assert probed["probe_errors"].shape == (cfg.T, tasks.N) and "probe_errors" not in plain
    assert np.allclose(probed["delta"], plain["delta"], rtol=1e-5)
    # Round 1 starts from the replicate's initial network: its probe is that network after 2 epochs.
    x, y = tasks.batch(int(draws.tasks[0]), draws.picks[0])
    _, _, half = dnn.expert_round(draws.init, x, y, draws.orders[0][:2], np.float32(0.2), tasks.test_x, tasks.test_y,
                                  batch=10)
    assert np.allclose(probed["probe_errors"][0], np.asarray(half), rtol=1e-5)
    assert not np.allclose(probed["probe_errors"][0], probed["errors"][0, probed["chosen"][0]])
    with pytest.raises(ValueError, match="probe_epochs"):
        dataclasses.replace(cfg, probe_epochs=4)
