"""The toy pack as another distribution would ship it: its package on a path, and a distribution's metadata
naming it under the entry-point group moecl_verify.packs."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

TOY_SOURCE = Path(__file__).parent / "toy"


@pytest.fixture
def toy_path(tmp_path) -> str:
    """A PYTHONPATH on which the toy pack is installed (its source, and its dist-info with the entry point)."""
    site = tmp_path / "site"
    info = site / "moecl_toy_pack-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: moecl-toy-pack\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[moecl_verify.packs]\ntoy = moecl_toy_pack:PACK\n", encoding="utf-8")
    return os.pathsep.join([str(site), str(TOY_SOURCE)])


@pytest.fixture
def toy_installed(toy_path, monkeypatch):
    """The toy pack importable and discoverable in this process."""
    for entry in reversed(toy_path.split(os.pathsep)):
        monkeypatch.syspath_prepend(entry)
    yield
    from moecl_verify.checks import kinds

    for module in [m for m in kinds.modules() if m.__name__.startswith("moecl_toy_pack")]:
        kinds.unregister_kind(module)  # its kind of evidence leaves with it
    for name in [m for m in sys.modules if m.startswith("moecl_toy_pack")]:
        del sys.modules[name]
