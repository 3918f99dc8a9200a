import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from moecl_verify.numeric.seeding import generator_for, spawn_key_for


key_parts = st.lists(st.one_of(st.text(max_size=8), st.integers(0, 2**32)), max_size=4)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), key=key_parts)
def test_same_seed_and_key_same_stream(seed, key):
    a = generator_for(seed, *key).standard_normal(8)
    b = generator_for(seed, *key).standard_normal(8)
    np.testing.assert_array_equal(a, b)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), key=key_parts, extra=st.one_of(st.text(max_size=8), st.integers(0, 2**32)))
def test_different_key_different_stream(seed, key, extra):
    a = generator_for(seed, *key).standard_normal(8)
    b = generator_for(seed, *key, extra).standard_normal(8)
    assert not np.array_equal(a, b)


def test_different_seed_different_stream():
    assert not np.array_equal(
        generator_for(0, "x").standard_normal(8), generator_for(1, "x").standard_normal(8)
    )


def test_string_key_uses_crc32():
    import zlib

    assert spawn_key_for("chunk", 3) == (zlib.crc32(b"chunk"), 3)


def test_stable_across_processes_with_different_hash_seeds():
    code = (
        "from moecl_verify.numeric.seeding import generator_for;"
        "print(repr(generator_for(7, 'single_expert', 'chunk', 2).random()))"
    )
    outputs = set()
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, cwd="/"
        )
        outputs.add(result.stdout.strip())
    outputs.add(repr(generator_for(7, "single_expert", "chunk", 2).random()))
    assert len(outputs) == 1


@pytest.mark.parametrize("bad", [-1, 1.5, None, True])
def test_bad_key_parts_rejected(bad):
    with pytest.raises((ValueError, TypeError)):
        generator_for(0, bad)


@pytest.mark.parametrize("bad", [-1, 1.0, "0"])
def test_bad_seed_rejected(bad):
    with pytest.raises(ValueError, match="seed"):
        generator_for(bad)
