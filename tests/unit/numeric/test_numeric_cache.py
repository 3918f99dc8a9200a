"""The results cache: round trip, corruption never used, no pickle, the lock, and reuse by the chunk runner."""

import json

import numpy as np
import pytest

from moecl_verify.numeric.cache import CacheLocked, ResultCache, clear, info
from moecl_verify.numeric.chunks import ChunkRunner, cache_key
from moecl_verify.numeric.moe import MoEConfig, simulate_moe
from moecl_verify.numeric.pool import make_pool
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.numeric.single_expert import simulate_single_expert

# Keys as the tool makes them (a SHA-256 digest; claim records prefixed): the cache stores no other name.
K = "ab" * 32
CLAIM_A, CLAIM_B, CLAIM_C = ("claim-" + c * 64 for c in "abc")


def _pool(N=3, d=6):
    return make_pool(generator_for(0, "cache-test"), N=N, d=d, sigma0=0.5)


def _simulate(runner, **kw):
    return simulate_single_expert(_pool(), R=40, T=5, s=2, seed=1, key=("cache-test",), chunk_size=10, runner=runner, **kw)


def _same(a, b):
    for name in ("tasks", "model_error", "forgetting", "generalization", "final_w"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_round_trip_and_stats(tmp_path):
    arrays = {"x": np.arange(6.0).reshape(2, 3), "n": np.array([1, 2], dtype=np.int64)}
    with ResultCache(tmp_path) as cache:
        assert cache.get(K) is None
        cache.put(K, arrays, {"what": "test"})
        back = cache.get(K)
        assert cache.stats.hits == 1 and cache.stats.misses == 1
    assert set(back) == {"x", "n"} and back["x"].dtype == np.float64
    np.testing.assert_array_equal(back["x"], arrays["x"])
    assert not list(tmp_path.glob("*.tmp")), "temporary files must be renamed or removed"


def test_orphaned_temporary_files_are_neither_entries_nor_kept(tmp_path):
    with ResultCache(tmp_path) as cache:
        cache.put(K, {"x": np.ones(2)}, {})
    (tmp_path / ".k.json.abc123.tmp").write_text("{half a descri")  # a writer killed mid-write
    assert info(tmp_path).entries == 1
    with ResultCache(tmp_path) as cache:
        assert cache.get(K) is not None
    assert not list(tmp_path.glob("*.tmp"))


def test_rerun_hits_every_chunk_and_gives_identical_arrays(tmp_path):
    plain = _simulate(None)
    with ResultCache(tmp_path) as cache:
        first = _simulate(ChunkRunner(cache=cache))
        assert (cache.stats.hits, cache.stats.misses) == (0, 4)
        second = _simulate(ChunkRunner(cache=cache))
        assert (cache.stats.hits, cache.stats.misses) == (4, 4)
    _same(plain, first)
    _same(plain, second)


@pytest.mark.parametrize("damage", ["flip", "truncate", "checksum", "description not an object"])
def test_corrupt_entry_is_reported_and_recomputed_never_used(tmp_path, damage):
    plain = _simulate(None)
    with ResultCache(tmp_path) as cache:
        _simulate(ChunkRunner(cache=cache))
    victim = sorted(tmp_path.glob("*.npz"))[0]
    meta = victim.with_suffix(".json")
    if damage == "flip":
        data = bytearray(victim.read_bytes())
        data[len(data) // 2] ^= 0xFF
        victim.write_bytes(bytes(data))
    elif damage == "truncate":
        victim.write_bytes(victim.read_bytes()[:50])
    elif damage == "description not an object":
        meta.write_text("[]")
    else:
        doc = json.loads(meta.read_text())
        doc["sha256"] = "0" * 64
        meta.write_text(json.dumps(doc))
    problems = []
    with ResultCache(tmp_path, on_problem=problems.append) as cache:
        again = _simulate(ChunkRunner(cache=cache))
        assert cache.stats.corrupt == 1 and cache.stats.hits == 3 and cache.stats.misses == 1
    assert len(problems) == 1 and "corrupt" in problems[0] and "recomputing" in problems[0]
    _same(plain, again)
    with ResultCache(tmp_path) as cache:  # the recomputed entry replaced the corrupt one
        _simulate(ChunkRunner(cache=cache))
        assert cache.stats.hits == 4 and cache.stats.corrupt == 0


def test_entry_without_its_description_counts_as_absent(tmp_path):
    with ResultCache(tmp_path) as cache:
        cache.put(K, {"x": np.ones(3)}, {})
    (tmp_path / f"{K}.json").unlink()  # as if killed between the two renames
    with ResultCache(tmp_path) as cache:
        assert cache.get(K) is None and cache.stats.corrupt == 0
    assert info(tmp_path).incomplete == 1


def test_pickled_content_is_refused_even_with_a_valid_checksum(tmp_path):
    with ResultCache(tmp_path) as cache:
        cache.put(K, {"x": np.array([{"evil": 1}], dtype=object)}, {})
        problems = []
        cache._on_problem = problems.append
        assert cache.get(K) is None
    assert problems and "unloadable" in problems[0]


def test_a_second_holder_is_refused_while_the_first_holds_the_lock(tmp_path):
    with ResultCache(tmp_path):
        with pytest.raises(CacheLocked, match="locked by another run"):
            ResultCache(tmp_path).__enter__()
    with ResultCache(tmp_path):  # released on exit
        pass


def test_keys_separate_seed_chunk_and_configuration():
    pool = _pool()
    cfg = MoEConfig(M=4, eta=0.5, alpha=0.5, lam=0.1, Gamma=0.1)
    captured = []

    class Capture:
        name, workers = "capture", 1

        def map_unordered(self, chunks):
            captured.extend(chunks)
            from moecl_verify.numeric.chunks import compute

            for i, chunk in enumerate(chunks):
                yield i, compute(chunk)

    for seed, M in ((0, 4), (1, 4), (0, 5)):
        simulate_moe(pool, MoEConfig(M=M, eta=0.5, alpha=0.5, lam=0.1, Gamma=0.1), R=4, T=3, s=2, seed=seed,
                     chunk_size=2, runner=ChunkRunner(executor=Capture()))
    keys = [cache_key(c) for c in captured]
    assert len(keys) == 6 and len(set(keys)) == 6
    assert cfg.M == 4


def test_results_do_not_depend_on_finishing_order():
    class Reversed:
        name, workers = "reversed", 1

        def map_unordered(self, chunks):
            from moecl_verify.numeric.chunks import compute

            for i in reversed(range(len(chunks))):
                yield i, compute(chunks[i])

    _same(_simulate(None), _simulate(ChunkRunner(executor=Reversed())))


def test_info_and_clear(tmp_path):
    with ResultCache(tmp_path) as cache:
        _simulate(ChunkRunner(cache=cache))
    summary = info(tmp_path)
    assert summary.entries == 4 and summary.total_bytes > 0 and len(summary.engine_versions) == 1
    assert "4 entries" in str(summary)
    assert clear(tmp_path) == 8
    assert info(tmp_path).entries == 0


def test_json_records_round_trip_and_a_corrupt_or_discarded_one_is_reported(tmp_path):
    problems = []
    with ResultCache(tmp_path, on_problem=problems.append) as cache:
        cache.put_record(CLAIM_A, {"x": [1, 2.5, None]}, {"claim": "a"})
        assert cache.get_record(CLAIM_A) == {"x": [1, 2.5, None]} and cache.get_record(CLAIM_B) is None
        (tmp_path / f"{CLAIM_A}.record").write_bytes(b'{"x": [1, 2.5, nul')  # truncated
        assert cache.get_record(CLAIM_A) is None and not (tmp_path / f"{CLAIM_A}.record").exists()
        cache.put_record(CLAIM_C, {"x": 1}, {})
        cache.discard_record(CLAIM_C, "undecodable")
        assert cache.get_record(CLAIM_C) is None
        assert cache.stats.hits == cache.stats.misses == 0  # records never count as chunk lookups
    assert len(problems) == 2 and all("corrupt" in p for p in problems)


def test_a_chunks_key_covers_the_first_party_code_it_reaches():
    """Lemma 2's exact grid-audit chunks compute with theory/routing.py, so an edit there must change their key;
    the simulator's chunks do not depend on where or whether they are cached."""
    from moecl_verify.packs.moe_cl.experiments import smooth_router
    from moecl_verify.numeric.chunks import module_closure

    audit = smooth_router.grid_audit_chunk.__module__
    P = "moecl_verify."
    assert {audit, P + "theory.routing"} <= set(module_closure(audit))
    engine = set(module_closure(P + "numeric.moe"))
    assert {P + "numeric.moe", P + "numeric.expert", P + "numeric.gate", P + "numeric.draws"} <= engine
    assert not engine & {P + "numeric.cache", P + "numeric.chunks", P + "numeric.executors"} and not any(
        m.startswith((P + "theory", P + "checks")) for m in engine)

_SIMULATIONS = """
import json, sys
from moecl_verify.numeric.moe import MoEConfig, simulate_moe
from moecl_verify.numeric.pool import make_pool
from moecl_verify.numeric.seeding import generator_for
from moecl_verify.numeric.single_expert import simulate_single_expert
pool = make_pool(generator_for(0, "cache-test"), N=3, d=6, sigma0=0.5)
before = set(sys.modules)
simulate_single_expert(pool, R=40, T=5, s=2, seed=1, key=("cache-test",), chunk_size=10)
cfg = MoEConfig(M=3, eta=0.5, alpha=0.5, lam=0.3, Gamma=0.3)
for engine in (None, "numpy"):
    simulate_moe(pool, cfg, R=4, T=3, s=2, seed=1, key=("cache-test",), engine=engine)
print(json.dumps(sorted(name for name in sys.modules if name.startswith("moecl_verify."))))
"""


def test_the_engine_version_hashes_every_module_a_simulation_runs():
    """A cache key must change with any code that shapes a chunk's arrays.  Every first-party module a fresh
    process loads to run simulations by both engines (draw streams, compiled kernels and samplers included)
    is in the import closure the chunks' key hashes, but the plumbing that only moves and stores results; the
    paper's deep-network engines, which the linear engines never import, are not."""
    import json
    import subprocess
    import sys

    from moecl_verify.numeric import chunks, moe, single_expert, sources

    out = subprocess.run([sys.executable, "-c", _SIMULATIONS], check=True, capture_output=True, text=True)
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    P = "moecl_verify.numeric."
    hashed = set()
    for module in (moe.__name__, single_expert.__name__):
        hashed |= set(sources.import_closure((module,), tuple(chunks.FIRST_PARTY), chunks.INFRASTRUCTURE))
    assert {P + "streams", P + "sampling", P + "kernels", P + "moe"} <= hashed
    assert loaded - hashed <= set(chunks.INFRASTRUCTURE) | {P + "sources"}, loaded - hashed
    assert not hashed & set(chunks.INFRASTRUCTURE)
    assert not any(name.startswith(P + "dnn") or ".theory" in name for name in hashed)


def test_a_full_disk_drops_the_entry_says_so_once_and_the_run_goes_on(tmp_path, monkeypatch):
    import errno

    from moecl_verify.numeric import cache as cache_module

    writes = []

    def full(path, data):
        writes.append(path)
        raise OSError(errno.ENOSPC, "No space left on device")

    problems = []
    with ResultCache(tmp_path, on_problem=problems.append) as cache:
        monkeypatch.setattr(cache_module, "_atomic_write", full)
        cache.put("a" * 64, {"x": np.arange(3)}, {"what": "chunk"})
        cache.put_record("b" * 64, {"r": 1}, {"what": "record"})
        assert cache.full and len(writes) == 1  # the second write was not attempted
        assert len(problems) == 1 and "is full" in problems[0] and "goes on" in problems[0]
        assert cache.get("a" * 64) is None
        assert not list(tmp_path.glob("a*")) and not list(tmp_path.glob("b*"))


def test_other_write_errors_still_fail_the_run(tmp_path, monkeypatch):
    import errno

    from moecl_verify.numeric import cache as cache_module

    def denied(path, data):
        raise OSError(errno.EACCES, "Permission denied")

    with ResultCache(tmp_path) as cache:
        monkeypatch.setattr(cache_module, "_atomic_write", denied)
        with pytest.raises(OSError):
            cache.put("a" * 64, {"x": np.arange(3)}, {"what": "chunk"})
        assert not cache.full
