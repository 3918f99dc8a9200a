"""What a faulty or clashing pack does to the command line: one line, never a traceback, and the other
packs keep working."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.app


def _install(site: Path, name: str, module: str, source: str) -> None:
    """A distribution on ``site``: package ``module`` with ``source`` as its __init__, and an entry point."""
    (site / module).mkdir(parents=True)
    (site / module / "__init__.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = site / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[moecl_verify.packs]\n{name} = {module}:PACK\n", encoding="utf-8")


def _cli(site: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, "-m", "moecl_verify", *args], capture_output=True, text=True, env=env,
                          cwd=site, timeout=300)


CLASHING = """
    from moecl_verify.checks.pack import Command, Pack, RunOption

    def _bad(text):
        raise ValueError(f"{text!r} is not a colour")

    PACK = Pack(name="aapk", title="A pack that takes names", source="-", claims="clash_pack",
                commands=(Command("diff", "not the tool's diff", lambda p: None, lambda a, i: 0),
                          Command("simulate", "not the paper's simulator", lambda p: None, lambda a, i: 3)),
                options=(RunOption("colour", "--mnist", "C", "a clashing flag", _bad),))
"""


@pytest.mark.heavy
def test_a_broken_pack_is_named_and_the_others_keep_working(tmp_path):
    _install(tmp_path, "broken", "broken_pack", "import no_such_module_at_all\n")
    listing = _cli(tmp_path, "packs")
    assert listing.returncode == 0
    assert "moe-cl" in listing.stdout and "broken" in listing.stdout and "does not load" in listing.stdout
    claims = _cli(tmp_path, "list")
    assert claims.returncode == 0 and "lemma4" in claims.stdout
    assert "pack 'broken'" in claims.stderr and "Traceback" not in claims.stderr
    asked = _cli(tmp_path, "list", "--pack", "broken")
    assert asked.returncode == 2 and "does not load: ModuleNotFoundError" in asked.stderr.strip().splitlines()[-1]


@pytest.mark.heavy
def test_a_pack_cannot_take_the_tools_or_the_default_packs_names(tmp_path):
    _install(tmp_path, "aapk", "clash_pack", CLASHING)
    helped = _cli(tmp_path, "--help")
    assert helped.returncode == 0, helped.stderr
    # The tool's diff and the default pack's simulate keep their names; the newcomer's are prefixed.
    assert "aapk-diff" in helped.stdout and "aapk-simulate" in helped.stdout
    simulated = _cli(tmp_path, "simulate", "--model", "single", "--replicates", "20", "--T", "3", "--json")
    assert simulated.returncode == 0 and simulated.stdout.lstrip().startswith(("{", "["))
    assert _cli(tmp_path, "aapk-simulate").returncode == 3
    # Its option's flag was taken by the default pack's --mnist: it gets its own, and its check's ValueError is
    # one line with exit 2.
    ran = _cli(tmp_path, "run", "--pack", "aapk", "--aapk-mnist", "blue", "--out", str(tmp_path / "o"))
    assert ran.returncode == 2
    assert ran.stderr.strip().splitlines()[-1] == "moecl-verify: error: --aapk-mnist: 'blue' is not a colour"
    assert not (tmp_path / "o").exists()


def test_budgets_must_cover_every_budget():
    from moecl_verify.checks.pack import Pack

    with pytest.raises(ValueError, match="missing full"):
        Pack(name="half", title="-", source="-", claims="x", budgets={"smoke": 1, "standard": 2})


def test_a_claim_belongs_to_the_module_that_registers_it(tmp_path, monkeypatch):
    """A measure built elsewhere (here functools.partial) still puts the claim in its module's pack."""
    package = tmp_path / "partial_pack"
    (package / "claims").mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from moecl_verify.checks.pack import Pack\n"
        "PACK = Pack(name='partial', title='-', source='-', claims='partial_pack.claims')\n", encoding="utf-8")
    (package / "claims" / "__init__.py").write_text("", encoding="utf-8")
    (package / "claims" / "one.py").write_text(
        "import functools\n"
        "from moecl_verify.checks.registry import Claim, register\n"
        "def _measure(ctx, n):\n    return []\n"
        "register(__name__, Claim(id='one', source='-', kind='bound', statement='', preconditions=(),\n"
        "               measure=functools.partial(_measure, n=1)))\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import partial_pack

    from moecl_verify.checks.registry import all_claims

    assert [c.id for c in all_claims(partial_pack.PACK)] == ["one"]
