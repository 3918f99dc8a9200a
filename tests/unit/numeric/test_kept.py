"""numeric.kept: a run that keeps only what its claims read holds the same values as the whole run, far fewer
bytes, and refuses a read of anything it did not keep."""

import numpy as np
import pytest

from moecl_verify.numeric.chunks import ChunkRunner
from moecl_verify.numeric.kept import Keep, KeptRun, RoundColumns, reduce_arrays
from moecl_verify.numeric.moe import MoEConfig, simulate_moe
from moecl_verify.numeric.pool import make_pool
from moecl_verify.numeric.seeding import generator_for

T = 12
KEEP = Keep(whole=("tasks", "chosen", "freeze_round"), rounds={"forgetting": (2, 5, T), "generalization": (T,)})


def _simulate(keep=None, runner=None):
    pool = make_pool(generator_for(3, "kept"), N=3, d=6, sigma0=0.4)
    cfg = MoEConfig(M=4, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.4**1.25)
    return simulate_moe(pool, cfg, R=25, T=T, s=3, seed=1, key=("kept",), chunk_size=10, keep=keep, runner=runner)


@pytest.fixture(scope="module")
def whole_and_kept():
    return _simulate(), _simulate(KEEP)


def test_kept_records_equal_the_whole_run_bit_for_bit(whole_and_kept):
    whole, kept = whole_and_kept
    assert isinstance(kept, KeptRun)
    for name in KEEP.whole:
        got = getattr(kept, name)
        assert got.dtype == getattr(whole, name).dtype and np.array_equal(got, getattr(whole, name))
    for t in (2, 5, T):
        assert np.array_equal(kept.forgetting[:, t - 1], whole.forgetting[:, t - 1], equal_nan=True)
    assert np.array_equal(kept.forgetting[:, -1], whole.forgetting[:, -1])
    assert np.array_equal(kept.generalization[:, -1], whole.generalization[:, -1])
    assert kept.forgetting.shape == whole.forgetting.shape


def test_a_read_of_what_was_not_kept_fails_naming_what_was(whole_and_kept):
    _, kept = whole_and_kept
    with pytest.raises(IndexError, match=r"forgetting: only rounds t in \{2, 5, 12\}"):
        kept.forgetting[:, 3]
    with pytest.raises(IndexError):
        kept.generalization[:, 0]
    with pytest.raises(IndexError):
        kept.forgetting[0]  # not a column read
    with pytest.raises(AttributeError, match="'model_error' was not kept"):
        kept.model_error


def test_the_kept_run_is_a_small_fraction_of_the_whole(whole_and_kept):
    whole, kept = whole_and_kept
    whole_bytes = sum(a.nbytes for a in whole.to_arrays().values())
    assert kept.nbytes < whole_bytes / 3


def test_the_runner_holds_reduced_chunks_only_and_caches_them_whole(tmp_path):
    from moecl_verify.numeric.cache import ResultCache

    seen = []

    class Recording(ChunkRunner):
        def run(self, chunks, progress=None, reduce=None):
            out = super().run(chunks, progress, reduce)
            seen.extend(out)
            return out

    with ResultCache(tmp_path / "cache") as cache:
        kept = _simulate(KEEP, Recording(cache=cache))
        assert all(set(chunk) == {"tasks", "chosen", "freeze_round", "forgetting", "generalization"} for chunk in seen)
        assert all(chunk["forgetting"].shape[1] == 3 for chunk in seen)
        # The cache holds whole chunks: a whole run from the same cache is the whole run.
        whole = _simulate(None, ChunkRunner(cache=cache))
        assert cache.stats.hits == 3
    assert np.array_equal(whole.forgetting[:, 4], kept.forgetting[:, 4], equal_nan=True)
    assert whole.model_error.shape == (25, T)


def test_keep_refuses_a_record_both_whole_and_by_round_and_rounds_below_one():
    with pytest.raises(ValueError, match="either whole or at some rounds"):
        Keep(whole=("forgetting",), rounds={"forgetting": (1,)})
    with pytest.raises(ValueError, match=">= 1"):
        Keep(rounds={"forgetting": (0,)})


def test_rounds_beyond_the_horizon_are_left_out():
    arrays = {"forgetting": np.arange(12.0).reshape(3, 4)}
    out = reduce_arrays(arrays, Keep(rounds={"forgetting": (1, 4, 9)}), T=4)
    assert out["forgetting"].tolist() == [[0.0, 3.0], [4.0, 7.0], [8.0, 11.0]]
    column = RoundColumns(out["forgetting"], (0, 3), 4, "forgetting")
    assert column[:, -1].tolist() == [3.0, 7.0, 11.0]
