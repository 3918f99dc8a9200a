"""Executors: a process pool and a two-worker Dask LocalCluster give results identical to in-process."""

import pytest

from moecl_verify.numeric.chunks import ChunkRunner
from moecl_verify.numeric.executors import InProcess, ProcessPool, make_executor
from moecl_verify.numeric.moe import MoEConfig, simulate_moe
from moecl_verify.numeric.pool import make_pool
from moecl_verify.numeric.seeding import generator_for

def _sweep(runner):
    """A small sigma0 sweep of Algorithm 1, several chunks per point."""
    out = []
    for sigma0 in (0.4, 0.2, 0.1):
        pool = make_pool(generator_for(0, "executor-test", str(sigma0)), N=3, d=6, sigma0=sigma0)
        cfg = MoEConfig(M=5, eta=sigma0**0.5, alpha=sigma0**0.5, lam=sigma0**1.25, Gamma=sigma0**1.25)
        run = simulate_moe(pool, cfg, R=24, T=12, s=3, seed=2, key=("executor-test", str(sigma0)), chunk_size=6,
                           runner=runner)
        out.append(run.to_arrays())
    return out

def _identical(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.keys() == y.keys()
        for k in x:
            assert x[k].tobytes() == y[k].tobytes(), k

@pytest.fixture(scope="module")
def reference():
    return _sweep(ChunkRunner(executor=InProcess()))

def test_process_pool_matches_in_process(reference):
    with ProcessPool(2) as pool:
        _identical(reference, _sweep(ChunkRunner(executor=pool)))

def test_dask_local_cluster_with_two_workers_matches_in_process(reference):
    pytest.importorskip("distributed", reason='the optional extra is absent: pip install ".[dask]"')
    with make_executor("dask", jobs=2) as dask:
        assert len(dask._client.scheduler_info()["workers"]) == 2
        _identical(reference, _sweep(ChunkRunner(executor=dask)))

def test_bad_executor_settings_are_refused():
    with pytest.raises(ValueError, match="jobs must"):
        ProcessPool(0)
    with pytest.raises(ValueError, match="executor must"):
        make_executor("threads")
    with pytest.raises(RuntimeError, match="entered"):
        list(ProcessPool(1).map_unordered([]))
    assert isinstance(make_executor("inprocess", jobs=1), InProcess)
