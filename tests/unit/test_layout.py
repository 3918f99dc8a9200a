"""The package's shape: one import package, layers that only look down, no cycles, claims named as their ids.

Imports are read from the source with ``ast``, including those inside functions, so an import hidden in a
function body cannot sneak a cycle or an upward dependency past this test.
"""

from __future__ import annotations

import ast
import importlib
import re
import shutil
import sys
import tomllib
from pathlib import Path

import pytest

import moecl_verify

ROOT = Path(__file__).resolve().parents[2]
LAYER_ORDER = ("theory", "numeric", "checks", "reports")  # then the application, moecl_verify itself, then packs
PACKS = "packs"  # the documents: plug-ins above everything, found by entry points, imported by nothing else
P = "moecl_verify"


def _package_dirs() -> dict[str, Path]:
    """Installed package name -> its folder, from the imported package (so an editable install is read too)."""
    dirs = {P: Path(moecl_verify.__file__).parent}
    for layer in (*LAYER_ORDER, PACKS):
        dirs[f"{P}.{layer}"] = Path(importlib.import_module(f"{P}.{layer}").__file__).parent
    return dirs


def _modules() -> dict[str, Path]:
    """Every first-party module name -> its source file."""
    found = {}
    for package, folder in _package_dirs().items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            # The application folder holds only its own modules; the layers are mapped in from their folders.
            if package == P and len(parts) > 1:
                continue
            found[".".join([package, *parts])] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The first-party module an imported name refers to (a module, or the package holding a name)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str) -> set[str]:
    """First-party modules that ``module`` imports anywhere in its source (top level or inside functions)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [_resolve(a.name) for a in node.names if a.name.startswith(P)]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{module}: relative import; the layout test reads absolute imports only"
            base = node.module or ""
            if not base.startswith(P):
                continue
            # ``from package import module`` is an edge to the module; ``from module import name`` to the module.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else _resolve(base) for a in node.names]
        else:
            continue
        out.update(t for t in targets if t and t != module)
    return out


GRAPH = {m: _imports(m) for m in MODULES}


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in LAYER_ORDER:
        return LAYER_ORDER.index(parts[1])
    if len(parts) > 1 and parts[1] == PACKS:
        return len(LAYER_ORDER) + 1
    return len(LAYER_ORDER)  # the application


def test_modules_were_found_in_every_layer():
    layers = {_layer(m) for m in MODULES}
    assert layers == set(range(len(LAYER_ORDER) + 2))
    assert f"{P}.cli" in MODULES and f"{P}.checks.runner" in MODULES and f"{P}.numeric.moe" in MODULES


def test_the_import_reader_sees_imports_inside_functions():
    # moecl_verify.cli imports the renderers inside functions only.
    assert any(m.startswith(f"{P}.reports.") for m in GRAPH[f"{P}.cli"])


def test_a_layer_never_imports_a_higher_one():
    upward = sorted(f"{m} -> {t}" for m, targets in GRAPH.items() for t in targets if _layer(t) > _layer(m))
    assert upward == []


def test_no_import_cycles():
    """Tarjan's strongly connected components over the module graph: every component is a single module."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert cycles == []


def _is_claim_module(module: str) -> bool:
    return module.startswith(f"{P}.packs.moe_cl.claims.") and not MODULES[module].name == "__init__.py"


def _is_experiment_module(module: str) -> bool:
    parts = module.split(".")
    return len(parts) > 3 and parts[1] == PACKS and parts[3] == "experiments"


def _is_entries_module(module: str) -> bool:
    """The shared evidence builders of a pack (``packs/<pack>/entries/``): claim-side, not claims."""
    parts = module.split(".")
    return len(parts) > 3 and parts[1] == PACKS and parts[3] == "entries"


def test_claims_import_no_other_claim_and_experiments_import_no_claim():
    bad = []
    for module, targets in GRAPH.items():
        for t in targets:
            if _is_claim_module(t) and (module.startswith(f"{P}.packs.moe_cl.claims.") or
                                        _is_experiment_module(module) or _is_entries_module(module)):
                bad.append(f"{module} -> {t}")
            # an experiment returns samples; the builders that turn samples into evidence are the claims' side
            if _is_entries_module(t) and _is_experiment_module(module):
                bad.append(f"{module} -> {t}")
    assert bad == []


# --- experiments return samples, never verdicts ------------------------------------------------------------------


def _evidence_and_verdict_names() -> set[str]:
    """What an experiment may not name: every kind of evidence (the registered record types a verdict is decided
    from: ``Measurement``, ``ProportionEvidence``, ``ScalingEvidence``), and decided entries and findings
    (``ClaimResult``, ``exact_result``, ``Slip``).  Samples are fine: arrays, counts (``ProportionRow``), fits
    (``ScalingFit``), test cases (``HorizonTest``, ``MeanTest``) and readings (``Interpretation``)."""
    from moecl_verify.checks import kinds

    evidence = {cls.__name__ for cls in kinds.RECORDS.values() if callable(getattr(cls, "decide", None))}
    return evidence | {"ClaimResult", "exact_result", "Slip"}


def _evidence_and_verdict_uses(source: str) -> list[str]:
    """Each import, name or attribute in ``source`` naming a kind of evidence or a decided entry."""
    forbidden = _evidence_and_verdict_names()
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found += [f"import {a.name}" for a in node.names if a.name.rpartition(".")[2] in forbidden]
        elif isinstance(node, ast.Name) and node.id in forbidden:
            found.append(f"line {node.lineno}: {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in forbidden:
            found.append(f"line {node.lineno}: .{node.attr}")
    return found


def test_experiments_return_samples_never_evidence_or_verdicts():
    """An experiment (``packs/<pack>/experiments/``) builds no evidence and decides nothing: it neither imports nor
    names a kind of evidence, ``ClaimResult``, ``exact_result`` or ``Slip``.  The claims build their evidence from
    its samples, the builders several claims share live in ``packs/<pack>/entries/``."""
    experiments = [m for m in MODULES if _is_experiment_module(m)]
    assert f"{P}.packs.moe_cl.experiments.router_phase" in experiments
    bad = [f"{m}: {use}" for m in sorted(experiments)
           for use in _evidence_and_verdict_uses(MODULES[m].read_text(encoding="utf-8"))]
    assert bad == []


def test_the_sample_rule_would_catch_evidence_built_in_an_experiment():
    assert {"Measurement", "ProportionEvidence", "ScalingEvidence", "ClaimResult", "exact_result"} <= \
        _evidence_and_verdict_names()
    source = ("from moecl_verify.checks.kinds.proportion import ProportionEvidence, ProportionRow\n"
              "from moecl_verify.checks import model\n"
              "def f(rows):\n    return model.exact_result('x')\n")
    assert _evidence_and_verdict_uses(source) == ["import ProportionEvidence", "line 4: .exact_result"]
    assert _evidence_and_verdict_uses("from moecl_verify.checks.kinds.proportion import ProportionRow\n") == []


def test_no_module_imports_another_modules_private_names():
    bad = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(P):
                bad += [f"{module}: from {node.module} import {a.name}" for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")]
            # module._private attribute access on an imported first-party module
        text = path.read_text(encoding="utf-8")
        for alias in re.findall(rf"^\s*from {re.escape(P)}[\w.]* import (\w+)", text, flags=re.M):
            bad += [f"{module}: {alias}.{m}" for m in re.findall(rf"\b{alias}\.(_[a-z]\w*)\(", text)]
    assert bad == []


def test_claim_modules_are_named_for_their_ids():
    from moecl_verify.checks.registry import all_claims, claim_modules

    claims = all_claims()
    by_module: dict[str, list[str]] = {}
    for claim in claims:
        by_module.setdefault(claim.measure.__module__, []).append(claim.id)
    # A module is named for its ids' prefix (lemma11 holds lemma11 and lemma11.step1..5); an experiment
    # beyond the paper, open.<question>, may instead live in its own module open_<question>.
    wrong = [f"{module}: {ids}" for module, ids in by_module.items()
             for i in ids if module.rpartition(".")[2] not in (i.split(".")[0], "_".join(i.split(".")[:2]))]
    assert wrong == []
    # Every module under claims/ registers at least one claim, and every claim comes from there.
    assert set(claim_modules()) == set(by_module)
    assert len(claims) >= 44


def test_pyproject_lists_every_package_folder():
    """setuptools installs only the packages pyproject.toml names; a folder missing there would vanish
    from a non-editable install."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    listed = set(config["packages"])
    mapping = config["package-dir"]
    expected = set()
    for package, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            if package == P and rel.parts:
                continue
            expected.add(".".join([package, *rel.parts]))
    assert listed == expected


def test_no_generic_top_level_package_is_importable_from_the_install():
    """Only moecl_verify is installed: the layer folders are not importable under their own names
    (run from outside the checkout, so the current directory cannot stand in for an install)."""
    import subprocess

    code = ("import importlib.util as u, sys; "
            "print([n for n in ('theory', 'numeric', 'checks', 'reports', 'packs') if u.find_spec(n)])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.heavy
@pytest.mark.slow
def test_a_built_wheel_holds_only_moecl_verify(tmp_path):
    import subprocess
    import zipfile

    # Built from a copy, so the build leaves nothing in the checkout.
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__", ".ci-venv",
                                                                ".moecl-cache", "report", "out"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(source)],
                   check=True, capture_output=True)
    wheel = next(tmp_path.glob("moecl_verify-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert top == {"moecl_verify"}
    for module in ("moecl_verify/cli.py", "moecl_verify/theory/prop4.py", "moecl_verify/numeric/moe.py",
                   "moecl_verify/checks/registry.py", "moecl_verify/reports/markdown.py",
                   "moecl_verify/reports/results.schema.json"):  # package data, listed in pyproject.toml
        assert module in names
    # Every claim module of the checkout is in the wheel.
    claims = [f"moecl_verify/packs/moe_cl/claims/{p.relative_to(ROOT / 'packs' / 'moe_cl' / 'claims').as_posix()}"
              for p in (ROOT / "packs" / "moe_cl" / "claims").rglob("*.py")]
    assert set(claims) <= set(names)


def test_running_from_the_checkout_imports_the_installed_package():
    """A folder named moecl_verify at the root would shadow the install whenever Python runs there."""
    import subprocess

    assert not (ROOT / "moecl_verify").exists()
    code = "import moecl_verify.numeric.moe, moecl_verify.cli, moecl_verify.reports.diff"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True)


# --- the machinery knows no pack ----------------------------------------------------------------------------

MACHINERY = ("checks", "reports")  # and the application, moecl_verify's own modules


def _machinery_modules() -> dict[str, Path]:
    return {m: p for m, p in MODULES.items() if _layer(m) <= len(LAYER_ORDER) and not m.startswith(f"{P}.theory")
            and not m.startswith(f"{P}.numeric")}


def test_the_machinery_imports_no_pack():
    """checks, reports and the command line find packs through entry points only: no import of one,
    not even inside a function."""
    bad = sorted(f"{m} -> {t}" for m in _machinery_modules() for t in GRAPH[m] if _layer(t) > len(LAYER_ORDER))
    assert bad == []


def _pack_words() -> re.Pattern:
    """What a pack's document is made of, that must not appear in the machinery: every installed pack's title,
    claim ids and the id groups that carry a number (``lemma3``, ``fig2``, not ``open``), its swept parameter,
    and the document's own vocabulary of numbered results and data sets."""
    from moecl_verify.checks import pack as packs
    from moecl_verify.checks.registry import all_claims

    words: set[str] = set()
    literal: set[str] = set()
    for pack in packs.installed().values():
        ids = {c.id for c in all_claims(pack)}
        words |= ids | {i.split(".")[0] for i in ids if re.search(r"\d", i.split(".")[0])}
        literal |= {pack.title}
        if pack.swept != "x":
            literal |= {pack.swept, pack.swept_symbol}
    alternatives = [rf"(?<![\w.]){re.escape(w)}(?![\w])" for w in sorted(words, key=len, reverse=True)]
    alternatives += [re.escape(w) for w in sorted(literal, key=len, reverse=True)]
    alternatives += [r"\bmnist\b", r"\b(Figure|Theorem|Lemma|Proposition|Corollary|Algorithm) \d", r"\beq\. \(\d"]
    return re.compile("|".join(alternatives), re.I)


def test_the_machinery_names_nothing_of_a_pack():
    """No title, claim id, swept parameter, data set or numbered result of any installed pack in checks,
    reports or the application, in code, strings, comments or docstrings: a new document never edits them."""
    pattern = _pack_words()
    found = []
    for module, path in sorted(_machinery_modules().items()):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{path.name}:{number}: {m.group(0)!r}" for m in pattern.finditer(line)]
    assert found == []


def test_the_pack_word_check_would_catch_a_claim_id():
    """The check above is not vacuous: the default pack's words are in its pattern."""
    pattern = _pack_words()
    from moecl_verify.checks import pack as packs
    from moecl_verify.checks.registry import all_claims

    first = all_claims(packs.default())[0].id
    assert pattern.search(f"see {first} here") and pattern.search(packs.default().title)
