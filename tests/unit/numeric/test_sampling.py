"""The compiled normal draws (numeric.sampling) are numpy's, bit for bit, and leave the generator where numpy
would; Definition 1's fused assembly is the scale-then-overwrite the streams did with numpy."""

import numpy as np
import pytest

from moecl_verify.numeric.pool import make_pool
from moecl_verify.numeric.sampling import definition1_features, standard_normal
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.numeric.streams import DrawStream


@pytest.mark.parametrize("shape", [(1,), (3, 7), (64, 50, 10, 6), (0, 4)])
def test_standard_normal_is_numpys_and_so_is_the_state_after(shape):
    ours, theirs = generator_for(11, "sampling", len(shape)), generator_for(11, "sampling", len(shape))
    got = standard_normal(ours, shape)
    want = theirs.standard_normal(shape)
    assert got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    # the next draws of every kind agree: the bit stream was consumed exactly as numpy consumes it
    assert ours.random(5).tobytes() == theirs.random(5).tobytes()
    assert ours.standard_normal(5).tobytes() == theirs.standard_normal(5).tobytes()


def test_standard_normal_covers_the_ziggurats_rare_paths():
    """A million draws leave the ziggurat's rectangles about 7,000 times (numpy's figure: 99.3% return at
    once), for a wedge test or the tail beyond r = 3.654 (about 260 draws), each consuming extra uniforms:
    equality over all of them checks those paths too."""
    ours, theirs = generator_for(5, "tails"), generator_for(5, "tails")
    got = standard_normal(ours, (1_000_000,))
    want = theirs.standard_normal(1_000_000)
    assert got.tobytes() == want.tobytes()
    assert (np.abs(got) > 3.6541528853610088).sum() > 100


def _numpy_definition1(gen, sigma_t, positions, beta, V, tasks, d, s):
    """The streams' earlier numpy construction, the reference."""
    B, R = positions.shape
    X = gen.standard_normal((B, R, d, s))
    X *= sigma_t
    b_idx, r_idx = np.indices((B, R), sparse=True)
    X[b_idx, r_idx, :, positions] = beta[..., None] * V[tasks.T]
    return X


@pytest.mark.parametrize("sigma_t", [0.1, 0.0, 2.5])
def test_definition1_features_is_the_numpy_construction(sigma_t):
    pool = make_pool(generator_for(2, "sampling", "pool"), N=5, d=7, sigma0=0.3, signal_scale=1 / 0.3)
    rng = generator_for(2, "sampling", "aux")
    B, R, s = 9, 13, 4
    positions = rng.integers(0, s, size=(B, R))
    beta = 1.0 - rng.random((B, R))
    tasks = rng.integers(0, pool.N, size=(R, B))
    ours, theirs = generator_for(3, "def1"), generator_for(3, "def1")
    got = definition1_features(ours, sigma_t, positions, beta, pool.V, tasks, pool.d, s)
    want = _numpy_definition1(theirs, sigma_t, positions, beta, pool.V, tasks, pool.d, s)
    assert got.tobytes() == want.tobytes()  # bytes: also the signs of zeros at sigma_t = 0
    assert ours.random() == theirs.random()


def test_a_stream_block_is_the_numpy_construction():
    """DrawStream's Definition 1 block: tasks, then features through the compiled fill, as before."""
    pool = make_pool(generator_for(3, "streams", "pool"), N=4, d=6, sigma0=0.3, signal_scale=1 / 0.3)
    stream = DrawStream(pool=pool, R=11, T=30, s=3, seed=4, key=("s",), features="definition1", M=2, block=8)
    positions_gen, beta_gen = stream._generator("positions"), stream._generator("beta")
    features_gen = stream._generator("features")
    for block in stream.blocks():
        B = block.size
        positions = np.minimum((3 * positions_gen.random((B, 11))).astype(np.int64), 2)
        beta = 1.0 - beta_gen.random((B, 11))
        want = _numpy_definition1(features_gen, stream.sigma_t, positions, beta, pool.V, block.tasks, pool.d, 3)
        assert block.X.tobytes() == want.swapaxes(0, 1).tobytes()


def test_the_compiled_sampler_agrees_here_and_a_disagreement_falls_back_to_numpy(monkeypatch):
    """The once-per-process check passes with the installed numba and numpy; where it fails, both fills are
    numpy's own, with the same numbers."""
    from moecl_verify.numeric import sampling

    assert sampling.compiled_agrees()
    monkeypatch.setattr(sampling, "_AGREES", [False])
    pool = make_pool(generator_for(2, "sampling", "pool"), N=3, d=5, sigma0=0.3, signal_scale=1 / 0.3)
    rng = generator_for(2, "sampling", "fallback")
    positions, beta, tasks = rng.integers(0, 3, size=(4, 6)), 1.0 - rng.random((4, 6)), rng.integers(0, 3, size=(6, 4))
    ours, theirs = generator_for(9, "fb"), generator_for(9, "fb")
    got = definition1_features(ours, 0.1, positions, beta, pool.V, tasks, pool.d, 3)
    assert got.tobytes() == _numpy_definition1(theirs, 0.1, positions, beta, pool.V, tasks, pool.d, 3).tobytes()
    assert standard_normal(ours, (7,)).tobytes() == theirs.standard_normal(7).tobytes()
