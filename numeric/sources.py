"""Which source files a result depends on: the first-party modules a module imports, transitively, read from
the import statements in their source (anywhere in the file, functions included), never by running them.

The results cache keys a simulation chunk by the code its function's module imports (:mod:`numeric.chunks`)
and a finished claim by the code its pack imports (:mod:`checks.claim_store`), so that editing one document's
model recomputes only the results that compute with it: the chapter's claims never import the paper's
``theory/`` or its deep-network engines, and keep their records when those change.

Static on purpose: a module imported inside a function (Figure 3's JAX engines, imported only when a run is
due) is still a dependency, and reading the source does not import it (so no optional library is needed to
compute a key).  Over-inclusive on purpose: a module imported but never called still counts.  What this
cannot see, a module chosen by name at run time (``importlib.import_module(name)``), no first-party code
that computes results does (a test holds every module a simulation loads to its chunk's closure).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
from pathlib import Path
from typing import Iterable


@functools.lru_cache(maxsize=None)
def module_file(name: str) -> Path | None:
    """The source file of module ``name`` (a package's ``__init__.py``), or None when ``name`` is not a module
    with Python source (an attribute, as in ``from package.module import function``, or an extension).  Imports
    only ``name``'s parent package, never ``name`` itself, nor the parent when it is a plain module."""
    head, _, _ = name.rpartition(".")
    if head:
        parent = module_file(head)
        if parent is None or parent.name != "__init__.py":
            return None  # the parent is a plain module: ``name`` is one of its attributes
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not isinstance(spec.origin, str) or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)


@functools.lru_cache(maxsize=None)
def imported_names(name: str, path: Path) -> frozenset[str]:
    """Every module name an import statement of ``path`` (module ``name``) may bring in: ``import a.b`` gives a.b,
    ``from a import b`` gives a and a.b (b may be a submodule), relative imports resolved against ``name``'s
    package."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[:len(parts) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return frozenset(out)


def _inside(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


@functools.lru_cache(maxsize=None)
def import_closure(start: tuple[str, ...], prefixes: tuple[str, ...], leave_out: frozenset[str] = frozenset()) \
        -> tuple[str, ...]:
    """The modules under ``prefixes`` that the modules ``start`` import, transitively, themselves included, with
    the packages whose ``__init__`` an import runs; ``leave_out`` are neither listed nor followed."""
    seen: set[str] = set()
    todo = list(start)
    while todo:
        name = todo.pop()
        if name in seen or name in leave_out or not _inside(name, prefixes):
            continue
        path = module_file(name)
        if path is None:
            continue
        seen.add(name)
        todo.extend(imported_names(name, path))
        parts = name.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))
    return tuple(sorted(seen))


def digest(modules: Iterable[str]) -> str:
    """SHA-256 over the modules' names and source bytes, in name order (independent of where they are installed)."""
    h = hashlib.sha256()
    for name in sorted(modules):
        path = module_file(name)
        if path is None:
            continue
        h.update(name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def clear_caches() -> None:
    """Forget every file found and read (after a source file changed within one process, as tests do)."""
    module_file.cache_clear()
    imported_names.cache_clear()
    import_closure.cache_clear()
