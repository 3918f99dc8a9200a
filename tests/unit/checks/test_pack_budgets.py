"""The pack's budgets as quantities: one table of sizes (packs/moe_cl/budgets.py), read as ``ctx.sizes``.

Checked here: every budget of the machinery has an entry of one :class:`Sizes` type; sizes never shrink from
smoke to standard to full; every size the pack reads is a field and every field is read; and, reading the
pack's source with ``ast``, no module reads the budget's name or replicates and no module keeps its own table
by budget name.

What the source check allows, precisely:

* ``<x>.budget.name`` only as a direct element of the key tuple passed as the first argument of a
  ``<x>.shared(...)`` call: the in-run keys of shared work keep the budget's name as they always had it (a key
  names the work; the sizes the work uses come from ``ctx.sizes``);
* ``args.budget``, a command's parsed ``--budget`` option, handed to the runner as a name (commands/figures.py);
* no other read of an attribute named ``budget`` (so neither ``ctx.budget.replicates`` nor
  ``b = ctx.budget`` then ``b.name``), and no dict literal keyed by a budget name outside budgets.py.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from moecl_verify.checks.context import BUDGETS, context_for
from moecl_verify.packs.moe_cl import PACK, budgets
from moecl_verify.packs.moe_cl.budgets import Sizes

ORDER = ("smoke", "standard", "full")
PACK_ROOT = Path(budgets.__file__).parent
SOURCES = sorted(PACK_ROOT.rglob("*.py"))
FIELDS = {f.name for f in dataclasses.fields(Sizes)}


def _parsed(path: Path) -> ast.Module:
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            child.parent = node  # type: ignore[attr-defined]
    return tree


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(PACK_ROOT.parent.parent)}:{node.lineno}"


def test_every_budget_has_sizes_of_one_type():
    assert ORDER == tuple(BUDGETS), "the budgets' order changed: update ORDER"
    assert tuple(PACK.budgets) == ORDER
    for name in ORDER:
        sizes = PACK.budgets[name]
        assert type(sizes) is Sizes, name
        assert context_for(PACK, name, 0).sizes is sizes
    with pytest.raises(dataclasses.FrozenInstanceError):
        PACK.budgets["smoke"].task_pools = 3  # type: ignore[misc]


@pytest.mark.parametrize("field", sorted(FIELDS))
def test_sizes_never_shrink_from_smoke_to_full(field):
    """Numbers grow or stay equal; a tuple of grid points, task counts or task definitions only gains members."""
    values = [getattr(PACK.budgets[name], field) for name in ORDER]
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        assert values == sorted(values), f"{field} shrinks: {dict(zip(ORDER, values))}"
        assert values[0] > 0, f"{field} is not positive at smoke"
    elif all(isinstance(v, tuple) for v in values):
        for smaller, larger in zip(values, values[1:]):
            assert set(smaller) <= set(larger), f"{field} loses members: {dict(zip(ORDER, values))}"
        assert values[0], f"{field} is empty at smoke"
    else:
        pytest.fail(f"{field}: say what growing means for a size of type {type(values[0]).__name__}")


def test_sizes_read_by_the_pack_are_the_fields_and_every_field_is_read():
    read = {}
    for path in SOURCES:
        for node in ast.walk(_parsed(path)):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "sizes":
                read.setdefault(node.attr, _where(path, node))
            # functions handed the sizes object (pools, sweep design) name it ``sizes``
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "sizes":
                read.setdefault(node.attr, _where(path, node))
            # the notes that list every budget read BUDGETS[name].<field>
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Subscript) \
                    and isinstance(node.value.value, ast.Name) and node.value.value.id == "BUDGETS":
                read.setdefault(node.attr, _where(path, node))
    unknown = {name: at for name, at in read.items() if name not in FIELDS}
    assert not unknown, f"sizes read that Sizes does not have: {unknown}"
    assert FIELDS <= set(read), f"fields of Sizes nothing reads: {sorted(FIELDS - set(read))}"


def _in_shared_key(node: ast.Attribute) -> bool:
    """``node`` (``<x>.budget.name``) is an element of the key tuple of ``<y>.shared(key, ...)``."""
    key = getattr(node, "parent", None)
    call = getattr(key, "parent", None)
    return (isinstance(key, ast.Tuple) and isinstance(call, ast.Call) and bool(call.args) and call.args[0] is key
            and isinstance(call.func, ast.Attribute) and call.func.attr == "shared")


def _budget_reads(tree: ast.Module) -> list[ast.AST]:
    """Every read of an attribute named ``budget`` but those the module docstring allows."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr == "budget"):
            continue
        if isinstance(node.value, ast.Name) and node.value.id == "args":
            continue  # a command's --budget option, passed to the runner by name
        parent = getattr(node, "parent", None)
        if isinstance(parent, ast.Attribute) and parent.attr == "name" and _in_shared_key(parent):
            continue
        found.append(parent if isinstance(parent, ast.Attribute) else node)
    return found


def _tables(tree: ast.Module) -> list[ast.Dict]:
    """Dict literals with a budget name among their keys."""
    return [node for node in ast.walk(tree)
            if isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value in ORDER for k in node.keys)]


def test_no_module_of_the_pack_reads_the_budget_name_or_its_replicates():
    offending = [f"{_where(path, node)}: {ast.unparse(node)}"
                 for path in SOURCES for node in _budget_reads(_parsed(path))]
    assert not offending, "read ctx.sizes instead of the budget: " + "; ".join(offending)


def test_no_table_by_budget_name_outside_budgets_py():
    tables = [_where(path, node) for path in SOURCES if path != Path(budgets.__file__)
              for node in _tables(_parsed(path))]
    assert not tables, f"per-budget tables outside packs/moe_cl/budgets.py: {tables}"


def test_the_source_checks_catch_what_they_forbid(tmp_path):
    """A read outside a key, an index by the name, an alias and a table are flagged; a key and args pass."""
    path = tmp_path / "example.py"
    path.write_text(
        'R = ctx.budget.replicates\n'
        'n = REPLICATES[ctx.budget.name]\n'
        'b = ctx.budget\n'
        'T = {"smoke": 1, "standard": 2, "full": 3}\n'
        'ctx.shared(("x", ctx.seed, ctx.budget.name), f)\n'
        'runner.run([], budget=args.budget)\n'
    )
    tree = _parsed(path)
    assert sorted(node.lineno for node in _budget_reads(tree)) == [1, 2, 3]
    assert [node.lineno for node in _tables(tree)] == [4]
